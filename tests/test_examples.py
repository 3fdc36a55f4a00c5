"""Runs the scripts in examples/ and checks that they do what they say."""

import importlib.util
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_custom_model_example_learns_and_attends_to_the_signal_word():
    accuracy, hits = load("custom_model").main()
    assert accuracy > 0.95
    assert hits > 0.9


@pytest.mark.slow
def test_seq2seq_example_learns_reversal_with_both_attentions():
    results = load("seq2seq_alignment").main()
    for name, (accuracy, anti_diagonal) in results.items():
        assert accuracy > 0.9, name
        assert anti_diagonal > 0.5, name
