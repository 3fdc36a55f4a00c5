"""`TextClassifier`: raw strings in, class probabilities out, one `.keras` file."""

import sys

import keras
import numpy as np

from hierattn.arguments import check_classifier_arguments
from hierattn.data.dataset import LabelMap, stratified_split
from hierattn.data.encoding import tokenize_corpus
from hierattn.data.pipeline import make_eval_dataset, make_train_dataset
from hierattn.defaults import CLIPNORM, MODELS, NGRAMS, PREPROCESSING, TRAINING
from hierattn.distribute import step_logs_for
from hierattn.embeddings import embedding_matrix, load_vectors, train_word2vec
from hierattn.errors import DataError
from hierattn.layers import LogLinearCombination, NgramLogits
from hierattn.metrics import ExamplesSeen
from hierattn.models.backbone import Backbone
from hierattn.models.han_backbone import HANBackbone
from hierattn.models.inference import batched_outputs, predict_batches
from hierattn.models.inputs import as_texts, is_text_input, texts_and_labels
from hierattn.models.legacy import backbone_config
from hierattn.models.rnn_backbone import RNNBackbone
from hierattn.models.text_preprocessor import TextPreprocessor
from hierattn.models.transformer_backbone import TransformerBackbone
from hierattn.ngrams import combine, fit_parts, ngram_logits

# The backbone class of each architecture name.
BACKBONE_CLASSES = {"han": HANBackbone, "transformer": TransformerBackbone, "rnn": RNNBackbone}
_MODEL_KWARGS = ("name", "trainable", "dtype")


def default_optimizer(learning_rate=TRAINING["learning_rate"]):
    """The tuned optimizer: Adam with gradients clipped to norm 1."""
    return keras.optimizers.Adam(learning_rate, clipnorm=CLIPNORM)


@keras.saving.register_keras_serializable(package="hierattn")
class TextClassifier(keras.Model):
    """A document classifier that takes raw strings: preprocessor + backbone (+ n-gram part) + label names.

    The Task of keras-hub's Task / Preprocessor / Backbone split. The
    `preprocessor` (`TextPreprocessor`: tokenizer, vocabulary, length limits)
    turns texts into ids; the `backbone` (a `Backbone`: `HANBackbone`,
    `TransformerBackbone` or `RNNBackbone`) turns ids into class
    probabilities. With `ngrams=True` (the default) an n-gram part reads the
    same ids: a linear model over their word 1-2 grams (`ngram_logits`, an
    `NgramLogits` layer; settings in `hierattn.defaults.NGRAMS`), combined
    log-linearly with the backbone (`combination`, a `LogLinearCombination`:
    `softmax(a log p_backbone + b z_ngrams)`; see `hierattn.ngrams`).

    Keras's verbs work on raw texts and keep Keras's contract: `fit`,
    `evaluate`, `predict` (class probabilities, in `label_names` order) and
    calling the classifier take texts as a list, a NumPy array or pandas
    Series, a `tf.Tensor` of strings or a `tf.data.Dataset` (of texts, or of
    `(texts, labels)` for `fit` and `evaluate`), and labels as class names,
    integers or one-hot rows. On token ids (from `preprocessor`) they are
    Keras's own. `predict_labels` gives class names and `explain`
    explanations. The first `fit` adapts the preprocessor to the training
    texts, builds the backbone and initialises its word embeddings (word2vec
    on the training texts by default); later `fit` calls continue training.
    `save` writes one `.keras` file holding all of it, which
    `keras.saving.load_model` reads back (safe mode on) once `hierattn.models`
    is imported, as `hierattn.load_classifier` does.

    Args:
        backbone: `"han"`, `"transformer"` or `"rnn"` (built on the first
            `fit` with the tuned defaults of `hierattn.defaults`), or a
            `Backbone`.
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
        ngram_logits: The fitted n-gram part (when loading a saved classifier).
        **kwargs: Arguments of the backbone class (e.g. `embedding_dim`,
            `num_layers`, `attention`), and Keras's `name`, `trainable` and
            `dtype`: with `dtype="mixed_float16"` the backbone computes in
            float16 with float32 weights (the class probabilities, and the
            softmax inside each attention layer, are computed in float32) and
            `compile` wraps the optimizer in Keras's `LossScaleOptimizer`.

    Example:

    ```python
    clf = hierattn.TextClassifier("han")
    clf.fit(texts, labels, validation_split=0.1)
    clf.predict(["A gripping film."])          # probabilities, (1, num_classes)
    clf.predict_labels(["A gripping film."])   # class names
    clf.explain(["The plot was thin. The acting was superb."])
    clf.save("model.keras")
    ```
    """

    def __init__(
        self,
        backbone="han",
        preprocessor=None,
        label_names=None,
        embeddings=TRAINING["embeddings"],
        pretrain_epochs=TRAINING["pretrain_epochs"],
        ngrams=TRAINING["ngrams"],
        seed=TRAINING["seed"],
        max_sentences=PREPROCESSING["max_sentences"],
        max_words=PREPROCESSING["max_words"],
        sequence_length=PREPROCESSING["sequence_length"],
        min_count=PREPROCESSING["min_count"],
        max_vocab=PREPROCESSING["max_vocab"],
        ngram_logits=None,
        **kwargs,
    ):
        model_kwargs = {k: kwargs.pop(k) for k in _MODEL_KWARGS if k in kwargs}
        model_kwargs.setdefault("name", "text_classifier")
        super().__init__(**model_kwargs)
        options = dict(kwargs.pop("backbone_options", None) or {}, **kwargs)
        limits = {"max_sentences": max_sentences, "max_words": max_words, "sequence_length": sequence_length}
        check_classifier_arguments(  # before anything is built or read (see hierattn.arguments)
            backbone,
            embeddings=embeddings,
            pretrain_epochs=pretrain_epochs,
            ngrams=ngrams,
            seed=seed,
            **(limits if preprocessor is None else {}),
            **options,
        )
        if isinstance(backbone, str):
            self.architecture = backbone
            input_rank = BACKBONE_CLASSES[backbone].input_rank
        elif isinstance(backbone, Backbone):
            if options:
                raise ValueError(f"backbone arguments ({', '.join(options)}) only apply to a backbone given by name")
            self.architecture = backbone.name
            input_rank = backbone.input_rank
        else:
            raise ValueError(
                f"backbone must be one of {MODELS} or a hierattn Backbone (see hierattn.models). "
                f"Received: backbone={backbone!r}."
            )
        self.backbone_options = options
        self.preprocessor = preprocessor or TextPreprocessor(
            TextPreprocessor.mode_for_rank(input_rank),
            max_sentences=max_sentences,
            max_words=max_words,
            sequence_length=sequence_length,
            min_count=min_count,
            max_vocab=max_vocab,
        )
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
            if self.label_names is not None and len(self.label_names) != self.backbone.num_classes:
                raise ValueError(
                    f"{len(self.label_names)} label names for a backbone with {self.backbone.num_classes} outputs"
                )
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
        texts = as_texts(texts)
        if self.label_names is None:
            self.label_names = LabelMap.from_labels(list(labels)).names
        if not self.preprocessor.adapted:
            self.preprocessor.adapt(texts, progress=bool(verbose))
        if self.backbone is None:
            options = dict(self.backbone_options)
            if self.architecture == "transformer":
                options["sequence_length"] = self.preprocessor.sequence_length
            self.backbone = BACKBONE_CLASSES[self.architecture](
                len(self.preprocessor.vocabulary), len(self.label_names), dtype=self.dtype_policy.name, **options
            )
            self._initialise_embeddings(texts, unlabeled, verbose)
            self.built = True
        if self.ngrams and self.ngram_logits is None:
            self._make_ngram_part(
                NgramLogits(
                    len(self.preprocessor.vocabulary),
                    len(self.label_names),
                    ngram_max=NGRAMS["ngram_max"],
                    num_buckets=NGRAMS["num_buckets"],
                    name="ngram_logits",
                )
            )
        return self

    def _make_ngram_part(self, layer):
        if isinstance(layer, dict):
            layer = keras.saving.deserialize_keras_object(layer)
        self.ngrams = True
        self.ngram_logits = layer
        self.combination = LogLinearCombination(name="combination")
        if not self.ngram_logits.built:
            self.ngram_logits.build((None,) * self.preprocessor.input_rank)
        self.combination.build()

    def _initialise_embeddings(self, texts, unlabeled, verbose):
        dim = self.backbone.token_embedding.output_dim
        vocabulary = self.preprocessor.vocabulary
        if self.embeddings == "none":
            return
        if self.embeddings == "word2vec":
            corpus = list(texts) + list(unlabeled or [])
            documents = tokenize_corpus(
                corpus, self.preprocessor.tokenizer, progress=bool(verbose), desc="tokenizing for word2vec"
            )
            if verbose:
                print(f"training word2vec ({dim}d, {self.pretrain_epochs} epochs) on {len(corpus):,} texts")
            vectors = train_word2vec(
                [s for d in documents for s in d],
                dim=dim,
                epochs=self.pretrain_epochs,
                min_count=self.preprocessor.min_count,
                seed=self.seed,
                progress=bool(verbose),
            )
            source = "word2vec on the training texts" + (" and unlabelled texts" if unlabeled else "")
        else:
            vectors = load_vectors(self.embeddings, vocabulary, progress=bool(verbose))
            source = str(self.embeddings)
        matrix, coverage = embedding_matrix(vocabulary, vectors, dim, seed=self.seed)
        self.backbone.set_token_vectors(matrix.astype(np.float32))
        self.embedding_source = {"source": source, "coverage": coverage}
        if verbose:
            print(f"embeddings from {source}: {coverage:.1%} of the vocabulary covered")

    def label_ids(self, labels):
        """Class ids of labels (unknown labels raise a `DataError` naming them)."""
        return LabelMap(self.label_names).to_ids(list(labels))

    # -- Keras ---------------------------------------------------------

    def __call__(self, inputs, *args, **kwargs):
        # Texts are tokenized (in Python) first; ids go straight to Keras.
        if is_text_input(inputs):
            inputs = self.preprocessor(as_texts(inputs))
        return super().__call__(inputs, *args, **kwargs)

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
        # No public way: under a strategy, Keras's fit and evaluate learn the
        # input shapes by averaging the first distributed batch over the
        # replicas before anything else, which breaks when replicas hold
        # batches of different lengths and under MultiWorkerMirroredStrategy
        # (keras-team/keras#20585). The classifier knows its input and target
        # shapes, so it builds from those instead.
        if self.adapted and data_batch is None:
            data_batch = (
                np.ones((1,) * self.backbone.input_rank, np.int32),
                np.zeros((1, len(self.label_names)), np.float32),
            )
            iterator = None
        super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

    def _texts_and_labels(self, x, y, verb):
        if not is_text_input(x):
            raise DataError(
                f"{verb} takes texts (a list, NumPy array, pandas Series, tf.Tensor of strings or "
                f"tf.data.Dataset) and their labels"
            )
        texts, labels, num_classes = texts_and_labels(x, y, self.label_names)
        if labels is None:
            raise DataError(f"{verb} needs the texts' labels: {verb}(texts, labels), or a dataset of (texts, labels)")
        if self.label_names is None and num_classes is not None:
            self.label_names = list(range(num_classes))
        return texts, labels

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=None,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        class_weight=None,
        initial_epoch=0,
        unlabeled=None,
        **kwargs,
    ):
        """Keras `fit` on raw texts and their labels.

        The first call adapts the classifier (`adapt`) to the training part.
        Batches group documents of similar length and trim their padding.
        Under a `tf.distribute` strategy (the classifier made in its scope),
        each replica gets its share of every batch, and each text is seen
        once per epoch across all replicas and workers. Unless `callbacks`
        holds an `EarlyStopping`, training with validation data stops when
        the validation loss has not improved for 2 epochs and keeps the best
        epoch's weights. With an n-gram part, the part is then fitted to the
        same training texts and the two parts' weights chosen on the
        validation texts (`hierattn.ngrams.fit_parts`).

        Args:
            x: Training texts (see the class docstring for the forms), or a
                `tf.data.Dataset` of `(texts, labels)`.
            y: Their labels: class names, integers or one-hot rows.
            batch_size: Documents per batch (default 64); under
                `tf.distribute`, the global batch, split between the replicas.
            epochs: Most epochs (default 8).
            verbose: Keras verbosity; `"auto"`: a progress bar on a terminal,
                one line per epoch otherwise.
            callbacks: Keras callbacks.
            validation_split: Share of the training texts held out for
                validation, stratified by class and seeded by `seed` (Keras
                takes the last share instead).
            validation_data: `(texts, labels)` or a dataset of them to
                validate on instead.
            class_weight: As in Keras (`{class id: weight}`).
            initial_epoch: As in Keras.
            unlabeled: More texts for word2vec at the first call.
            **kwargs: Other `keras.Model.fit` arguments.

        Returns:
            The Keras `History`.
        """
        texts, labels = self._texts_and_labels(x, y, "fit")
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
        train_set = make_train_dataset(
            x_fit, y_fit, batch_size, self.seed, num_classes, first_epoch=initial_epoch, strategy=strategy
        )
        callbacks = list(callbacks or [])
        val_set = validation = None
        if validation_data is not None:
            val_texts, val_labels = (
                validation_data if isinstance(validation_data, (list, tuple)) else (validation_data, None)
            )
            val_texts, val_labels = self._texts_and_labels(val_texts, val_labels, "validation_data")
            validation = (self.preprocessor(val_texts), self.label_ids(val_labels))
            val_set = make_eval_dataset(*validation, batch_size * 4, num_classes, strategy=strategy)
            if not any(isinstance(c, keras.callbacks.EarlyStopping) for c in callbacks):
                callbacks.append(
                    keras.callbacks.EarlyStopping(patience=TRAINING["patience"], restore_best_weights=True)
                )
        self._set_network_only(True)
        try:
            history = super().fit(
                train_set,
                validation_data=val_set,
                epochs=epochs,
                verbose=verbose,
                callbacks=callbacks,
                class_weight=class_weight,
                initial_epoch=initial_epoch,
                shuffle=False,
                **kwargs,
            )
        finally:
            self._set_network_only(False)
        if self.ngram_logits is not None:
            self.ngram_report = fit_parts(self, (x_fit, y_fit), validation, verbose=bool(verbose))
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", return_dict=False, **kwargs):
        """Keras `evaluate`, also on raw texts and their labels (or a dataset of them).

        Returns what Keras returns: the loss and the compiled metrics as a
        list (a scalar with no metrics), or a dict with `return_dict=True`.
        An uncompiled classifier (e.g. a run's `model.keras`, saved without
        its optimizer) is compiled with `compile`'s defaults first.
        """
        if not self.compiled:
            self.compile()
        if not is_text_input(x):
            return super().evaluate(x, y, batch_size=batch_size, verbose=verbose, return_dict=return_dict, **kwargs)
        texts, labels = self._texts_and_labels(x, y, "evaluate")
        dataset = make_eval_dataset(
            self.preprocessor(texts),
            self.label_ids(labels),
            batch_size or 128,
            len(self.label_names),
            strategy=self.distribute_strategy,
        )
        return super().evaluate(dataset, verbose=verbose, return_dict=return_dict, **kwargs)

    def predict(self, x, batch_size=None, verbose="auto", **kwargs):
        """Keras `predict`: class probabilities `(n, num_classes)` in `label_names` order, also for raw texts.

        On texts (any form the class docstring lists), documents of similar
        length are batched together with their padding trimmed.
        """
        if not is_text_input(x):
            return super().predict(x, batch_size=batch_size, verbose=verbose, **kwargs)
        texts, _, _ = texts_and_labels(x)
        progress = verbose == 1 or (verbose == "auto" and sys.stdout.isatty())
        return self.predict_ids(self.preprocessor(texts, progress=progress), batch_size or 32, progress)

    def predict_labels(self, x, batch_size=None, verbose=0):
        """The predicted class names of texts (the `label_names` of `predict`'s most probable class)."""
        probabilities = self.predict(x, batch_size=batch_size, verbose=verbose)
        return [self.label_names[i] for i in probabilities.argmax(axis=1)]

    # -- using it -------------------------------------------------------

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
            logits = ngram_logits(self.ngram_logits, x)
            return combine(np.ones_like(logits), logits, 0.0, 1.0)
        model = self.backbone if part == "network" or self.ngram_logits is None else self
        return predict_batches(model, x, batch_size, progress)

    def attention(self, x, batch_size=32):
        """The network's probabilities and attention weights for id arrays, in input order.

        Args:
            x: Ids `(n, ...)` as `preprocessor` gives them.
            batch_size: Documents per batch.

        Returns:
            `{"probabilities": (n, classes), <attention name>: weights, ...}`
            (`Backbone.attention_model`): the backbone alone, without the
            n-gram part.
        """
        # Kept out of Keras's tracking (set in __dict__): it shares the backbone's layers, it adds none.
        model = self.__dict__.get("_attention_model")
        if model is None:
            model = self.__dict__["_attention_model"] = self.backbone.attention_model()
        return batched_outputs(model, x, batch_size)

    def explain(self, texts, ids=None, labels=None, signed=False):
        """`hierattn.explain.Explanation`s of raw texts: prediction, word and sentence attention.

        `ids` and true `labels` are shown with them; `signed=True` adds each
        word's evidence for or against the prediction (see
        `hierattn.explain.Explainer.explain`).
        """
        # hierattn.explain builds on this module and imports nothing from hierattn.models, so no cycle.
        from hierattn.explain.explainer import Explainer

        if self._explainer is None:
            self._explainer = Explainer(self)
        return self._explainer.explain(as_texts(texts), ids=ids, labels=labels, signed=signed)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "backbone": self.architecture
                if self.backbone is None
                else keras.saving.serialize_keras_object(self.backbone),
                "preprocessor": keras.saving.serialize_keras_object(self.preprocessor),
                "label_names": None if self.label_names is None else list(self.label_names),
                "embeddings": self.embeddings,
                "pretrain_epochs": self.pretrain_epochs,
                "seed": self.seed,
                "ngrams": self.ngrams,
                "ngram_logits": None
                if self.ngram_logits is None
                else keras.saving.serialize_keras_object(self.ngram_logits),
                "backbone_options": dict(self.backbone_options) if self.backbone is None else {},
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = backbone_config(config.get("backbone"))
        for key in ("backbone", "preprocessor"):
            if isinstance(config.get(key), dict):
                config[key] = keras.saving.deserialize_keras_object(config[key])
        return cls(**config)
