"""Training under tf.distribute: two local replicas, and two worker processes on 127.0.0.1."""

import csv
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from hierattn.distribute import check_tf_config, is_chief_in_tf_config, local_cluster, make_strategy
from hierattn.errors import HierattnError

from conftest import TINY_OPTIONS, StopAfterFirstEpoch, write_corpus

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRAIN = ["--embeddings", "none", "--epochs", "4", "--batch-size", "16", "--seed", "3"]


def history(run):
    with open(run / "history.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = write_corpus(tmp_path_factory.mktemp("distribute"), train=300, test=60)
    (folder / "tiny.json").write_text(json.dumps(TINY_OPTIONS["han"]))
    return folder


def test_tf_config_is_checked_in_one_line(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(HierattnError, match="reads the cluster from TF_CONFIG, which is not set"):
        make_strategy("multi-worker")
    for bad in (
        "not json",
        '{"cluster": {}}',
        json.dumps({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}),
    ):
        monkeypatch.setenv("TF_CONFIG", bad)
        with pytest.raises(HierattnError, match="TF_CONFIG must be JSON with a cluster"):
            check_tf_config()
    with pytest.raises(HierattnError, match="unknown distribution 'everywhere'"):
        make_strategy("everywhere")


def test_a_local_cluster_has_free_ports_and_one_task_each():
    configs = [json.loads(c) for c in local_cluster(3)]
    assert [c["task"] for c in configs] == [{"type": "worker", "index": i} for i in range(3)]
    workers = configs[0]["cluster"]["worker"]
    assert len(set(workers)) == 3 and all(w.startswith("127.0.0.1:") for w in workers)
    assert all(c["cluster"] == configs[0]["cluster"] for c in configs)


@pytest.mark.parametrize(
    "cluster, task, chief",
    [
        ({"worker": ["a:1", "b:1"]}, {"type": "worker", "index": 0}, True),
        ({"worker": ["a:1", "b:1"]}, {"type": "worker", "index": 1}, False),
        ({"chief": ["c:1"], "worker": ["a:1"]}, {"type": "worker", "index": 0}, False),
        ({"chief": ["c:1"], "worker": ["a:1"]}, {"type": "chief", "index": 0}, True),
    ],
)
def test_the_chief_is_tensorflows(monkeypatch, cluster, task, chief):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": task}))
    assert is_chief_in_tf_config() is chief


def test_two_local_replicas_share_each_batch(corpus, tmp_path):
    # Two logical CPUs make a two-replica MirroredStrategy on any machine; they
    # must be configured before TensorFlow starts, hence a fresh process.
    script = textwrap.dedent(f"""
        import sys, tensorflow as tf
        sys.path.insert(0, {str(ROOT / "tests")!r})
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        from conftest import TINY_OPTIONS
        from hierattn.data import load_table
        from hierattn.runs.config import TrainConfig
        from hierattn.runs.train import train
        data, _ = load_table({str(corpus / "train.csv")!r})
        config = TrainConfig.from_dict(dict(epochs=2, batch_size=16, embeddings="none", **TINY_OPTIONS["han"]))
        with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
            run = train(data, None, config, {str(tmp_path / "run")!r}, log=print, verbose=0, bundle=False)
        print("replicas", run.classifier.distribute_strategy.num_replicas_in_sync)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "replicas 2" in result.stdout
    from hierattn.runs.run import load_run

    run = load_run(tmp_path / "run")
    assert "MirroredStrategy, 2 replicas in sync" in (tmp_path / "run" / "run.json").read_text()
    assert [row["examples"] for row in history(tmp_path / "run")] == ["270.0", "270.0"]
    assert [row["val_examples"] for row in history(tmp_path / "run")] == ["30.0", "30.0"]
    assert run.classifier.predict_labels(["The film was superb."]) in (["pos"], ["neg"])


def run_cluster(args, tmp_path):
    """Runs `args` as two workers on 127.0.0.1; their exit codes and outputs (each with its own TMPDIR)."""
    workers, logs = [], []
    try:
        for i, tf_config in enumerate(local_cluster(2)):
            scratch = tmp_path / f"tmp{i}"
            scratch.mkdir(exist_ok=True)
            env = dict(os.environ, TF_CONFIG=tf_config, TMPDIR=str(scratch))
            logs.append(open(tmp_path / f"worker{i}.log", "w+"))
            workers.append(
                subprocess.Popen(
                    args + ["--distribute", "multi-worker"], cwd=ROOT, env=env, stdout=logs[i], stderr=subprocess.STDOUT
                )
            )
        codes = [worker.wait(timeout=300) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    texts = []
    for log in logs:
        log.seek(0)
        texts.append(log.read())
        log.close()
    assert codes == [0, 0], texts[0][-3000:] + texts[1][-3000:]
    assert "this worker wrote nothing; the chief wrote" in texts[1]
    assert not any((tmp_path / "tmp1").iterdir())  # the worker's private copy is gone
    return texts


def imdb_archive(corpus, path):
    """The corpus's train.csv and test.csv as an aclImdb_v1.tar.gz (the same reviews), for `train imdb`."""
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        for split in ("train", "test"):
            with open(corpus / f"{split}.csv", newline="") as f:
                for i, row in enumerate(csv.DictReader(f)):
                    data = row["text"].encode()
                    rating = 8 if row["label"] == "pos" else 2
                    info = tarfile.TarInfo(f"aclImdb/{split}/{row['label']}/{i}_{rating}.txt")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    return path


def test_two_worker_processes_train_on_imdb_like_one(corpus, tmp_path, no_bundle):
    # One cluster run checks both. `train imdb` does no TensorFlow work before
    # train() makes the strategy (MultiWorkerMirroredStrategy refuses to start
    # after it). And two workers train like one process: the comparison run
    # needs no second process, so it goes through CliRunner (without a bundle).
    from click.testing import CliRunner

    from hierattn.cli import cli
    from hierattn.runs.run import load_run

    archive = imdb_archive(corpus, tmp_path / "aclImdb_v1.tar.gz")
    args = ["train", "imdb", str(archive), "--config", str(corpus / "tiny.json"), *TRAIN]
    output = tmp_path / "cluster"
    run_cluster([sys.executable, str(ROOT / "cli.py"), *args, "--output", str(output)], tmp_path)

    run = load_run(output)
    assert run.metrics["test"]["documents"] == 60
    status = json.loads((output / "run.json").read_text())
    assert status["status"] == "complete" and status["dataset"] == "imdb"
    assert "MultiWorkerMirroredStrategy, 2 replicas in sync; this is worker 0 (chief)" == status["distribution"]
    rows = history(output)
    assert len(rows) == 4
    assert all(float(row["examples"]) == run.metrics["train_documents"] == 270 for row in rows)
    assert all(float(row["val_examples"]) == 30 for row in rows)

    single = tmp_path / "single"
    result = CliRunner().invoke(cli, [*args, "--output", str(single)])
    assert result.exit_code == 0, result.output[-3000:]
    alone = load_run(single)
    # The same global batch and seed: the same training up to the replicas'
    # own dropout draws and the order of float sums.
    for split in ("validation", "test"):
        assert abs(run.metrics[split]["accuracy"] - alone.metrics[split]["accuracy"]) <= 0.1, split
    final = float(rows[-1]["val_loss"]), float(history(single)[-1]["val_loss"])
    assert abs(final[0] - final[1]) < 0.1, final


def test_a_cluster_resumes_an_interrupted_run(corpus, tmp_path):
    from hierattn.data import load_table
    from hierattn.runs.config import TrainConfig
    from hierattn.runs.run import load_run
    from hierattn.runs.train import train

    output = tmp_path / "run"
    data, _ = load_table(corpus / "train.csv")
    config = TrainConfig.from_dict(dict(epochs=3, patience=5, batch_size=16, embeddings="none", **TINY_OPTIONS["han"]))
    with pytest.raises(KeyboardInterrupt):
        train(data, None, config, output, log=lambda m: None, verbose=0, callbacks=[StopAfterFirstEpoch()])
    texts = run_cluster(
        [sys.executable, str(ROOT / "cli.py"), "train", "csv", str(corpus / "train.csv"), "--resume", str(output)],
        tmp_path,
    )
    assert "resuming" in texts[0]
    rows = history(output)
    assert [row["epoch"] for row in rows] == ["0", "1", "2"]  # the first epoch was not run again
    assert [row["examples"] for row in rows] == ["270.0"] * 3
    assert load_run(output).classifier.predict_labels(["The film was superb."]) in (["pos"], ["neg"])
