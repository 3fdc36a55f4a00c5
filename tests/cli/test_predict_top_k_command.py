"""`hierattn predict` with a multi-label run (its label sets) and `--top-k`, through CliRunner."""

import csv

import numpy as np
import pytest
from click.testing import CliRunner

from hierattn import runtime
from hierattn.cli import cli
from hierattn.runs.directory import BUNDLE_FILE

from conftest import make_topics

pytestmark = pytest.mark.slow

TEXTS = make_topics(8, seed=11)[0]


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_a_text_shows_its_label_set_and_each_labels_probability(multilabel_run_dir):
    bundle = runtime.load(multilabel_run_dir / BUNDLE_FILE)
    result = invoke("predict", TEXTS[1], "--run", multilabel_run_dir)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    labels = bundle.predict_labels(TEXTS[1:2])[0]
    assert lines[0] == f"predicted: {', '.join(labels) or '(no label over its threshold)'}"
    probabilities = bundle.predict(TEXTS[1:2])[0]
    ranked = sorted(zip(bundle.label_names, probabilities, bundle.thresholds), key=lambda row: -row[1])
    assert lines[1:] == [f"  {name}: {p:.4f} (threshold {t:.2f})" for name, p, t in ranked]  # most probable first


def test_a_top_k_beyond_the_classes_ranks_every_class_in_the_cli_and_in_python_alike(han_run_dir):
    bundle = runtime.load(han_run_dir / BUNDLE_FILE)
    result = invoke("predict", TEXTS[0], "--run", han_run_dir, "--top-k", 10**9)
    assert result.exit_code == 0, result.output
    (ranked,) = bundle.predict_top_k(TEXTS[:1], 10**9)
    assert len(ranked) == len(bundle.label_names)
    assert result.stdout.splitlines()[1:] == [
        f"top {len(ranked)} of {len(ranked)} classes:",
        *(f"  {name}: {p:.4f}" for name, p in ranked),
    ]


def test_top_k_shows_the_ranked_classes(multilabel_run_dir, han_run_dir):
    result = invoke("predict", TEXTS[0], "--run", multilabel_run_dir, "--top-k", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("predicted: ") and lines[1] == "top 2 of 3 labels:" and len(lines) == 4
    values = [float(line.split(": ")[1].split()[0]) for line in lines[2:]]
    assert values == sorted(values, reverse=True)
    single = invoke("predict", "a good and great film", "--run", han_run_dir, "--top-k", "1")
    assert single.exit_code == 0, single.output
    lines = single.stdout.splitlines()
    assert lines[1] == "top 1 of 2 classes:" and lines[2].startswith(f"  {lines[0].split(': ')[1]}: ")


def test_a_file_gets_label_sets_and_ranked_columns(multilabel_run_dir, tmp_path):
    bundle = runtime.load(multilabel_run_dir / BUNDLE_FILE)
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n")
    output = tmp_path / "out.csv"
    result = invoke(
        "predict", "--run", multilabel_run_dir, "--file", tmp_path / "in.txt", "--output", output, "--top-k", 3
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"scored {len(TEXTS)} texts into {output}"
    rows = list(csv.DictReader(open(output, newline="")))
    names = bundle.label_names
    ranked = ["top_1", "p_top_1", "top_2", "p_top_2", "top_3", "p_top_3"]
    assert list(rows[0]) == ["row", "predicted", *(f"p_{n}" for n in names), *ranked]
    assert [r["predicted"] for r in rows] == ["|".join(labels) for labels in bundle.predict_labels(TEXTS)]
    got = np.array([[float(r[f"p_{n}"]) for n in names] for r in rows])
    np.testing.assert_allclose(got, bundle.predict(TEXTS), atol=1e-6)
    assert all(sorted(r[c] for c in ("top_1", "top_2", "top_3")) == sorted(names) for r in rows)


def test_standard_input_with_top_k_is_a_csv_on_standard_output(han_run_dir):
    piped = invoke("predict", "-", "--run", han_run_dir, "--top-k", "2", input="great film\nboring\n")
    assert piped.exit_code == 0, piped.output
    lines = piped.stdout.splitlines()
    assert lines[0] == "row,predicted,p_neg,p_pos,top_1,p_top_1,top_2,p_top_2" and len(lines) == 3


@pytest.mark.parametrize("k", ["0", "-2", "two"])
def test_a_bad_top_k_is_one_usage_error(han_run_dir, k):
    result = invoke("predict", "a film", "--run", han_run_dir, "--top-k", k)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--top-k" in [line for line in result.output.splitlines() if line.startswith("Error:")][0]


def test_files_on_ray_give_the_same_label_sets_and_ranks(multilabel_run_dir, tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    (tmp_path / "in.txt").write_text("\n".join([*TEXTS, "<br />"]) + "\n")
    base = ["predict", "--file", tmp_path / "in.txt", "--run", multilabel_run_dir, "--top-k", 2]
    local = invoke(*base, "--output", tmp_path / "local.csv")
    assert local.exit_code == 0, local.output
    on_ray = invoke(*base, "--engine", "ray", "--workers", 1, "--output-format", "csv", "--output", tmp_path / "out")
    assert on_ray.exit_code == 0, on_ray.output
    assert (tmp_path / "out" / "part-00000.csv").read_text() == (tmp_path / "local.csv").read_text()
