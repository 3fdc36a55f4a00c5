"""Errors meant for users: the CLI prints them as one line, without a traceback."""


class HierattnError(Exception):
    """Base class of the errors a user can fix (bad input, missing data, ...).

    Example:

    >>> from hierattn.data import LabelMap
    >>> try:
    ...     LabelMap.from_labels(["pos", "pos"])
    ... except HierattnError as error:   # the user can fix it: one line, no traceback
    ...     print(f"Error: {error}")
    Error: a classifier needs at least two classes; found 1: ['pos'].
    """


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


class ArgumentError(HierattnError, ValueError):
    """A bad or missing value of one argument of a library call, named in the message.

    The message is a template with `{argument}` where the argument is named:
    `str(error)` names it as the library does (`max_length`), and a program
    that names it otherwise words the same message with `naming` (the command
    line names its options after the arguments: `--max-length`).

    Args:
        argument: The argument's name in the library call, e.g. `"data"`.
        template: The message, with `{argument}` where the argument is named.

    Example:

    >>> error = ArgumentError("max_length", "{argument} must be SxW; got '5'")
    >>> str(error), error.naming("--max-length")
    ("max_length must be SxW; got '5'", "--max-length must be SxW; got '5'")
    """

    def __init__(self, argument, template):
        self.argument, self.template = argument, template
        super().__init__(self.naming(argument))

    def naming(self, name):
        """The message with the argument named `name`."""
        return self.template.replace("{argument}", name)

    def __reduce__(self):  # pickled (e.g. from a worker process) with both arguments
        return type(self), (self.argument, self.template)


class DataArgumentError(ArgumentError, DataError):
    """Data that does not fit the value of an argument, which the message names: both kinds of error.

    Bytes that the `encoding` given cannot decode, or a table without the
    column a `text_column` or `label_column` would name, are bad data that
    an argument can fix; catching either `DataError` or `ArgumentError`
    catches it.

    Example:

    >>> error = DataArgumentError("encoding", "texts.txt is not valid utf-8 text; pass its encoding with {argument}")
    >>> isinstance(error, DataError), error.naming("--encoding")
    (True, 'texts.txt is not valid utf-8 text; pass its encoding with --encoding')
    """


class RunArgumentError(ArgumentError, RunError):
    """A run directory that cannot be used as the value of an argument, which the message names: both kinds of error.

    E.g. an `output` that already holds a run, or a run that is unfinished,
    to continue with `resume`.

    Example:

    >>> error = RunArgumentError("output", "runs/a already exists; choose another {argument}")
    >>> isinstance(error, RunError), str(error)
    (True, 'runs/a already exists; choose another output')
    """


class DivergedArgumentError(ArgumentError, TrainingDiverged):
    """A training run whose loss became NaN or infinite, with the argument to change named: both kinds of error.

    Example:

    >>> error = DivergedArgumentError("learning_rate", "the loss became nan; try a lower {argument}")
    >>> isinstance(error, TrainingDiverged), error.naming("--learning-rate")
    (True, 'the loss became nan; try a lower --learning-rate')
    """
