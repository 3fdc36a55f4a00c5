"""Errors meant for users: the CLI prints them as one line, without a traceback.

One base class, `HierattnError`, and the kinds a caller catches: `ArgumentError`
(a bad argument value), `DataError` (missing or malformed data), `RunError` (a
run directory or model file that cannot be used), `TrainingDiverged` and
`ResourceError`, `ExportError` (a classifier that could not be exported as a
bundle: a `RuntimeError` too) and `WriteError` (a file that could not be
written: an `OSError` too). Every one is raised the same way, `Kind(message, argument=None)`:
when the fix is another value of one argument, `argument` names it and the
message says where with `{argument}`, so a program that names its options
otherwise words the same message with `error.naming("--max-length")`.
"""


class HierattnError(Exception):
    """Base class of the errors a user can fix (bad input, missing data, ...).

    Args:
        message: What went wrong and what to do; `{argument}` where the
            argument is named, when there is one.
        argument: The name, in the library call, of the argument whose value
            to change (e.g. `"max_length"`), or None.

    Example:

    >>> from hierattn.data import LabelMap
    >>> try:
    ...     LabelMap.from_labels(["pos", "pos"])
    ... except HierattnError as error:   # the user can fix it: one line, no traceback
    ...     print(f"Error: {error}")
    Error: a classifier needs at least two classes; found 1: pos.
    >>> error = DataError("texts.txt is not valid utf-8 text; pass its encoding with {argument}", argument="encoding")
    >>> str(error), error.naming("--encoding")
    ('texts.txt is not valid utf-8 text; pass its encoding with encoding', 'texts.txt is not valid utf-8 text; pass its encoding with --encoding')
    """

    def __init__(self, message, argument=None):
        if argument is not None and "{argument}" not in message:
            raise TypeError(f"the message of an error about {argument!r} must say where with {{argument}}: {message!r}")
        self.template, self.argument = message, argument
        super().__init__(self.naming(argument) if argument else message)

    def naming(self, name):
        """The message with the argument named `name` (the message itself when it names no argument)."""
        return self.template.replace("{argument}", name) if self.argument else self.template

    def __reduce__(self):  # pickled (e.g. from a worker process) with the argument and any attribute set on it
        return type(self), (self.template, self.argument), self.__dict__


class DataError(HierattnError, ValueError):
    """Missing, unreadable or malformed data.

    Example:

    >>> from hierattn.data import LabelMap
    >>> labels = LabelMap(["neg", "pos"])
    >>> try:
    ...     labels.to_ids(["pos", "neutral"])
    ... except DataError as error:
    ...     print(error)
    labels not seen in training: neutral (known: neg, pos).
    >>> issubclass(DataError, ValueError)
    True
    """


class TrainingDiverged(HierattnError):
    """The training loss became NaN or infinite.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> from hierattn.callbacks import StopOnNaN
    >>> model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> try:
    ...     model.fit(np.array([[np.nan]]), np.array([[0.0]]), callbacks=[StopOnNaN("runs/demo")], verbose=0)
    ... except TrainingDiverged as error:
    ...     print(error)  # doctest: +ELLIPSIS
    training diverged: the loss became nan at epoch 1, batch 1; runs/demo stays unfinished...
    """


class ResourceError(HierattnError):
    """A run needs more memory than the machine has; the message names the settings to lower.

    Example:

    >>> error = ResourceError("out of memory: the han model does not fit with batch_size=512; lower it")
    >>> isinstance(error, HierattnError)   # the `hierattn` program prints it as one line
    True
    """


class RunError(HierattnError):
    """A run directory or model file that cannot be used (missing, damaged, in use, or of another kind).

    Example:

    >>> import hierattn
    >>> try:
    ...     hierattn.load_run("runs/no-such-run")
    ... except RunError as error:
    ...     print(error)
    no run directory at runs/no-such-run
    """


class ExportError(HierattnError, RuntimeError):
    """A classifier that could not be exported as a bundle (`TextClassifier.export`); nothing was written.

    Example:

    >>> error = ExportError("the exported graph does not give the classifier's answers")
    >>> isinstance(error, RuntimeError)   # the `hierattn` program prints it as one line
    True
    """


class ArgumentError(HierattnError, ValueError):
    """A bad or missing value of one argument of a library call, named in the message.

    Example:

    >>> error = ArgumentError("{argument} must be SxW; got '5'", argument="max_length")
    >>> str(error), error.naming("--max-length")
    ("max_length must be SxW; got '5'", "--max-length must be SxW; got '5'")
    """


class WriteError(HierattnError, OSError):
    """A file could not be written; nothing was left behind under its name or a temporary one.

    An `OSError` with the reason's `errno`, whose message is one plain line.

    Example:

    >>> import errno
    >>> from hierattn.utils.atomic import atomic_open
    >>> try:
    ...     with atomic_open("no/such/folder/results.csv") as f:
    ...         _ = f.write("a,b\\n")
    ... except WriteError as error:
    ...     print(error, error.errno == errno.ENOENT)
    no such file or directory while writing no/such/folder/results.csv True
    """

    def __init__(self, message, errno=None):
        OSError.__init__(self, errno, message)
        self.template, self.argument = message, None

    def __str__(self):
        return self.strerror

    def __reduce__(self):
        return type(self), (self.strerror, self.errno), self.__dict__


def first_line(error):
    """An exception's message cut to its first line (its class name when it has none), for one-line reports.

    Example:

    >>> first_line(ValueError("bad shape\nTraceback of the converter ..."))
    'bad shape'
    >>> first_line(KeyError())
    'KeyError'
    """
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# What a message shows of a list of names (a table's columns, a data set's classes): so many, each so long.
SHOWN_NAMES, SHOWN_CHARACTERS = 20, 40


def names_text(names, noun="names"):
    """Names for a one-line message: `a, b, c`; the first `SHOWN_NAMES` of many, each cut to `SHOWN_CHARACTERS`.

    A name that is not printable (a line break, a control character) is
    shown as Python writes it, so the message stays one line however
    hostile the names.

    >>> names_text(["pos", "neg"]), names_text(["x" * 50])
    ('pos, neg', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...')
    >>> names_text([f"c{i}" for i in range(5000)], "columns")[-34:]
    'c17, c18, c19, ... (5,000 columns)'
    """
    names = [str(name) for name in names]

    def shown(name):
        cut = name[:SHOWN_CHARACTERS] + ("..." if len(name) > SHOWN_CHARACTERS else "")
        return cut if cut.isprintable() else repr(cut)

    text = ", ".join(shown(name) for name in names[:SHOWN_NAMES])
    return text + (f", ... ({len(names):,} {noun})" if len(names) > SHOWN_NAMES else "")
