"""Batch prediction on Ray Data against the local runtime, on 50,000 IMDB reviews from Parquet (issue #42).

Writes the train and test reviews (texts, ids, labels) to one Parquet file,
then times, each in its own process, one after the other on this machine:

* local: `hierattn predict --file reviews.parquet --output local.csv`, the
  single-process path (the run's bundle on `hierattn.runtime`, onnxruntime
  on every core);
* ray-1, ray-2: `hierattn predict --file reviews.parquet --engine ray
  --workers N --output DIR`, on a new local Ray cluster (started and shut
  down inside the timed command, as a user runs it); the peak memory of
  each worker process is sampled every 0.2 s;
* kill: ray-2 again, with one worker killed (SIGKILL) once a fifth of the
  rows are written; the output must still hold every row once.

* settings (not run by default): what a worker's scoring costs in memory
  and time under `hierattn.defaults.BATCH`'s settings and their
  alternatives: each setting in a fresh process (no Ray), the bundle on one
  thread scoring 4,000 reviews with `BatchPredictor`'s call in batches of
  256 rows; peak and final unique memory (USS, sampled every 10 ms) above
  the process with the bundle loaded (before it scores), and reviews per
  second.

Every Ray output is checked against the local one: the same rows (by id,
each once) and probabilities within 1e-6 (the local CSV has six decimals).

Targets (2 cores): 2 workers >= 1.6x the throughput of 1; Ray with 2
workers >= 0.8x the local runtime; every row once after a kill; peak
memory per worker <= 300 MB.

Usage:
    python benchmarks/bench_batch.py RUN_DIR [--data ../shared/datasets/aclImdb_v1.tar.gz]
        [--work /tmp/bench_batch] [--phases local,ray-1,ray-2,kill,settings] [--output results.json]
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import psutil

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKER_TITLE = "MapBatches(BatchPredictor)"


def reviews(data, path):
    """The 50,000 labelled IMDB reviews (train, then test) as one Parquet file."""
    if path.exists():
        return
    from hierattn.data import load_imdb

    splits = load_imdb(data, splits=("train", "test"), download=False, progress=False)
    frames = [
        pd.DataFrame(
            {
                "id": [f"{name}-{i}" for i in range(len(split))],
                "text": list(split.texts),
                "label": np.where(np.asarray(split.labels) == 1, "pos", "neg"),
            }
        )
        for name, split in splits.items()
    ]
    pd.concat(frames, ignore_index=True).to_parquet(path, index=False)


def workers():
    """The Ray worker processes that hold a `BatchPredictor` (by their process title)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if WORKER_TITLE in " ".join(process.info["cmdline"] or []):
                found.append(process)
        except psutil.Error:
            continue
    return found


class Sampler(threading.Thread):
    """Samples the workers' resident and unique memory every 0.2 s; kills one once `kill_at` rows are written."""

    def __init__(self, output=None, kill_at=None):
        super().__init__(daemon=True)
        self.rss, self.uss, self.killed, self.pids = {}, {}, None, set()
        self.output, self.kill_at = output, kill_at
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(0.2):
            for process in workers():
                try:
                    memory = process.memory_full_info()
                except psutil.Error:
                    continue
                self.pids.add(process.pid)
                self.rss[process.pid] = max(self.rss.get(process.pid, 0), memory.rss)
                self.uss[process.pid] = max(self.uss.get(process.pid, 0), memory.uss)
            if self.kill_at and self.killed is None and self._written() >= self.kill_at:
                victims = workers()
                if victims:
                    os.kill(victims[0].pid, signal.SIGKILL)
                    self.killed = {"pid": victims[0].pid, "after_rows": self._written(), "at": time.time()}

    def _written(self):
        """Rows scored so far, from the progress bar's count on the job's standard error."""
        try:
            text = pathlib.Path(self.output).read_text(errors="replace")
        except OSError:
            return 0
        return max((int(n) for n in re.findall(r"(\d+)(?:/\d+|doc) \[", text)), default=0)


def timed(command, sampler=None, stderr_path=None):
    started = time.perf_counter()
    with open(stderr_path or os.devnull, "w") as stderr:
        if sampler:
            sampler.start()
        result = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True)
        seconds = time.perf_counter() - started
        if sampler:
            sampler.done.set()
            sampler.join()
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{pathlib.Path(stderr_path).read_text()[-3000:] if stderr_path else ''}")
    return seconds


def compare(local, folder):
    """Rows (by id) and the largest probability difference between the local CSV and a Ray output folder."""
    ray = pd.concat([pd.read_parquet(p) for p in sorted(pathlib.Path(folder).glob("part-*.parquet"))])
    counts = ray["id"].value_counts()
    merged = local.merge(ray, on="id", suffixes=("_local", "_ray"))
    columns = [c for c in local.columns if c.startswith("p_")]
    difference = max(float(np.abs(merged[f"{c}_local"] - merged[f"{c}_ray"]).max()) for c in columns)
    return {
        "rows": len(ray),
        "ids_once": bool(counts.max() == 1 and set(counts.index) == set(local["id"])),
        "same_rows_and_order": bool((ray["row"].to_numpy() == local["row"].to_numpy()).all())
        if len(ray) == len(local)
        else False,
        "same_predicted": bool((merged["predicted_local"] == merged["predicted_ray"]).all()),
        "max_probability_difference": difference,
    }


SETTINGS = {  # name: (graph batch, memory arena, memory handed back after each batch)
    "graph batch 32 (the runtime's own)": (32, True, False),
    "graph batch 16": (16, True, False),
    "graph batch 8": (8, True, False),
    "graph batch 16, no memory arena": (16, False, False),
    "graph batch 16, memory handed back after each batch": (16, True, True),
}


def settings_child(run, source, name):
    """One setting, in this (fresh) process: prints its memory and speed as JSON."""
    import hierattn.batch.predictor as batch_predictor

    graph_batch, arena, trim = SETTINGS[name]
    if not arena:  # onnxruntime's CPU memory arena off in the session hierattn.runtime makes
        import onnxruntime

        options = onnxruntime.SessionOptions

        class WithoutArena(options):
            def __init__(self):
                super().__init__()
                self.enable_cpu_mem_arena = False

        onnxruntime.SessionOptions = WithoutArena
    if trim:  # glibc's malloc_trim after each batch
        import ctypes
        import ctypes.util

        release = ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
        call = batch_predictor.BatchPredictor.__call__
        batch_predictor.BatchPredictor.__call__ = lambda self, frame: (call(self, frame), release(0))[0]
    process = psutil.Process()
    peak = [0]

    def watch():
        while True:
            peak[0] = max(peak[0], process.memory_full_info().uss)
            time.sleep(0.01)

    import pyarrow.parquet as pq

    frame = next(pq.ParquetFile(source).iter_batches(batch_size=4000, columns=["id", "text"])).to_pandas()
    predictor = batch_predictor.BatchPredictor(run, batch_size=graph_batch)
    loaded = process.memory_full_info().uss  # the bundle loaded, nothing scored yet
    threading.Thread(target=watch, daemon=True).start()
    started = time.perf_counter()
    for start in range(0, len(frame), 256):
        predictor(frame.iloc[start : start + 256])
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "setting": name,
                "reviews_per_second": round(len(frame) / seconds, 1),
                "loaded_uss_mb": round(loaded / 2**20),
                "peak_above_loaded_mb": round((peak[0] - loaded) / 2**20),
                "final_above_loaded_mb": round((process.memory_full_info().uss - loaded) / 2**20),
            }
        )
    )


def settings(run, source):
    results = []
    for name in [*SETTINGS, *SETTINGS]:  # each twice, alternating
        command = [sys.executable, __file__, run, "--settings-child", name, "--work", str(source.parent)]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--work", default="/tmp/bench_batch")
    parser.add_argument("--phases", default="local,ray-1,ray-2,kill")
    parser.add_argument("--output", default=None)
    parser.add_argument("--settings-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    source = work / "reviews.parquet"
    if args.settings_child:
        settings_child(args.run, source, args.settings_child)
        return
    reviews(args.data, source)
    rows = len(pd.read_parquet(source, columns=["id"]))
    cli = [sys.executable, "cli.py", "predict", "--file", str(source), "--run", args.run]
    results = {"run": args.run, "rows": rows, "cpus": os.cpu_count()}
    local_csv = work / "local.csv"
    phases = args.phases.split(",")
    if "local" in phases:
        local_csv.unlink(missing_ok=True)
        seconds = timed([*cli, "--output", str(local_csv)], stderr_path=work / "local.stderr")
        results["local"] = {
            "seconds": round(seconds, 1),
            "rows_per_second": round(rows / seconds, 1),
        }
        print(json.dumps({"local": results["local"]}), flush=True)
    if "settings" in phases:
        results["settings"] = settings(args.run, source)
    if not any(phase.startswith(("ray-", "kill")) for phase in phases):
        print(json.dumps(results, indent=2))
        return
    local = pd.read_csv(local_csv, dtype={"id": str})
    for phase in phases:
        if not phase.startswith(("ray-", "kill")):
            continue
        count = 2 if phase == "kill" else int(phase.split("-")[1])
        folder = work / phase
        shutil.rmtree(folder, ignore_errors=True)
        log = work / f"{phase}.stderr"
        sampler = Sampler(log, kill_at=rows // 5 if phase == "kill" else None)
        command = [*cli, "--engine", "ray", "--workers", str(count), "--output", str(folder)]
        seconds = timed(command, sampler, log)
        result = {
            "workers": count,
            "seconds": round(seconds, 1),
            "rows_per_second": round(rows / seconds, 1),
            "peak_rss_mb": round(max(sampler.rss.values(), default=0) / 2**20),
            "peak_uss_mb": round(max(sampler.uss.values(), default=0) / 2**20),
            "worker_processes": len(sampler.pids),
            **compare(local, folder),
        }
        if phase == "kill":
            result["killed"] = sampler.killed
        results[phase] = result
        print(json.dumps({phase: result}), flush=True)
    if "local" in results:
        for phase in ("ray-1", "ray-2"):
            if phase in results:
                results[phase]["vs_local"] = round(results["local"]["seconds"] / results[phase]["seconds"], 2)
    if "ray-1" in results and "ray-2" in results:
        one, two = results["ray-1"], results["ray-2"]
        two["vs_ray_1"] = round(one["seconds"] / two["seconds"], 2)
    print(json.dumps(results, indent=2))
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
