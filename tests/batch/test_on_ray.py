"""Tests for hierattn.batch.on_ray, on a real local Ray cluster of 2 CPUs (the ray extra; skipped without it)."""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest

from hierattn.batch import BatchPredictor, predict_dataset, predict_files
from hierattn.batch.on_ray import worker_cpus
from hierattn.errors import ArgumentError, DataError, HierattnError
from hierattn.runs.predict import predict_file
from hierattn.utils.shell import pip_install_extra

from conftest import make_reviews

ray = pytest.importorskip("ray", reason='Ray is not installed (pip install -e ".[ray]")')
psutil = pytest.importorskip("psutil", reason="psutil (which Ray needs) is not installed")

WORKER_TITLE = "MapBatches(BatchPredictor)"


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of 2 CPUs for this module's tests (one process per test module under xdist)."""
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
        object_store_memory=150 * 2**20,
    )
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def reviews():
    texts, labels = make_reviews(600, seed=3)
    texts[5] = "<br />"  # no words: a row without a prediction
    return pd.DataFrame({"id": [f"r{i}" for i in range(len(texts))], "text": texts, "label": labels})


def _split(frame, parts):
    """`parts` DataFrames, each a block (Ray's own splitting, `override_num_blocks`, fails on pandas 3)."""
    size = -(-len(frame) // parts)
    return [frame.iloc[start : start + size] for start in range(0, len(frame), size)]


def test_a_users_dataset_gains_the_batch_predictors_columns(cluster, reviews, han_run_dir):
    dataset = ray.data.from_pandas(_split(reviews, 4))
    scored = predict_dataset(dataset, han_run_dir, workers=2).to_pandas()
    expected = BatchPredictor(han_run_dir)(reviews)
    assert sorted(scored.columns) == sorted(expected.columns)
    scored = scored.sort_values("id", key=lambda ids: ids.str[1:].astype(int)).reset_index(drop=True)
    assert scored["id"].tolist() == reviews["id"].tolist()  # every row once
    assert scored["predicted"].fillna("").tolist() == expected["predicted"].fillna("").tolist()
    for column in [c for c in expected.columns if c.startswith("p_")]:
        np.testing.assert_allclose(scored[column], expected[column], atol=1e-6)


def test_a_dataset_without_texts_is_refused_before_it_runs(cluster, han_run_dir):
    dataset = ray.data.from_items([{"id": 1, "words": "a film"}])
    with pytest.raises(DataError, match="no text column found"):
        predict_dataset(dataset, han_run_dir)
    with pytest.raises(ArgumentError, match="workers must be a whole number of at least 1"):
        predict_dataset(ray.data.from_items([{"text": "a film"}]), han_run_dir, workers=0)


def test_workers_leave_room_for_reading():
    assert worker_cpus(2, 2.0) == 0.5 and worker_cpus(1, 2.0) == 1.0 and worker_cpus(4, 2.0) == 0.25
    assert worker_cpus(16, 16.0) == 0.9375 and worker_cpus(8, 16.0) == 1.0 and worker_cpus(1, 1.0) == 0.5


def test_files_are_scored_into_parts_every_row_once_in_order(cluster, reviews, han_run_dir, tmp_path):
    folder = tmp_path / "in"
    (folder / "more").mkdir(parents=True)
    reviews.iloc[:250].rename(columns={"label": "labels"}).to_csv(folder / "a.csv", index=False)
    reviews.iloc[250:500].rename(columns={"text": "review", "label": "labels"}).to_json(
        folder / "more" / "b.jsonl", orient="records", lines=True
    )
    reviews.iloc[500:].drop(columns="label").to_parquet(folder / "c.parquet", index=False)
    said = []
    count = predict_files(folder, tmp_path / "out", han_run_dir, workers=2, progress=False, log=said.append)
    assert count == len(reviews) and said[0] == f"run: {han_run_dir}" and said[1].startswith("ray: 2 CPUs, 3 file(s)")
    assert said[-1] == "1 of 600 rows has no words (blank, or only markup): its prediction cells are empty"
    parts = sorted((tmp_path / "out").iterdir())
    output = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    assert list(output.columns)[:5] == ["file", "row", "id", "labels", "predicted"]  # as the files name them
    assert output["file"].tolist() == ["a.csv"] * 250 + ["c.parquet"] * 100 + ["more/b.jsonl"] * 250
    assert output["row"].tolist() == [*range(250), *range(100), *range(250)]
    assert sorted(output["id"]) == sorted(reviews["id"])  # every row once
    assert output["labels"][250:350].isna().all()  # c.parquet has no label column
    assert output["labels"][350:].tolist() == reviews["label"][250:500].tolist()
    # the same answers as predict --file on each file
    for name in ("a.csv", "c.parquet", "more/b.jsonl"):
        predict_file(folder / name, tmp_path / f"{name.replace('/', '_')}.csv", han_run_dir, progress=False)
        expected = pd.read_csv(tmp_path / f"{name.replace('/', '_')}.csv", dtype={"id": str})
        mine = output[output["file"] == name].reset_index(drop=True)
        assert mine["id"].tolist() == expected["id"].tolist()
        assert mine["predicted"].fillna("").tolist() == expected["predicted"].fillna("").tolist()
        np.testing.assert_allclose(mine["p_pos"], expected["p_pos"], atol=1e-6)


def test_one_file_gives_predict_files_columns_in_csv(cluster, reviews, han_run_dir, tmp_path):
    reviews.to_csv(tmp_path / "in.csv", index=False)
    predict_file(tmp_path / "in.csv", tmp_path / "local.csv", han_run_dir, progress=False)
    predict_files(tmp_path / "in.csv", tmp_path / "out", han_run_dir, output_format="csv", progress=False)
    assert (tmp_path / "out" / "part-00000.csv").read_text() == (tmp_path / "local.csv").read_text()


def test_bad_input_is_one_error_before_any_work_and_leaves_nothing(reviews, han_run_dir, tmp_path):
    reviews.rename(columns={"text": "words"}).to_csv(tmp_path / "in.csv", index=False)
    unexported = tmp_path / "unexported"
    shutil.copytree(han_run_dir, unexported)
    (unexported / "model.onnx").unlink()
    with pytest.raises(DataError, match="no text column found"):
        predict_files(tmp_path / "in.csv", tmp_path / "out", han_run_dir)
    with pytest.raises(DataError, match="^no table or text file matches"):
        predict_files(tmp_path / "*.parquet", tmp_path / "out", han_run_dir)
    with pytest.raises(DataError, match="has no model.onnx: export the run first"):
        predict_files(tmp_path / "in.csv", tmp_path / "out", unexported, text_column="words")
    (tmp_path / "out").mkdir()
    with pytest.raises(ArgumentError, match="already exists"):
        predict_files(tmp_path / "in.csv", tmp_path / "out", han_run_dir, text_column="words")
    assert list((tmp_path / "out").iterdir()) == [] and len(list(tmp_path.iterdir())) == 3


def test_an_error_inside_a_task_is_the_one_error_and_no_output(cluster, reviews, han_run_dir, tmp_path):
    reviews.to_csv(tmp_path / "in.csv", index=False)
    data = (tmp_path / "in.csv").read_bytes()
    cut = data.index(b"r400,")
    (tmp_path / "in.csv").write_bytes(data[:cut] + b"\xff" + data[cut:])  # bad bytes far past the first chunk
    with pytest.raises(DataError, match=r"is not valid utf-8 text: line 402"):
        predict_files(tmp_path / "in.csv", tmp_path / "out", han_run_dir, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_more_workers_than_the_cluster_has_cpus_are_refused_at_once(cluster, reviews, han_run_dir, tmp_path):
    """1,000 workers on 2 CPUs waited forever (issue #54)."""
    reviews.to_csv(tmp_path / "in.csv", index=False)
    start = time.monotonic()
    with pytest.raises(ArgumentError, match=r"^workers must be at most 2, one per CPU .*\(it has 2 CPUs\); got 1000$"):
        predict_files(tmp_path / "in.csv", tmp_path / "out", han_run_dir, workers=1000, progress=False)
    with pytest.raises(ArgumentError, match="^workers must be at most 2"):
        predict_dataset(ray.data.from_items([{"text": "a film"}]), han_run_dir, workers=3)
    assert time.monotonic() - start < 30 and sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def _of_session(session, title=""):
    """The processes of a session (a job started with `start_new_session`) whose command line holds `title`."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getsid(process.pid) == session and title in " ".join(process.cmdline()):
                found.append(process)
        except (psutil.Error, OSError):
            continue
    return found


def test_sigterm_to_the_jobs_process_group_stops_it_in_one_line_and_leaves_nothing(reviews, han_run_dir, tmp_path):
    """systemd and Slurm send SIGTERM to all of a job's processes: Ray's own died beside the command, which ended in
    SIGABRT (rc 134), or rc 1 with its temporary folder and Ray workers left (issue #54). A cluster of its own."""
    pd.concat([reviews] * 300, ignore_index=True).to_csv(tmp_path / "in.csv", index=False)  # 180,000 rows
    output = tmp_path / "out"
    command = ["predict", "--file", tmp_path / "in.csv", "--engine", "ray", "--output", output, "--run", han_run_dir]
    job = subprocess.Popen(
        [sys.executable, "-m", "hierattn", *map(str, command), "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a service's or a batch job's
    )
    try:
        deadline = time.monotonic() + 180
        while job.poll() is None and not _of_session(job.pid, WORKER_TITLE) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert job.poll() is None, f"the job ended before it could be stopped: {job.stderr.read()[-2000:]}"
        os.killpg(job.pid, signal.SIGTERM)
        sent = time.monotonic()
        stderr = job.communicate(timeout=90)[1]
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    assert job.returncode == 143, stderr[-2000:]
    assert stderr.splitlines()[-1] == f"stopped by SIGTERM: nothing was written ({output} was not made)"
    assert "Traceback" not in stderr and time.monotonic() - sent < 60
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
    deadline = time.monotonic() + 20
    while _of_session(job.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _of_session(job.pid), [p.name() for p in _of_session(job.pid)]


def _scoring_workers():
    """This cluster's scoring workers: processes under this one (which started the cluster), by their title."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if WORKER_TITLE in " ".join(process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue
    return found


def test_a_killed_worker_is_replaced_and_every_row_is_written_once(cluster, reviews, han_run_dir):
    def slowly(batch):  # paced input, so the workers are still busy when one is killed (defined here: sent by value)
        threading.Event().wait(0.05)
        return batch

    dataset = ray.data.from_pandas(_split(reviews, 30)).map_batches(slowly, batch_format="pandas")
    ids, killed, first = [], [], None
    for frame in predict_dataset(dataset, han_run_dir, workers=2).iter_batches(batch_format="pandas", batch_size=None):
        ids += frame["id"].tolist()
        if not killed:  # after the first batch: workers are busy with the next ones
            victims = _scoring_workers()
            assert victims, "no scoring worker found"
            os.kill(victims[0].pid, signal.SIGKILL)
            killed.append(victims[0].pid)
            first = len(ids)
    assert first < len(reviews)  # killed while rows were still to come
    assert len(ids) == len(reviews) and sorted(ids) == sorted(reviews["id"])


def test_two_workers_on_two_cpus_finish(reviews, han_run_dir, tmp_path):
    """Whole CPUs for both workers left none to read with: a deadlock (issue #42). A new cluster, in its own process.

    (The killed-worker test above also runs a step of the user's own, with Ray's default of a whole CPU per task,
    on 2 CPUs beside 2 workers.)
    """
    reviews.to_parquet(tmp_path / "in.parquet", index=False)
    script = textwrap.dedent(
        f"""
        import ray
        from hierattn.batch import predict_files
        for cpus, workers in ((2, 2), (1, None)):  # and one CPU, one worker by default
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 2**20)
            print(predict_files({str(tmp_path / "in.parquet")!r}, {str(tmp_path)!r} + f"/out{{cpus}}",
                                {str(han_run_dir)!r}, workers=workers, progress=False))
            ray.shutdown()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == [str(len(reviews))] * 2


def test_without_ray_one_line_says_how_to_install_it(monkeypatch, han_run_dir, tmp_path):
    from hierattn.batch.on_ray import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: `import ray` raises ImportError
    with pytest.raises(HierattnError, match=rf"needs Ray Data .*: {re.escape(pip_install_extra('ray'))}$"):
        import_ray()
    with pytest.raises(HierattnError, match=r"\[ray\]"):
        predict_files(tmp_path / "in.csv", tmp_path / "out", han_run_dir)
