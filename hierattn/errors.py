"""Errors meant for users: the CLI prints them as one line, without a traceback."""


class HierattnError(Exception):
    """Base class of the errors a user can fix (bad input, missing data, ...)."""


class DataError(HierattnError, ValueError):
    """Missing, unreadable or malformed data."""


class TrainingDiverged(HierattnError):
    """The training loss became NaN or infinite."""


class ResourceError(HierattnError):
    """A run needs more memory than the machine has; the message names the settings to lower."""


class RunError(HierattnError):
    """A run directory or model file that cannot be used (missing, damaged, in use, or of another kind)."""


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
