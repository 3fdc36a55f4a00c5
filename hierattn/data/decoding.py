"""Decoding text files and streams strictly: text comes out right or not at all.

Bytes that are not valid in the file's encoding are never replaced silently
(that turned `café` into `caf` in a vocabulary): they raise a
`DataArgumentError` (a `DataError`) that names the source, the line and the
byte, and says how to pass the right `encoding`. NUL bytes mean binary data
(or UTF-16 read as UTF-8) and are refused the same way.
"""

import codecs

from hierattn.errors import DataArgumentError, DataError

DEFAULT_ENCODING = "utf-8"
_SNIFF_BYTES = 1 << 16


def codec_name(encoding=None):
    """The Python codec for `encoding` (UTF-8 also accepts a byte-order mark).

    Raises:
        DataError: An encoding Python does not know.
    """
    encoding = encoding or DEFAULT_ENCODING
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise DataError(f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, cp1252, utf-16)") from None
    return "utf-8-sig" if name == "utf-8" else name


def _allows_nul(codec):
    return codec.startswith(("utf-16", "utf-32"))


def _not_decoded(message, encoding):
    """The error for text that `encoding` does not decode: `message`, then how to pass another encoding."""
    other = "latin-1 or cp1252" if codec_name(encoding).startswith("utf-8") else "utf-8"
    return DataArgumentError("encoding", f"{message}; pass the file's encoding with {{argument}} (e.g. {other})")


def undecodable(source, number, line, error, encoding):
    """The `DataArgumentError` (about `encoding`) for line `number` (1-based) whose bytes `line` failed to decode."""
    byte = line[error.start : error.start + 1]
    return _not_decoded(
        f"{source} is not valid {encoding or DEFAULT_ENCODING} text: line {number} has the byte "
        f"0x{byte.hex()} at column {error.start + 1}",
        encoding,
    )


def _binary(source, number):
    """The error for NUL bytes, read in an encoding that has none (`_allows_nul`)."""
    where = f" (line {number})" if number else ""
    return DataArgumentError(
        "encoding",
        f"{source} holds NUL bytes{where}: it looks like binary data, not text (for UTF-16 text pass {{argument}} utf-16)",
    )


def decode_line(data, source, number, encoding=None, codec=None):
    """One line of bytes as text, or a `DataError` naming the source and line.

    `codec` is `codec_name(encoding)`, when the caller has it already.
    """
    codec = codec or codec_name(encoding)
    if b"\0" in data and not _allows_nul(codec):
        raise _binary(source, number)
    try:
        return data.decode(codec)
    except UnicodeDecodeError as error:
        raise undecodable(source, number, data, error, encoding) from None


def iter_lines(stream, source, encoding=None):
    """The lines of a binary stream (e.g. standard input), decoded strictly, without line breaks.

    Args:
        stream: A binary file object.
        source: Its name for messages (e.g. "standard input").
        encoding: Text encoding (default UTF-8).

    Raises:
        DataError: Undecodable bytes or NUL bytes, naming the line.
    """
    codec = codec_name(encoding)
    if _allows_nul(codec):  # no line-by-line splitting of UTF-16/32 bytes
        data = stream.read()
        try:
            text = data.decode(codec)
        except UnicodeDecodeError as error:
            raise _not_decoded(f"{source} is not valid {encoding} text (byte {error.start})", encoding) from None
        yield from text.splitlines()
        return
    for number, line in enumerate(stream, start=1):  # UTF-8's codec, utf-8-sig, drops a byte-order mark
        yield decode_line(line, source, number, encoding, codec).rstrip("\r\n")


def check_text_file(path, encoding=None):
    """Refuses a file whose first 64 KiB hold NUL bytes (binary data), before a parser sees it."""
    with open(path, "rb") as f:
        head = f.read(_SNIFF_BYTES)
    if b"\0" in head and not _allows_nul(codec_name(encoding)):
        raise _binary(path, head[: head.index(b"\0")].count(b"\n") + 1)


def locate_decode_error(path, encoding=None):
    """The `DataArgumentError` for the first undecodable line of a file (after a parser failed to decode it)."""
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            try:
                decode_line(line, path, number, encoding)
            except DataError as error:
                return error
    return _not_decoded(f"{path} is not valid {encoding or DEFAULT_ENCODING} text", encoding)
