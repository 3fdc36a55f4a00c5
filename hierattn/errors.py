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
