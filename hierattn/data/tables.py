"""Any CSV / TSV / JSON-lines / Parquet file or pandas DataFrame of texts and labels.

Text tables are read compressed too (`reviews.csv.gz`, `reviews.tsv.bz2`,
`reviews.jsonl.xz`, `reviews.csv.zip`): the format is the suffix under the
compression suffix (see `hierattn.data.decoding.open_bytes`). A table in a
legacy CJK encoding (GB18030, Big5, Shift-JIS, EUC-KR) is read without it
being given when it is detected (see `hierattn.data.decoding`); the frame's
`attrs["detected_encoding"]` and `load_table`'s report say so.
"""

import contextlib
import csv
import io
import json
import math
import pathlib
import warnings

import numpy as np

from hierattn.data.dataset import LabelMap, TextDataset
from hierattn.data.decoding import (
    DetectedEncoding,
    check_text_file,
    codec_name,
    data_name,
    locate_decode_error,
    log_detected,
    open_bytes,
)
from hierattn.defaults import ID_COLUMNS, LABEL_COLUMNS, TEXT_COLUMNS  # noqa: F401  (re-exported)
from hierattn.errors import SHOWN_CHARACTERS, DataError, first_line, names_text
from hierattn.utils.shell import pip_install

# Label values that mean "no label" (pandas' own missing-value spellings).
MISSING_LABELS = frozenset(
    {
        "",
        "nan",
        "NaN",
        "NAN",
        "-nan",
        "-NaN",
        "NA",
        "N/A",
        "n/a",
        "#N/A",
        "null",
        "NULL",
        "Null",
        "None",
        "none",
        "<NA>",
    }
)
# The most columns a CSV/TSV table may have (`_check_width`): reading more takes pandas seconds (2 s for 10,000).
MAX_COLUMNS = 10_000
# Table formats by suffix (under a compression suffix: `reviews.tsv.gz` is TSV).
FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


class DataWarning(UserWarning):
    """Rows of a table were skipped (the counts are also returned).

    Example:

    >>> import warnings
    >>> import pandas as pd
    >>> from hierattn.data import load_table
    >>> frame = pd.DataFrame({"text": ["A great film.", "", "Dull."], "label": ["pos", "pos", "neg"]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", DataWarning)    # refuse a table with skipped rows
    ...     data, report = load_table(frame)
    Traceback (most recent call last):
        ...
    hierattn.data.tables.DataWarning: skipped 1 row(s) without text and 0 without a label, of 3.
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DataWarning)   # or read the counts
    ...     data, report = load_table(frame)
    >>> report["used"], report["skipped_missing_text"]
    (2, 1)
    """


def table_format(path):
    """The table format of a file by its name: `"csv"`, `"tsv"`, `"jsonl"`, `"parquet"`, or None (not a table).

    A compression suffix is looked under (see `hierattn.data.decoding.data_name`).

    Example:

    >>> table_format("reviews.tsv.gz"), table_format("reviews.parquet"), table_format("texts.txt.bz2")
    ('tsv', 'parquet', None)
    """
    return FORMATS.get(pathlib.PurePath(data_name(path)).suffix.lower())


def read_table(source, fmt=None, encoding=None, **kwargs):
    """Reads a table file into a DataFrame (format from the file extension).

    Text is decoded strictly: a file that is not valid in `encoding` (UTF-8
    by default) is refused with the line and byte at fault, never read with
    replacement characters. Without `encoding`, a file whose first 64 KiB
    are not UTF-8 but surely GB18030, Big5, Shift-JIS or EUC-KR is read in
    that encoding (`hierattn.data.decoding.sniff_encoding`), and the
    frame's `attrs["detected_encoding"]` names it (absent otherwise). A
    compressed file (`.gz`, `.bz2`, `.xz`, `.zip` holding one file) is read
    as it is, in the format of the suffix under the compression suffix
    (`reviews.tsv.gz` is TSV); a spreadsheet is refused with a line that
    says to save it as CSV.

    Args:
        source: Path of a `.csv`, `.tsv`/`.tab`, `.jsonl`/`.ndjson`/`.json`
            (JSON lines) or `.parquet`/`.pq` file (Parquet needs pyarrow or
            fastparquet), or a DataFrame (returned as is).
        fmt: `"csv"`, `"tsv"`, `"jsonl"` or `"parquet"` to override the
            extension.
        encoding: The file's text encoding (default UTF-8, with or without a
            byte-order mark, or the legacy CJK encoding detected).
        **kwargs: Passed to the pandas reader (e.g. `chunksize`, which makes
            the result an iterator of DataFrames).

    Raises:
        DataError: Missing, empty, binary, undecodable, unparsable or damaged
            file, naming the line where one can be found; a spreadsheet; a
            Parquet file without a Parquet reader installed.
    """
    # pandas takes half a second to load: imported when a table is read, so `hierattn --help` and
    # commands that read no table start without it.
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        return source
    path = pathlib.Path(source)
    fmt = fmt or table_format(path) or "csv"
    if fmt == "parquet":
        chunksize = kwargs.pop("chunksize", None)
        return _read_parquet(path, chunksize, **kwargs)
    encoding = check_text_file(path, encoding, "table file")  # the one given, or the one detected
    codec = codec_name(encoding)
    log_detected(path, encoding)
    if fmt in ("csv", "tsv"):
        _check_width(path, "\t" if fmt == "tsv" else ",", codec)
    stream = open_bytes(path)
    try:
        with _read_errors(path, fmt, encoding):
            if fmt == "jsonl":
                result = pd.read_json(stream, lines=True, dtype=False, encoding=codec, **kwargs)
            else:
                result = pd.read_csv(
                    stream,
                    sep="\t" if fmt == "tsv" else ",",
                    dtype=object,
                    keep_default_na=False,
                    na_values=[""],
                    encoding=codec,
                    encoding_errors="strict",
                    **kwargs,
                )
    except BaseException:
        stream.close()
        raise
    if kwargs.get("chunksize"):
        return _chunks(result, stream, path, fmt, encoding)
    stream.close()
    return _mark_detected(result, encoding)


def _check_width(path, separator, codec):
    """Refuses a CSV/TSV header of more than `MAX_COLUMNS` columns, or a first row of 2 fields or more past it.

    pandas takes 0.2 ms a column to read one (16 s for 100,000): a header of
    millions of columns was a wait of minutes, for a table no text
    classifier reads. pandas also takes the fields of the first row past the
    header's as the index (one field: R's row names, `write.table`'s
    default, read as before), and makes an index of as many levels as there
    are more: 17,339 levels took it 56 s, and shifted every column. A
    header the `csv` module cannot read (a field over its size limit, bytes
    the codec refuses) is left to pandas to refuse.
    """
    try:
        with io.TextIOWrapper(open_bytes(path), encoding=codec, errors="replace", newline="") as f:
            records = csv.reader(f, delimiter=separator)
            header = next(records, [])
            first = next(records, []) if len(header) <= MAX_COLUMNS else []
    except (csv.Error, UnicodeError):
        return
    if len(header) > MAX_COLUMNS:
        raise DataError(
            f"{path} has {len(header):,} columns: at most {MAX_COLUMNS:,} are read; keep the text and label "
            "columns (and the few others needed) and pass that file"
        )
    if len(first) > len(header) + 1:
        fmt = "tsv" if separator == "\t" else "csv"
        hint = (
            "the file looks tab-separated: name it .tsv" if fmt == "csv" and _looks_tab_separated(path, codec) else ""
        )
        raise DataError(
            f"could not read {path} as {fmt}: its first row has {len(first):,} fields where the header has "
            f"{len(header):,} columns ({hint or 'a separator in an unquoted text?'})"
        )


def _chunks(reader, stream, path, fmt, encoding):
    """The chunks of a pandas reader of `stream`, with its errors translated as `read_table` does."""
    with stream, reader, _read_errors(path, fmt, encoding):
        for chunk in reader:
            yield _mark_detected(chunk, encoding)


def _mark_detected(frame, encoding):
    """`frame`, its `attrs["detected_encoding"]` naming `encoding` when that was detected (not given)."""
    if isinstance(encoding, DetectedEncoding):
        frame.attrs["detected_encoding"] = str(encoding)
    return frame


def _read_parquet(path, chunksize=None, **kwargs):
    """A Parquet file as `read_table` returns a text table: object columns, missing cells NaN."""
    import numpy as np
    import pandas as pd

    with open_bytes(path, "table file") as stream, _read_errors(path, "parquet", None):
        source = stream if stream.seekable() else io.BytesIO(stream.read())  # a compressed one
        try:
            frame = pd.read_parquet(source, **kwargs)
        except ImportError:  # pandas found neither pyarrow nor fastparquet
            raise DataError(f"reading {path} needs a Parquet reader: {pip_install('pyarrow')}") from None
    frame = frame.astype(object).where(frame.notna(), np.nan)
    if chunksize:
        return (frame.iloc[start : start + chunksize] for start in range(0, len(frame), chunksize))
    return frame


@contextlib.contextmanager
def _read_errors(path, fmt, encoding):
    """Translates pandas' and the codec's errors into one-line `DataError`s."""
    import pandas as pd  # loaded already: this wraps pandas' readers

    try:
        yield
    except UnicodeDecodeError:
        raise locate_decode_error(path, encoding) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, TypeError) as error:
        if isinstance(error, DataError):
            raise
        first = first_line(error)
        if fmt == "jsonl":
            first = _bad_json_line(path, encoding) or first
        elif fmt == "csv" and _looks_tab_separated(path, encoding):
            first += " (the file looks tab-separated: name it .tsv)"
        raise DataError(f"could not read {path} as {fmt}: {first}") from None


def _bad_json_line(path, encoding):
    """`"line N: problem"` for the first line of a JSON-lines file that is not a JSON object."""
    try:
        with io.TextIOWrapper(open_bytes(path), encoding=codec_name(encoding)) as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as error:
                    return f"line {number} is not valid JSON ({error.msg} at column {error.colno})"
                if not isinstance(value, dict):
                    return f"line {number} is a JSON {type(value).__name__}, not an object of named fields"
    except UnicodeError:  # e.g. UTF-16 without a byte-order mark: the pandas error says it
        return None
    return None


def _looks_tab_separated(path, encoding):
    try:
        with io.TextIOWrapper(open_bytes(path), encoding=codec_name(encoding), errors="replace") as f:
            header = f.readline()
    except UnicodeError:  # UTF-16 without a byte-order mark fails whatever `errors` says
        return False
    return header.count("\t") > header.count(",")


# A table's columns named in an error: at most this many, each cut to this many characters (a header of thousands of
# columns, or a 1 MB one, made a message of megabytes).


def _cut(name):
    """A column name cut for a message ("..." says it was)."""
    return name[:SHOWN_CHARACTERS] + ("..." if len(name) > SHOWN_CHARACTERS else "")


def columns_text(columns):
    """A table's columns for a message, on one line (`hierattn.errors.names_text`).

    >>> columns_text(["text", "stars"])
    'text, stars'
    """
    return names_text(columns, "columns")


def pick_column(columns, wanted, defaults, role):
    """The column to use for `role` ("text" or "label"), or a clear error (about the argument `{role}_column`)."""
    columns = [str(c) for c in columns]
    if wanted is not None:
        if wanted not in columns:
            raise DataError(f"no {role} column {_cut(str(wanted))!r}; the columns are: {columns_text(columns)}.")
        return wanted
    lowered = {c.lower(): c for c in columns}
    for name in defaults:
        if name in lowered:
            return lowered[name]
    tabs = " (the file looks tab-separated: name it .tsv)" if any("\t" in c for c in columns) else ""
    raise DataError(
        f"no {role} column found (tried {', '.join(defaults)}); the columns are: {columns_text(columns)}"
        f"{tabs}. Name it with {{argument}}.",
        argument=f"{role}_column",
    )


def find_column(columns, defaults):
    """The first of `defaults` among `columns` (case-insensitive), or None."""
    lowered = {str(c).lower(): str(c) for c in columns}
    return next((lowered[name] for name in defaults if name in lowered), None)


def cell_text(value):
    """A table cell as text: missing values empty, whole floats (NaN-widened ints) without ".0"."""
    if _missing(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _missing(value):
    """Whether a cell is missing: None, NaN or pandas' NA (which, as a list cell, failed `value != value`)."""
    try:
        return value is None or bool(value != value)
    except (TypeError, ValueError):  # pandas.NA compares as NA; a list or an array as many truths
        return type(value).__name__ == "NAType"


def load_table(
    source,
    text_column=None,
    label_column=None,
    label_map=None,
    fmt=None,
    encoding=None,
    label_separator=None,
    group_column=None,
):
    """Loads texts and labels from a table, reporting every skipped row.

    Rows with a missing/empty text or a missing label (empty, or one of
    pandas' missing-value spellings such as `NaN`, `NA`, `null`) are skipped
    and counted (a `DataWarning` is issued, and the counts are returned); they
    are never dropped silently, and `"NaN"` never becomes a class.

    Args:
        source: A file path (see `read_table`) or a DataFrame.
        text_column: Text column name; default: the first of
            `TEXT_COLUMNS` present (case-insensitive).
        label_column: Label column name; default: the first of
            `LABEL_COLUMNS` present.
        label_map: The training `LabelMap` (for test data); by default one is
            built from the labels. Labels unknown to it raise a `DataError`.
        fmt: File format override.
        encoding: The file's text encoding (default UTF-8, or the legacy CJK
            encoding detected: see `read_table`).
        label_separator: Multi-label data: each label cell holds a
            document's labels joined by this string (e.g. `"|"`); an empty
            or missing cell is a document without a label (kept). The
            dataset's labels are then multi-hot rows.
        group_column: The column of each text's group (a product, an
            author, a film), or None: the dataset's `groups` then hold its
            cells as text (`cell_text`), for a validation part of whole
            groups (`hierattn.data.dataset.grouped_split`). A row used
            (with a text and a label) whose group is missing is an error:
            which group it belongs to is unknown, so no split can keep it
            apart from its group.

    Returns:
        `(dataset, report)`: a `TextDataset` (ids are the row numbers in the
        file) and a dict `{"rows", "used", "skipped_missing_text",
        "skipped_missing_label", "text_column", "label_column"}`, and
        `"detected_encoding"` when the file was read in a legacy encoding
        detected, not given (its codec, e.g. "gb18030"), and
        `"group_column"` when there is one.

    Raises:
        DataError: A column that is not there (the error lists the
            columns), no usable row, unknown labels, a row used without a
            group; in one line.
    """
    frame = read_table(source, fmt, encoding)
    text_column = pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
    label_column = pick_column(frame.columns, label_column, LABEL_COLUMNS, "label")
    if group_column is not None and group_column not in [str(c) for c in frame.columns]:
        raise DataError(
            f"no group column {group_column!r} in {_named(source)}; the columns are: "
            f"{columns_text(frame.columns)}. Name one with {{argument}}.",
            argument="group_column",
        )
    texts = column_cells(frame, text_column, source)
    labels = column_cells(frame, label_column, source)
    missing_text = texts.isna().to_numpy() | texts.astype(str).str.strip().eq("").to_numpy()
    missing_label = (labels.isna().to_numpy() | labels.map(_missing_label).to_numpy(bool)) & ~missing_text
    if label_separator is not None:  # multi-label: an empty cell is a document without a label
        missing_label[:] = False
    keep = ~(missing_text | missing_label)
    report = {
        "rows": int(len(frame)),
        "used": int(keep.sum()),
        "skipped_missing_text": int(missing_text.sum()),
        "skipped_missing_label": int(missing_label.sum()),
        "text_column": text_column,
        "label_column": label_column,
    }
    if "detected_encoding" in frame.attrs:
        report["detected_encoding"] = frame.attrs["detected_encoding"]
    if not keep.any():
        raise DataError(f"no usable rows: all {len(frame)} rows lack a text or a label.")
    if report["used"] < report["rows"]:
        warnings.warn(
            f"skipped {report['skipped_missing_text']} row(s) without text and "
            f"{report['skipped_missing_label']} without a label, of {report['rows']}.",
            DataWarning,
            stacklevel=2,
        )
    if label_separator is not None:
        kept_labels = [split_labels(v, label_separator) for v in labels[keep]]
        label_map = label_map or LabelMap.from_label_sets(kept_labels)
        label_ids = np.zeros((len(kept_labels), len(label_map)), np.int8)
        label_ids[
            np.repeat(np.arange(len(kept_labels)), [len(s) for s in kept_labels]),
            label_map.to_ids([label for labels in kept_labels for label in labels]),
        ] = 1
    else:
        kept_labels = [plain_label(v) for v in labels[keep]]
        label_map = label_map or LabelMap.from_labels(kept_labels)
        label_ids = label_map.to_ids(kept_labels)
    dataset = TextDataset(
        [str(t) for t in texts[keep]],
        label_ids,
        label_map,
        [int(i) for i in np.flatnonzero(keep)],
        groups=None if group_column is None else _groups(column_cells(frame, group_column, source), keep, group_column),
    )
    if group_column is not None:
        report["group_column"] = group_column
    return dataset, report


def column_cells(frame, name, source=None):
    """The cells of `frame`'s column `name` (as `pick_column` names it, in text), checked to be one value each.

    Raises:
        DataError: The column is there twice or more (a Parquet file or
            DataFrame can have that), or a cell holds a JSON array or
            object, or bytes (a JSON-lines or Parquet table): a text or a
            label is one string or number. Read as text they became
            `"['a', 'b']"` or `"b'...'"`, or failed with a `TypeError`.
    """
    matches = [i for i, column in enumerate(frame.columns) if str(column) == name]
    if len(matches) != 1:
        raise DataError(
            f"{_named(source)} has {len(matches)} columns named {_cut(name)!r}: give each column its own name"
            if matches
            else f"no column {_cut(name)!r} in {_named(source)}; the columns are: {columns_text(frame.columns)}."
        )
    cells = frame.iloc[:, matches[0]]
    if cells.dtype != object or not any(issubclass(kind, _NOT_VALUES) for kind in set(map(type, cells.to_numpy()))):
        return cells  # a text table's: strings and NaN (looked at once per type)
    for row, value in enumerate(cells):
        kind = _not_a_value(value)
        if kind:
            raise DataError(
                f"the column {_cut(name)!r} of {_named(source)} holds {kind} in row {row + 1} (the first data row "
                "being 1): each cell must hold one text, label or group (a string or a number)"
            )
    return cells


# What a cell of a JSON-lines or Parquet table (or a DataFrame) may hold that is not one text, label or group.
_NOT_VALUES = (list, tuple, np.ndarray, dict, bytes, bytearray, set, frozenset)


def _not_a_value(value):
    """What a cell holds when it is not one value (`"a JSON array"`, `"bytes"`, ...), else None."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "a list (a JSON array)"
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, (bytes, bytearray)):
        return "bytes, not text,"
    if isinstance(value, (set, frozenset)):
        return "a set"
    return None


def _groups(cells, keep, column):
    """The group of each row kept, as text; refuses rows kept whose group is missing (empty, NaN, NA, null, ...)."""
    groups = np.asarray([cell_text(v).strip() for v in cells[keep]], dtype=object)
    missing = np.flatnonzero([group == "" or group in MISSING_LABELS for group in groups])
    if len(missing):
        rows = np.flatnonzero(keep)[missing] + 1
        shown = ", ".join(map(str, rows[:5])) + (" ..." if len(rows) > 5 else "")
        raise DataError(
            f"the group column {column!r} is empty (or NaN, NA, null, ...) in {len(rows):,} of the {len(groups):,} "
            f"rows used (rows {shown}, the first data row being 1): give every row its group (a row that is a "
            "group of its own, its own value), or leave the group column out."
        )
    return groups.astype(str)


def _named(source):
    """A table's name in messages: its path, or "the table" for a DataFrame."""
    return str(source) if isinstance(source, (str, pathlib.PurePath)) else "the table"


def _missing_label(value):
    return isinstance(value, str) and value.strip() in MISSING_LABELS


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


def split_labels(value, separator):
    """A multi-label cell's labels: split at `separator`, each stripped (`plain_label`), empty and missing ones dropped.

    >>> split_labels("grain| wheat", "|"), split_labels("", "|"), split_labels(float("nan"), "|")
    (['grain', 'wheat'], [], [])
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or _missing_label(value):
        return []
    parts = [plain_label(part) for part in str(value).split(separator)]
    return list(dict.fromkeys(part for part in parts if part != ""))


def rows_text(path, report):
    """What `load_table` read from `path`: the rows used, and a line on those skipped.

    (An encoding detected is said where the file is read: `hierattn.data.decoding.log_detected`.)

    Returns:
        `(used, skipped)`, two strings, or a string and None (no row skipped).
    """
    group = f", group column {report['group_column']!r}" if report.get("group_column") else ""
    used = (
        f"{path}: {report['used']:,} of {report['rows']:,} rows used (text column {report['text_column']!r}, "
        f"label column {report['label_column']!r}{group})"
    )
    if report["used"] >= report["rows"]:
        return used, None
    return used, (
        f"  skipped {report['skipped_missing_text']} without text, {report['skipped_missing_label']} "
        "without a label (empty, NaN, NA, null, ...)"
    )
