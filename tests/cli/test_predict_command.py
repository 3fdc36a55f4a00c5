"""`hierattn predict --engine ray`: files scored on a real local Ray cluster, and the options' rules, through CliRunner."""

import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from hierattn.cli import cli
from hierattn.utils.shell import pip_install_extra

from conftest import make_reviews

pytestmark = pytest.mark.slow


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def errors(result):
    return [line for line in result.output.splitlines() if line.startswith("Error:")]


@pytest.fixture
def reviews_csv(tmp_path):
    texts, labels = make_reviews(300, seed=7)
    pd.DataFrame({"id": range(300), "review": texts, "label": labels}).to_csv(tmp_path / "in.csv", index=False)
    return tmp_path / "in.csv"


def test_files_on_ray_give_predict_files_rows(han_run_dir, tmp_path):
    """The same rows, with the network setting and the minimum confidence carried to Ray's workers."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    texts, labels = make_reviews(400, seed=7)
    mixed = [f"{a} {b}" for a, b in zip(texts[:100], texts[100:200])]  # some of both kinds: less sure
    frame = pd.DataFrame({"id": range(300), "review": texts[200:400] + mixed, "label": labels[200:400] + labels[:100]})
    frame.to_csv(tmp_path / "in.csv", index=False)
    base = ["predict", "--file", tmp_path / "in.csv", "--run", han_run_dir, "--network", "always"]
    plain = invoke(*base, "--output", tmp_path / "plain.csv")
    assert plain.exit_code == 0, plain.output
    sure = pd.read_csv(tmp_path / "plain.csv").filter(like="p_").max(axis=1)
    values = np.unique(sure.round(6))
    least = f"{(values[len(values) // 2 - 1] + values[len(values) // 2]) / 2:.7f}"  # between two texts' confidences
    local = invoke(*base, "--min-confidence", least, "--output", tmp_path / "local.csv")
    assert local.exit_code == 0, local.output
    left = int((sure < float(least)).sum())
    assert 0 < left < 300 and f"{left} of 300 texts left for a person" in local.stderr
    args = [*base, "--min-confidence", least, "--engine", "ray", "--workers", 2]
    result = invoke(*args, "--output-format", "csv", "--output", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"scored 300 rows into {tmp_path / 'out'}\n"
    assert f"run: {han_run_dir}" in result.stderr and "ray: " in result.stderr
    assert f"{left} of 300 rows left for a person: their confidence is under {float(least):g}" in result.stderr
    # the same rows and answers; probabilities within 1e-6 (the network's batches differ: docs/batch.md)
    on_ray, here = pd.read_csv(tmp_path / "out" / "part-00000.csv"), pd.read_csv(tmp_path / "local.csv")
    numbers = [column for column in here.columns if column.startswith("p_") or column == "confidence"]
    pd.testing.assert_frame_equal(on_ray.drop(columns=numbers), here.drop(columns=numbers))
    np.testing.assert_allclose(on_ray[numbers].to_numpy(float), here[numbers].to_numpy(float), rtol=0, atol=2e-6)
    again = invoke(*args, "--output", tmp_path / "out")  # an existing folder is refused, before Ray starts
    assert again.exit_code == 1 and errors(again) == [
        f"Error: {tmp_path / 'out'} already exists; choose another --output (nothing was overwritten)"
    ]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["part-00000.csv"]


def test_bad_input_is_one_error_line(han_run_dir, reviews_csv, tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    base = ["predict", "--run", han_run_dir, "--engine", "ray", "--output", tmp_path / "out"]
    missing = invoke(*base, "--file", tmp_path / "*.parquet")
    assert missing.exit_code == 1 and errors(missing) == [
        f"Error: no table or text file matches {tmp_path / '*.parquet'}"
    ]
    column = invoke(*base, "--file", reviews_csv, "--text-column", "body")
    assert column.exit_code == 1 and errors(column)[0].startswith("Error: no text column 'body'")
    assert not (tmp_path / "out").exists()
    address = invoke(*base, "--file", reviews_csv, "--address", "foo:1:2")
    assert address.exit_code == 1 and errors(address) == [
        "Error: --address must be auto, HOST:PORT or ray://HOST:PORT; got 'foo:1:2'"
    ]
    for result in (missing, column, address):  # one line, not an exception that escaped
        assert isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["predict", "a film", "--workers", "2"], "only with --engine ray: --workers"),
        (
            ["predict", "a film", "--address", "auto", "--output-format", "csv"],
            "only with --engine ray: --address, --output-format",
        ),
        (
            ["predict", "a film", "--engine", "ray"],
            "--engine ray scores files: give --file PATH_OR_GLOB and --output DIR",
        ),
        (["predict", "--file", "x.csv", "--engine", "ray"], "--engine ray scores files"),
        (["predict", "--file", "x.csv", "--engine", "spark"], "'spark' is not one of 'local', 'ray'"),
        (["predict", "a film", "--network", "sometimes"], "'sometimes' is not one of 'auto', 'always'"),
        (["predict", "a film", "--min-confidence", "1.5"], "'1.5' is not a finite number >= 0 and <= 1"),
        (
            ["predict", "--file", "x.csv", "--engine", "ray", "--workers", "0", "--output", "o"],
            "0 is not in the range x>=1",
        ),
    ],
)
def test_option_rules_are_usage_errors(args, message):
    result = invoke(*args)
    assert result.exit_code == 2 and message in result.output and isinstance(result.exception, SystemExit)


def test_network_always_has_the_network_read_every_text(han_run_dir, han_run, reviews_csv, tmp_path):
    texts = pd.read_csv(reviews_csv)["review"].tolist()
    x = han_run.preprocessor(texts)
    for network, part in (("auto", None), ("always", "whole")):
        output = tmp_path / f"{network}.csv"
        result = invoke(
            "predict", "--run", han_run_dir, "--file", reviews_csv, "--output", output, "--network", network
        )
        assert result.exit_code == 0, result.output
        found = pd.read_csv(output)[[f"p_{name}" for name in han_run.label_names]].to_numpy()
        assert abs(found - han_run.predict_ids(x, part=part)).max() < 1e-5, network


def test_without_ray_one_line_says_how_to_install_it(monkeypatch, han_run_dir, reviews_csv, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: `import ray` raises ImportError
    result = invoke("predict", "--file", reviews_csv, "--engine", "ray", "--output", tmp_path / "out")
    assert result.exit_code == 1 and len(errors(result)) == 1
    assert errors(result)[0].startswith("Error: batch prediction on Ray needs Ray Data (")
    assert errors(result)[0].endswith(pip_install_extra("ray")) and isinstance(result.exception, SystemExit)
