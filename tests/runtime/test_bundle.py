"""The bundle's metadata (`hierattn.runtime.bundle`): read back, and refused when it is not what this version reads."""

import json

import pytest

from hierattn.errors import DataError
from hierattn.runtime.bundle import FORMAT, METADATA_KEY, read_metadata

GOOD = {
    "format": FORMAT,
    "label_names": ["neg", "pos"],
    "preprocessor": {},
    "vocabulary": {"tokens": []},
    "inputs": {"token_ids": "x"},
    "output": "y",
}


def test_read_metadata_gives_the_json_back():
    assert read_metadata({METADATA_KEY: json.dumps(GOOD)}, "m.onnx") == GOOD


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "not a hierattn bundle"),
        ({METADATA_KEY: "{not json"}, "not JSON"),
        ({METADATA_KEY: json.dumps({"format": FORMAT})}, "lacks label_names"),
        ({METADATA_KEY: json.dumps({**GOOD, "format": "hierattn.bundle/9"})}, "export it again"),
    ],
)
def test_read_metadata_refuses_other_files(props, message):
    with pytest.raises(DataError, match=message):
        read_metadata(props, "m.onnx")
