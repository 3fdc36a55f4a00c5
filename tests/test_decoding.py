"""Tests for hierattn.data.decoding: strict decoding that names the line at fault."""

import io

import pytest

from hierattn.data.decoding import check_text_file, codec_name, decode_line, iter_lines, locate_decode_error
from hierattn.errors import ArgumentError, DataError


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
    assert isinstance(undecodable.value, ArgumentError) and undecodable.value.argument == "encoding"
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
