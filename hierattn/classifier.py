"""`TextClassifier`: raw strings in, one `.keras` file out."""

import contextlib
import sys

import keras
import numpy as np

from hierattn.data.dataset import LabelMap, stratified_split
from hierattn.data.pipeline import make_eval_dataset, make_train_dataset
from hierattn.defaults import BACKBONES, CLIPNORM, MODELS, NGRAMS, PREPROCESSING, TRAINING
from hierattn.distribute import step_logs_for
from hierattn.errors import DataError
from hierattn.preprocessor import TextPreprocessor, as_texts
from hierattn.inference import predict_batches
from hierattn.layers import ContextAttention  # noqa: F401  (registers every layer a backbone is made of)
from hierattn.layers import LogLinearCombination, NgramLogits
from hierattn.metrics import ExamplesSeen

_MODEL_KWARGS = ("name", "trainable", "dtype")


def default_optimizer(learning_rate=TRAINING["learning_rate"]):
    """The tuned optimizer: Adam with gradients clipped to norm 1."""
    return keras.optimizers.Adam(learning_rate, clipnorm=CLIPNORM)


@contextlib.contextmanager
def _dtype_policy(policy):
    """Layers made inside take `policy` (e.g. mixed_float16); the global policy is restored after."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def _is_texts(x):
    """Whether `x` is text (then the classifier's own path, with its clear errors), not Keras data."""
    if isinstance(x, str):
        return True
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.dtype.kind in "OUS"):
        return len(x) == 0 or isinstance(x[0], str)
    return type(x).__name__ == "Series"  # pandas


@keras.saving.register_keras_serializable(package="hierattn")
class TextClassifier(keras.Model):
    """A document classifier that takes raw strings: preprocessor + backbone (+ n-gram part) + label names.

    The Task of keras-hub's Task / Preprocessor / Backbone split. The
    `preprocessor` (`TextPreprocessor`: tokenizer, vocabulary, length limits)
    turns texts into ids; the `backbone` (a HAN, Transformer or recurrent
    model from `hierattn.models`) turns ids into class probabilities. With
    `ngrams=True` (the default) an n-gram part reads the same ids: a linear
    model over their word 1-2 grams (`ngram_logits`, an `NgramLogits`
    layer; settings in `hierattn.defaults.NGRAMS`), combined log-linearly with the backbone
    (`combination`, a `LogLinearCombination`: `softmax(a log p_backbone + b
    z_ngrams)`; see `hierattn.ngrams`). The first `fit` adapts the
    preprocessor to the training texts, builds the backbone and initialises
    its word embeddings (word2vec on the training texts by default); later
    `fit` calls continue training. `save` writes one `.keras` file holding
    all of it, which `keras.saving.load_model` reads back (safe mode on)
    after `import hierattn`.

    Args:
        backbone: `"han"`, `"transformer"` or `"rnn"` (built on the first
            `fit` with the tuned defaults of `hierattn.defaults`), or a built
            backbone `keras.Model` from int ids to probabilities.
        preprocessor: A `TextPreprocessor`; made from the length and
            vocabulary arguments below when `None`.
        label_names: Class names in output order; taken from the labels of
            the first `fit` (sorted) when `None`.
        embeddings: Word vectors to start from: `"word2vec"` (trained on the
            training texts, and `unlabeled` ones, at the first `fit`),
            `"none"` (random), or the path of a word2vec / GloVe text file.
        pretrain_epochs: word2vec epochs.
        ngrams: Whether the classifier has the n-gram part.
        seed: Seed of the validation split, batch order and word2vec.
        max_sentences, max_words, sequence_length, min_count, max_vocab:
            `TextPreprocessor` settings (when `preprocessor` is `None`).
        **kwargs: Arguments of the backbone builder (e.g. `embedding_dim`,
            `num_layers`, `attention`), and Keras's `name`, `trainable` and
            `dtype`: with `dtype="mixed_float16"` the backbone computes in
            float16 with float32 weights (the class probabilities, and the
            softmax inside each attention layer, are computed in float32) and
            `compile` wraps the optimizer in Keras's `LossScaleOptimizer`.

    Example:

    ```python
    clf = hierattn.TextClassifier("han")
    clf.fit(texts, labels, validation_split=0.1)
    clf.predict(["A gripping film."])          # label names
    clf.predict_proba(["A gripping film."])    # probabilities
    clf.explain(["The plot was thin. The acting was superb."])
    clf.save("model.keras")
    ```
    """

    def __init__(self, backbone="han", preprocessor=None, label_names=None, embeddings=TRAINING["embeddings"],
                 pretrain_epochs=TRAINING["pretrain_epochs"], ngrams=TRAINING["ngrams"], seed=TRAINING["seed"],
                 max_sentences=PREPROCESSING["max_sentences"], max_words=PREPROCESSING["max_words"],
                 sequence_length=PREPROCESSING["sequence_length"], min_count=PREPROCESSING["min_count"],
                 max_vocab=PREPROCESSING["max_vocab"], ngram_logits=None, **kwargs):
        model_kwargs = {k: kwargs.pop(k) for k in _MODEL_KWARGS if k in kwargs}
        model_kwargs.setdefault("name", "text_classifier")
        super().__init__(**model_kwargs)
        options = dict(kwargs.pop("backbone_options", None) or {}, **kwargs)
        if isinstance(backbone, str):
            if backbone not in MODELS:
                raise ValueError(f"backbone must be one of {MODELS} or a keras.Model. Received: backbone={backbone!r}.")
            unknown = sorted(set(options) - set(BACKBONES[backbone]))
            if unknown:
                raise ValueError(f"unknown {backbone} argument(s) {', '.join(unknown)}: choose from "
                                 f"{', '.join(sorted(BACKBONES[backbone]))}")
            self.architecture = backbone
            mode = "hierarchical" if backbone == "han" else "flat"
        else:
            if options:
                raise ValueError(f"builder arguments ({', '.join(options)}) only apply to a backbone given by name")
            self.architecture = backbone.name
            mode = "hierarchical" if len(backbone.inputs[0].shape) == 3 else "flat"
        self.backbone_options = options
        self.preprocessor = preprocessor or TextPreprocessor(
            mode, max_sentences=max_sentences, max_words=max_words, sequence_length=sequence_length,
            min_count=min_count, max_vocab=max_vocab)
        self.backbone = None if isinstance(backbone, str) else backbone
        self.label_names = None if label_names is None else list(label_names)
        self.embeddings = embeddings
        self.pretrain_epochs = pretrain_epochs
        self.seed = seed
        self.embedding_source = None  # what `adapt` initialised the embeddings from
        self._explainer = None
        self.ngrams = bool(ngrams)
        self.ngram_logits = self.combination = None
        self.ngram_report = None  # what the last fit measured of the parts (`hierattn.ngrams.fit_parts`)
        self._network_only = False  # True while fit trains the backbone
        if ngram_logits is not None:  # loading a saved classifier
            self._make_ngram_part(ngram_logits)
        if self.backbone is not None:
            if self.label_names is not None and len(self.label_names) != self.backbone.output.shape[-1]:
                raise ValueError(f"{len(self.label_names)} label names for a backbone with "
                                 f"{self.backbone.output.shape[-1]} outputs")
            self.built = True

    # -- preparing -----------------------------------------------------

    @property
    def adapted(self):
        """Whether the vocabulary, the label names and the backbone exist (after the first `fit` or loading)."""
        return self.backbone is not None and self.label_names is not None and self.preprocessor.adapted

    def adapt(self, texts, labels, unlabeled=None, verbose=1):
        """Prepares training: adapts the preprocessor, names the classes, builds the backbone, initialises embeddings.

        Called by the first `fit`; call it yourself to inspect or save the
        untrained classifier.

        Args:
            texts: Training texts (the vocabulary and length limits come from
                these only).
            labels: Their labels (the class names, sorted).
            unlabeled: More texts for word2vec (e.g. IMDB's `unsup`).
            verbose: 0 for silence.
        """
        from hierattn.models import BUILDERS

        texts = as_texts(texts)
        if self.label_names is None:
            self.label_names = LabelMap.from_labels(list(labels)).names
        if not self.preprocessor.adapted:
            self.preprocessor.adapt(texts, progress=bool(verbose))
        if self.backbone is None:
            options = dict(self.backbone_options)
            if self.architecture == "transformer":
                options["sequence_length"] = self.preprocessor.sequence_length
            with _dtype_policy(self.dtype_policy):
                self.backbone = BUILDERS[self.architecture](len(self.preprocessor.vocabulary),
                                                            len(self.label_names), **options)
            self._initialise_embeddings(texts, unlabeled, verbose)
            self.built = True
        if self.ngrams and self.ngram_logits is None:
            self._make_ngram_part(NgramLogits(len(self.preprocessor.vocabulary), len(self.label_names),
                                              ngram_max=NGRAMS["ngram_max"], num_buckets=NGRAMS["num_buckets"],
                                              name="ngram_logits"))
        return self

    def _make_ngram_part(self, layer):
        if isinstance(layer, dict):
            layer = keras.saving.deserialize_keras_object(layer)
        self.ngrams = True
        self.ngram_logits = layer
        self.combination = LogLinearCombination(name="combination")
        if not self.ngram_logits.built:
            self.ngram_logits.build(None)
        self.combination.build()

    def _initialise_embeddings(self, texts, unlabeled, verbose):
        from hierattn.data.encoding import tokenize_corpus
        from hierattn.embeddings import embedding_matrix, load_vectors, train_word2vec

        layer = self.backbone.get_layer("embedding")
        table = getattr(layer, "token_embedding", layer)  # TokenAndPositionEmbedding wraps one
        dim = table.output_dim
        vocabulary = self.preprocessor.vocabulary
        if self.embeddings == "none":
            return
        if self.embeddings == "word2vec":
            corpus = list(texts) + list(unlabeled or [])
            documents = tokenize_corpus(corpus, self.preprocessor.tokenizer, progress=bool(verbose),
                                        desc="tokenizing for word2vec")
            if verbose:
                print(f"training word2vec ({dim}d, {self.pretrain_epochs} epochs) on {len(corpus):,} texts")
            vectors = train_word2vec([s for d in documents for s in d], dim=dim, epochs=self.pretrain_epochs,
                                     min_count=self.preprocessor.min_count, seed=self.seed, progress=bool(verbose))
            source = "word2vec on the training texts" + (" and unlabelled texts" if unlabeled else "")
        else:
            vectors = load_vectors(self.embeddings, vocabulary, progress=bool(verbose))
            source = str(self.embeddings)
        matrix, coverage = embedding_matrix(vocabulary, vectors, dim, seed=self.seed)
        if getattr(layer, "scales_tokens", False):
            # A sinusoidal embedding multiplies token vectors by `token_scale`
            # (sqrt(d)), assuming they start at scale 1/token_scale; word2vec
            # vectors are ~4x larger at d=128 and would drown the positions,
            # so they are rescaled (directions unchanged; BENCHMARKS.md).
            std = float(np.std(matrix[1:]))
            if std > 0:
                matrix = matrix / (layer.token_scale * std)
        table.set_weights([matrix.astype(np.float32)])
        self.embedding_source = {"source": source, "coverage": coverage}
        if verbose:
            print(f"embeddings from {source}: {coverage:.1%} of the vocabulary covered")

    def label_ids(self, labels):
        """Class ids of labels (unknown labels raise a `DataError` naming them)."""
        return LabelMap(self.label_names).to_ids(list(labels))

    # -- Keras ---------------------------------------------------------

    def call(self, inputs, training=None):
        probabilities = self.backbone(inputs, training=training)
        if self.ngram_logits is None or self._network_only:
            return probabilities
        return self.combination(probabilities, self.ngram_logits(inputs))

    def _set_network_only(self, value):
        # Which graph `call` builds is decided when Keras traces it, so the
        # traced functions are dropped whenever the choice changes.
        if value != self._network_only:
            self._network_only = value
            self.train_function = self.test_function = self.predict_function = None
            self.__dict__.pop("_hierattn_inference", None)

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """Keras `compile`, with tuned `"auto"` defaults.

        `"auto"`: Adam (learning rate 1e-3, gradients clipped to norm 1),
        categorical cross-entropy, accuracy, and `examples`
        (`hierattn.metrics.ExamplesSeen`: the documents of the epoch, counted
        over all replicas and workers under `tf.distribute`).
        """
        if metrics == "auto":
            metrics = [keras.metrics.CategoricalAccuracy(name="accuracy"), ExamplesSeen()]
        super().compile(
            optimizer=default_optimizer() if optimizer == "auto" else optimizer,
            loss=keras.losses.CategoricalCrossentropy() if loss == "auto" else loss,
            metrics=metrics,
            **kwargs,
        )

    def compile_from_config(self, config):
        # The compiled settings saved in a `.keras` file, restored on loading
        # (with the optimizer built, so its saved state loads too).
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def train_step(self, data):
        return step_logs_for(self.distribute_strategy, super().train_step(data))

    def test_step(self, data):
        return step_logs_for(self.distribute_strategy, super().test_step(data))

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Under a strategy, Keras learns the input shapes by averaging one
        # distributed batch over the replicas, which breaks when replicas hold
        # batches of different lengths and under MultiWorkerMirroredStrategy
        # (keras-team/keras#20585). The classifier knows its input and target
        # shapes, so it builds from those instead.
        if self.adapted and data_batch is None:
            rank = 3 if self.preprocessor.mode == "hierarchical" else 2
            data_batch = (np.ones((1,) * rank, np.int32), np.zeros((1, len(self.label_names)), np.float32))
            iterator = None
        super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

    def fit(self, x=None, y=None, batch_size=None, epochs=None, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, class_weight=None, initial_epoch=0, unlabeled=None, **kwargs):
        """Keras `fit` on raw texts and their labels.

        The first call adapts the classifier (`adapt`) to the training part.
        Batches group documents of similar length and trim their padding.
        Under a `tf.distribute` strategy (the classifier made in its scope),
        each replica gets its share of every batch, and each text is seen
        once per epoch across all replicas and workers. Unless `callbacks`
        holds an `EarlyStopping`, training with validation data stops when
        the validation loss has not improved for 2 epochs and keeps the best
        epoch's weights.

        Args:
            x: Training texts.
            y: Their labels (any values: strings or numbers).
            batch_size: Documents per batch (default 64); under
                `tf.distribute`, the global batch, split between the replicas.
            epochs: Most epochs (default 8).
            verbose: Keras verbosity; `"auto"`: a progress bar on a terminal,
                one line per epoch otherwise.
            callbacks: Keras callbacks.
            validation_split: Share of the training texts held out for
                validation, stratified by class and seeded by `seed` (Keras
                takes the last share instead).
            validation_data: `(texts, labels)` to validate on instead.
            class_weight: As in Keras (`{class id: weight}`).
            initial_epoch: As in Keras.
            unlabeled: More texts for word2vec at the first call.
            **kwargs: Other `keras.Model.fit` arguments.

        Returns:
            The Keras `History`.
        """
        if not _is_texts(x) or y is None:
            raise DataError("fit takes texts and their labels: fit(texts, labels)")
        texts, labels = as_texts(x), list(y)
        if len(texts) != len(labels):
            raise DataError(f"{len(texts)} texts but {len(labels)} labels")
        batch_size = batch_size or TRAINING["batch_size"]
        epochs = epochs or TRAINING["epochs"]
        verbose = (1 if sys.stdout.isatty() else 2) if verbose == "auto" else verbose
        if validation_data is None and validation_split:
            ids = LabelMap.from_labels(labels).to_ids(labels)
            fit_index, val_index = stratified_split(ids, validation_split, self.seed)
            validation_data = ([texts[i] for i in val_index], [labels[i] for i in val_index])
            texts, labels = [texts[i] for i in fit_index], [labels[i] for i in fit_index]
        if not self.adapted:
            self.adapt(texts, labels, unlabeled=unlabeled, verbose=verbose)
        if not self.compiled:
            self.compile()
        num_classes = len(self.label_names)
        strategy = self.distribute_strategy
        x_fit, y_fit = self.preprocessor(texts, progress=bool(verbose)), self.label_ids(labels)
        train_set = make_train_dataset(x_fit, y_fit, batch_size, self.seed, num_classes, first_epoch=initial_epoch,
                                       strategy=strategy)
        callbacks = list(callbacks or [])
        val_set = validation = None
        if validation_data is not None:
            val_texts, val_labels = validation_data
            validation = (self.preprocessor(as_texts(val_texts)), self.label_ids(val_labels))
            val_set = make_eval_dataset(*validation, batch_size * 4, num_classes, strategy=strategy)
            if not any(isinstance(c, keras.callbacks.EarlyStopping) for c in callbacks):
                callbacks.append(keras.callbacks.EarlyStopping(patience=TRAINING["patience"],
                                                               restore_best_weights=True))
        self._set_network_only(True)
        try:
            history = super().fit(train_set, validation_data=val_set, epochs=epochs, verbose=verbose,
                                  callbacks=callbacks, class_weight=class_weight, initial_epoch=initial_epoch,
                                  shuffle=False, **kwargs)
        finally:
            self._set_network_only(False)
        if self.ngram_logits is not None:
            from hierattn.ngrams import fit_parts

            self.ngram_report = fit_parts(self, (x_fit, y_fit), validation, verbose=bool(verbose))
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", **kwargs):
        """Keras `evaluate`; on texts and labels it returns a dict of the compiled metrics.

        An uncompiled classifier (e.g. a run's `model.keras`, saved without
        its optimizer) is compiled with `compile`'s defaults first.
        """
        if not self.compiled:
            self.compile()
        if not _is_texts(x):
            return super().evaluate(x, y, batch_size=batch_size, verbose=verbose, **kwargs)
        dataset = make_eval_dataset(self.preprocessor(x), self.label_ids(y), batch_size or 128, len(self.label_names),
                                    strategy=self.distribute_strategy)
        return super().evaluate(dataset, verbose=verbose, return_dict=True, **kwargs)

    # -- using it -------------------------------------------------------

    def predict_proba(self, texts, batch_size=32, progress=False):
        """Class probabilities `(len(texts), num_classes)` for raw texts, in `label_names` order."""
        return self.predict_ids(self.preprocessor(texts, progress=progress), batch_size, progress)

    def predict_ids(self, x, batch_size=32, progress=False, part=None):
        """Class probabilities for id arrays (from the preprocessor): of the whole classifier, or of one part.

        Args:
            x: Ids `(n, ...)` as `preprocessor` gives them.
            batch_size: Documents per batch.
            progress: Show a progress bar.
            part: `None` (the whole classifier), `"network"` (the backbone
                alone) or `"ngrams"` (the n-gram part alone: the softmax of
                its logits).
        """
        if part not in (None, "network", "ngrams"):
            raise ValueError(f"part must be None, 'network' or 'ngrams'. Received: part={part!r}")
        if part == "ngrams" and self.ngram_logits is None:
            raise ValueError("this classifier has no n-gram part (it was made with ngrams=False)")
        if len(x) == 0:
            return np.zeros((0, len(self.label_names)), np.float32)
        if part == "ngrams":
            from hierattn.ngrams import combine, ngram_logits

            logits = ngram_logits(self.ngram_logits, x)
            return combine(np.ones_like(logits), logits, 0.0, 1.0)
        model = self.backbone if part == "network" or self.ngram_logits is None else self
        return predict_batches(model, x, batch_size, progress)

    def predict(self, x, batch_size=32, verbose=0, **kwargs):
        """Predicted label names for raw texts (`predict_proba` gives the probabilities)."""
        if not _is_texts(x):
            return super().predict(x, batch_size=batch_size, verbose=verbose, **kwargs)
        probabilities = self.predict_proba(x, batch_size=batch_size, progress=bool(verbose))
        return [self.label_names[i] for i in probabilities.argmax(axis=1)]

    def explain(self, texts, ids=None, labels=None, signed=False):
        """`hierattn.explain.Explanation`s of raw texts: prediction, word and sentence attention.

        `ids` and true `labels` are shown with them; `signed=True` adds each
        word's evidence for or against the prediction (see
        `hierattn.explain.Explainer.explain`).
        """
        from hierattn.explain import Explainer

        if self._explainer is None:
            self._explainer = Explainer(self)
        return self._explainer.explain(as_texts(texts), ids=ids, labels=labels, signed=signed)

    def get_config(self):
        config = super().get_config()
        config.update({
            "backbone": self.architecture if self.backbone is None else keras.saving.serialize_keras_object(
                self.backbone),
            "preprocessor": keras.saving.serialize_keras_object(self.preprocessor),
            "label_names": None if self.label_names is None else list(self.label_names),
            "embeddings": self.embeddings,
            "pretrain_epochs": self.pretrain_epochs,
            "seed": self.seed,
            "ngrams": self.ngrams,
            "ngram_logits": None if self.ngram_logits is None else keras.saving.serialize_keras_object(
                self.ngram_logits),
            "backbone_options": dict(self.backbone_options) if self.backbone is None else {},
        })
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("backbone", "preprocessor"):
            if isinstance(config.get(key), dict):
                config[key] = keras.saving.deserialize_keras_object(config[key])
        return cls(**config)
