"""Tests for hierattn.cli through click's CliRunner (the real commands, tiny data)."""

import json
import pathlib
import shutil

import pytest
from click.testing import CliRunner

from hierattn.cli import cli
from hierattn.data import TextEncoder

TINY = ["--epochs", "1", "--batch-size", "16", "--embedding-dim", "8", "--pretrain", "none"]


@pytest.fixture(scope="module")
def trained(tiny_csv, tmp_path_factory):
    """One HAN run trained through the CLI, shared by the tests below."""
    root = tmp_path_factory.mktemp("cli")
    result = CliRunner().invoke(
        cli, ["train", "csv", str(tiny_csv[0]), "--test", str(tiny_csv[1]), "--runs-dir", str(root / "runs")] + TINY
    )
    assert result.exit_code == 0, result.output
    (run_dir,) = (root / "runs").iterdir()
    return root, run_dir


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_train_csv_writes_a_run_and_says_where(trained):
    root, run_dir = trained
    assert run_dir.name.startswith("han-train-")
    assert (run_dir / "model.keras").exists() and (run_dir / "metrics.json").exists()
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["test"]["documents"] == 40


@pytest.mark.parametrize("model, extra, expected", [
    ("transformer", ["--truncating", "head_tail", "--teacher", "tfidf", "--teacher-weight", "0.3"],
     {"truncating": "head_tail", "teacher": "tfidf", "teacher_weight": 0.3}),
    ("transformer", ["--teacher", "nblr", "--distill-unlabeled", "--model-option", "position=alibi",
                     "--model-option", "num_heads=2", "--model-option", "model_dim=4"],
     {"teacher": "nblr", "distill_unlabeled": True, "model_options": {"position": "alibi", "num_heads": 2, "model_dim": 4}}),
    ("rnn", ["--adversarial", "0.5"], {"truncating": "post", "teacher": "none", "distill_unlabeled": False,
                                       "adversarial": 0.5}),
])
def test_train_other_models(tiny_csv, tmp_path, model, extra, expected):
    result = invoke("train", "csv", tiny_csv[0], "--model", model, "--attention", "luong-concat", "--max-len", "16",
                    "--output", tmp_path / "run", *TINY, *extra)
    assert result.exit_code == 0, result.output
    assert "test:" not in result.output and "validation: accuracy" in result.output
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["model"] == model
    for key, value in expected.items():
        assert value.items() <= config[key].items() if isinstance(value, dict) else config[key] == value, key


def test_train_csv_unlabeled_texts_reach_word2vec_and_the_vocabulary(tiny_csv, tmp_path):
    # "zyzzyva" occurs only in the unlabelled file: it joins the vocabulary only if those texts are used.
    (tmp_path / "extra.txt").write_text("A zyzzyva film. Really zyzzyva!\n\n" * 30)
    base = ["train", "csv", tiny_csv[0], "--unlabeled", tmp_path / "extra.txt", "--epochs", "1", "--batch-size", "16",
            "--embedding-dim", "8", "--model", "transformer", "--max-len", "16"]
    result = invoke(*base, "--output", tmp_path / "w2v")
    assert result.exit_code == 0, result.output
    assert "30 unlabelled texts" in result.output and "on 174 texts" in result.output  # 144 training + 30
    assert "unlabelled" in json.loads((tmp_path / "w2v" / "run.json").read_text())["embeddings"]["source"]
    result = invoke(*base, "--pretrain", "none", "--teacher", "tfidf", "--distill-unlabeled", "--output", tmp_path / "d")
    assert result.exit_code == 0, result.output
    assert "zyzzyva" in TextEncoder.load(tmp_path / "d" / "encoder").vocabulary
    unused = invoke(*base, "--pretrain", "none", "--output", tmp_path / "unused")
    assert "--unlabeled texts would go unused" in one_line_error(unused, code=2)
    (tmp_path / "blank.txt").write_text("\n  \n")
    blank = invoke(*base, "--unlabeled", tmp_path / "blank.txt", "--output", tmp_path / "blank")
    assert "no texts found" in one_line_error(blank)
    assert not (tmp_path / "unused").exists() and not (tmp_path / "blank").exists()


def test_predict_text_file_and_stdin(trained, tmp_path):
    root, run_dir = trained
    result = invoke("predict", run_dir, "The film was great. I loved it!")
    assert result.exit_code == 0, result.output
    assert "predicted:" in result.output and "pos:" in result.output
    latest = invoke("predict", "--runs-dir", root / "runs", "an awful film")  # finds the latest run
    assert latest.exit_code == 0 and "predicted:" in latest.output
    (tmp_path / "in.txt").write_text("great film\nawful film\n")
    result = invoke("predict", run_dir, "--file", tmp_path / "in.txt", "--output", tmp_path / "out.csv")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.csv").read_text().splitlines()[0] == "row,predicted,p_neg,p_pos"
    again = invoke("predict", run_dir, "--file", tmp_path / "in.txt", "--output", tmp_path / "out.csv")
    assert again.exit_code == 1 and "already exists" in again.output
    piped = invoke("predict", run_dir, "-", input="great film\nboring\n")
    assert piped.exit_code == 0 and len([l for l in piped.output.splitlines() if l[:1].isdigit()]) == 2


def test_evaluate(trained, tiny_csv, tmp_path):
    _, run_dir = trained
    result = invoke("evaluate", run_dir, "--data", tiny_csv[1], "--output", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and json.loads((tmp_path / "m.json").read_text())["documents"] == 40
    no_data = invoke("evaluate", run_dir)
    assert no_data.exit_code == 1 and "pass the labelled file with --data" in no_data.output


def one_line_error(result, code=1):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output.strip().splitlines()[-1]


def test_error_paths(trained, tiny_csv, tmp_path):
    root, run_dir = trained
    assert "'bert' is not one of" in one_line_error(invoke("train", "csv", tiny_csv[0], "--model", "bert"), code=2)
    assert "no such file" in one_line_error(invoke("train", "csv", tmp_path / "none.csv", *TINY))
    assert "no text column 'body'" in one_line_error(invoke("train", "csv", tiny_csv[0], "--text-column", "body"))
    assert "already exists" in one_line_error(invoke("train", "csv", tiny_csv[0], "--output", run_dir, *TINY))
    assert "not a hierattn run" in one_line_error(invoke("predict", tmp_path, "text"))
    assert "no trained run found" in one_line_error(invoke("predict", "--runs-dir", tmp_path / "empty", "text"))
    assert "the text is empty" in one_line_error(invoke("predict", run_dir, "   "))
    broken = tmp_path / "broken"
    shutil.copytree(run_dir, broken)
    (broken / "model.keras").write_bytes(b"garbage")
    assert "is not a Keras model file" in one_line_error(invoke("predict", broken, "text"))
    assert "IMDB" in one_line_error(invoke("train", "imdb", "--data", tmp_path / "nowhere", *TINY))
    assert "nothing to resume" in one_line_error(invoke("train", "csv", tiny_csv[0], "--resume", "--output", tmp_path / "x"))
    bad_options = {
        "depth=3": "unknown han model option(s) depth: choose from",
        "position": "a model option must look like KEY=VALUE, got 'position'",
        "cell=rnn": "bad han model settings: cell must be 'gru' or 'lstm'",
    }
    for option, message in bad_options.items():
        result = invoke("train", "csv", tiny_csv[0], "--model-option", option, "--output", tmp_path / "opt", *TINY)
        assert message in one_line_error(result), option
    transformer = ["--model", "transformer", "--output", tmp_path / "opt", *TINY]
    assert "position must be one of" in one_line_error(
        invoke("train", "csv", tiny_csv[0], "--model-option", "position=rotary", *transformer))
    assert "must be divisible by num_heads" in one_line_error(
        invoke("train", "csv", tiny_csv[0], "--model-option", "num_heads=3", *transformer))
    assert not (tmp_path / "opt").exists()  # refused before anything was written


def test_train_imdb_on_a_mini_archive(tmp_path):
    import io
    import tarfile

    archive = tmp_path / "aclImdb_v1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for split in ("train", "test"):
            for label, words in (("pos", "great superb"), ("neg", "awful dull")):
                for i in range(12):
                    data = f"A {words.split()[i % 2]} film. Really {words.split()[(i + 1) % 2]}!".encode()
                    info = tarfile.TarInfo(f"aclImdb/{split}/{label}/{i}_{8 if label == 'pos' else 2}.txt")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    result = invoke("train", "imdb", "--data", archive, "--output", tmp_path / "run", *TINY)
    assert result.exit_code == 0, result.output
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["dataset"] == "imdb" and status["status"] == "complete"
    evaluation = invoke("evaluate", tmp_path / "run", "--data", archive)
    assert evaluation.exit_code == 0 and "on 24 documents" in evaluation.output


def test_explain_formats(trained, tmp_path):
    _, run_dir = trained
    text = "The film was great. Mr. Smith's acting was awful!"
    result = invoke("explain", run_dir, text, "--top-k", "3")
    assert result.exit_code == 0, result.output
    assert "\npredicted:" in result.output and "top 3 words" in result.output and "sentences (weight):" in result.output
    as_json = invoke("explain", run_dir, text, "--format", "json")
    (item,) = json.loads(as_json.stdout)  # stdout only: the "run:" line goes to stderr
    assert len(item["words"]) == 10 and abs(sum(w["weight"] for w in item["words"]) - 1) < 1e-4
    assert [text[w["start"] : w["end"]] for w in item["words"]] == [w["text"] for w in item["words"]]
    (tmp_path / "texts.txt").write_text("great film\n\nawful film. boring!\n")
    result = invoke("explain", run_dir, "--file", tmp_path / "texts.txt", "--format", "csv", "--output", tmp_path / "w.csv")
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "w.csv").read_text().splitlines()
    assert lines[0].startswith("document,predicted,sentence,word") and len(lines) == 1 + 2 + 4  # header, "great film", "awful film. boring !"
    page = invoke("explain", run_dir, "-", "--format", "html", "--output", tmp_path / "e.html", input="great film\n")
    assert page.exit_code == 0 and "<!DOCTYPE html>" in (tmp_path / "e.html").read_text()
    again = invoke("explain", run_dir, text, "--format", "html", "--output", tmp_path / "e.html")
    assert again.exit_code == 1 and "already exists" in again.output
    assert "the text is empty" in one_line_error(invoke("explain", run_dir, "  "))


def test_explain_dataset_and_check(trained, tiny_csv, tmp_path):
    _, run_dir = trained
    output = tmp_path / "words.csv"
    result = invoke("explain", run_dir, "--dataset", tiny_csv[1], "--limit", "30", "--top-k", "3", "--output", output,
                    "--check", "--random-draws", "2")
    assert result.exit_code == 0, result.output
    assert "explained 30 documents" in result.output
    assert "| attention |" in result.output and "| random |" in result.output and "| gradient |" in result.output
    words = output.read_text().splitlines()
    assert words[0].startswith("predicted,rank,word,top_k_documents")
    documents = (tmp_path / "words.documents.csv").read_text().splitlines()
    assert len(documents) == 1 + 30 * 3  # every generated review has at least 3 words
    check = json.loads((tmp_path / "words.faithfulness.json").read_text())
    assert check["documents"] == 30 and set(check["probability_drop"]) == {"attention", "random", "gradient"}
    before = output.read_text()
    again = invoke("explain", run_dir, "--dataset", tiny_csv[1], "--output", output)
    assert again.exit_code == 1 and "already exists" in again.output and output.read_text() == before
    both = invoke("explain", run_dir, "some text", "--dataset", tiny_csv[1])
    assert both.exit_code != 0 and "not both" in both.output
    missing = one_line_error(invoke("explain", run_dir, "--dataset", tmp_path / "nope.csv"))
    assert "no such dataset" in missing


def test_explain_check_on_single_text(trained):
    _, run_dir = trained
    result = invoke("explain", run_dir, "The film was great. I loved the acting!", "--check")
    assert result.exit_code == 0, result.output
    assert "predicted:" in result.output and "drop k=5" in result.output
