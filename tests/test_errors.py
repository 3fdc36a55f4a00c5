"""Tests for hierattn.errors: an `ArgumentError` names its argument as the caller names it."""

import pickle

import pytest

from hierattn.errors import ArgumentError, HierattnError


def test_argument_error_names_the_argument_as_the_library_or_as_the_caller_does():
    error = ArgumentError("max_length", "{argument} for the han model is SENTENCESxWORDS; got '5'")
    assert isinstance(error, HierattnError) and isinstance(error, ValueError)
    assert str(error) == "max_length for the han model is SENTENCESxWORDS; got '5'"
    assert error.naming("--max-length") == "--max-length for the han model is SENTENCESxWORDS; got '5'"
    with pytest.raises(ArgumentError, match="^max_length for"):
        raise error


def test_argument_error_survives_pickling():
    again = pickle.loads(pickle.dumps(ArgumentError("data", "pass labelled data with {argument} FILE")))
    assert (again.argument, str(again), again.naming("--data")) == (
        "data",
        "pass labelled data with data FILE",
        "pass labelled data with --data FILE",
    )
