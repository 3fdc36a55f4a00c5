"""docs/serve.md's example answers: the page shows what docs/examples/serve.json records, in the server's shape.

`benchmarks/doc_examples.py` writes both from a real server on the default
IMDB run (the run takes minutes to train, so the numbers are not remade
here). Here: the page's marked blocks are exactly what the record renders,
and a real server on a small test run answers each recorded request with an
answer of the same shape (status, keys, label names).
"""

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
RECORD = json.loads((ROOT / "docs" / "examples" / "serve.json").read_text())


def _script():
    spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "benchmarks" / "doc_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


doc_examples = _script()


def test_the_page_shows_the_recorded_answers():
    page = (ROOT / "docs" / "serve.md").read_text()
    blocks = {m.group("name"): m.group("block") for m in doc_examples.BLOCK.finditer(page)}
    assert set(blocks) == set(RECORD["examples"]) == set(doc_examples.EXAMPLES)
    for name, example in RECORD["examples"].items():
        assert blocks[name] == doc_examples.render(example), name
    assert doc_examples.fill(page, RECORD) == page


def test_the_record_is_of_the_requests_the_script_sends_on_a_trained_run():
    for name, example in RECORD["examples"].items():
        assert (example["path"], example["request"]) == tuple(doc_examples.EXAMPLES[name].values()), name
    assert RECORD["run"] and 0.85 < RECORD["test_accuracy"] <= 1  # the default IMDB run's: BENCHMARKS.md


def _shape(value):
    """Keys and types, recursively (the numbers themselves are the run's)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return type(value).__name__


def _labels(value):
    """Every class name an answer mentions: probabilities' keys and labels' values."""
    if isinstance(value, dict):
        found = set(value.get("probabilities", {}))
        found |= {value["label"]} if isinstance(value.get("label"), str) else set()
        return found | {name for item in value.values() for name in _labels(item)}
    if isinstance(value, list):
        return {name for item in value for name in _labels(item)}
    return set()


@pytest.fixture(scope="module")
def server(han_run_dir, start_server):
    pytest.importorskip("fastapi", reason="the serve extra is not installed (pip install -e '.[serve]')")
    return start_server(han_run_dir, "--no-explain")


@pytest.mark.parametrize("name", sorted(RECORD["examples"]))
def test_a_server_answers_each_example_in_the_recorded_shape(server, name):
    example = RECORD["examples"][name]
    answer = server.client.post(example["path"], json=example["request"])
    assert answer.status_code == example["status"], answer.text
    assert _shape(answer.json()) == _shape(example["response"])
    assert _labels(answer.json()) == _labels(example["response"])  # the test run's classes are IMDB's: neg, pos
    if example["status"] != 200:
        assert answer.json() == example["response"]  # an error says the same, whatever the run


def test_the_explanation_picture_and_its_numbers_are_those_of_the_run_recorded():
    """examples/explanation.png's numbers, as `benchmarks/explanation_picture.py` recorded them from the run."""
    record = json.loads((ROOT / "examples" / "explanation.json").read_text())
    page = (ROOT / "docs" / "explanations.md").read_text()
    evidence = {text: value for text, _, value in record["words"]}
    parts, label, probability = record["parts"], record["label"], record["probability"]
    assert f'"superb" brings {evidence["superb"]:+.2f} of the {parts["margin"]:.2f}' in page
    assert f'"thin" takes {-evidence["thin"]:.2f} back' in page
    runner_up = f"{parts['versus']}, {1 - probability:.2f}"
    assert f'("predicted: {label}, probability {probability:.2f} (runner-up:\n{runner_up})")' in page
    assert f"`<Explanation {label} {probability:.2f}: +superb" in page
    assert f"IMDB's default run, {100 * record['test_accuracy']:.2f}% on the test set" in page
    assert record["text"] == doc_examples_picture().TEXT  # the review the script explains now
    assert abs(parts["network"] + parts["ngrams"] + parts["constant"] - parts["margin"]) < 1e-3


def doc_examples_picture():
    spec = importlib.util.spec_from_file_location("explanation_picture", ROOT / "benchmarks" / "explanation_picture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
