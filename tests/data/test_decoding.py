"""Tests for hierattn.data.decoding: strict decoding that names the line at fault."""

import bz2
import gzip
import io
import logging
import lzma
import os
import pickle
import re
import subprocess
import sys
import tarfile
import zipfile

import pytest

from hierattn.data.decoding import (
    DetectedEncoding,
    check_text_file,
    codec_name,
    data_name,
    decode_line,
    detect_encoding,
    iter_lines,
    locate_decode_error,
    open_bytes,
    sniff_encoding,
)
from hierattn.data.text_files import read_texts
from hierattn.errors import DataError

from conftest import LEGACY_ENCODINGS, LEGACY_REVIEWS


def test_codec_names():
    assert codec_name(None) == codec_name("UTF8") == "utf-8-sig"  # UTF-8 with or without a byte-order mark
    assert codec_name("latin-1") == "iso8859-1"
    with pytest.raises(DataError, match="unknown encoding 'klingon'"):
        codec_name("klingon")


def test_lines_decode_strictly_and_name_the_line():
    assert list(iter_lines(io.BytesIO(b"\xef\xbb\xbfone\r\ntwo\n\nthree"), "in")) == ["one", "two", "", "three"]
    with pytest.raises(
        DataError,
        match=r"^in is not valid utf-8 text: line 2 has the byte 0xe9 at column 4; pass "
        r"the file's encoding with encoding \(e.g. latin-1 or cp1252\)$",
    ) as undecodable:
        list(iter_lines(io.BytesIO(b"ok\ncaf\xe9\n"), "in"))
    assert undecodable.value.argument == "encoding"
    assert list(iter_lines(io.BytesIO(b"caf\xe9\n"), "in", "cp1252")) == ["caf\u00e9"]
    with pytest.raises(DataError, match=r"in holds NUL bytes \(line 1\): it looks like binary data"):
        list(iter_lines(io.BytesIO(b"a\0b\n"), "in"))


def test_utf16_streams_and_files(tmp_path):
    data = "caf\u00e9\ncr\u00e8me\n".encode("utf-16")
    assert list(iter_lines(io.BytesIO(data), "in", "utf-16")) == ["caf\u00e9", "cr\u00e8me"]
    (tmp_path / "wide.txt").write_bytes(data)
    with pytest.raises(DataError, match=r"NUL bytes .*pass encoding utf-16\)$") as wide:
        check_text_file(tmp_path / "wide.txt")
    assert wide.value.naming("--encoding").endswith("(for UTF-16 text pass --encoding utf-16)")
    check_text_file(tmp_path / "wide.txt", "utf-16")  # allowed with its encoding


def test_locating_the_first_bad_line_of_a_file(tmp_path):
    (tmp_path / "t.csv").write_bytes(b"text,label\nfine,1\nna\xefve,0\n")
    error = locate_decode_error(tmp_path / "t.csv")
    assert "line 3 has the byte 0xef at column 3" in str(error) and error.argument == "encoding"
    assert decode_line(b"na\xefve", "x", 1, "latin-1") == "na\u00efve"


TEXT = "caf\u00e9 one\ntwo\n\nthree\n".encode()


def zipped(data, name="texts.txt", *extra):
    """A zip archive holding `data` as `name`, and `extra` (name, bytes) files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
        for other, content in extra:
            archive.writestr(other, content)
    return buffer.getvalue()


COMPRESSED = {
    "texts.txt.gz": gzip.compress,
    "texts.txt.bz2": bz2.compress,
    "texts.txt.xz": lzma.compress,
    "texts.txt.zip": zipped,
}


@pytest.mark.parametrize("name", list(COMPRESSED))
def test_compressed_files_are_read_decompressed(tmp_path, name):
    (tmp_path / name).write_bytes(COMPRESSED[name](TEXT))
    with open_bytes(tmp_path / name) as f:
        assert list(iter_lines(f, name)) == ["caf\u00e9 one", "two", "", "three"]
    assert data_name(tmp_path / name) == "texts.txt"
    check_text_file(tmp_path / name)


def test_the_name_under_the_compression_suffix_and_compression_known_by_content(tmp_path):
    assert data_name("reviews.tsv.gz") == "reviews.tsv" and data_name("reviews.csv") == "reviews.csv"
    (tmp_path / "reviews.zip").write_bytes(zipped(b"text,label\n", "folder/reviews.tsv"))
    assert data_name(tmp_path / "reviews.zip") == "reviews.tsv"  # a zip named by nothing else: its one file
    for compress in (gzip.compress, bz2.compress, lzma.compress, zipped):  # no compression suffix: the first bytes
        (tmp_path / "texts.txt").write_bytes(compress(TEXT))
        with open_bytes(tmp_path / "texts.txt") as f:
            assert f.read() == TEXT
    (tmp_path / "plain.txt").write_bytes(b"BZh9 is how this line starts\n")  # bzip2's first bytes, but text
    with open_bytes(tmp_path / "plain.txt") as f:
        assert f.read() == b"BZh9 is how this line starts\n"


def test_strict_decoding_counts_the_lines_of_the_decompressed_text(tmp_path):
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(b"text,label\nfine,1\nna\xefve,0\n"))
    error = locate_decode_error(tmp_path / "t.csv.gz")
    assert str(error).startswith(f"{tmp_path / 't.csv.gz'} is not valid utf-8 text: line 3 has the byte 0xef")
    (tmp_path / "t.txt.xz").write_bytes(lzma.compress(b"one\ntwo\nth\0ree\n"))
    with pytest.raises(DataError, match=r"t\.txt\.xz holds NUL bytes \(line 3\)"):
        check_text_file(tmp_path / "t.txt.xz")
    wide = "caf\u00e9\ncr\u00e8me\n".encode("utf-16")
    (tmp_path / "wide.txt.bz2").write_bytes(bz2.compress(wide))
    check_text_file(tmp_path / "wide.txt.bz2", "utf-16")
    with open_bytes(tmp_path / "wide.txt.bz2") as f:
        assert list(iter_lines(f, "wide", "utf-16")) == ["caf\u00e9", "cr\u00e8me"]


@pytest.mark.parametrize("name", list(COMPRESSED))
def test_damaged_or_cut_short_compressed_files_name_the_file(tmp_path, name):
    data = COMPRESSED[name](os.urandom(300_000).hex().encode())  # 600 kB that do not compress much
    kind = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zip": "zip"}[os.path.splitext(name)[1]]
    pattern = f"^{re.escape(str(tmp_path / name))} is not a readable {kind} file: it is damaged or cut short \\(.+\\)$"
    (tmp_path / name).write_bytes(data[: len(data) * 4 // 5])  # its end cut off
    with pytest.raises(DataError, match=pattern):
        with open_bytes(tmp_path / name) as f:
            f.read()  # past the first bytes, which decompress
    (tmp_path / name).write_bytes(data[:10] + b"\x55" * 5000 + data[5010:])  # bytes overwritten near the start
    with pytest.raises(DataError, match=pattern):
        check_text_file(tmp_path / name)


def test_a_zip_must_hold_one_file_besides_what_macos_adds(tmp_path):
    (tmp_path / "mac.zip").write_bytes(zipped(TEXT, "texts.txt", ("__MACOSX/._texts.txt", b"\0\x05\x16\x07")))
    with open_bytes(tmp_path / "mac.zip") as f:
        assert f.read() == TEXT
    (tmp_path / "two.zip").write_bytes(zipped(TEXT, "a.txt", ("b.txt", TEXT)))
    with pytest.raises(DataError, match=r"two\.zip holds 2 files \(a\.txt, b\.txt\): a \.zip must hold one"):
        open_bytes(tmp_path / "two.zip")
    with zipfile.ZipFile(tmp_path / "empty.zip", "w"):
        pass
    with pytest.raises(DataError, match=r"empty\.zip holds no file: a \.zip must hold one"):
        open_bytes(tmp_path / "empty.zip")
    locked = bytearray(zipped(TEXT))  # a zip whose file is encrypted (its flag set in both headers)
    locked[6] |= 1
    locked[locked.index(b"PK\x01\x02") + 8] |= 1
    (tmp_path / "locked.zip").write_bytes(bytes(locked))
    with pytest.raises(DataError, match=r"locked\.zip is encrypted: unzip it with its password and pass the file$"):
        open_bytes(tmp_path / "locked.zip")


def office_zip(*names):
    """A zip archive laid out as an office file: these members (their content does not matter here)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, b"application/vnd.oasis.opendocument.spreadsheet" if name == "mimetype" else b"<x/>")
    return buffer.getvalue()


XLSX = office_zip("[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/worksheets/sheet1.xml")


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("reviews.xlsx", None, "is an Excel workbook: save it as CSV (File > Save As > CSV UTF-8) and pass that file"),
        ("reviews.XLS", b"", "is an Excel workbook: save it as CSV"),
        ("reviews.xlsx.gz", gzip.compress(XLSX), "is an Excel workbook: save it as CSV"),
        ("reviews.numbers", None, "is a Numbers spreadsheet: save it as CSV (File > Export To > CSV)"),
        ("reviews.csv", XLSX, "is an Excel workbook, not text (by its content): save it as CSV (File > Save As"),
        ("reviews.csv", office_zip("mimetype", "content.xml"), "is an OpenDocument spreadsheet, not text"),
        ("reviews.txt", office_zip("[Content_Types].xml", "word/document.xml"), "is a Word document, not text"),
        ("reviews.csv", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504, "is a Microsoft Office file"),
        ("reviews.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "is a PDF document, not text: save it as plain text"),
        ("aclImdb_v1.tar.gz", b"", "is a tar archive: extract the table or text file from it"),
        ("reviews.gz", "tar", "holds a tar archive, not text: extract"),
    ],
    ids=["xlsx", "xls", "xlsx-gz", "numbers", "xlsx-named-csv", "ods", "docx", "ole2", "pdf", "tar-gz", "tar-in-gz"],
)
def test_spreadsheets_documents_and_archives_are_refused_by_name_or_content(tmp_path, name, content, message):
    path = tmp_path / name
    if content == "tar":
        with tarfile.open(path, "w:gz") as archive:
            archive.addfile(tarfile.TarInfo("reviews.csv"), io.BytesIO(b""))
    elif content is not None:  # None: refused by its name, before the file is looked for
        path.write_bytes(content)
    with pytest.raises(DataError) as refused:
        check_text_file(path)
    assert str(refused.value).startswith(f"{path} {message}")
    assert "NUL" not in str(refused.value)


# Legacy CJK encodings ------------------------------------------------------------------------------------------------


def review_lines(written, count=24):
    """`count` reviews of the language `written` is for, one a line, as text."""
    sentences = LEGACY_REVIEWS["gb18030" if written == "gbk" else written]
    return [sentences[i % len(sentences)] for i in range(count)]


@pytest.mark.parametrize("written, read, name", LEGACY_ENCODINGS, ids=[row[0] for row in LEGACY_ENCODINGS])
def test_text_files_and_streams_in_a_legacy_cjk_encoding_are_read_as_detected(tmp_path, caplog, written, read, name):
    lines = review_lines(written)
    data = "\n".join(lines).encode(written) + b"\n"
    assert detect_encoding(data) == read and detect_encoding(data).label == name
    (tmp_path / "texts.txt").write_bytes(data)
    (tmp_path / "texts.txt.gz").write_bytes(gzip.compress(data))
    for path in (tmp_path / "texts.txt", tmp_path / "texts.txt.gz"):
        assert check_text_file(path) == read and isinstance(check_text_file(path), DetectedEncoding)
        with caplog.at_level(logging.INFO, logger="hierattn.data.decoding"):
            caplog.clear()
            assert read_texts(path) == lines  # the same strings as the UTF-8 original's
        assert caplog.messages == [f"{path} is not UTF-8: read as {name} ({read}), the encoding detected"]
    for stream in (io.BytesIO(data), io.BufferedReader(io.BytesIO(data))):  # standard input is a buffered stream
        assert list(iter_lines(stream, "standard input")) == lines


def test_valid_utf8_is_never_detected_and_a_given_encoding_is_never_overridden(tmp_path):
    lines = review_lines("gb18030")
    utf8 = "\n".join(lines).encode()
    for head in (utf8, b"\xef\xbb\xbf" + utf8, b"plain ascii\n", b"", utf8[:100]):  # the last: a character cut off
        assert sniff_encoding(head) is None
    assert list(iter_lines(io.BytesIO(utf8), "in")) == lines
    legacy = "\n".join(lines).encode("gb18030")
    assert sniff_encoding(legacy) == "gb18030" and sniff_encoding(legacy, "latin-1") == "latin-1"
    assert sniff_encoding("\n".join(lines).encode("utf-16")) is None  # UTF-16 is refused for its NUL bytes
    assert list(iter_lines(io.BytesIO(legacy), "in", "latin-1"))[0] == legacy.split(b"\n")[0].decode("latin-1")
    (tmp_path / "texts.txt").write_bytes(utf8)
    program = (
        "import sys; from hierattn.data.text_files import read_texts; "
        f"assert len(read_texts({str(tmp_path / 'texts.txt')!r})) == 24; "
        "print('charset_normalizer' in sys.modules)"
    )
    imported = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert imported == "False\n"  # UTF-8 texts never load the detector


def test_undecodable_utf8_names_the_cjk_encoding_it_looks_like(tmp_path):
    data = "\n".join(review_lines("shift_jis")).encode("shift_jis")
    with pytest.raises(DataError) as given:
        list(iter_lines(io.BytesIO(data), "in", "utf-8"))  # given: never overridden, but the error names it
    assert str(given.value) == (
        "in is not valid utf-8 text: line 1 has the byte 0x94 at column 1; it looks like Shift-JIS: pass encoding cp932"
    )
    assert given.value.naming("--encoding").endswith("it looks like Shift-JIS: pass --encoding cp932")
    japanese = "\n".join(review_lines("shift_jis")).encode("euc_jp")  # EUC-JP: never read unasked, but named
    assert sniff_encoding(japanese) is None
    with pytest.raises(DataError, match=r"line 1 has the byte 0xc7 at column 1; it looks like EUC-JP: pass encoding"):
        list(iter_lines(io.BytesIO(japanese), "in"))
    (tmp_path / "short.txt").write_bytes("\n".join(review_lines("euc_kr", 2)).encode("euc_kr"))
    assert check_text_file(tmp_path / "short.txt") is None  # too few bytes to read it as EUC-KR unasked ...
    error = locate_decode_error(tmp_path / "short.txt")  # ... but enough to name it
    assert str(error).endswith("line 1 has the byte 0xb9 at column 1; it looks like EUC-KR: pass encoding cp949")
    (tmp_path / "one.txt").write_bytes("送餐很快\n".encode("gb18030"))  # 4 characters: no encoding is clearly first
    with pytest.raises(
        DataError, match=r"line 1 has the byte 0xcb at column 1; pass the file's encoding with encoding "
    ):
        read_texts(tmp_path / "one.txt")


def test_the_encoding_detected_is_read_strictly(tmp_path):
    lines = review_lines("big5", 5000)  # past the first 64 KiB, where the encoding is detected
    (tmp_path / "texts.txt").write_bytes("\n".join(lines).encode("big5") + b"\nbroken \xff\xfe line\n")
    with pytest.raises(DataError) as broken:
        read_texts(tmp_path / "texts.txt")
    assert str(broken.value) == (
        f"{tmp_path / 'texts.txt'} is not valid cp950 text (Big5, detected as it is not UTF-8): line 5001 has the "
        "byte 0xff at column 8; pass the file's encoding with encoding"
    )
    assert broken.value.argument == "encoding" and "\n" not in str(broken.value)


def test_a_detected_encoding_pickles_with_its_name():
    encoding = pickle.loads(pickle.dumps(DetectedEncoding("cp932", "Shift-JIS")))
    assert (encoding, encoding.label, codec_name(encoding)) == ("cp932", "Shift-JIS", "cp932")
