"""Tests for hierattn.data.tables: CSV/TSV/JSON-lines/DataFrame loading."""

import bz2
import gzip
import importlib.util
import io
import json
import lzma
import re
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest

from hierattn.data.dataset import LabelMap
from hierattn.data.tables import DataWarning, load_table, read_table, rows_text, table_format
from hierattn.data.text_files import iter_text_chunks
from hierattn.errors import DataError
from hierattn.utils.shell import pip_install

from conftest import LEGACY_ENCODINGS, LEGACY_REVIEWS


def test_csv_with_default_columns_and_string_labels(tmp_path):
    path = tmp_path / "reviews.csv"
    pd.DataFrame({"Review": ["Good, really.", "Bad!", "Fine"], "sentiment": ["pos", "neg", "neutral"]}).to_csv(
        path, index=False
    )
    data, report = load_table(path)
    assert data.texts == ["Good, really.", "Bad!", "Fine"]
    assert data.label_map.names == ["neg", "neutral", "pos"]
    np.testing.assert_array_equal(data.labels, [2, 0, 1])
    assert report["text_column"] == "Review" and report["label_column"] == "sentiment" and report["used"] == 3


def test_tsv_and_jsonl_with_integer_labels(tmp_path):
    (tmp_path / "d.tsv").write_text("body\ty\nfirst\t3\nsecond\t1\n")
    data, _ = load_table(tmp_path / "d.tsv")
    assert data.label_map.names == [1, 3] and data.labels.tolist() == [1, 0]
    lines = [{"content": "one", "target": 0}, {"content": "two", "target": 2}, {"content": "three", "target": 1}]
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    data, _ = load_table(tmp_path / "d.jsonl")
    assert data.label_map.names == [0, 1, 2] and data.labels.tolist() == [0, 2, 1]


def test_named_columns_and_dataframe_input():
    frame = pd.DataFrame({"a": ["x y", "z"], "b": [1, 0], "text": ["ignored", "ignored"]})
    data, report = load_table(frame, text_column="a", label_column="b")
    assert data.texts == ["x y", "z"] and report["text_column"] == "a"


def test_missing_columns_name_the_columns_found(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("comment,stars\nhi,5\nbye,1\n")
    with pytest.raises(
        DataError, match=r"no text column found .*the columns are: comment, stars\. Name it with text_column\.$"
    ) as missing:
        load_table(path)
    assert missing.value.naming("--text-column").endswith("Name it with --text-column.")
    with pytest.raises(DataError, match=r"no label column found .*Name it with label_column\.$"):
        load_table(path, text_column="comment")
    with pytest.raises(DataError, match=r"no label column 'rating'; the columns are: comment, stars"):
        load_table(path, text_column="comment", label_column="rating")


def test_a_group_column_gives_each_row_used_its_group_as_text(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_text("text,label,author\ngood,pos,3\n,neg,7\nbad,neg, ann\nfine,pos,3\n")
    with pytest.warns(DataWarning):
        data, report = load_table(path, group_column="author")
    assert data.groups.tolist() == ["3", "ann", "3"] and data.subset([1]).groups.tolist() == ["ann"]
    assert report["group_column"] == "author"
    assert rows_text(path, report)[0].endswith("(text column 'text', label column 'label', group column 'author')")
    assert load_table(path)[0].groups is None and "group_column" not in load_table(path)[1]
    frame = pd.DataFrame({"text": ["a", "b", "c"], "label": [0, 1, 1], "film": [12, 13.0, 12.0]})  # numbers
    assert load_table(frame, group_column="film")[0].groups.tolist() == ["12", "13", "12"]


def test_a_group_column_that_is_not_there_or_has_gaps_is_refused(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_text("text,label,author\n" + "".join(f"text {i},{i % 2},a{i % 3}\n" for i in range(8)))
    with pytest.raises(
        DataError, match=rf"^no group column 'writer' in {path}; the columns are: text, label, author\. Name one with "
    ) as unknown:
        load_table(path, group_column="writer")
    assert unknown.value.argument == "group_column" and unknown.value.naming("--group").endswith("with --group.")
    gaps = tmp_path / "gaps.csv"
    gaps.write_text("text,label,author\ngood,pos,a\nbad,neg,\nok,pos,NA\nnone,,\nfine,neg,b\n")
    with (
        pytest.warns(DataWarning),
        pytest.raises(
            DataError,
            match=r"^the group column 'author' is empty \(or NaN, NA, null, \.\.\.\) in 2 of the 4 rows used \(rows 2, 3, "
            r"the first data row being 1\): give every row its group",
        ),
    ):
        load_table(gaps, group_column="author")  # the row without a label is skipped, not counted


def test_rows_without_text_or_label_are_counted_and_warned(tmp_path):
    path = tmp_path / "gaps.csv"
    path.write_text("text,label\ngood,pos\n,neg\n   ,pos\nbad,\nok,neg\n")
    with pytest.warns(UserWarning, match="skipped 2 row.* without text and 1 without a label, of 5"):
        data, report = load_table(path)
    assert report == {
        "rows": 5,
        "used": 2,
        "skipped_missing_text": 2,
        "skipped_missing_label": 1,
        "text_column": "text",
        "label_column": "label",
    }
    assert data.texts == ["good", "ok"] and data.ids == [0, 4]


def test_unknown_label_at_test_time_and_bad_files(tmp_path):
    path = tmp_path / "test.csv"
    path.write_text("text,label\na,pos\nb,meh\n")
    with pytest.raises(DataError, match="labels not seen in training: meh"):
        load_table(path, label_map=LabelMap(["neg", "pos"]))
    with pytest.raises(DataError, match="no such file"):
        read_table(tmp_path / "absent.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(DataError, match="could not read"):
        read_table(tmp_path / "empty.csv")
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    with pytest.raises(DataError, match="could not read"):
        read_table(tmp_path / "broken.jsonl")
    (tmp_path / "blank.csv").write_text("text,label\n,\n")
    with pytest.raises(DataError, match="no usable rows"):
        load_table(tmp_path / "blank.csv")


def test_undecodable_bytes_are_refused_and_the_right_encoding_reads_them(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"text,label\ncaf\xe9 good,1\nbad,0\n")
    with pytest.raises(
        DataError, match=r"not valid utf-8 text: line 2 has the byte 0xe9 at column 4; .*with encoding \(e\.g\. latin-1"
    ):
        load_table(path)
    data, _ = load_table(path, encoding="latin-1")
    assert data.texts[0] == "caf\u00e9 good"
    with pytest.raises(DataError, match="unknown encoding 'klingon'"):
        load_table(path, encoding="klingon")


def test_utf8_byte_order_mark_and_utf16(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("text,label\ncr\u00e8me,1\nbad,0\n".encode("utf-8-sig"))
    data, report = load_table(path)
    assert report["text_column"] == "text" and data.texts[0] == "cr\u00e8me"
    wide = tmp_path / "wide.csv"
    wide.write_bytes("text,label\ncr\u00e8me,1\nbad,0\n".encode("utf-16"))
    with pytest.raises(DataError, match=r"NUL bytes .* pass encoding utf-16\)$"):
        load_table(wide)
    assert load_table(wide, encoding="utf-16")[0].texts[0] == "cr\u00e8me"


def test_missing_value_spellings_are_skipped_labels_not_a_class(tmp_path):
    path = tmp_path / "na.csv"
    path.write_text("text,label\ngood,pos\nbad,neg\nmeh,NaN\nugh,null\nfine, NA \n")
    with pytest.warns(DataWarning, match="0 row\\(s\\) without text and 3 without a label"):
        data, report = load_table(path)
    assert data.label_map.names == ["neg", "pos"] and report["skipped_missing_label"] == 3


def test_parse_errors_name_the_line_and_hint_at_tabs(tmp_path):
    tsv = tmp_path / "tabs.csv"
    tsv.write_text("text\tlabel\n" + "a, b, c\tpos\n" * 3)  # parses as one column named "text\tlabel"
    with pytest.raises(DataError, match="looks tab-separated: name it .tsv"):
        load_table(tsv)
    tsv.write_text("text\tlabel\n" + "a b\tpos\n" * 3 + "a, b, c\tneg\n")  # then a parse error
    with pytest.raises(DataError, match="Expected 1 fields in line 5, saw 3 .*looks tab-separated"):
        load_table(tsv)
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text('{"text": "a", "label": 1}\n{"text": "b", "label": 0}\n{"text": "c", label: 1}\n')
    with pytest.raises(DataError, match="line 3 is not valid JSON"):
        load_table(jsonl)
    jsonl.write_text('{"text": "a", "label": 1}\n[1, 2]\n')
    with pytest.raises(DataError, match="line 2 is a JSON list, not an object"):
        load_table(jsonl)


def zipped(data, name):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


ROWS = [("caf\u00e9, good", "pos"), ("awful", "neg"), ("fine", "pos")]
PLAIN = {
    "csv": "text,label\n" + "".join(f'"{t}",{y}\n' for t, y in ROWS),
    "tsv": "text\tlabel\n" + "".join(f"{t}\t{y}\n" for t, y in ROWS),
    "jsonl": "".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in ROWS),
}


@pytest.mark.parametrize(
    "name, fmt, compress",
    [
        ("reviews.csv.gz", "csv", gzip.compress),
        ("reviews.tsv.bz2", "tsv", bz2.compress),
        ("reviews.jsonl.xz", "jsonl", lzma.compress),
        ("reviews.csv.zip", "csv", lambda data: zipped(data, "reviews.csv")),
        ("reviews.zip", "tsv", lambda data: zipped(data, "reviews.tsv")),  # the format of the one file inside
        ("reviews.tab.gzip", "tsv", gzip.compress),
    ],
)
def test_compressed_tables_are_read_in_the_format_under_the_compression_suffix(tmp_path, name, fmt, compress):
    (tmp_path / name).write_bytes(compress(PLAIN[fmt].encode()))
    assert table_format(tmp_path / name) == fmt
    data, report = load_table(tmp_path / name)
    assert data.texts == [t for t, _ in ROWS] and data.label_map.names == ["neg", "pos"] and report["used"] == 3
    chunks = list(read_table(tmp_path / name, chunksize=2))
    assert [len(chunk) for chunk in chunks] == [2, 1] and chunks[1]["text"].tolist() == ["fine"]


def test_table_formats_by_name():
    assert [table_format(n) for n in ("a.csv", "a.TSV", "a.ndjson.bz2", "a.pq", "a.txt", "a.txt.gz", "a")] == [
        "csv",
        "tsv",
        "jsonl",
        "parquet",
        None,
        None,
        None,
    ]


def test_errors_in_compressed_tables_name_the_line_of_the_decompressed_text(tmp_path):
    latin = tmp_path / "latin.csv.gz"
    latin.write_bytes(gzip.compress(b"text,label\ngood,1\ncaf\xe9 good,1\nbad,0\n"))
    with pytest.raises(
        DataError, match=r"latin\.csv\.gz is not valid utf-8 text: line 3 has the byte 0xe9 at column 4"
    ):
        load_table(latin)
    assert load_table(latin, encoding="latin-1")[0].texts[1] == "caf\u00e9 good"
    jsonl = tmp_path / "bad.jsonl.bz2"
    jsonl.write_bytes(bz2.compress(b'{"text": "a", "label": 1}\n{"text": "b", "label": 0}\n{"text": "c", label: 1}\n'))
    with pytest.raises(DataError, match=r"could not read .*bad\.jsonl\.bz2 as jsonl: line 3 is not valid JSON"):
        load_table(jsonl)
    tabs = tmp_path / "tabs.csv.xz"
    tabs.write_bytes(lzma.compress(("text\tlabel\n" + "a b\tpos\n" * 3 + "a, b, c\tneg\n").encode()))
    with pytest.raises(DataError, match="Expected 1 fields in line 5, saw 3 .*looks tab-separated"):
        load_table(tabs)
    wide = tmp_path / "wide.csv.gz"
    wide.write_bytes(gzip.compress("text,label\ncr\u00e8me,1\nbad,0\n".encode("utf-16")))
    with pytest.raises(DataError, match=r"wide\.csv\.gz holds NUL bytes .* pass encoding utf-16\)$"):
        load_table(wide)
    assert load_table(wide, encoding="utf-16")[0].texts[0] == "cr\u00e8me"


def test_a_table_cut_short_is_refused_when_the_cut_is_reached(tmp_path):
    rows = "".join(f"review number {i} {'good' if i % 2 else 'bad'},{i % 2}\n" for i in range(40_000))
    data = gzip.compress(("text,label\n" + rows).encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(data[: len(data) * 9 // 10])  # the first 64 KiB (checked first) decompress
    message = (
        rf"^{re.escape(str(path))} is not a readable gzip file: it is damaged or cut short \(Compressed file ended"
    )
    with pytest.raises(DataError, match=message):
        load_table(path)
    chunks = read_table(path, chunksize=1000)
    assert len(next(chunks)) == 1000
    with pytest.raises(DataError, match=message):
        list(chunks)


def test_spreadsheets_are_refused_with_how_to_save_them_as_csv(tmp_path):
    with pytest.raises(
        DataError, match=r"^reviews\.xlsx is an Excel workbook: save it as CSV \(File > Save As > CSV UTF-8\)"
    ):
        load_table("reviews.xlsx")
    workbook = tmp_path / "reviews.csv"  # a workbook under a CSV's name
    workbook.write_bytes(zipped(b"<workbook/>", "xl/workbook.xml"))
    with pytest.raises(DataError, match=r"reviews\.csv is an Excel workbook, not text \(by its content\): save it"):
        load_table(workbook)
    with pytest.raises(DataError, match=r"is a folder, not a table file$"):
        read_table(tmp_path)


def parquet_engine():
    return next((name for name in ("pyarrow", "fastparquet") if importlib.util.find_spec(name)), None)


@pytest.mark.skipif(parquet_engine() is None, reason="no Parquet reader installed (pip install pyarrow)")
def test_parquet_tables_are_read_like_text_ones(tmp_path):
    frame = pd.DataFrame(
        {
            "review": ["A great film.", None, "Dull.", "Fine.", "Awful."],
            "sentiment": pd.array([1, 0, None, 1, 0], dtype="Int64"),
        }
    )
    frame.to_parquet(tmp_path / "reviews.parquet")
    with pytest.warns(DataWarning, match="skipped 1 row\\(s\\) without text and 1 without a label, of 5"):
        data, report = load_table(tmp_path / "reviews.parquet")
    assert data.texts == ["A great film.", "Fine.", "Awful."] and data.label_map.names == [0, 1]
    assert data.labels.tolist() == [1, 1, 0] and data.ids == [0, 3, 4] and report["text_column"] == "review"
    assert [len(chunk) for chunk in read_table(tmp_path / "reviews.parquet", chunksize=2)] == [2, 2, 1]
    (tmp_path / "fake.pq").write_text("text,label\na,1\n")
    with pytest.raises(DataError, match="could not read .*fake.pq as parquet: "):
        read_table(tmp_path / "fake.pq")


def test_parquet_without_a_reader_says_what_to_install(tmp_path, monkeypatch):
    (tmp_path / "reviews.parquet").write_bytes(b"PAR1")  # never read: no reader
    for name in ("pyarrow", "fastparquet"):  # absent here, as on a machine without them (None: import fails)
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(
        DataError,
        match=rf"^reading {re.escape(str(tmp_path / 'reviews.parquet'))} needs a Parquet reader: "
        rf"{re.escape(pip_install('pyarrow'))}$",
    ):
        load_table(tmp_path / "reviews.parquet")


def test_multi_label_cells_are_label_sets_and_an_empty_cell_is_no_label(tmp_path):
    path = tmp_path / "topics.csv"
    frame = pd.DataFrame(
        {
            "text": ["Wheat and corn.", "Bank rates.", "Nothing.", "Oil.", "Grain"],
            "labels": ["wheat|corn", "interest", "", None, "grain| wheat|grain"],
        }
    )
    frame.to_csv(path, index=False)
    data, report = load_table(path, label_separator="|")
    assert data.multi_label and report["used"] == 5 and report["skipped_missing_label"] == 0
    assert data.label_map.names == ["corn", "grain", "interest", "wheat"]
    assert data.labels.dtype == np.int8
    assert data.label_map.names_of(data.labels) == [["corn", "wheat"], ["interest"], [], [], ["grain", "wheat"]]
    test = pd.DataFrame({"text": ["Coffee."], "labels": ["coffee|wheat"]})
    with pytest.raises(DataError, match="labels not seen in training: coffee"):
        load_table(test, label_map=data.label_map, label_separator="|")
    other, _ = load_table(pd.DataFrame({"text": ["a", "b"], "labels": ["x;y", "y"]}), label_separator=";")
    assert other.label_map.names_of(other.labels) == [["x", "y"], ["y"]]


# Tables in the legacy encodings of Chinese, Japanese and Korean --------------------------------------------------------


def review_table(written, rows=24, fmt="csv"):
    """A table of `rows` reviews in the language of the encoding `written`, labelled good and bad, as text."""
    sentences = LEGACY_REVIEWS["gb18030" if written == "gbk" else written]
    frame = pd.DataFrame(
        {"text": [sentences[i % len(sentences)] for i in range(rows)], "label": ["good", "bad"] * (rows // 2)}
    )
    if fmt == "jsonl":
        return frame.to_json(orient="records", lines=True, force_ascii=False)
    return frame.to_csv(index=False, sep="\t" if fmt == "tsv" else ",")


@pytest.mark.parametrize("written, read, name", LEGACY_ENCODINGS, ids=[row[0] for row in LEGACY_ENCODINGS])
def test_tables_in_a_legacy_cjk_encoding_are_read_as_their_utf8_original(tmp_path, written, read, name):
    for fmt, suffix in (("csv", ".csv"), ("tsv", ".tsv"), ("jsonl", ".jsonl"), ("csv", ".csv.gz")):
        table = review_table(written, fmt=fmt)
        original, legacy = tmp_path / f"utf8{suffix}", tmp_path / f"{written}{suffix}"
        compress = gzip.compress if suffix.endswith(".gz") else bytes
        original.write_bytes(compress(table.encode()))
        legacy.write_bytes(compress(table.encode(written)))
        expected, expected_report = load_table(original)
        data, report = load_table(legacy)
        assert data.texts == expected.texts and data.labels.tolist() == expected.labels.tolist()
        assert report == {**expected_report, "detected_encoding": read} and "detected_encoding" not in expected_report
    assert rows_text(legacy, report)[0] == f"{legacy}: 24 of 24 rows used (text column 'text', label column 'label')"
    assert read_table(legacy).attrs == {"detected_encoding": read} and read_table(original).attrs == {}
    assert [chunk.attrs["detected_encoding"] for chunk in read_table(legacy, chunksize=10)] == [read] * 3


def test_a_given_encoding_is_never_overridden_but_utf8_errors_name_the_one_it_looks_like(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_bytes(review_table("gb18030").encode("gb18030"))
    with pytest.raises(DataError) as given:
        load_table(path, encoding="utf-8")
    assert str(given.value) == (
        f"{path} is not valid utf-8 text: line 2 has the byte 0xcb at column 1; it looks like GB18030: pass encoding "
        "gb18030"
    )
    with pytest.raises(DataError, match=r"^\S+ is not valid big5 text: line \d+ has .*\(e\.g\. utf-8\)$"):
        load_table(path, encoding="big5")  # a wrong encoding given: the error of old
    data, report = load_table(path, encoding="latin-1")  # any bytes are latin-1: read as given, wrong or not
    assert (
        data.texts[0] == "送餐很快，味道不错。".encode("gb18030").decode("latin-1")
        and "detected_encoding" not in report
    )


def test_a_short_or_unclear_table_is_refused_in_one_line_naming_the_encoding_it_looks_like(tmp_path):
    short = tmp_path / "short.csv"
    short.write_bytes(review_table("gb18030", rows=4).encode("gb18030"))  # too few bytes to read it unasked
    with pytest.raises(DataError) as refused:
        load_table(short)
    assert str(refused.value) == (
        f"{short} is not valid utf-8 text: line 2 has the byte 0xcb at column 1; it looks like GB18030: pass encoding "
        "gb18030"
    )
    assert refused.value.naming("--encoding").endswith("it looks like GB18030: pass --encoding gb18030")
    unclear = tmp_path / "unclear.csv"
    unclear.write_bytes("text,label\n送餐很快,good\n".encode("gb18030"))  # 4 characters: no encoding is clearly first
    with pytest.raises(
        DataError,
        match=r"^\S+ is not valid utf-8 text: line 2 has the byte 0xcb at column 1; pass the file's encoding with "
        r"encoding \(e\.g\. latin-1 or cp1252\)$",
    ):
        load_table(unclear)
    late = tmp_path / "late.csv"  # its first 64 KiB are ASCII, so UTF-8: the error names the encoding of the rest
    korean = review_table("euc_kr").encode("euc_kr").split(b"\n", 1)[1]  # its rows, without the header
    late.write_bytes(("text,label\n" + "fast delivery,good\n" * 4000).encode() + korean)
    with pytest.raises(
        DataError, match=r"line 4002 has the byte 0xb9 at column 1; it looks like EUC-KR: pass encoding"
    ):
        load_table(late)


def test_a_table_in_the_encoding_detected_is_read_strictly(tmp_path):
    path = tmp_path / "reviews.csv"
    table = review_table("shift_jis", rows=3000)  # past the first 64 KiB, where the encoding is detected
    path.write_bytes(table.encode("shift_jis") + b"broken \x81 line,good\n")  # 0x81 starts a character
    with pytest.raises(DataError) as broken:
        load_table(path)
    assert str(broken.value) == (
        f"{path} is not valid cp932 text (Shift-JIS, detected as it is not UTF-8): line 3002 has the byte 0x81 at "
        "column 8; pass the file's encoding with encoding"
    )
    assert broken.value.argument == "encoding" and "\n" not in str(broken.value)


def test_cells_that_are_not_one_value_are_refused_in_one_line(tmp_path):
    """JSON arrays and objects, Parquet lists and bytes: read as text they were "['a']" and "b'a'", as labels a
    TypeError (issue #67)."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    (tmp_path / "list.jsonl").write_text('{"text": "a", "label": ["x"]}\n{"text": "b", "label": "y"}\n')
    with pytest.raises(
        DataError, match=r"^the column 'label' of .*list\.jsonl holds a list \(a JSON array\) in row 1 "
    ):
        load_table(tmp_path / "list.jsonl")
    (tmp_path / "object.jsonl").write_text('{"text": {"a": 1}, "label": 1}\n{"text": "b", "label": 2}\n')
    with pytest.raises(DataError, match=r"^the column 'text' of .*object\.jsonl holds a JSON object in row 1 "):
        load_table(tmp_path / "object.jsonl")
    with pytest.raises(DataError, match=r"holds a JSON object in row 1"):
        list(iter_text_chunks(tmp_path / "object.jsonl"))
    pq.write_table(pa.table({"text": pa.array([b"a", b"b"]), "label": ["x", "y"]}), tmp_path / "bytes.parquet")
    with pytest.raises(DataError, match=r"^the column 'text' of .*bytes\.parquet holds bytes, not text, in row 1 "):
        load_table(tmp_path / "bytes.parquet")
    frame = pd.DataFrame([["a", "b", "x"], ["c", "d", "y"]], columns=["text", "text", "label"])
    with pytest.raises(DataError, match=r"^the table has 2 columns named 'text': give each column its own name$"):
        load_table(frame)
    data, _ = load_table(pd.DataFrame({0: ["a", "b"], 1: ["x", "y"]}), text_column="0", label_column="1")
    assert data.texts == ["a", "b"]  # columns named by numbers: a KeyError before


def test_wide_headers_and_odd_column_names_give_short_one_line_errors(tmp_path):
    """A header of 100,000 columns took pandas 16 s; a 1 MB column name made a 1 MB message (issue #67)."""
    path = tmp_path / "wide.csv"
    path.write_text("text,label," + ",".join(f"c{i}" for i in range(100_000)) + "\na,b\n")
    with pytest.raises(DataError, match=r"wide\.csv has 100,002 columns: at most 10,000 are read; keep the text"):
        load_table(path)
    path.write_text("text,label," + ",".join(f"c{i}" for i in range(9_998)) + "\na,x\nb,y\n")
    assert load_table(path)[0].texts == ["a", "b"]  # 10,000: read
    (tmp_path / "names.csv").write_text('"a\nb",' + "x" * 1_000_000 + ",stars\n1,2,3\n")
    with pytest.raises(DataError) as refused:
        load_table(tmp_path / "names.csv")
    assert str(refused.value).endswith(
        "the columns are: 'a\\nb', " + "x" * 40 + "..., stars. Name it with text_column."
    )


def test_codecs_that_are_not_text_encodings_are_refused(tmp_path):
    """`--encoding rot13` (hex, base64, zlib) raised pandas' LookupError; UTF-16 without a byte-order mark, a
    UnicodeError (issue #67)."""
    (tmp_path / "t.csv").write_text('text,label\n"a,b\n')
    for codec in ("rot13", "hex", "base64", "zlib", "idna", "punycode"):
        with pytest.raises(DataError, match=rf"^'{codec}' is not a text encoding \(e\.g\. utf-8, "):
            load_table(tmp_path / "t.csv", encoding=codec)
    with pytest.raises(DataError, match=r"^could not read .*t\.csv as csv: UTF-16 stream does not start with BOM$"):
        load_table(tmp_path / "t.csv", encoding="utf-16")


def test_r_row_names_are_read_and_a_first_row_far_wider_than_the_header_is_refused(tmp_path):
    """R's `write.table` writes row names, one field more than its header: read as before, the names the index.

    Two fields or more past the header pandas would take as an index of as many levels (17,339 took it 56 s, and
    shifted every column): refused at once (issue #67).
    """
    r = tmp_path / "r.tsv"
    r.write_text("text\tlabel\n1\tgood film\tpos\n2\tbad film\tneg\n")
    data, _ = load_table(r)
    assert list(data.texts) == ["good film", "bad film"]
    wide = tmp_path / "wide.csv"
    wide.write_text("text,label\n" + ",".join(["x"] * 5000) + "\nbye,neg\n")
    with pytest.raises(DataError, match="its first row has 5,000 fields where the header has 2 columns"):
        load_table(wide)
