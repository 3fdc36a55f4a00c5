"""The files of a batch job: the inputs a path, folder or glob names, read in chunks; the output folder, in parts.

Inputs are checked before any work starts (each file's first chunk is
read, so a missing text column or an unreadable file is one error). Every
row of every file is read once, with its position (`file`, `row`) beside
its text, `id` and `label`, as `hierattn predict --file` reads it. The
output folder is written whole or not at all: parts go to a temporary
sibling that is renamed when the last part is written.
"""

import contextlib
import glob
import os
import pathlib
import shutil

from hierattn.data.decoding import data_name
from hierattn.data.tables import FORMATS
from hierattn.data.text_files import CARRIED, iter_text_chunks
from hierattn.decision import check_k
from hierattn.defaults import BATCH
from hierattn.errors import ArgumentError, DataError, WriteError
from hierattn.utils.atomic import check_new_file, reason, temporary_name

# What a folder's files are taken to be inputs by (tables, and text files of one text per line).
INPUT_SUFFIXES = (*FORMATS, ".txt")
OUTPUT_FORMATS = ("parquet", "csv")


def input_files(source):
    """The files `source` names, in order: a file, a folder's table and text files, or a glob pattern's.

    In a folder (and its subfolders) and among a glob's matches, only table
    and text files count, and names starting with `.` or `_` (`_SUCCESS`,
    `.ipynb_checkpoints/`, `_temporary/`) are skipped, as other engines'
    outputs hold them.

    Raises:
        DataError: Nothing to read there.
    """
    source = os.fspath(source)
    path = pathlib.Path(source)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if _is_input(p.relative_to(path)) and p.is_file())
        if not files:
            raise DataError(f"{source} holds no table or text file ({', '.join(INPUT_SUFFIXES)})")
        return files
    if glob.has_magic(source):
        files = sorted(pathlib.Path(p) for p in glob.glob(source, recursive=True) if os.path.isfile(p))
        files = [p for p in files if _is_input(pathlib.PurePath(p.name))]
        if not files:
            raise DataError(f"no table or text file matches {source}")
        return files
    raise DataError(f"no such file or folder: {source}")


def _is_input(relative):
    """Whether a file (its path under the folder searched) is an input: a table or text file, nothing hidden."""
    return not any(part.startswith((".", "_")) for part in relative.parts) and _suffix(relative) in INPUT_SUFFIXES


def _suffix(path):
    return pathlib.PurePath(data_name(path)).suffix.lower()


def check_inputs(files, text_column=None, encoding=None):
    """Reads the first chunk of every file: the columns the files carry, or the first file's error.

    A file without rows (an empty part of another job's output) is read as
    no rows.

    Returns:
        The carried columns any file has (its id and label columns, as the
        files name them), ids first (`CARRIED` order), then in file order.

    Raises:
        DataError: A file that cannot be read or lacks the text column
            (named with the file).
    """
    found = {}  # a column's name: its role ("id" or "label")
    for path in files:
        first = next(iter_text_chunks(path, text_column, chunk_size=BATCH["chunk_rows"], encoding=encoding), None)
        for role, name in getattr(first, "names", {}).items():
            found.setdefault(name, role)
    return [name for role in CARRIED for name, its in found.items() if its == role]


def read_chunks(path, name, carried, text_column=None, encoding=None, chunk_size=BATCH["chunk_rows"]):
    """A file's rows as DataFrames of `chunk_size` rows: `file` (when `name`), `row`, `text` and `carried`.

    A column among `carried` that this file lacks is None throughout, so
    every file gives the same columns.
    """
    import pandas as pd

    start = 0
    for chunk in iter_text_chunks(path, text_column, chunk_size=chunk_size, encoding=encoding):
        names = getattr(chunk, "names", {})
        columns = {names[role]: values for role, values in getattr(chunk, "columns", {}).items()}
        frame = {} if name is None else {"file": [name] * len(chunk)}
        frame["row"] = range(start, start + len(chunk))
        frame["text"] = list(chunk)
        for column in carried:
            frame[column] = [value or None for value in columns[column]] if column in columns else [None] * len(chunk)
        yield pd.DataFrame(frame)
        start += len(chunk)


def file_names(files, source):
    """What the `file` column says of each file: its path under a folder `source`, else as the glob found it.

    One file named by itself gets no `file` column (None): its output has
    the columns of `predict --file`.
    """
    source = pathlib.Path(source)
    if source.is_file():
        return [None]
    if source.is_dir():
        return [p.relative_to(source).as_posix() for p in files]
    return [p.as_posix() for p in files]


def count_rows(files):
    """The number of rows of the files, when all are Parquet (from their metadata); else None."""
    if not all(_suffix(p) in (".parquet", ".pq") and p.suffix.lower() in (".parquet", ".pq") for p in files):
        return None
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    return sum(pq.ParquetFile(p).metadata.num_rows for p in files)


def _write_parquet(frame, path):
    """A part as Parquet with the same schema whatever its values (a part of blank texts, or without ids, included).

    `row` is a 64-bit integer, the probabilities 32-bit floats, every other
    column text: pandas alone would give a column of only missing values no
    type, and the parts could not be read as one table.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    def kind(name):
        return pa.int64() if name == "row" else pa.float32() if str(name).startswith("p_") else pa.string()

    schema = pa.schema([(str(name), kind(name)) for name in frame.columns])
    frame = frame.astype({name: object for name in frame.columns if kind(name) == pa.string()})
    pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), path)


class OutputFolder:
    """A new folder of output parts (`part-00000.parquet`, ...), written whole or not at all.

    Parts go to a temporary sibling folder, renamed to `path` by `close`;
    on an error (or Ctrl-C) the temporary folder is removed and `path`
    never appears. An existing `path` is refused, never replaced.

    Args:
        path: The folder to create.
        fmt: "parquet" or "csv" (`predict --file`'s text: probabilities
            with six decimals, empty cells for texts without words).
        part_rows: Rows per part (a whole number of at least 1).

    Raises:
        ArgumentError: An unknown `fmt`, a `part_rows` that is not a whole
            number of at least 1, or a `path` that exists.

    Example:

    >>> import tempfile
    >>> import pandas as pd
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "predictions"
    >>> with OutputFolder(folder, part_rows=2) as output:
    ...     output.write(pd.DataFrame({"row": [0, 1, 2], "predicted": ["pos", "neg", "pos"]}))
    >>> sorted(p.name for p in folder.iterdir())
    ['part-00000.parquet', 'part-00001.parquet']
    """

    def __init__(self, path, fmt=BATCH["output_format"], part_rows=BATCH["part_rows"]):
        if fmt not in OUTPUT_FORMATS:
            raise ArgumentError(f"output format must be one of {', '.join(OUTPUT_FORMATS)}, not {fmt!r}")
        check_k(part_rows, "part_rows")
        check_new_file(path)
        self.path = pathlib.Path(path)
        self.fmt = fmt
        self.part_rows = part_rows
        self.rows = 0
        self.parts = 0
        self._pending = []
        self._temporary = temporary_name(self.path)
        with self._errors():
            self._temporary.mkdir()

    def write(self, frame):
        """Adds a DataFrame's rows; a part is written whenever `part_rows` rows are waiting."""
        self._pending.append(frame)
        self.rows += len(frame)
        while sum(map(len, self._pending)) >= self.part_rows:
            self._flush(self.part_rows)

    def _flush(self, limit):
        import pandas as pd

        frame = pd.concat(self._pending, ignore_index=True) if len(self._pending) > 1 else self._pending[0]
        part, rest = frame.iloc[:limit], frame.iloc[limit:]
        self._pending = [rest] if len(rest) else []
        target = self._temporary / f"part-{self.parts:05d}.{self.fmt}"
        with self._errors():
            if self.fmt == "parquet":
                _write_parquet(part, target)
            else:
                part.to_csv(target, index=False, float_format="%.6f")
        self.parts += 1

    @contextlib.contextmanager
    def _errors(self):
        """An `OSError` (a full disk, a permission) as one `WriteError` that names the output folder."""
        try:
            yield
        except OSError as error:
            raise WriteError(f"{reason(error)} while writing {self.path}", error.errno) from None

    def close(self):
        """Writes what is left and puts the folder in place."""
        if self._pending:
            self._flush(sum(map(len, self._pending)))
        if os.path.lexists(self.path):
            raise WriteError(f"{self.path} already exists (another process made it); nothing was overwritten")
        with self._errors():
            os.rename(self._temporary, self.path)

    def discard(self):
        """Removes the temporary folder and what it holds."""
        shutil.rmtree(self._temporary, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            with contextlib.ExitStack() as stack:
                stack.callback(self.discard)  # nothing is left behind if the rename fails
                self.close()
        else:
            self.discard()
