"""Tests for hierattn.data.tables: CSV/TSV/JSON-lines/DataFrame loading."""

import json

import numpy as np
import pandas as pd
import pytest

from hierattn.data.dataset import LabelMap
from hierattn.data.tables import DataWarning, load_table, read_table
from hierattn.errors import DataError


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
