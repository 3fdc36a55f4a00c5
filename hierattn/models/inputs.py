"""What `TextClassifier`'s verbs accept: texts and labels in the forms Keras users pass them.

Texts: a list or tuple of strings, a NumPy array or pandas Series of
strings (or UTF-8 bytes), a `tf.Tensor` of strings, or a `tf.data.Dataset`
of texts or of `(texts, labels)` (batched or not). Labels: class names or
integers, or one-hot rows `(n, num_classes)`; for a multi-label
classifier, each document's labels as a list (or tuple, set) of them, or
multi-hot rows. Integers are class ids into
the classifier's `label_names`, as Keras reads them, unless the class names
are integers themselves (a classifier fitted on integer labels): then they
are names (`hierattn.data.LabelMap.class_ids`). Tokenizing is Python code,
so everything is read into Python strings first; a dataset is read once.
"""

import numpy as np

from hierattn.data.dataset import LabelMap, random_split, stratified_split, validation_pair
from hierattn.data.ids import token_ids
from hierattn.defaults import TRAINING
from hierattn.errors import DataError
from hierattn.kinds import MULTI, SINGLE, kind_of
from hierattn.runtime.checks import as_texts as texts_of


def _is_dataset(x):
    return type(x).__module__.startswith("tensorflow") and hasattr(x, "element_spec")


def _is_text_dataset(x):
    """A `tf.data.Dataset` whose elements are strings or start with strings (not a dataset of ids)."""
    if not _is_dataset(x):
        return False
    spec = x.element_spec
    first = spec[0] if isinstance(spec, tuple) else spec
    return getattr(getattr(first, "dtype", None), "name", "") == "string"


def _is_string_tensor(x):
    return type(x).__module__.startswith("tensorflow") and getattr(getattr(x, "dtype", None), "name", "") == "string"


def is_text_input(x):
    """Whether `x` holds texts (the classifier's own path), not token ids for the Keras path."""
    if isinstance(x, (str, bytes)) or _is_text_dataset(x) or _is_string_tensor(x):
        return True
    if isinstance(x, (list, tuple)):
        return len(x) == 0 or isinstance(x[0], (str, bytes))
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "US" or (x.dtype.kind == "O" and (x.size == 0 or isinstance(x.flat[0], (str, bytes))))
    return type(x).__name__ == "Series"  # pandas


def _decode(value):
    """A label as a string when it came as UTF-8 bytes (any other value as it is)."""
    if not isinstance(value, bytes):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"label {value!r} is not UTF-8 ({error.reason} at byte {error.start})") from None


def as_texts(inputs):
    """A list of strings from any text input but a dataset; refuses anything else in one line.

    The runtime's own check (`hierattn.runtime.checks.as_texts`) once a `tf.Tensor` is in NumPy.
    """
    if _is_string_tensor(inputs):
        inputs = inputs.numpy()
    return texts_of(inputs)


def read_dataset(dataset):
    """The texts (and labels, or `None`) of a `tf.data.Dataset` of texts or `(texts, labels)`, batched or not."""
    texts, labels = [], []
    for element in dataset.as_numpy_iterator():
        if isinstance(element, tuple):
            if len(element) != 2:
                raise DataError(f"a dataset of texts gives texts or (texts, labels); got {len(element)} values")
            x, y = element
        else:
            x, y = element, None
        batched = np.ndim(x) == 1
        texts.extend(np.asarray(x).tolist() if batched else [x])
        if y is not None:
            labels.extend(list(y) if batched else [y])
    return texts, (np.asarray(labels) if labels else None)


def texts_and_labels(x, y=None, label_names=None, multi_label=False):
    """`(texts, labels, num_classes)` from a verb's `x` and `y` (a dataset gives both).

    Labels come back as a list of values (class names or integers).
    One-hot rows `(n, k)` become the names in `label_names` (`k` of them),
    or the integers `0 .. k-1` when there are none yet; `num_classes` is
    then `k` (otherwise `None`: the classes are the labels seen).
    """
    if _is_dataset(x):
        if y is not None:
            raise DataError("give the labels inside the dataset ((texts, labels) elements), not as y")
        x, y = read_dataset(x)
    texts = as_texts(x)
    if y is None:
        return texts, None, None
    labels, num_classes = label_values(y, label_names, multi_label)
    if len(texts) != len(labels):
        raise DataError(f"{len(texts)} texts but {len(labels)} labels")
    return texts, labels, num_classes


def labelled_texts(x, y, verb, label_names=None, multi_label=False):
    """`texts_and_labels` for a verb that needs labelled texts (`fit`, `evaluate`); refuses anything else in one line.

    Raises:
        DataError: `x` holds no texts (e.g. token ids), or no labels come with them.
    """
    if not is_text_input(x):
        raise DataError(
            f"{verb} takes texts (a list, NumPy array, pandas Series, tf.Tensor of strings or "
            f"tf.data.Dataset) and their labels"
        )
    texts, labels, num_classes = texts_and_labels(x, y, label_names, multi_label)
    if labels is None:
        raise DataError(f"{verb} needs the texts' labels: {verb}(texts, labels), or a dataset of (texts, labels)")
    return texts, labels, num_classes


def split_validation(texts, labels, share, seed, multi_label=False):
    """`((texts, labels), (validation texts, validation labels))`: `share` of the texts held out, stratified by class.

    The split is seeded (`hierattn.data.stratified_split`; label sets, which
    no one class stratifies, `hierattn.data.dataset.random_split`); Keras's
    own `validation_split` takes the last share instead.
    """
    fit_index, val_index = _SPLITS[kind_of(multi_label)](labels, share, seed)
    return tuple(([texts[i] for i in index], [labels[i] for i in index]) for index in (fit_index, val_index))


def _stratified(labels, share, seed):
    return stratified_split(LabelMap.from_labels(labels).to_ids(labels), share, seed)


def _at_random(labels, share, seed):
    return random_split(len(labels), share, seed)


# How each kind's labels are split (`split_validation`): classes stratified; label sets, which no one class
# stratifies, at random.
_SPLITS = {SINGLE: _stratified, MULTI: _at_random}


def label_values(y, label_names=None, multi_label=False):
    """`(labels, num_classes)`: labels as a list of values; one-hot rows become names (see `texts_and_labels`).

    With `multi_label`, each value is a list of labels and multi-hot rows become the names of their ones.
    """
    if type(y).__module__.startswith("tensorflow"):
        y = y.numpy()
    if hasattr(y, "to_numpy"):  # pandas
        y = y.to_numpy()
    return _LABEL_VALUES[kind_of(multi_label)](y, label_names)


def _classes(y, label_names=None):
    """`label_values` of a single-label classifier: each document's class, and the column count of one-hot rows."""
    array = np.asarray(y)
    if array.ndim == 2:
        if array.dtype.kind not in "biuf" or not np.all((array == 0) | (array == 1)) or not np.all(array.sum(1) == 1):
            raise DataError("labels given as rows must be one-hot: one 1 per row, zeros elsewhere")
        num_classes = array.shape[1]
        if label_names is not None and len(label_names) != num_classes:
            raise DataError(
                f"one-hot labels have {num_classes} columns but the classifier has {len(label_names)} classes"
            )
        names = list(range(num_classes)) if label_names is None else list(label_names)
        return [names[i] for i in array.argmax(1)], num_classes
    if array.ndim != 1:
        raise DataError(f"labels must be one per text (or one-hot rows); got shape {array.shape}")
    return [_decode(label) for label in array.tolist()], None


def _label_sets(y, label_names=None):
    """`label_values` of a multi-label classifier: each document's labels as a list, and the column count of rows."""
    if isinstance(y, np.ndarray) and y.ndim == 2:
        if y.dtype.kind not in "biuf" or not np.all((y == 0) | (y == 1)):
            raise DataError("multi-label labels given as rows must be multi-hot: ones and zeros only")
        if label_names is not None and len(label_names) != y.shape[1]:
            raise DataError(
                f"multi-hot labels have {y.shape[1]} columns but the classifier has {len(label_names)} labels"
            )
        names = list(range(y.shape[1])) if label_names is None else list(label_names)
        return [[names[j] for j in np.flatnonzero(row)] for row in y], y.shape[1]
    sets = []
    for i, labels in enumerate(list(y)):
        if isinstance(labels, np.ndarray):
            labels = labels.tolist()
        if isinstance(labels, (str, bytes)) or not isinstance(labels, (list, tuple, set, frozenset)):
            raise DataError(
                f"a multi-label classifier takes each text's labels as a list (or multi-hot rows); label {i + 1} is "
                f'{labels!r} (split joined label names first, e.g. "a|b".split("|"))'
            )
        sets.append(sorted({_decode(label) for label in labels}, key=str))
    return sets, None


# How each kind reads labels (`label_values`): one class per text, or a set of labels.
_LABEL_VALUES = {SINGLE: _classes, MULTI: _label_sets}


def fit_datasets(classifier, texts, labels, validation_data, batch_size, initial_epoch, verbose, callbacks):
    """`fit`'s training ids and batches, and validation `(ids, labels)` and batches; early stopping in `callbacks`.

    With `verbose=2` (a line per epoch: output to a file), `callbacks` also
    gets `hierattn.callbacks.ProgressLines`, lines within each epoch.

    Returns:
        `(training ids, training batches, validation (ids, labels), validation batches)`, the last two None
        without validation data.
    """
    import keras

    from hierattn.callbacks import ProgressLines
    from hierattn.data.pipeline import make_eval_dataset, make_train_dataset

    if verbose == 2 and not any(isinstance(c, ProgressLines) for c in callbacks):
        callbacks.append(ProgressLines())
    strategy, num_classes = classifier.distribute_strategy, len(classifier.label_names)
    x_fit, y_fit = classifier.preprocessor(texts, progress=bool(verbose)), classifier.label_ids(labels)
    train_set = make_train_dataset(
        token_ids(x_fit), y_fit, batch_size, classifier.seed, num_classes, first_epoch=initial_epoch, strategy=strategy
    )
    if validation_data is None:
        return x_fit, train_set, None, None
    texts, labels = classifier._texts_and_labels(*validation_pair(validation_data), "validation_data")
    validation = (classifier.preprocessor(texts), labels)
    val_set = make_eval_dataset(
        token_ids(validation[0]), classifier.label_ids(labels), batch_size * 4, num_classes, strategy=strategy
    )
    if not any(isinstance(c, keras.callbacks.EarlyStopping) for c in callbacks):
        callbacks.append(keras.callbacks.EarlyStopping(patience=TRAINING["patience"], restore_best_weights=True))
    return x_fit, train_set, validation, val_set
