"""Reading texts from files: tables (CSV, TSV, JSON lines, Parquet) and plain text files (one text per line), in chunks."""

import itertools
import pathlib

from hierattn.data.decoding import check_text_file, iter_lines, open_bytes
from hierattn.data.tables import (
    ID_COLUMNS,
    LABEL_COLUMNS,
    TEXT_COLUMNS,
    cell_text,
    column_cells,
    find_column,
    pick_column,
    read_table,
    table_format,
)
from hierattn.errors import DataError

# The table files named in messages (also read: Parquet, and any of them compressed: see `read_table`).
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json")


class _TextChunk(list):
    """A list of texts; from a table, `columns` also holds the rows' `id` and `label` cells when it has them.

    `names` gives each of them the table's own name for it (`labels`,
    `review_id`), which an output that carries the column keeps.
    """

    def __init__(self, texts, columns=None, names=None):
        super().__init__(texts)
        self.columns = columns or {}
        self.names = names or {role: role for role in self.columns}


CARRIED = ("id", "label")


def text_rows(chunks):
    """A table's carried columns and its rows, from chunks of texts (see `iter_text_chunks`).

    Returns:
        `(carried, rows)`: the names among `CARRIED` that the first chunk
        holds, and an iterator of `(text, id, label)`, with `None` for a
        column the table lacks or a blank cell.
    """
    chunks = iter(chunks)
    first = next(chunks, None)
    carried = [name for name in CARRIED if name in getattr(first, "columns", {})]

    def rows():
        for chunk in itertools.chain([] if first is None else [first], chunks):
            columns = getattr(chunk, "columns", {})
            cells = [[v or None for v in columns[name]] if name in columns else [None] * len(chunk) for name in CARRIED]
            yield from zip(chunk, *cells)

    return carried, rows()


def _carried(frame, name):
    """The cells of a carried column (`CARRIED`): the first of that name, when a Parquet file has it twice."""
    return frame.iloc[:, [str(column) for column in frame.columns].index(name)]


def _line_chunks(lines, chunk_size):
    """Lists of up to `chunk_size` lines."""
    chunk = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def iter_text_chunks(source, text_column=None, chunk_size=2000, stream=None, encoding=None):
    """Texts to score, in chunks.

    The first chunk is read at once, so a missing file, a missing column or
    undecodable bytes at the start raise here rather than on first use (a
    caller can check its input before loading a model).

    Args:
        source: A CSV/TSV/JSON-lines/Parquet file (texts from
            `text_column`, found by name if not given) or a text file (one
            text per line), either compressed or not (`.gz`, `.bz2`, `.xz`,
            `.zip`: see `hierattn.data.read_table`).
        text_column: Column of the texts in a table file.
        chunk_size: Texts per chunk.
        stream: Read lines from this binary stream (e.g. standard input's
            buffer) instead of `source`.
        encoding: Text encoding of the file or stream (default UTF-8);
            undecodable or NUL bytes raise a `DataError` naming the line.

    Returns:
        An iterator of chunks: lists of texts (a table's id and label
        columns, found by name, ride along in `chunk.columns`).
    """
    chunks = _text_chunks(source, text_column, chunk_size, stream, encoding)
    first = next(chunks, None)
    return itertools.chain([] if first is None else [first], chunks)


def _text_chunks(source, text_column, chunk_size, stream, encoding):
    if stream is not None:
        yield from _line_chunks(iter_lines(stream, "standard input", encoding), chunk_size)
        return
    path = pathlib.Path(source)
    if table_format(path):
        for frame in read_table(path, chunksize=chunk_size, encoding=encoding):
            column = pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
            extra = {
                role: find_column(frame.columns, names)
                for role, names in (("id", ID_COLUMNS), ("label", LABEL_COLUMNS))
            }
            yield _TextChunk(
                [cell_text(v) for v in column_cells(frame, column, path)],
                {role: [cell_text(v) for v in _carried(frame, name)] for role, name in extra.items() if name},
                {role: str(name) for role, name in extra.items() if name},
            )
        return
    check_text_file(path, encoding)  # a folder, a missing file, a spreadsheet, binary data
    with open_bytes(path) as f:
        yield from _line_chunks(iter_lines(f, path, encoding), chunk_size)


def read_texts(source, text_column=None, encoding=None):
    """All non-blank texts of a file (see `iter_text_chunks`), e.g. unlabelled texts for word2vec.

    Args:
        source: A table or text file (one text per line), compressed or
            not (see `iter_text_chunks`).
        text_column: Column of the texts in a table file.
        encoding: Text encoding (default UTF-8).

    Returns:
        A list of strings.

    Raises:
        DataError: If the file is missing, undecodable or holds no text.
    """
    texts = [t for chunk in iter_text_chunks(source, text_column, encoding=encoding) for t in chunk if t.strip()]
    if not texts:
        raise DataError(f"{source}: no texts found")
    return texts
