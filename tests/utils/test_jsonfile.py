"""Tests for hierattn.utils.jsonfile."""

import pytest

from hierattn.errors import DataError
from hierattn.utils.jsonfile import load_json, save_json


def test_round_trip_and_format_check(tmp_path):
    path = tmp_path / "x.json"
    save_json(path, "hierattn.test/1", {"a": [1, "é"]})
    assert load_json(path, "hierattn.test/1") == {"a": [1, "é"]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]  # no temporary file left
    with pytest.raises(DataError, match="is not a hierattn.other/1 file"):
        load_json(path, "hierattn.other/1")


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(DataError, match="missing file"):
        load_json(tmp_path / "absent.json", "k")
    (tmp_path / "bad.json").write_text("{truncated")
    with pytest.raises(DataError, match="not valid JSON"):
        load_json(tmp_path / "bad.json", "k")


def test_nan_and_infinities_are_written_as_null_so_any_json_reader_takes_the_file(tmp_path):
    import json

    import numpy as np

    path = tmp_path / "x.json"
    save_json(path, "k", {"ratio": float("inf"), "nested": [float("nan"), {"r": -np.inf}], "ok": np.float32(0.5)})

    def refuse(constant):
        raise ValueError(f"non-standard JSON: {constant}")

    payload = json.loads(path.read_text(), parse_constant=refuse)
    assert payload == {"format": "k", "ratio": None, "nested": [None, {"r": None}], "ok": 0.5}
