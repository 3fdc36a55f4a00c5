"""Any CSV / TSV / JSON-lines file or pandas DataFrame of texts and labels."""

import pathlib
import warnings

import numpy as np
import pandas as pd

from hierattn.data.dataset import LabelMap, TextDataset
from hierattn.errors import DataError

TEXT_COLUMNS = ("text", "review", "sentence", "content", "document", "body")
LABEL_COLUMNS = ("label", "labels", "sentiment", "class", "category", "target", "y")


def read_table(source, fmt=None, **kwargs):
    """Reads a table file into a DataFrame (format from the file extension).

    Args:
        source: Path of a `.csv`, `.tsv`/`.tab`, `.jsonl`/`.ndjson`/`.json`
            (JSON lines) file, or a DataFrame (returned as is).
        fmt: `"csv"`, `"tsv"` or `"jsonl"` to override the extension.
        **kwargs: Passed to the pandas reader (e.g. `chunksize`).

    Raises:
        DataError: Missing, empty or unparsable file.
    """
    if isinstance(source, pd.DataFrame):
        return source
    path = pathlib.Path(source)
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    fmt = fmt or {".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}.get(
        path.suffix.lower(), "csv"
    )
    try:
        if fmt == "jsonl":
            return pd.read_json(path, lines=True, dtype=False, **kwargs)
        return pd.read_csv(path, sep="\t" if fmt == "tsv" else ",", dtype=object, keep_default_na=False,
                           na_values=[""], encoding_errors="replace", **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataError(f"could not read {path} as {fmt}: {first}") from None


def pick_column(columns, wanted, defaults, role):
    """The column to use for `role` ("text" or "label"), or a clear error."""
    columns = [str(c) for c in columns]
    if wanted is not None:
        if wanted not in columns:
            raise DataError(f"no {role} column {wanted!r}; the columns are: {', '.join(columns)}.")
        return wanted
    lowered = {c.lower(): c for c in columns}
    for name in defaults:
        if name in lowered:
            return lowered[name]
    raise DataError(
        f"no {role} column found (tried {', '.join(defaults)}); the columns are: {', '.join(columns)}. "
        f"Name it with --{role}-column."
    )


def load_table(source, text_column=None, label_column=None, label_map=None, fmt=None):
    """Loads texts and labels from a table, reporting every skipped row.

    Rows with a missing/empty text or a missing label are skipped and
    counted (a warning is issued, and the counts are returned); they are
    never dropped silently.

    Args:
        source: A file path (see `read_table`) or a DataFrame.
        text_column: Text column name; default: the first of
            `TEXT_COLUMNS` present (case-insensitive).
        label_column: Label column name; default: the first of
            `LABEL_COLUMNS` present.
        label_map: The training `LabelMap` (for test data); by default one is
            built from the labels. Labels unknown to it raise a `DataError`.
        fmt: File format override.

    Returns:
        `(dataset, report)`: a `TextDataset` (ids are the row numbers in the
        file) and a dict `{"rows", "used", "skipped_missing_text",
        "skipped_missing_label", "text_column", "label_column"}`.
    """
    frame = read_table(source, fmt)
    text_column = pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
    label_column = pick_column(frame.columns, label_column, LABEL_COLUMNS, "label")
    texts = frame[text_column]
    labels = frame[label_column]
    missing_text = texts.isna().to_numpy() | texts.astype(str).str.strip().eq("").to_numpy()
    missing_label = labels.isna().to_numpy() & ~missing_text
    keep = ~(missing_text | missing_label)
    report = {
        "rows": int(len(frame)),
        "used": int(keep.sum()),
        "skipped_missing_text": int(missing_text.sum()),
        "skipped_missing_label": int(missing_label.sum()),
        "text_column": text_column,
        "label_column": label_column,
    }
    if not keep.any():
        raise DataError(f"no usable rows: all {len(frame)} rows lack a text or a label.")
    if report["used"] < report["rows"]:
        warnings.warn(
            f"skipped {report['skipped_missing_text']} row(s) without text and "
            f"{report['skipped_missing_label']} without a label, of {report['rows']}.",
            stacklevel=2,
        )
    kept_labels = [plain_label(v) for v in labels[keep]]
    label_map = label_map or LabelMap.from_labels(kept_labels)
    dataset = TextDataset(
        [str(t) for t in texts[keep]],
        label_map.to_ids(kept_labels),
        label_map,
        [int(i) for i in np.flatnonzero(keep)],
    )
    return dataset, report


def plain_label(value):
    """Integers stay integers ("3" and 3.0 become 3); everything else a string."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        stripped = value.strip()
        return int(stripped) if stripped.lstrip("-").isdigit() else stripped
    return value
