"""Small JSON files tagged with a format name, written atomically."""

import json
import os

from hierattn.errors import DataError


def save_json(path, kind, payload, indent=None):
    """Writes `{"format": kind, **payload}` to `path` via a temporary file.

    The file appears complete or not at all, so a crash never leaves a
    half-written file where a good one was.
    """
    path = os.fspath(path)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"format": kind, **payload}, f, ensure_ascii=False, indent=indent)
    os.replace(tmp, path)


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
        raise DataError(f"{path} must hold one JSON object of settings, e.g. {{\"epochs\": 3}}")
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
