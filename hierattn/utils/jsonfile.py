"""Small JSON files tagged with a format name, written atomically, always standard JSON."""

import json
import math

from hierattn.errors import DataError
from hierattn.utils.atomic import write_text


def finite(value):
    """`value` with every NaN or infinite float (nested in dicts, lists, tuples) replaced by None.

    JSON has no NaN or Infinity; Python's `json` writes them as bare words that
    standard readers refuse. An undefined number is `null` instead.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a NumPy scalar
        return finite(value.item())
    return value


def dumps(payload, indent=None):
    """Standard JSON text of `payload` (NaN and infinities become null; see `finite`)."""
    return json.dumps(finite(payload), ensure_ascii=False, indent=indent, allow_nan=False)


def save_json(path, kind, payload, indent=None, overwrite=True):
    """Writes `{"format": kind, **payload}` to `path` atomically (`hierattn.utils.atomic`).

    The file appears complete or not at all, so a crash or a full disk never
    leaves a half-written file where a good one was, nor a temporary file.
    """
    write_text(path, dumps({"format": kind, **payload}, indent=indent) + "\n", overwrite=overwrite)


def read_json_object(path):
    """A user's JSON file holding one object (e.g. `train --config FILE.json`).

    Raises:
        DataError: Unreadable, not JSON, or not an object; in one line.
    """
    try:
        with open(path, encoding="utf-8") as f:
            payload = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"{path} is not valid JSON ({error}).") from None
    if not isinstance(payload, dict):
        raise DataError(f'{path} must hold one JSON object of settings, e.g. {{"epochs": 3}}')
    return payload


def load_json(path, kind):
    """Reads a file written by `save_json` and checks its format tag.

    Raises:
        DataError: Missing, unparsable, or of another format.
    """
    try:
        with open(path, encoding="utf-8") as f:
            payload = json.load(f)
    except FileNotFoundError:
        raise DataError(f"missing file: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"{path} is not valid JSON ({error}).") from None
    if not isinstance(payload, dict) or payload.pop("format", None) != kind:
        raise DataError(f"{path} is not a {kind} file.")
    return payload
