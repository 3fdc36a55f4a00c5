"""Reading text files and streams strictly: text comes out right or not at all.

Bytes that are not valid in the file's encoding are never replaced silently
(that turned `café` into `caf` in a vocabulary): they raise a
`DataError` (naming the `encoding` argument) that names the source, the line and the
byte, and says how to pass the right `encoding`. NUL bytes mean binary data
(or UTF-16 read as UTF-8) and are refused the same way.

Files are read as users have them: compressed with gzip, bzip2, xz or zip
(one file inside) they are decompressed on the fly (`open_bytes`), and every
check above applies to the decompressed text, with its line numbers. A
spreadsheet or document (Excel, OpenDocument, Numbers, Word, PDF), named so or
recognised by its content, is refused with one line that says how to save it
as text.

Files in the legacy encodings of Chinese, Japanese and Korean are read
without their encoding being given, or refused naming it (`sniff_encoding`).
Only bytes that are not UTF-8 are looked at: a file whose first 64 KiB are
valid UTF-8 (ASCII included), start with a byte-order mark or hold NUL bytes
is read as before, and an `encoding` given is never second-guessed. Otherwise
charset-normalizer (imported then, not before) ranks the encodings of those
64 KiB, and the file is read in GB18030 (GB2312 and GBK are subsets of it),
Big5, Shift-JIS or EUC-KR when that is the clear best (`_MARGIN`) on enough
bytes (`_EVIDENCE`) and reads as text of its language (`_UNLIKELY`). It is
still read strictly: a byte that the encoding detected does not decode,
further on, is refused like any other, naming that encoding. When UTF-8
fails and the detector ranks one of those encodings (or EUC-JP) clearly
first without being sure enough to read the file, the error names it and
how to pass it. Other encodings are never guessed: a single-byte encoding
(latin-1, cp1252, cp1251, ...) decodes any bytes, and the detector takes the
Western ones for one another, so the error keeps giving examples. A file
read in the encoding detected is logged at INFO level (`log_detected`), and
`hierattn.data.tables.load_table` reports it.
"""

import bz2
import codecs
import gzip
import io
import logging
import lzma
import pathlib
import re
import zipfile
import zlib

from hierattn.errors import DataError

DEFAULT_ENCODING = "utf-8"
# Text codecs of Python's for domain names, not files: refused as encodings (`codec_name`).
_NOT_FILE_CODECS = frozenset({"idna", "punycode"})
_SNIFF_BYTES = 1 << 16  # the bytes looked at first: for NUL bytes, UTF-8 and, if it is not, the legacy encoding

logger = logging.getLogger(__name__)

# The legacy CJK encodings that are read when detected: charset-normalizer's names for them, and how they are named
# and read. GB2312 and GBK are read as GB18030, Big5, Shift-JIS and EUC-KR as the Windows code pages that Excel
# writes (cp950, cp932, cp949): supersets that decode every byte of the standard ones, the same characters but for a
# few symbols of Big5 and Shift-JIS (e.g. Shift-JIS's 0x8160 is U+FF5E, not U+301C).
DETECTED = {
    "gb2312": ("GB18030", "gb18030"),
    "gbk": ("GB18030", "gb18030"),
    "gb18030": ("GB18030", "gb18030"),
    "big5": ("Big5", "cp950"),
    "cp950": ("Big5", "cp950"),
    "big5hkscs": ("Big5", "big5hkscs"),
    "shift_jis": ("Shift-JIS", "cp932"),
    "cp932": ("Shift-JIS", "cp932"),
    "shift_jis_2004": ("Shift-JIS", "shift_jis_2004"),
    "shift_jisx0213": ("Shift-JIS", "shift_jisx0213"),
    "euc_kr": ("EUC-KR", "cp949"),
    "cp949": ("EUC-KR", "cp949"),
}
# Named in an error when detected, never read without being given.
_NAMED_ONLY = {
    "euc_jp": ("EUC-JP", "euc_jp"),
    "euc_jis_2004": ("EUC-JP", "euc_jis_2004"),
    "euc_jisx0213": ("EUC-JP", "euc_jisx0213"),
}
# charset-normalizer drops an encoding whose text is messier than this (its default, 0.2, drops the right one for 7%
# of the tables of 20 waimai reviews, for their emoticons); the encoding read must be this much less messy than the
# best of any other language or script, on at least this many bytes that are not ASCII (64 CJK characters).
_THRESHOLD = 0.5
_MARGIN = 0.1
_EVIDENCE = 128
# Characters that real CJK text hardly has but other bytes read in a CJK encoding do: private use (the code pages'
# user-defined areas) and half-width katakana (Shift-JIS's single bytes, where Cyrillic KOI8-R, Greek or Thai
# letters fall). More than 1 in `_UNLIKELY_SHARE` of the characters that are not ASCII, and the encoding is not named.
_UNLIKELY = re.compile("[\ue000-\uf8ff\uff61-\uff9f]")
_UNLIKELY_SHARE = 8

# Compression, from a file's last suffix or, without one, from its first bytes.
COMPRESSIONS = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zip": "zip"}
_MAGIC = {b"\x1f\x8b": "gzip", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip"}
_BZIP2_MAGIC = (b"BZh", b"1AY&SY")  # then a block size 1-9 between them
_CORRUPT = (EOFError, OSError, lzma.LZMAError, zlib.error, zipfile.BadZipFile)

_SPREADSHEET = "save it as CSV ({}) and pass that file"
_DOCUMENT = "save it as plain text, one text per line ({}), and pass that file"
# Files people try that are not text, by suffix: what they are, and how to make text of them.
NOT_TEXT = {
    ".xlsx": ("an Excel workbook", _SPREADSHEET.format("File > Save As > CSV UTF-8")),
    ".xlsm": ("an Excel workbook", _SPREADSHEET.format("File > Save As > CSV UTF-8")),
    ".xlsb": ("an Excel workbook", _SPREADSHEET.format("File > Save As > CSV UTF-8")),
    ".xls": ("an Excel workbook", _SPREADSHEET.format("File > Save As > CSV UTF-8")),
    ".ods": ("an OpenDocument spreadsheet", _SPREADSHEET.format("File > Save As > Text CSV")),
    ".numbers": ("a Numbers spreadsheet", _SPREADSHEET.format("File > Export To > CSV")),
    ".docx": ("a Word document", _DOCUMENT.format("File > Save As > Plain Text")),
    ".doc": ("a Word document", _DOCUMENT.format("File > Save As > Plain Text")),
    ".odt": ("an OpenDocument text", _DOCUMENT.format("File > Save As > Text")),
    ".pdf": ("a PDF document", _DOCUMENT.format("copy its text into a text file")),
    ".tar": ("a tar archive", "extract the table or text file from it (tar -xf FILE) and pass that file"),
    ".tgz": ("a tar archive", "extract the table or text file from it (tar -xzf FILE) and pass that file"),
}
_OFFICE = (
    "a Microsoft Office file (an .xls workbook or a .doc document)",
    "save it as CSV or plain text and pass that file",
)
_TAR_HEAD = 262  # a tar archive's first header says "ustar" at byte 257
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_NOT_ASCII = bytes(range(0x80, 0x100))


def codec_name(encoding=None):
    """The Python codec for `encoding` (UTF-8 also accepts a byte-order mark).

    Raises:
        DataError: An encoding Python does not know, or a codec of Python's
            that is not a text encoding (`rot13`, `hex`, `base64`, `zlib`:
            the readers failed on them with a `LookupError`) or not one of
            files (`idna`, `punycode`, for domain names: a table's header
            of 100,000 columns took 40 s to decode).
    """
    encoding = encoding or DEFAULT_ENCODING
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError, ValueError):  # TypeError: not a string; ValueError: a NUL in it
        raise DataError(f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, cp1252, utf-16)") from None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_FILE_CODECS:  # str.encode checks the first
        raise DataError(f"{encoding!r} is not a text encoding (e.g. utf-8, latin-1, cp1252, utf-16)")
    name = info.name
    return "utf-8-sig" if name == "utf-8" else name


def data_name(path):
    """The name whose suffix says what a file holds: its own without a compression suffix.

    `reviews.tsv.gz` holds `reviews.tsv`; a zip whose name says nothing more
    (`reviews.zip`) holds the name of its one file (`reviews.csv`).

    Example:

    >>> data_name("reviews.tsv.gz"), data_name("texts.txt.xz"), data_name("reviews.csv")
    ('reviews.tsv', 'texts.txt', 'reviews.csv')
    """
    path = pathlib.Path(path)
    kind = COMPRESSIONS.get(path.suffix.lower())
    if kind is None:
        return path.name
    if kind == "zip" and not pathlib.PurePath(path.stem).suffix and path.is_file():
        try:
            with zipfile.ZipFile(path) as archive:
                members = _members(archive)
        except (zipfile.BadZipFile, OSError):
            members = []  # open_bytes says what is wrong with it
        if len(members) == 1:
            return pathlib.PurePosixPath(members[0].filename).name
    return path.stem


def open_bytes(path, what="file"):
    """A file's bytes, decompressed when it is compressed; a clear `DataError` when it holds no text to read.

    The compression comes from the name's last suffix (`.gz`, `.bz2`, `.xz`,
    `.zip`: one file inside), or without one from the first bytes.
    Decompressing data that is damaged or cut short raises a `DataError`
    naming the file, whenever it comes to light.

    Args:
        path: The file.
        what: What it should be, for the message about a folder (e.g.
            "table file").

    Returns:
        A binary file object (close it, or use it in a `with` block).

    Raises:
        DataError: A folder, a missing file, a spreadsheet, document or tar
            archive (by its name or content), a zip that does not hold
            exactly one file, or a damaged compressed file.

    Example:

    >>> import gzip, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "texts.txt.gz"
    >>> _ = path.write_bytes(gzip.compress(b"A great film.\\nDull.\\n"))
    >>> with open_bytes(path) as f:
    ...     f.read()
    b'A great film.\\nDull.\\n'
    >>> try:
    ...     open_bytes("reviews.xlsx")
    ... except DataError as error:
    ...     print(error)
    reviews.xlsx is an Excel workbook: save it as CSV (File > Save As > CSV UTF-8) and pass that file
    """
    path = pathlib.Path(path)
    for name in (path.name, data_name(path)):
        known = NOT_TEXT.get(pathlib.PurePath(name).suffix.lower())
        if known:
            raise DataError(f"{path} is {known[0]}: {known[1]}")
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a {what}")
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    raw = open(path, "rb", buffering=_SNIFF_BYTES)  # its first read holds the bytes looked at first
    try:
        head = raw.peek(_TAR_HEAD)[:_TAR_HEAD]
        kind = COMPRESSIONS.get(path.suffix.lower()) or _compression(head)
        if kind is None:
            _refuse_content(path, head)
            return raw
        return _decompressed(raw, kind, path)
    except BaseException:
        raw.close()
        raise


def _compression(head):
    """The compression that a file's first bytes show, or None."""
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    if head.startswith(_BZIP2_MAGIC[0]) and head[3:4] in b"123456789" and head[4:10] == _BZIP2_MAGIC[1]:
        return "bzip2"
    return None


def _refuse_content(path, head, inside=""):
    """Refuses a file whose first bytes show a document or tar archive, not text."""
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        known = _OFFICE
    elif head.startswith(b"%PDF-"):
        known = NOT_TEXT[".pdf"]
    elif head[257:262] == b"ustar":
        known = NOT_TEXT[".tar"]
    else:
        return
    raise DataError(f"{path} {inside or 'is'} {known[0]}, not text: {known[1]}")


def _members(archive):
    """The files of a zip archive, without folders and the `__MACOSX/` copies that macOS's Compress adds."""
    return [
        member
        for member in archive.infolist()
        if not member.is_dir()
        and not member.filename.startswith("__MACOSX/")
        and not pathlib.PurePosixPath(member.filename).name.startswith("._")
    ]


def _office_zip(archive):
    """What a zip archive is when it is an office file (Excel, Word, OpenDocument, Numbers), else None."""
    names = set(archive.namelist())
    if any(name.startswith("xl/") for name in names):
        return NOT_TEXT[".xlsx"]
    if any(name.startswith("word/") for name in names):
        return NOT_TEXT[".docx"]
    if "Index/Document.iwa" in names:
        return NOT_TEXT[".numbers"]
    if "mimetype" in names and "content.xml" in names:
        spreadsheet = b"spreadsheet" in archive.read("mimetype")
        return NOT_TEXT[".ods" if spreadsheet else ".odt"]
    return None


def _decompressed(raw, kind, path):
    """The decompressed bytes of the open file `raw` (see `open_bytes`)."""
    try:
        if kind == "zip":
            archive = zipfile.ZipFile(raw)
            known = _office_zip(archive)
            if known:
                raise DataError(f"{path} is {known[0]}, not text (by its content): {known[1]}")
            members = _members(archive)
            if len(members) != 1:
                names = ", ".join(m.filename for m in members[:3]) + (", ..." if len(members) > 3 else "")
                held = f"{len(members)} files ({names})" if members else "no file"
                raise DataError(
                    f"{path} holds {held}: a .zip must hold one table or text file; unzip it and pass the one you mean"
                )
            if members[0].flag_bits & 0x1:
                raise DataError(f"{path} is encrypted: unzip it with its password and pass the file")
            try:
                stream = archive.open(members[0])
            except NotImplementedError as error:  # a compression method Python lacks (e.g. Deflate64)
                raise DataError(f"could not read {path}: {error}; unzip it and pass the file") from None
            closing = (stream, archive, raw)
        else:
            opener = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
            stream = opener(fileobj=raw) if kind == "gzip" else opener(raw)
            closing = (stream, raw)
    except _CORRUPT as error:
        raise _corrupt(path, kind, error) from None
    reader = io.BufferedReader(_Decompressing(closing, path, kind), 1 << 16)
    try:
        _refuse_content(path, reader.peek(_TAR_HEAD)[:_TAR_HEAD], inside="holds")
    except BaseException:
        reader.close()
        raise
    return reader


def _corrupt(path, kind, error):
    """The `DataError` for a decompressor's `error`; a disk's error (an `OSError` with an errno) is itself."""
    if isinstance(error, OSError) and error.errno is not None:
        return error
    reason = str(error) or type(error).__name__
    return DataError(f"{path} is not a readable {kind} file: it is damaged or cut short ({reason})")


class _Decompressing(io.RawIOBase):
    """A decompressing stream whose damaged or cut-short data raises a `DataError` naming the file.

    `closing`: the decompressing stream first, then what it reads from,
    closed with it.
    """

    def __init__(self, closing, path, kind):
        super().__init__()
        self._closing, self._path, self._kind = closing, path, kind

    def readable(self):
        return True

    def readinto(self, buffer):
        try:
            return self._closing[0].readinto(buffer)
        except _CORRUPT as error:
            raise _corrupt(self._path, self._kind, error) from None

    def close(self):
        if not self.closed:
            for stream in self._closing:
                stream.close()
        super().close()


class DetectedEncoding(str):
    """An encoding found by `detect_encoding`, not given: the codec's name, which also says what it was found as.

    Attributes:
        label: The encoding's common name (e.g. "GB18030", "Shift-JIS"); the
            string is the codec it is read with (e.g. "gb18030", "cp932").

    Example:

    >>> encoding = detect_encoding("送餐很快，味道不错。\\n".encode("gb18030") * 20)
    >>> encoding, encoding.label
    ('gb18030', 'GB18030')
    >>> "送餐很快".encode("gb18030").decode(encoding)
    '送餐很快'
    """

    def __new__(cls, codec, label):
        encoding = super().__new__(cls, codec)
        encoding.label = label
        return encoding

    def __getnewargs__(self):  # pickled with its label
        return str(self), self.label


def _family(name):
    """The common name of charset-normalizer's encoding `name`, when it is a CJK one (`DETECTED`, `_NAMED_ONLY`)."""
    return (DETECTED.get(name) or _NAMED_ONLY.get(name) or (name,))[0]


def _guess(data):
    """The CJK encoding that charset-normalizer ranks clearly first for `data` (bytes that are not UTF-8), or None.

    Clearly first: less messy (charset-normalizer's chaos) by `_MARGIN` than
    the best encoding of any other language or script, or the only one that
    decodes `data`; and `data` read in it is not `_UNLIKELY` characters.

    Returns:
        `(encoding, sure)`: a `DetectedEncoding` or None, and whether it is
        sure enough to read the file with: an encoding of `DETECTED` found
        on at least `_EVIDENCE` bytes that are not ASCII.
    """
    from charset_normalizer import from_bytes  # 30 ms to import: only for bytes that are not UTF-8

    matches = list(from_bytes(data, threshold=_THRESHOLD, preemptive_behaviour=False))
    best = matches[0] if matches else None
    label, codec = best and (DETECTED.get(best.encoding) or _NAMED_ONLY.get(best.encoding)) or (None, None)
    if label is None:
        return None, False
    rival = min((match.chaos for match in matches if _family(match.encoding) != label), default=None)
    if rival is not None and rival - best.chaos < _MARGIN:
        return None, False
    text = data.decode(codec, "replace")
    letters = len(text) - len(text.encode("ascii", "ignore"))  # the characters that are not ASCII
    if len(_UNLIKELY.findall(text)) * _UNLIKELY_SHARE > letters:  # e.g. Cyrillic KOI8-R as half-width katakana
        return None, False
    evidence = len(data) - len(data.translate(None, _NOT_ASCII))
    return DetectedEncoding(codec, label), best.encoding in DETECTED and evidence >= _EVIDENCE


def detect_encoding(data):
    """The legacy CJK encoding of `data`, bytes that are not UTF-8, when charset-normalizer is sure of it; else None.

    Args:
        data: The first bytes of a file (`sniff_encoding` takes 64 KiB),
            ending at a line break.

    Returns:
        A `DetectedEncoding`: GB18030, Big5, Shift-JIS or EUC-KR (read as
        gb18030, cp950, cp932 and cp949, their supersets); or None.
    """
    encoding, sure = _guess(data)
    return encoding if sure else None


def _sample(head):
    """The bytes of `head` up to its last line break (all of them without one): no character cut in two."""
    return head[: head.rfind(b"\n") + 1] or head


def sniff_encoding(head, encoding=None):
    """The encoding to read a file or stream with, from its first bytes `head` (up to 64 KiB).

    Args:
        head: The first bytes.
        encoding: The encoding given, if any: returned as it is.

    Returns:
        `encoding` when given; else None (UTF-8) when `head` is valid
        UTF-8, starts with a byte-order mark or holds NUL bytes (binary data
        or UTF-16, refused as such), or when no legacy encoding is sure;
        else the `DetectedEncoding` (see `detect_encoding`).
    """
    if encoding is not None or head.isascii() or b"\0" in head or head.startswith(_BOMS):
        return encoding
    try:
        codecs.utf_8_decode(head, "strict", False)  # a character cut off at the end is not an error
        return None
    except UnicodeDecodeError:
        return detect_encoding(_sample(head))


def _head(stream):
    """The next bytes of a binary stream (up to `_SNIFF_BYTES`), left to be read; b"" if it can neither peek nor seek.

    A buffered stream gives the bytes it holds, or those of one read.
    """
    if hasattr(stream, "peek"):
        return stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
    if stream.seekable():
        position = stream.tell()
        head = stream.read(_SNIFF_BYTES)
        stream.seek(position)
        return head
    return b""


def log_detected(source, encoding):
    """Logs (INFO) that `source` is read as `encoding`, when that is a `DetectedEncoding`."""
    if isinstance(encoding, DetectedEncoding):
        logger.info("%s is not UTF-8: read as %s (%s), the encoding detected", source, encoding.label, encoding)


def _allows_nul(codec):
    return codec.startswith(("utf-16", "utf-32"))


def _not_decoded(message, encoding):
    """The error for text that `encoding` does not decode: `message`, then how to pass another encoding."""
    if isinstance(encoding, DetectedEncoding):
        return DataError(f"{message}; pass the file's encoding with {{argument}}", argument="encoding")
    other = "latin-1 or cp1252" if codec_name(encoding).startswith("utf-8") else "utf-8"
    return DataError(f"{message}; pass the file's encoding with {{argument}} (e.g. {other})", argument="encoding")


def undecodable(source, number, line, error, encoding, following=b""):
    """The `DataError` (about `encoding`) for line `number` (1-based) whose bytes `line` failed to decode.

    When UTF-8 failed (given or not) and the line and the bytes `following`
    it look like a CJK encoding (`_guess`), the message names it.
    """
    byte = line[error.start : error.start + 1]
    where = f"line {number} has the byte 0x{byte.hex()} at column {error.start + 1}"
    if isinstance(encoding, DetectedEncoding):
        detected = f"{encoding.label}, detected as it is not UTF-8"
        return _not_decoded(f"{source} is not valid {encoding} text ({detected}): {where}", encoding)
    message = f"{source} is not valid {encoding or DEFAULT_ENCODING} text: {where}"
    if codec_name(encoding).startswith("utf-8"):
        guess, _ = _guess(_sample((line + following)[:_SNIFF_BYTES]))
        if guess is not None:
            return DataError(f"{message}; it looks like {guess.label}: pass {{argument}} {guess}", argument="encoding")
    return _not_decoded(message, encoding)


def _binary(source, number):
    """The error for NUL bytes, read in an encoding that has none (`_allows_nul`)."""
    where = f" (line {number})" if number else ""
    return DataError(
        f"{source} holds NUL bytes{where}: it looks like binary data, not text (for UTF-16 text pass {{argument}} utf-16)",
        argument="encoding",
    )


def decode_line(data, source, number, encoding=None, codec=None, stream=None):
    """One line of bytes as text, or a `DataError` naming the source and line.

    `codec` is `codec_name(encoding)`, when the caller has it already;
    `stream`, the binary stream the line was read from, whose next bytes
    help the error name the encoding when UTF-8 failed (`undecodable`).
    """
    codec = codec or codec_name(encoding)
    if b"\0" in data and not _allows_nul(codec):
        raise _binary(source, number)
    try:
        return data.decode(codec)
    except UnicodeDecodeError as error:
        raise undecodable(source, number, data, error, encoding, _head(stream) if stream else b"") from None


def iter_lines(stream, source, encoding=None):
    """The lines of a binary stream (e.g. standard input), decoded strictly, without line breaks.

    Without `encoding`, the lines are UTF-8, or in the legacy CJK encoding
    detected in the first bytes when they are not (`sniff_encoding`, logged
    by `log_detected`).

    Args:
        stream: A binary file object.
        source: Its name for messages (e.g. "standard input").
        encoding: Text encoding (default UTF-8, or the one detected).

    Raises:
        DataError: Undecodable bytes or NUL bytes, naming the line.
    """
    if encoding is None:
        encoding = sniff_encoding(_head(stream))
        log_detected(source, encoding)
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
        yield decode_line(line, source, number, encoding, codec, stream).rstrip("\r\n")


def check_text_file(path, encoding=None, what="text file"):
    """Refuses a file that holds no text to read, before a parser sees it; returns the encoding to read it with.

    Refused: anything `open_bytes` refuses (a folder, a missing file, a
    spreadsheet or document, a damaged compressed file), and a file whose
    first 64 KiB, decompressed, hold NUL bytes (binary data) unless
    `encoding` is UTF-16 or UTF-32.

    Args:
        path: The file.
        encoding: Its text encoding (default UTF-8).
        what: What it should be, for the message about a folder.

    Returns:
        `encoding` when given; else None (UTF-8), or the legacy CJK encoding
        detected in the first 64 KiB when they are not UTF-8 (a
        `DetectedEncoding`: see `sniff_encoding`).

    Raises:
        DataError: The file holds no text to read.
    """
    with open_bytes(path, what) as f:
        head = f.read(_SNIFF_BYTES)
    if b"\0" in head and not _allows_nul(codec_name(encoding)):
        raise _binary(path, head[: head.index(b"\0")].count(b"\n") + 1)
    return sniff_encoding(head, encoding)


def locate_decode_error(path, encoding=None):
    """The `DataError` for the first undecodable line of a file (after a parser failed to decode it).

    Lines are counted in the decompressed text of a compressed file.
    """
    with open_bytes(path) as f:
        for number, line in enumerate(f, start=1):
            try:
                decode_line(line, path, number, encoding, stream=f)
            except DataError as error:
                return error
    return _not_decoded(f"{path} is not valid {encoding or DEFAULT_ENCODING} text", encoding)
