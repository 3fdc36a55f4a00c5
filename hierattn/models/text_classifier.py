"""`TextClassifier`: raw strings in, class probabilities out, one `.keras` file."""

import sys

import keras
from keras import ops

from hierattn.data.dataset import LabelMap
from hierattn.data.ids import ngram_ids, token_ids
from hierattn.decision import activation_of
from hierattn.defaults import CASCADE, DECISION, MODELS, NGRAMS, PREPROCESSING, TRAINING, UNITS
from hierattn.models.arguments import check_classifier_arguments, check_decision_metric, check_multi_label
from hierattn.models.backbone import Backbone
from hierattn.models.budget import decide_budget
from hierattn.models.cascade import Cascading
from hierattn.models.embeddings import initial_vectors
from hierattn.models.han_backbone import HANBackbone
from hierattn.models.inputs import as_texts, fit_datasets, split_validation
from hierattn.models.legacy import backbone_config
from hierattn.models.offsets import Offsets
from hierattn.models.rnn_backbone import RNNBackbone
from hierattn.models.task import Task
from hierattn.models.text_preprocessor import TextPreprocessor
from hierattn.models.thresholds import Thresholds
from hierattn.models.transformer_backbone import TransformerBackbone
from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.part import NgramPart

# The backbone class of each architecture name.
BACKBONE_CLASSES = {"han": HANBackbone, "transformer": TransformerBackbone, "rnn": RNNBackbone}
_MODEL_KWARGS = ("name", "trainable", "dtype")
_SAVED_REPORT = ("recipe", "network_weight", "ngram_weight", "network_share")  # `ngram_report`'s, saved with it


def _architecture(backbone, options):
    """The architecture's name and its input rank, of a backbone given by name or as a `Backbone`."""
    if isinstance(backbone, str):
        return backbone, BACKBONE_CLASSES[backbone].input_rank
    if isinstance(backbone, Backbone):
        if options:
            raise ValueError(f"backbone arguments ({', '.join(options)}) only apply to a backbone given by name")
        return backbone.name, backbone.input_rank
    raise ValueError(
        f"backbone must be one of {MODELS} or a hierattn Backbone (see hierattn.models). Received: backbone={backbone!r}."
    )


@keras.saving.register_keras_serializable(package="hierattn")
class TextClassifier(NgramPart, Thresholds, Offsets, Cascading, Task):
    """A document classifier that takes raw strings: preprocessor + backbone (+ n-gram part) + label names.

    The Task of keras-hub's Task / Preprocessor / Backbone split. The
    `preprocessor` (`TextPreprocessor`: tokenizer, vocabulary, length limits)
    turns texts into ids; the `backbone` (a `Backbone`: `HANBackbone`,
    `TransformerBackbone` or `RNNBackbone`) turns ids into class
    probabilities. With `ngrams=True` (the default) an n-gram part reads the
    whole text (the preprocessor's second output, `"ngram_ids"`): a linear
    model over its word n-grams (`ngram_logits`, an `NgramLogits` layer),
    its recipe chosen on the validation texts among
    `hierattn.defaults.NGRAMS["recipes"]` (`hierattn.ngrams.recipes`),
    combined log-linearly with the backbone (`combination`, a
    `LogLinearCombination`: `softmax(a log p_backbone + b z_ngrams)`; see
    `hierattn.ngrams.mixing`). With `network="auto"` (the default) the
    network reads only the documents the n-gram part is not sure of, under
    a cut chosen on the validation texts (`cascade`, `choose_cut`); the
    n-gram part decides the rest.

    Keras's verbs take raw texts (in the forms `hierattn.models.inputs`
    lists) and keep Keras's contract: `predict` gives class probabilities,
    in `label_names` order; on token ids (from `preprocessor`) the verbs are
    Keras's own (`hierattn.models.task.Task`). `predict_labels` gives class
    names and `explain` explanations. The first `fit` adapts the classifier
    (`adapt`); every `fit` trains the backbone, then fits the n-gram part
    (`fit_ngrams`), weighs the two parts (`choose_weights`) and chooses the
    cascade's cut (`choose_cut`): steps Keras has no verb for, which can
    also be called alone (without validation texts, see `fit`).
    `save` writes one `.keras` file holding all of it (and refuses
    Keras's legacy `.h5`), which `keras.saving.load_model` reads back
    (safe mode on) once `hierattn` is imported, before or after Keras, as
    `hierattn.load_classifier` does.

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
        multi_label: Each document has a set of labels (possibly empty): a sigmoid per label (binary
            cross-entropy), one linear model per label in the n-gram part, the two combined on each label's
            log-odds, each label's threshold chosen on the validation texts (`hierattn.models.thresholds`).
        network: `"auto"`: the network reads only the documents the n-gram part is not sure of
            (`hierattn.models.cascade`); `"always"`: every document (the whole combination). Settable.
        decision_metric: What a single-label classifier decides for: `"accuracy"` (the most probable class) or
            `"macro_f1"` (offsets on the log-probabilities chosen last in `fit`; `hierattn.models.offsets`).
        text_units: What the classifier reads (`hierattn.data.units`): `"words"`, `"characters"`, `"subwords"`
            (learned from the training texts), or `"auto"` (chosen from them: words for spaced scripts; for
            Chinese, Japanese, Thai..., the better of characters and subwords on texts held out; recorded in
            `preprocessor.units_report`).
        ngram_logits, thresholds, cascade, offsets: The n-gram part, the thresholds (multi-label), the cut and
            the offsets, as fitted and chosen before (when loading a saved classifier).
        **kwargs: Arguments of the backbone class (e.g. `embedding_dim`, `num_layers`, `attention`), and Keras's
            `name`, `trainable` and `dtype`: with `dtype="mixed_float16"` the backbone computes in float16 with
            float32 weights (the class probabilities, and the softmax inside each attention layer, are computed in
            float32) and `compile` wraps the optimizer in Keras's `LossScaleOptimizer`.

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
        multi_label=False,
        thresholds=None,
        network=CASCADE["network"],
        cascade=None,
        decision_metric=DECISION["metric"],
        offsets=None,
        text_units=UNITS["units"],
        **kwargs,
    ):
        super().__init__(**{"name": "text_classifier", **{k: kwargs.pop(k) for k in _MODEL_KWARGS if k in kwargs}})
        options = dict(kwargs.pop("backbone_options", None) or {}, **kwargs)
        limits = {"max_sentences": max_sentences, "max_words": max_words, "sequence_length": sequence_length}
        check_classifier_arguments(  # before anything is built or read (see hierattn.models.arguments)
            backbone,
            embeddings=embeddings,
            pretrain_epochs=pretrain_epochs,
            ngrams=ngrams,
            seed=seed,
            **(limits if preprocessor is None else {}),
            **options,
        )
        check_multi_label(backbone, multi_label)
        self.multi_label = multi_label
        self.thresholds, self.offsets = (None if a is None else [float(v) for v in a] for a in (thresholds, offsets))
        self.network, self.cascade_report = network, cascade
        self.decision_metric = check_decision_metric(decision_metric, multi_label)
        self.architecture, input_rank = _architecture(backbone, options)
        self.backbone_options = options
        self.preprocessor = preprocessor or TextPreprocessor(
            TextPreprocessor.mode_for_rank(input_rank),
            max_sentences=max_sentences,
            max_words=max_words,
            sequence_length=sequence_length,
            min_count=min_count,
            max_vocab=max_vocab,
            tokenizer={"units": text_units},
            ngram_length=NGRAMS["length"] if ngrams else None,
        )
        self.backbone = None if isinstance(backbone, str) else backbone
        self.label_names = None if label_names is None else list(label_names)
        self.embeddings = embeddings
        self.pretrain_epochs = pretrain_epochs
        self.seed = seed
        self.embedding_source = None  # what `adapt` initialised the embeddings from
        self.ngrams = bool(ngrams)
        self.ngram_logits = self.combination = None
        self.ngram_report = None  # what `fit_ngrams` and `choose_weights` last measured
        self.threshold_report = None  # how `choose_thresholds` last chose (multi-label)
        self._network_only = False  # True while fit trains the backbone
        self._with_ngram_logits = False  # True while exporting: `call` gives the n-gram logits too
        if ngram_logits is not None:  # loading a saved classifier
            self._make_ngram_part(ngram_logits)
        if self.backbone is not None:
            if self.label_names is not None and len(self.label_names) != self.backbone.num_classes:
                raise ValueError(
                    f"{len(self.label_names)} label names for a backbone with {self.backbone.num_classes} outputs"
                )
            self.built = True

    def adapt(self, texts, labels, unlabeled=None, verbose=1, word2vec_checkpoint=None):
        """Prepares training: adapts the preprocessor, names the classes, builds the backbone, initialises embeddings.

        Called by the first `fit`; call it yourself to inspect or save the
        untrained classifier. The embeddings start from
        `hierattn.models.embeddings.initial_vectors`; `embedding_source` says which.

        Args:
            texts: Training texts (the vocabulary and length limits come from these only).
            labels: Their labels (the class names, sorted).
            unlabeled: More texts for word2vec (e.g. IMDB's `unsup`).
            verbose: 0 for silence.
            word2vec_checkpoint: A file word2vec saves its state to after each epoch, and resumes from if it
                exists (`hierattn.models.embeddings.train_word2vec`); `None`: none.
        """
        texts = as_texts(texts)
        if self.label_names is None:
            make = LabelMap.from_label_sets if self.multi_label else LabelMap.from_labels
            self.label_names = make(list(labels)).names
        if not self.preprocessor.adapted:
            self.preprocessor.adapt(texts, None if self.multi_label else labels, progress=bool(verbose))
        vocabulary_size, num_classes = len(self.preprocessor.vocabulary), len(self.label_names)
        if self.backbone is None:
            options = dict(self.backbone_options)
            if self.architecture == "transformer":
                options["sequence_length"] = self.preprocessor.sequence_length
            options["activation"] = activation_of(self.multi_label)
            self.backbone = BACKBONE_CLASSES[self.architecture](
                vocabulary_size, num_classes, dtype=self.dtype_policy.name, **options
            )
            dim = self.backbone.token_embedding.output_dim
            vectors = (self.embeddings, self.preprocessor, dim, texts, unlabeled, self.pretrain_epochs, self.seed)
            matrix, self.embedding_source = initial_vectors(*vectors, verbose, word2vec_checkpoint)
            if matrix is not None:
                self.backbone.set_token_vectors(matrix)
            self.built = True
        if self.ngrams and self.ngram_logits is None:
            self._make_ngram_part(NgramLogits(vocabulary_size, num_classes, name="ngram_logits"))
        return self

    def call(self, inputs, training=None):
        probabilities = self.backbone(token_ids(inputs), training=training)
        if self.ngram_logits is None or self._network_only:
            return probabilities
        logits = self.ngram_logits(ngram_ids(inputs))
        combined = self.combination(probabilities, logits)
        if self._with_ngram_logits:  # exporting: the runtime's cascade reads the n-gram part's logits and tables
            return (combined, logits, *(ops.convert_to_tensor(t) for t in self.ngram_logits.exported_tables()))
        return combined

    def _set_network_only(self, value):
        # Which graph `call` builds is decided when Keras traces it, so the
        # traced functions are dropped whenever the choice changes.
        if value != self._network_only:
            self._network_only = value
            self._drop_traced()

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
        """Keras `fit` of the backbone on raw texts and labels, then `fit_ngrams`, `choose_weights`, `choose_cut`.

        The first call adapts the classifier (`adapt`) to the training part.
        Keras's fit trains the backbone alone, on batches of similar length
        (padding trimmed; under `tf.distribute`, each text seen once per
        epoch across all replicas and workers). Unless `callbacks` holds an
        `EarlyStopping`, training with validation data stops when the
        validation loss has not improved for 2 epochs and keeps the best
        epoch's weights. Then the n-gram part's steps, a multi-label
        classifier's `choose_thresholds`, and the cascade's cut, on the
        validation texts; without them a further `fit` keeps what an earlier
        one chose (the first takes `NGRAMS["fallback"]` and
        `NGRAMS["weights"]`, and no cut). With `verbose`, a line per step.

        Args:
            x: Training texts (see the class docstring for the forms), or a
                `tf.data.Dataset` of `(texts, labels)`.
            y: Their labels: class names, integers or one-hot rows (integers
                are class ids, unless the class names are integers:
                `Task.label_ids`).
            batch_size: Documents per batch (default 64); under
                `tf.distribute`, the global batch, split between the replicas.
            epochs: Most epochs, your own cap as in Keras. `None` (the
                default): the budget `hierattn.models.budget.decide_budget`
                decides: about 3,000 batches' worth, 8 to 40 epochs (8
                without validation data, where nothing stops training
                early), within 20 minutes (`hierattn.defaults.EPOCH_BUDGET`).
            verbose: Keras verbosity; `"auto"`: a bar on a terminal, else a line per epoch.
            validation_split: Share of the training texts held out for
                validation, stratified by class and seeded by `seed` (Keras
                takes the last share instead).
            validation_data: `(texts, labels)` or a dataset of them to
                validate on instead.
            callbacks, class_weight, initial_epoch, **kwargs: As in `keras.Model.fit`.
            unlabeled: More texts for word2vec at the first call.

        Returns:
            The Keras `History`.
        """
        verbose = (1 if sys.stdout.isatty() else 2) if verbose == "auto" else verbose
        batch_size = batch_size or TRAINING["batch_size"]
        texts, labels, validation_data = self._fit_inputs(x, y, validation_split, validation_data, unlabeled, verbose)
        validated = validation_data is not None
        budget = decide_budget(epochs, len(texts), batch_size, self.distribute_strategy, validated, callbacks)
        callbacks = budget.with_callbacks(callbacks)  # the time budget, then early stopping (`fit_datasets`)
        x_fit, train_set, validation, val_set = fit_datasets(
            self, texts, labels, validation_data, batch_size, initial_epoch, verbose, callbacks
        )
        self._set_network_only(True)
        try:
            history = super().fit(
                train_set,
                validation_data=val_set,
                epochs=budget.epochs,
                verbose=verbose,
                callbacks=callbacks,
                class_weight=class_weight,
                initial_epoch=initial_epoch,
                shuffle=False,
                **kwargs,
            )
        finally:
            self._set_network_only(False)
        self._fit_after_network(x_fit, labels, validation, verbose)
        return history

    def _fit_after_network(self, x_fit, labels, validation, verbose):
        """`fit`'s steps after Keras's: the n-gram part, thresholds (multi-label), the cascade's cut, offsets."""
        if self.ngram_logits is not None:
            self._fit_ngram_part(x_fit, labels, validation, verbose)
        if self.multi_label:
            self.choose_thresholds(validation, verbose=verbose)
        if self.ngram_logits is not None and (validation is not None or self.cascade_report is None):
            self.choose_cut(validation, verbose=verbose)  # (and the offsets); without validation texts, kept
        elif self.decision_metric == "macro_f1":
            self.choose_offsets(validation, verbose=verbose)

    def _fit_inputs(self, x, y, validation_split, validation_data, unlabeled, verbose):
        """`fit`'s training texts, labels and validation data (a share held out), the classifier adapted and compiled."""
        texts, labels = self._texts_and_labels(x, y, "fit")
        if validation_data is None and validation_split:
            (texts, labels), validation_data = split_validation(
                texts, labels, validation_split, self.seed, self.multi_label
            )
        if not self.adapted:
            self.adapt(texts, labels, unlabeled=unlabeled, verbose=verbose)
        if not self.compiled:
            self.compile()
        self.build_optimizer()  # before Keras's fit, so its train function is traced once
        return texts, labels, validation_data

    def get_config(self):
        config = super().get_config()
        serialize = keras.saving.serialize_keras_object
        config.update(
            {
                "backbone": self.architecture if self.backbone is None else serialize(self.backbone),
                "preprocessor": serialize(self.preprocessor),
                "label_names": None if self.label_names is None else list(self.label_names),
                "embeddings": self.embeddings,
                "pretrain_epochs": self.pretrain_epochs,
                "seed": self.seed,
                "ngrams": self.ngrams,
                "ngram_logits": None if self.ngram_logits is None else serialize(self.ngram_logits),
                "backbone_options": dict(self.backbone_options) if self.backbone is None else {},
            }
        )
        if self.multi_label:  # single-label files stay as they were
            config.update(multi_label=True, thresholds=self.thresholds)
        if self.network != CASCADE["network"]:
            config["network"] = self.network
        if self.offsets is not None or self.decision_metric != DECISION["metric"]:  # single-label files as they were
            config.update(decision_metric=self.decision_metric, offsets=self.offsets)
        if self.cascade_report is not None:  # the cut, once chosen
            config["cascade"] = self.cascade_report
        chosen = {key: value for key, value in (self.ngram_report or {}).items() if key in _SAVED_REPORT}
        if "recipe" in chosen:  # what a further `fit` without validation texts keeps (only once chosen)
            config["ngram_report"] = chosen
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        report = config.pop("ngram_report", None)
        config["backbone"] = backbone_config(config.get("backbone"))
        for key in ("backbone", "preprocessor"):
            if isinstance(config.get(key), dict):
                config[key] = keras.saving.deserialize_keras_object(config[key])
        classifier = cls(**config)
        classifier.ngram_report = report
        return classifier
