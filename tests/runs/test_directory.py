"""Tests for hierattn.runs.directory: finding and loading runs, and their error paths."""

import shutil

import numpy as np
import pytest

from hierattn.models.inference import predict_batches
from hierattn.runs.directory import RunError, dataset_name, find_latest_run, new_run_dir, write_status
from hierattn.runs.run import load_run


@pytest.fixture(scope="module")
def finished_run(rnn_run_dir):
    """The session's tiny RNN run (copied before any change)."""
    return rnn_run_dir


def test_latest_complete_run_is_found(finished_run, tmp_path):
    root = tmp_path / "runs"
    shutil.copytree(finished_run, root / "old")
    shutil.copytree(finished_run, root / "new")
    shutil.copytree(finished_run, root / "unfinished")
    write_status(root / "old", finished="2020-01-01T00:00:00+00:00")
    write_status(root / "new", finished="2030-01-01T00:00:00+00:00")
    write_status(root / "unfinished", status="training", finished="2040-01-01T00:00:00+00:00")
    assert find_latest_run(root) == root / "new"
    lines = []
    assert load_run(root=root, log=lines.append).path == root / "new"
    assert lines == [f"run: {root / 'new'} (the latest complete run under {root}/)"]  # chosen for the caller
    lines.clear()
    load_run(root / "old", log=lines.append)
    assert lines == [f"run: {root / 'old'}"]  # named by the caller
    with pytest.raises(
        RunError, match=r"^no trained run found under .*/empty/: train one first, or name a run directory with run_dir$"
    ) as none:
        find_latest_run(tmp_path / "empty")
    assert none.value.argument == "run_dir"
    with pytest.raises(
        RunError,
        match=r"^.*unfinished is an unfinished run \(status: training\): resume its training first, or name a "
        r"complete run with run_dir$",
    ) as unfinished:
        load_run(root / "unfinished")
    assert unfinished.value.naming("--run").endswith("or name a complete run with --run")


def test_runs_are_named_after_their_dataset_not_after_a_generic_file_name(tmp_path, monkeypatch):
    assert dataset_name("../shared/datasets/devsuite/agnews/train.csv") == "agnews"
    assert dataset_name("/data/yelp/data/TEST.TSV") == "yelp"  # generic folders are passed over too
    assert dataset_name("reviews.csv") == dataset_name("reviews.csv.gz") == dataset_name("reviews.jsonl.bz2")
    assert dataset_name("reviews.csv") == "reviews"
    assert dataset_name("/corpora/my films/train.csv") == "my-films"  # a name fit for a folder
    assert dataset_name("/train/data.csv") == "data"  # nothing but generic names: the file's
    (tmp_path / "trec6").mkdir()
    monkeypatch.chdir(tmp_path / "trec6")
    assert dataset_name("train.csv") == "trec6"  # a relative path: the working directory's name
    run = new_run_dir(tmp_path / "runs", "han", dataset_name("train.csv"))
    assert run.parent == tmp_path / "runs" and run.name.startswith("han-trec6-")


def test_errors_for_missing_incomplete_and_corrupt_runs(finished_run, tmp_path):
    with pytest.raises(RunError, match="no run directory"):
        load_run(tmp_path / "absent")
    (tmp_path / "plain").mkdir()
    with pytest.raises(RunError, match="not a hierattn run"):
        load_run(tmp_path / "plain")
    corrupt = tmp_path / "corrupt"
    shutil.copytree(finished_run, corrupt)
    (corrupt / "model.keras").write_bytes(b"this is not a zip file")
    with pytest.raises(RunError, match=r"model.keras is not a Keras model file: it is not a zip archive"):
        load_run(corrupt)


def test_safe_mode_refuses_code_in_a_model_file(finished_run, tmp_path):
    unsafe = tmp_path / "unsafe"
    shutil.copytree(finished_run, unsafe)
    import keras  # here: the file's tests without a run are in the fast tier (tests/conftest.py)

    inputs = keras.Input((None,), dtype="int32")
    outputs = keras.layers.Lambda(lambda x: keras.ops.one_hot(x[:, 0] % 2, 2))(inputs)
    keras.Model(inputs, outputs).save(unsafe / "model.keras")
    with pytest.raises(
        RunError,
        match=r"holds Python code \(e.g. a Lambda layer\) and Keras safe mode refuses to "
        r"load it; .* only if you trust its source.$",
    ):
        load_run(unsafe)


def test_predict_batches_keeps_the_input_order(finished_run):
    run = load_run(finished_run).classifier
    x = run.preprocessor(["good film", "a much longer text about an awful film " * 5, "", "ok"])["token_ids"]
    together = predict_batches(run.backbone, x, batch_size=2)
    one_by_one = np.concatenate([predict_batches(run.backbone, x[i : i + 1]) for i in range(len(x))])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_batched_outputs_first_call_eager_then_traced_agree_and_pad_back(finished_run):
    from hierattn.models.inference import batched_outputs

    run = load_run(finished_run).classifier
    explainer = run.backbone.attention_model()
    x = run.preprocessor(["good film", "a much longer text about an awful film " * 3, "ok"])["token_ids"]
    first = batched_outputs(explainer, x)  # one batch, model never called: eager
    assert explainer.__dict__["_hierattn_inference"] == {("eager", 2): True}
    second = batched_outputs(explainer, x)  # traced
    assert 2 in explainer.__dict__["_hierattn_inference"]
    split = batched_outputs(explainer, x, batch_size=1)  # three trimmed batches, padded back
    for out in (second, split):
        for key in first:
            np.testing.assert_allclose(out[key], first[key], atol=1e-6)
    weights = first["attention"]
    assert weights.shape == x.shape
    np.testing.assert_allclose(weights.sum(1), 1.0, atol=1e-5)
    assert np.all(weights[x == 0] == 0)


# One owner per run directory -------------------------------------------------------------------------------------------


def test_a_claimed_run_directory_refuses_a_second_owner_and_is_removed_after_an_early_failure(tmp_path):
    from hierattn.runs.directory import claim_run_dir

    run = tmp_path / "runs" / "new"
    with pytest.raises(ValueError, match="adapt failed"):
        with claim_run_dir(run) as path:
            assert path == run and path.is_dir()
            with pytest.raises(RunError, match="in use by another hierattn process.*train into another output$"):
                with claim_run_dir(run):
                    pass  # a second owner (another open of the directory) is refused at once
            (path / "run.json").write_text("{}")
            raise ValueError("adapt failed")  # before the first checkpoint
    assert not run.exists()


def test_a_run_with_its_first_checkpoint_is_kept_and_an_existing_empty_folder_stays(tmp_path):
    from hierattn.runs.directory import claim_run_dir

    with pytest.raises(KeyboardInterrupt):
        with claim_run_dir(tmp_path / "kept") as path:
            (path / "checkpoints").mkdir()
            (path / "checkpoints" / "adapted.keras").write_bytes(b"state")
            raise KeyboardInterrupt
    assert (tmp_path / "kept" / "checkpoints" / "adapted.keras").exists()
    (tmp_path / "mine").mkdir()
    with pytest.raises(ValueError):
        with claim_run_dir(tmp_path / "mine") as path:
            (path / "config.json").write_text("{}")
            raise ValueError
    assert (tmp_path / "mine").is_dir() and not any((tmp_path / "mine").iterdir())
    with pytest.raises(RunError, match=r"already exists and is not empty; choose another output \(nothing") as taken:
        with claim_run_dir(tmp_path / "kept"):
            pass
    assert taken.value.argument == "output"
    assert (tmp_path / "kept" / "checkpoints" / "adapted.keras").exists()


def test_runs_that_cannot_be_started_or_resumed_name_the_argument_to_change(finished_run, tmp_path):
    from hierattn.runs.directory import ensure_new_or_resumable

    complete, early = finished_run, tmp_path / "early"
    early.mkdir()
    write_status(early, status="training")
    cases = [
        (complete, True, f"{complete} is already complete: nothing to resume; use it, or train into a new output"),
        (
            early,
            True,
            (
                f"nothing to resume at {early}: the run stopped before its first checkpoint; start a new run "
                "(into another output, or remove this one first)"
            ),
        ),
        (
            complete,
            False,
            f"{complete} already exists and is not empty; choose another output (nothing was overwritten)",
        ),
    ]
    for path, resume, message in cases:
        with pytest.raises(RunError) as refused:
            ensure_new_or_resumable(path, resume)
        assert (str(refused.value), refused.value.argument) == (message, "output")
    assert ensure_new_or_resumable(tmp_path / "new", False) is False
