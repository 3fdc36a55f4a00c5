"""`Task`: Keras's verbs on raw texts, for a model of a preprocessor, a backbone and class names.

The base of `TextClassifier`, as keras-hub's `Task` (with its
`PipelineModel`) is the base of keras-hub's classifiers: using the
classifier, whatever made and fitted it. Its verbs take texts in the forms
`hierattn.models.inputs` lists and run Keras's own code on their ids; on ids
they are Keras's own.
"""

import functools
import sys

import keras
import numpy as np

from hierattn.data.dataset import LabelMap
from hierattn.data.ids import ngram_ids, take_documents, token_ids
from hierattn.data.pipeline import make_eval_dataset
from hierattn.decision import check_k
from hierattn.defaults import CLIPNORM, TRAINING
from hierattn.distribute import step_logs_for
from hierattn.errors import DataError
from hierattn.kinds import MULTI, SINGLE, kind_of
from hierattn.models.examples_seen import ExamplesSeen
from hierattn.models.inference import batched_outputs, predict_batches
from hierattn.models.inputs import (
    as_texts,
    is_text_input,
    label_values,
    labelled_texts,
    texts_and_labels,
)
from hierattn.ngrams.mixing import ngram_logits, ngram_probabilities
from hierattn.utils.keras_compat import BuildFromKnownShapes, drop_untracked_attribute, untracked_attribute


def default_optimizer(learning_rate=TRAINING["learning_rate"]):
    """The tuned optimizer: Adam with gradients clipped to norm 1."""
    return keras.optimizers.Adam(learning_rate, clipnorm=CLIPNORM)


# Each kind's training defaults (`Task.compile`): the loss, and the metric its `metric` names.
LOSSES = {SINGLE: keras.losses.CategoricalCrossentropy, MULTI: keras.losses.BinaryCrossentropy}
METRICS = {
    SINGLE: keras.metrics.CategoricalAccuracy,
    MULTI: functools.partial(keras.metrics.F1Score, average="micro", threshold=0.5),
}
# How each kind's labels become what its loss reads: class ids, or multi-hot rows.
_LABEL_IDS = {SINGLE: LabelMap.class_ids, MULTI: LabelMap.multi_hot}


class Task(BuildFromKnownShapes, keras.Model):
    """A Keras model that also takes raw texts: `preprocessor` turns them into ids for `backbone`.

    Subclasses (`TextClassifier`) set `preprocessor` (a `TextPreprocessor`),
    `backbone` (a `Backbone`), `label_names` (the classes, in output order)
    and `ngram_logits` (an n-gram part, or `None`), and define `call` on ids.
    `evaluate`, `predict` and calling the model take texts as a list, a NumPy
    array or pandas Series, a `tf.Tensor` of strings or a `tf.data.Dataset`
    (of texts, or of `(texts, labels)` for `evaluate`), and labels as class
    names, integers or one-hot rows (`label_ids` says how integers are read);
    a multi-label classifier (`multi_label` true: a sigmoid per label)
    takes each text's labels as a list of them, or multi-hot rows.

    Example:

    `TextClassifier` is the `Task` hierattn makes; any model of a
    preprocessor, a backbone and class names gets the same verbs:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, ["pos", "neg", "pos", "neg"] * 5, epochs=1, verbose=0)
    >>> isinstance(clf, Task), clf.predict(["Loved it."], verbose=0).shape
    (True, (1, 2))
    >>> clf.predict_labels(["Loved it."])[0] in clf.label_names
    True
    """

    multi_label = False  # set by a subclass whose outputs are independent label probabilities (sigmoid)
    policy = None  # a subclass's `hierattn.policy.DecisionPolicy`: how part outputs become answers

    @property
    def kind(self):
        """`SINGLE` or `MULTI` (`hierattn.kinds`): one class per text, or a set of labels (`multi_label`)."""
        return kind_of(self.multi_label)

    @property
    def adapted(self):
        """Whether the vocabulary, the label names and the backbone exist (after the first `fit` or loading)."""
        return self.backbone is not None and self.label_names is not None and self.preprocessor.adapted

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Keras `save`: one `.keras` file holding the whole classifier, which `keras.saving.load_model` reads back.

        Raises:
            ValueError: `filepath` ends in `.h5` or `.hdf5`: Keras's legacy format cannot hold the preprocessor or
                the n-gram part, so the path is refused before anything is written.
        """
        if str(filepath).lower().endswith((".h5", ".hdf5")):
            raise ValueError(
                "a TextClassifier saves only in the native Keras format (the legacy HDF5 format cannot hold "
                f"its preprocessor or n-gram part): use a path ending in .keras. Received: filepath={filepath}"
            )
        return super().save(filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def export(self, filepath, format="bundle", verbose=True, input_signature=None, **kwargs):
        """Keras `export`; by default (`"bundle"`) the whole classifier and its tokenizer in one ONNX file.

        `hierattn.runtime.load` runs it without TensorFlow, with this classifier's answers (`export_bundle` of
        `hierattn.export`). Keras's formats (`"tf_saved_model"`, `"onnx"`...) take `preprocessor`'s ids.
        """
        from hierattn.export import converter as export

        if format != "bundle":
            signature = input_signature or export.input_signature(self)
            return super().export(filepath, format=format, verbose=verbose, input_signature=signature, **kwargs)
        if input_signature is not None or kwargs:
            raise ValueError("a bundle's inputs are the preprocessor's ids: give no input_signature or options")
        return export.export_bundle(self, filepath, verbose=verbose)

    def label_ids(self, labels):
        """Class ids of labels: class names, or integers as Keras reads them (`LabelMap.class_ids`).

        Integer labels are class ids into `label_names` (`0 .. C-1`), as in
        Keras, unless the class names are integers themselves (the classifier
        was fitted on integer labels, e.g. stars `[1, 2, 5]`): then integers
        are class names. Unknown labels, and integers out of range, raise a
        `DataError` naming them. A multi-label classifier's labels are label
        sets (lists of labels read so): it gets multi-hot rows `(n, labels)`.
        """
        return _LABEL_IDS[self.kind](LabelMap(self.label_names), list(labels))

    def __call__(self, inputs, *args, **kwargs):
        # Texts are tokenized (in Python) first; ids go straight to Keras.
        if is_text_input(inputs):
            inputs = self.preprocessor(as_texts(inputs))
        return super().__call__(inputs, *args, **kwargs)

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """Keras `compile`, with tuned `"auto"` defaults.

        `"auto"`: Adam (learning rate 1e-3, gradients clipped to norm 1),
        categorical cross-entropy, accuracy, and `examples`
        (`hierattn.models.examples_seen.ExamplesSeen`: the documents of the epoch, counted
        over all replicas and workers under `tf.distribute`). A multi-label
        classifier: binary cross-entropy and micro-F1 over 0.5 instead.
        """
        if metrics == "auto":
            metrics = [METRICS[self.kind](name=self.kind.metric), ExamplesSeen()]
        if loss == "auto":
            loss = LOSSES[self.kind]()
        super().compile(
            optimizer=default_optimizer() if optimizer == "auto" else optimizer,
            loss=loss,
            metrics=metrics,
            **kwargs,
        )

    def compile_from_config(self, config):
        # The compiled settings saved in a `.keras` file, restored on loading
        # (with the optimizer built, so its saved state loads too).
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def build_optimizer(self):
        """Builds the optimizer's variables for the built model's weights now (`Optimizer.build`), if not yet.

        Without a strategy Keras builds them inside the first trace of the
        train function, and TensorFlow, seeing variables made there, traces
        that function a second time (about 5 s for a tiny HAN on 2 cores).
        Built first, it is traced once; the training is the same.
        """
        if self.built and not self.optimizer.built:
            with self.distribute_strategy.scope():
                self.optimizer.build(self.trainable_variables)

    def train_step(self, data):
        return step_logs_for(self.distribute_strategy, super().train_step(data))

    def test_step(self, data):
        return step_logs_for(self.distribute_strategy, super().test_step(data))

    def _build_batch(self):
        # Under a strategy, Keras's fit and evaluate build from this batch of
        # the input and target shapes (`BuildFromKnownShapes`, which says why).
        if not self.adapted:
            return None
        return (
            np.ones((1,) * self.backbone.input_rank, np.int32),
            np.zeros((1, len(self.label_names)), np.float32),
        )

    def _drop_traced(self):
        # Traced functions keep what they were traced with (the n-gram part's
        # tables, the graph `call` chose): they are traced again when next used.
        self.train_function = self.test_function = self.predict_function = None
        drop_untracked_attribute(self, "_hierattn_inference")

    def _texts_and_labels(self, x, y, verb):
        texts, labels, num_classes = labelled_texts(x, y, verb, self.label_names, self.multi_label)
        if self.label_names is None and num_classes is not None:
            self.label_names = list(range(num_classes))
        return texts, labels

    def _ids_and_label_ids(self, x, y, verb):
        # Texts (with labels, or a dataset of both) or their ids, as ids and class ids.
        if is_text_input(x):
            texts, labels = self._texts_and_labels(x, y, verb)
            return self.preprocessor(texts), self.label_ids(labels)
        rank = self.preprocessor.input_rank
        arrays = {key: np.asarray(value) for key, value in x.items()} if isinstance(x, dict) else np.asarray(x)
        ids = token_ids(arrays)
        if (
            y is None
            or ids.ndim != rank
            or any(a.dtype.kind not in "iu" or len(a) != len(ids) for a in (ids, ngram_ids(arrays)))
        ):
            raise DataError(
                f"{verb} takes texts, or their ids from the preprocessor ({rank}-dimensional integers), and their labels"
            )
        if self.preprocessor.ngram_length is not None and not isinstance(x, dict):
            raise DataError(
                f"{verb} takes the preprocessor's dict of token_ids and ngram_ids (the n-gram part reads the whole "
                "text), not one array of ids"
            )
        labels = self.label_ids(label_values(y, self.label_names, self.multi_label)[0])
        if len(labels) != len(ids):
            raise DataError(f"{len(ids)} documents but {len(labels)} labels")
        return arrays, labels

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", return_dict=False, **kwargs):
        """Keras `evaluate`, also on raw texts and their labels (or a dataset of them).

        Returns what Keras returns: the loss and the compiled metrics as a list (a scalar with no metrics), or a
        dict with `return_dict=True`. An uncompiled classifier (a run's `model.keras`) is compiled with
        `compile`'s defaults first. `verbose="auto"`: as `fit`'s, a bar on a terminal, else one line.
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
        verbose = (1 if sys.stdout.isatty() else 2) if verbose == "auto" else verbose
        return super().evaluate(dataset, verbose=verbose, return_dict=return_dict, **kwargs)

    def predict(self, x, batch_size=None, verbose="auto", **kwargs):
        """Keras `predict`: class probabilities `(n, num_classes)` in `label_names` order, also for raw texts.

        On texts (any form the class docstring lists), documents of similar length are batched (`predict_ids`)."""
        if not is_text_input(x):
            return super().predict(x, batch_size=batch_size, verbose=verbose, **kwargs)
        texts, _, _ = texts_and_labels(x)
        progress = verbose == 1 or (verbose == "auto" and sys.stdout.isatty())
        return self.predict_ids(self.preprocessor(texts, progress=progress), batch_size or 32, progress)

    def predict_labels(self, x, batch_size=None, verbose=0, min_confidence=None):
        """The predicted class names of texts (the `label_names` of `predict`'s most probable class).

        A multi-label classifier gives each text a list of label names: those
        whose probability is over their threshold (`thresholds`), in
        `label_names` order (possibly none). With `min_confidence`, a text
        whose decision is less sure than that (`decision.confidence`) gets
        None: it is left for a person.
        """
        return self.policy.labels(self.predict(x, batch_size=batch_size, verbose=verbose), min_confidence)

    def over_thresholds(self, probabilities):
        """Multi-hot rows (int8) of the labels over their thresholds, for a multi-label classifier's probabilities."""
        return self.policy.over_thresholds(probabilities)

    @property
    def decision(self):
        """How the probabilities become labels: the classifier's `policy` (argmax after its offsets, or thresholds)."""
        return self.policy

    def preprocess(self, texts, progress=False, workers=None):
        """The ids `predict_ids` reads for a list of texts (the preprocessor's; `hierattn.runtime.TextPredictor`)."""
        return self.preprocessor(texts, progress=progress, workers=workers)

    def predict_texts(self, texts, batch_size=32, progress=False, workers=None):
        """Class probabilities of a list of texts, NaN rows for texts without words (`hierattn.runtime.TextPredictor`)."""
        x = self.preprocess(texts, progress=progress, workers=workers)
        ids = token_ids(x)
        filled = np.flatnonzero(ids.reshape(len(ids), -1).any(axis=1)) if len(ids) else np.zeros(0, int)
        probabilities = np.full((len(ids), len(self.label_names)), np.nan, np.float32)
        if len(filled):
            probabilities[filled] = self.predict_ids(take_documents(x, filled), batch_size, progress)
        return probabilities

    def has_words(self, text):
        """Whether the preprocessor's tokenizer keeps any word of `text` (markup, symbols and spaces have none)."""
        return self.preprocessor.has_words(text)

    def predict_top_k(self, x, k, batch_size=None, verbose=0):
        """The `k` most probable classes of each text with their probabilities, most probable first.

        Returns:
            One list per text of `(class name, probability)` pairs, `min(k,
            num_classes)` long.

        Raises:
            ArgumentError: `k` is not a whole number of at least 1 (a `ValueError`).
        """
        check_k(k)
        return self.policy.top_k(self.predict(x, batch_size=batch_size, verbose=verbose), k)

    def part_outputs(self, x, batch_size=32, progress=False):
        """What each part says of id arrays, in one pass of the network: `(network probabilities, n-gram logits)`.

        The n-gram logits are None without an n-gram part. `policy.combine`
        and `policy.probabilities` turn the two into the classifier's
        probabilities with any setting (`hierattn.policy.DecisionPolicy`),
        so one pass serves every question asked of the same documents.
        """
        network = predict_batches(self.backbone, token_ids(x), batch_size, progress) if len(token_ids(x)) else None
        if network is None:
            network = np.zeros((0, len(self.label_names)), np.float32)
        if self.ngram_logits is None:
            return network, None
        return network, ngram_logits(self.ngram_logits, ngram_ids(x))

    def predict_ids(self, x, batch_size=32, progress=False, part=None, policy=None):
        """Class probabilities for id arrays (from the preprocessor): of the classifier, or of one part.

        Args:
            x: Ids as `preprocessor` gives them: an array `(n, ...)`, or a
                dict of `"token_ids"` and `"ngram_ids"`.
            batch_size: Documents per batch.
            progress: Show a progress bar.
            part: `None` (the classifier's answers: with a cascade, the
                network reads only the documents the n-gram part is not sure
                of, `cascade`), `"whole"` (the whole combination: the
                network reads every document), `"network"` (the backbone
                alone) or `"ngrams"` (the n-gram part alone: the softmax, or
                for a multi-label classifier the sigmoid, of its logits).
            policy: The `DecisionPolicy` to decide with (None: the classifier's `policy`), e.g.
                `policy.for_network("always")`.
        """
        if part not in (None, "whole", "network", "ngrams"):
            raise ValueError(f"part must be None, 'whole', 'network' or 'ngrams'. Received: part={part!r}")
        if part == "ngrams" and self.ngram_logits is None:
            raise ValueError("this classifier has no n-gram part (it was made with ngrams=False)")
        if len(token_ids(x)) == 0:
            return np.zeros((0, len(self.label_names)), np.float32)
        policy = policy or self.policy
        if part == "ngrams":
            return ngram_probabilities(self.ngram_logits, ngram_ids(x), activation=policy.activation)
        if part == "network" or self.ngram_logits is None:
            return predict_batches(self.backbone, token_ids(x), batch_size, progress)
        if not isinstance(x, dict):  # the n-gram part reads the backbone's ids (a classifier saved before)
            return predict_batches(self, x, batch_size, progress)
        logits = ngram_logits(self.ngram_logits, x["ngram_ids"])

        def whole(index):
            probabilities = predict_batches(self.backbone, x["token_ids"][index], batch_size, progress)
            return policy.combine(probabilities, logits[index])

        if part == "whole":
            return whole(np.arange(len(logits)))
        return policy.probabilities(logits, whole)  # the network reads only what the policy says it must

    def attention(self, x, batch_size=32):
        """The network's probabilities and attention weights for id arrays, in input order.

        Args:
            x: Ids as `preprocessor` gives them (the backbone's, of a dict).
            batch_size: Documents per batch.

        Returns:
            `{"probabilities": (n, classes), <attention name>: weights, ...}`
            (`Backbone.attention_model`): the backbone alone, without the
            n-gram part.
        """
        # Kept out of Keras's tracking: it shares the backbone's layers, it adds none.
        model = untracked_attribute(self, "_attention_model", self.backbone.attention_model)
        return batched_outputs(model, token_ids(x), batch_size)

    def explain(self, texts, ids=None, labels=None, label=None, attention=False):
        """Explains predictions: each word's evidence for the decision, and where the network read.

        Each word's evidence adds up, with named constant terms, to the
        margin of the predicted class over the runner-up; `ids` and true
        `labels` are shown with them (see `hierattn.explain.Explainer`).
        A multi-label classifier explains each label alone, against its
        threshold: each text's predicted labels (none: its most probable
        label), or `label`.

        Args:
            texts: One text (a string), or several (a list, array, Series...).
            ids: Optional document ids (one, or one per text).
            labels: Optional true labels (one, or one per text).
            label: A multi-label classifier's label to explain, or a list of them.
            attention: Also where the network would read in the texts the
                n-gram part decided alone (`cascade`; one more network pass).

        Returns:
            For one string, a `hierattn.explain.Explanation`; otherwise
            `hierattn.explain.Explanations` (a list of them). Both show
            themselves in a notebook and give `to_html()`, `to_json()` and
            `top(k)`. A multi-label classifier gives `Explanations` also for
            one string: one per label explained, text by text.
        """
        # hierattn.explain is the layer above (it explains a Task): imported when used, so imports go one way.
        from hierattn.explain.explainer import Explainer
        from hierattn.explain.explanation import Explanations

        if getattr(self, "_explainer", None) is None:
            self._explainer = Explainer(self)
        if isinstance(texts, str):
            found = self._explainer.explain(
                [texts], None if ids is None else [ids], None if labels is None else [labels], label, attention
            )
            return Explanations(found) if self.multi_label else found[0]
        return Explanations(self._explainer.explain(as_texts(texts), ids, labels, label, attention))
