"""`TextClassifier`: raw strings in, class probabilities out, one `.keras` file."""

import sys

import keras
import numpy as np
from keras import ops

from hierattn.data.dataset import LabelMap, validation_pair
from hierattn.data.ids import ngram_ids, token_ids
from hierattn.decision import check_network
from hierattn.defaults import CASCADE, DECISION, MODELS, NGRAMS, PREPROCESSING, TRAINING, UNITS
from hierattn.models.arguments import check_classifier_arguments, check_decision_metric, check_multi_label
from hierattn.models.backbone import Backbone
from hierattn.models.budget import decide_budget
from hierattn.models.embeddings import initial_vectors
from hierattn.models.han_backbone import HANBackbone
from hierattn.models.inputs import as_texts, fit_datasets, split_validation
from hierattn.models.legacy import backbone_config
from hierattn.models.rnn_backbone import RNNBackbone
from hierattn.models.task import Task
from hierattn.models.text_preprocessor import TextPreprocessor
from hierattn.models.transformer_backbone import TransformerBackbone
from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.part import NgramPart
from hierattn.policy import MULTI, SINGLE, DecisionPolicy
from hierattn.tuning import ValidationScores, cascade_line, offset_line, tune, untuned

# The backbone class of each architecture name.
BACKBONE_CLASSES = {"han": HANBackbone, "transformer": TransformerBackbone, "rnn": RNNBackbone}
_MODEL_KWARGS = ("name", "trainable", "dtype")
_SAVED_REPORT = ("recipe", "network_weight", "ngram_weight", "network_share")  # `ngram_report`'s, saved with it
# The class names each kind takes from its training labels (sorted): of the classes, or of the label sets.
_LABEL_MAPS = {SINGLE: LabelMap.from_labels, MULTI: LabelMap.from_label_sets}


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
class TextClassifier(NgramPart, Task):
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
    a cut chosen on the validation texts (`cascade`); the n-gram part
    decides the rest. How part outputs become probabilities and answers is
    the classifier's `policy` (`hierattn.policy.DecisionPolicy`), tuned on
    the validation texts in one pass of the network (`tune`).

    Keras's verbs take raw texts (in the forms `hierattn.models.inputs`
    lists) and keep Keras's contract: `predict` gives class probabilities,
    in `label_names` order; on token ids (from `preprocessor`) the verbs are
    Keras's own (`hierattn.models.task.Task`). `predict_labels` gives class
    names and `explain` explanations. The first `fit` adapts the classifier
    (`adapt`); every `fit` trains the backbone, then fits the n-gram part
    (`fit_ngrams`) and tunes the decision policy (`tune`: the parts'
    weights, thresholds, the cascade's cut and temperatures, offsets): steps Keras has no verb for, which can
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
            log-odds, each label's threshold chosen on the validation texts (`hierattn.tuning`).
        network: `"auto"`: the network reads only the documents the n-gram part is not sure of
            (`hierattn.tuning`); `"always"`: every document (the whole combination). Settable.
        decision_metric: What a single-label classifier decides for: `"accuracy"` (the most probable class) or
            `"macro_f1"` (offsets on the log-probabilities chosen last in `fit`; `hierattn.tuning`).
        text_units: What the classifier reads (`hierattn.data.units`): `"words"`, `"characters"`, `"subwords"`
            (learned from the training texts), or `"auto"` (chosen from them: words for spaced scripts; for
            Chinese, Japanese, Thai..., the better of characters and subwords on texts held out; recorded in
            `preprocessor.units_report`).
        ngram_logits, policy: The n-gram part and the decision policy (`DecisionPolicy.to_dict`), as fitted
            and tuned before (when loading a saved classifier).
        thresholds, cascade, offsets: The same as a `.keras` file saved before the policy holds them.
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
        policy=None,
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
        self.network = network
        self.cascade_report = cascade  # what tuning measured: the cut's report, and the policy of a file before it
        self._legacy = {"thresholds": thresholds, "offsets": offsets}
        self._policy = None if policy is None else DecisionPolicy.from_dict(policy)
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
        self.ngram_report = None  # what `fit_ngrams` and `tune` last measured of the n-gram part
        self.threshold_report = None  # how tuning last chose the thresholds (multi-label)
        self.offset_report = None  # how tuning last chose the offsets (decision_metric="macro_f1")
        self.validation_scores = None  # what the parts said of the validation texts the last `tune` read
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
            self.label_names = _LABEL_MAPS[self.kind](list(labels)).names
        if not self.preprocessor.adapted:
            self.preprocessor.adapt(texts, None if self.multi_label else labels, progress=bool(verbose))
        vocabulary_size, num_classes = len(self.preprocessor.vocabulary), len(self.label_names)
        if self.backbone is None:
            options = dict(self.backbone_options)
            if self.architecture == "transformer":
                options["sequence_length"] = self.preprocessor.sequence_length
            options["activation"] = self.kind.activation
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
        """Keras `fit` of the backbone on raw texts and labels, then `fit_ngrams` and `tune`.

        The first call adapts the classifier (`adapt`) to the training part.
        Keras's fit trains the backbone alone, on batches of similar length
        (padding trimmed; under `tf.distribute`, each text seen once per
        epoch across all replicas and workers). Unless `callbacks` holds an
        `EarlyStopping`, training with validation data stops when the
        validation loss has not improved for 2 epochs and keeps the best
        epoch's weights. Then the n-gram part is fitted (`fit_ngrams`) and
        the decision policy tuned (`tune`: one pass of the network over the
        validation texts); without them a further `fit` keeps what an earlier
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
        """`fit`'s steps after Keras's: the n-gram part fitted, then the decision policy tuned (`tune`)."""
        if self.ngram_logits is not None:
            self._fit_ngrams(x_fit, labels, validation, progress=bool(verbose))
        self.tune(validation, verbose=verbose)

    # The decision policy

    @property
    def network(self):
        """`"auto"`: the network reads only documents the n-gram part is not sure of; `"always"`: every document.

        The classifier's own setting (saved with it). To ask one question another way, pass
        `policy.for_network(...)` where a verb takes a policy, rather than changing it.
        """
        return self._network

    @network.setter
    def network(self, value):
        self._network = check_network(value)

    @property
    def policy(self):
        """How part outputs become probabilities and answers (`hierattn.policy.DecisionPolicy`), at `network`.

        Tuned by `fit` (`tune`); settable, e.g. `clf.policy = clf.policy.replace(cut=None)`.
        """
        policy = self._policy_as_saved() if self._policy is None else self._policy
        if self.ngram_logits is not None:  # the weights are the graph's own variable: the policy holds its values
            mixing = tuple(float(w) for w in np.asarray(self.combination.mixing))
            policy = policy if policy.weights == mixing else policy.replace(weights=mixing)
        return policy.for_network(self.network)

    @policy.setter
    def policy(self, policy):
        if policy.label_names != tuple(self.label_names or ()) or policy.kind is not self.kind:
            raise ValueError(f"a policy for {list(policy.label_names)} does not fit this classifier's labels")
        if (policy.weights is None) != (self.ngram_logits is None):
            raise ValueError("a policy with weights is for a classifier with an n-gram part, and only for one")
        if policy.weights is not None:
            self.combination.mixing.assign(np.array(policy.weights, np.float32))
        self._policy = policy.for_network("auto")

    @property
    def thresholds(self):
        """A multi-label classifier's thresholds, one per label (None before tuning chose them)."""
        found = self.policy.thresholds if self.label_names is not None else self._legacy["thresholds"]
        return None if found is None else list(found)

    @thresholds.setter
    def thresholds(self, values):
        self.policy = self.policy.replace(thresholds=values)

    @property
    def offsets(self):
        """A single-label classifier's offsets of the decision rule for macro-F1 (None: the most probable class).

        Settable, as `thresholds` are: `clf.offsets = [...]` is `clf.policy = clf.policy.replace(offsets=[...])`.
        """
        found = self.policy.offsets if self.label_names is not None else self._legacy["offsets"]
        return None if found is None else list(found)

    @offsets.setter
    def offsets(self, values):
        self.policy = self.policy.replace(offsets=values)

    @property
    def cascade(self):
        """Which documents the network reads (`hierattn.decision.Cascade`, of `policy`), None without an n-gram part."""
        return self.policy.cascade

    def _policy_as_saved(self):
        """The policy of a classifier not tuned here: a file saved before the policy, or one not yet tuned."""
        weights = None
        if self.ngram_logits is not None:
            weights = tuple(float(w) for w in np.asarray(self.combination.mixing))
        report = self.cascade_report or {}
        return DecisionPolicy(
            self.label_names or (),
            self.kind,
            weights=weights,
            cut=report.get("cut"),
            ngram_scale=None if self.multi_label else report.get("ngram_scale"),
            temperature=report.get("temperature"),
            temperature_always=report.get("temperature_always"),
            thresholds=self._legacy["thresholds"],
            offsets=self._legacy["offsets"],
        )

    def tune(self, validation_data=None, verbose=0):
        """Tunes the decision policy on validation texts, in one pass of the network (`fit`'s last step).

        The network and the n-gram part read the validation texts once
        (`part_outputs`); `hierattn.tuning.tune` then chooses, in order, the
        combination's weights, a multi-label classifier's thresholds, the
        cascade's cut and temperatures, and with `decision_metric="macro_f1"`
        the offsets. Without validation texts, what was chosen before is
        kept, or the defaults (`hierattn.defaults.NGRAMS["weights"]`, no cut,
        thresholds of `MULTILABEL["threshold"]`). `ngram_report`,
        `threshold_report`, `cascade_report` and `offset_report` then say
        what each step measured.

        Args:
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset of `(texts, labels)`, or None.
            verbose: Print a line per step: the weights, the thresholds, the cut and temperature, the offsets.

        Returns:
            The policy (`policy`). `validation_scores` keeps what the parts said of the validation texts
            (`hierattn.tuning.ValidationScores`), for a caller that scores them too without reading them again.
        """
        if not self.adapted:
            raise ValueError("this classifier has no labels or network to tune yet: fit or adapt it first")
        x = None
        if validation_data is not None:
            x, labels = self._ids_and_label_ids(*validation_pair(validation_data), "validation_data")
        if x is not None and len(labels):
            network, logits = self.part_outputs(x)
            self.validation_scores = ValidationScores(labels, network, logits)
            tuning = tune(self.validation_scores, self.policy.for_network("auto"), self.decision_metric)
            why = "chosen on validation"
        else:
            chosen = self._policy is not None or self._weights_chosen() or self.cascade_report is not None
            tuning = untuned(
                self.policy if chosen else None, self.ngram_logits is not None, (self.label_names, self.kind)
            )
            why = "kept (no validation texts)" if chosen else "the defaults (no validation texts)"
        self._apply(tuning, why, verbose)
        return self.policy

    def _weights_chosen(self):
        """Whether the combination's weights were chosen before (a file saved before the policy: not `(1, 0)`)."""
        if self.ngram_logits is None:
            return False
        if "network_weight" in (self.ngram_report or {}):
            return True
        return [float(w) for w in np.asarray(self.combination.mixing)] != [1.0, 0.0]

    def _apply(self, tuning, why, verbose):
        """Makes a tuning the classifier's: its policy, and its reports (with a line each if `verbose`)."""
        self.policy = tuning.policy
        lines = []
        if self.ngram_logits is not None:
            a, b = tuning.chosen_weights or tuning.policy.weights
            self._set_weights_report(dict(self._fit_report(), **(tuning.weights or {})), a, b, why)
            lines.append(self._ngram_line())
        if self.multi_label:
            report = tuning.thresholds or dict(self.threshold_report or {}, how="kept (no validation texts)")
            self.threshold_report = report
            lines.append(f"thresholds: {report['how']}")
        if tuning.cascade is not None:
            self.cascade_report = tuning.cascade
            lines.append(cascade_line(self.cascade_report))
        if tuning.offsets is not None:
            self.offset_report = tuning.offsets
            lines.append(offset_line(self.offset_report))
        if verbose and lines:
            print("\n".join(lines))

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
        if self.multi_label:
            config["multi_label"] = True
        if self.network != CASCADE["network"]:
            config["network"] = self.network
        if self.decision_metric != DECISION["metric"]:
            config["decision_metric"] = self.decision_metric
        if self.adapted:
            config["policy"] = self.policy.to_dict()  # the numbers that decide (`DecisionPolicy`)
        else:  # not built yet: the thresholds or offsets it was given, as it was given them
            config.update({key: value for key, value in self._legacy.items() if value is not None})
        if self.cascade_report is not None:  # what choosing the cut measured
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
