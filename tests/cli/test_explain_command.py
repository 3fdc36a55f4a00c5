"""Tests for `hierattn explain` on a multi-label run: each predicted label explained, `--label`, `--dataset`."""

import csv
import json

from click.testing import CliRunner

from hierattn.cli import cli

TEXT = "They talked about goal at length. They talked about bread at length. The news today was short."


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_each_predicted_label_or_the_one_named_is_explained(multilabel_run_dir, multilabel_run):
    predicted = [str(n) for n in multilabel_run.predict_labels([TEXT])[0]]
    result = invoke("explain", TEXT, "--run", multilabel_run_dir, "--top-k", "3")
    assert result.exit_code == 0, result.output
    heads = [line for line in result.stdout.splitlines() if line.startswith("label: ")]
    assert len(heads) == max(len(predicted), 1)
    for name, head in zip(predicted, heads):
        assert head.startswith(f"label: {name}, probability ") and ": predicted (the text's labels: " in head
    assert "margin of " in result.stdout and " over its threshold: " in result.stdout
    named = invoke("explain", TEXT, "--run", multilabel_run_dir, "--label", "money", "--format", "json")
    assert named.exit_code == 0, named.output
    (block,) = json.loads(named.stdout)
    assert block["label"] == "money" and block["multi_label"] is True and block["predicted_labels"] == predicted
    assert block["threshold"] == multilabel_run.thresholds[[str(n) for n in multilabel_run.label_names].index("money")]
    two = invoke(
        "explain", TEXT, "--run", multilabel_run_dir, "--label", "food", "--label", "sport", "--format", "json"
    )
    assert [b["label"] for b in json.loads(two.stdout)] == ["food", "sport"]


def test_an_unknown_label_is_a_one_line_error(multilabel_run_dir, han_run_dir):
    result = invoke("explain", TEXT, "--run", multilabel_run_dir, "--label", "weather")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1] == (
        "Error: --label 'weather' is not one of the classifier's labels (food, money, sport)"
    )
    single = invoke("explain", "A great film.", "--run", han_run_dir, "--label", "pos")
    assert single.exit_code == 1
    assert (
        single.output.strip()
        .splitlines()[-1]
        .startswith("Error: --label chooses what a multi-label classifier explains")
    )


def test_html_and_csv_name_each_label(multilabel_run_dir, tmp_path):
    page = invoke("explain", TEXT, "--run", multilabel_run_dir, "--label", "food", "--format", "html")
    assert page.exit_code == 0 and "Label <b>food</b>" in page.stdout and "over its threshold" in page.stdout
    (tmp_path / "texts.txt").write_text(TEXT + "\nNothing else happened in town.\n")
    table = tmp_path / "words.csv"
    result = invoke(
        "explain", "--run", multilabel_run_dir, "--file", tmp_path / "texts.txt", "--format", "csv", "--output", table
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(table.open()))
    assert {"label", "probability", "threshold"} <= set(rows[0]) and {r["document"] for r in rows} == {"0", "1"}


def test_dataset_ranks_words_per_predicted_label(multilabel_run_dir, multilabel_csv, tmp_path):
    output = tmp_path / "words.csv"
    args = ["explain", "--run", multilabel_run_dir, "--dataset", multilabel_csv[1], "--top-k", "2"]
    result = invoke(*args, "--output", output)
    assert result.exit_code == 0, result.output
    assert "explained 40 documents; exact-match accuracy" in result.output
    assert "documents where it is predicted)" in result.output
    words = list(csv.DictReader(output.open()))
    assert words and {r["predicted"] for r in words} <= {"sport", "money", "food"}
    documents = list(csv.DictReader((tmp_path / "words.documents.csv").open()))
    assert documents and all(r["predicted"] in ("sport", "money", "food") for r in documents)
    only = invoke(*args, "--label", "money", "--output", tmp_path / "money.csv")
    assert only.exit_code == 0, only.output
    assert {r["predicted"] for r in csv.DictReader((tmp_path / "money.csv").open())} <= {"money"}
    refused = invoke(*args, "--label", "weather")
    assert refused.exit_code == 1 and refused.output.strip().splitlines()[-1].startswith("Error: --label 'weather'")
