"""What issue #54's checks cost: a run's cold `predict "text"`, a bundle's load, and a Ray job's end.

Each of the first two is timed for this tree and for an earlier one (a
checkout given as `--before`, e.g. `git worktree add /tmp/before f9ba2cd`),
taking turns in one run, each in a fresh process as a user runs it:

    python benchmarks/bench_first_day.py RUN --before /tmp/before --output results.json

- `cold`: `python cli.py predict --run RUN "text"`, the whole process
  (since #54 it checks the bundle's sha256 against run.json and runs the
  bundle's load checks, `hierattn.runtime.checks`);
- `load`: `hierattn.runtime.load(RUN/model.onnx)` alone, inside a process;
- `ray` (with `--phases ray`): a local Ray cluster of 2 CPUs started and
  shut down, with SIGTERM held while it starts
  (`hierattn.batch.cluster.sigterm_held`, what a batch job does since #54)
  and without.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = "A moving film with a superb cast."
LOAD = (
    "import sys, time; from hierattn import runtime; t = time.perf_counter(); runtime.load(sys.argv[1]); "
    "print(time.perf_counter() - t)"
)
RAY = """
import contextlib, sys, time
import ray
from hierattn.batch.cluster import sigterm_held
held = sigterm_held() if sys.argv[1] == "held" else contextlib.nullcontext()
with held:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
t = time.perf_counter()
ray.shutdown()
print(time.perf_counter() - t)
"""


def _run(args, tree):
    env = dict(os.environ, PYTHONPATH=tree)
    started = time.perf_counter()
    done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout


def cold(run, trees, repeats):
    """Seconds of `predict --run RUN "text"` in each tree, turns taken."""
    times = {name: [] for name in trees}
    for _ in range(repeats):
        for name, tree in trees.items():
            seconds, _ = _run([sys.executable, "cli.py", "predict", "--run", run, TEXT], tree)
            times[name].append(round(seconds, 3))
    return times


def load(run, trees, repeats):
    """Seconds of `runtime.load` of the run's bundle in each tree (inside a fresh process), turns taken."""
    times = {name: [] for name in trees}
    for _ in range(repeats):
        for name, tree in trees.items():
            _, out = _run([sys.executable, "-c", LOAD, os.path.join(run, "model.onnx")], tree)
            times[name].append(round(float(out.strip()), 4))
    return times


def ray_shutdown(repeats):
    """Seconds of `ray.shutdown()` after a local start with SIGTERM held, and without, turns taken."""
    times = {"held": [], "not held": []}
    for _ in range(repeats):
        for name in times:
            _, out = _run([sys.executable, "-c", RAY, name.split()[0]], ROOT)
            times[name].append(round(float(out.strip().splitlines()[-1]), 2))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="a run folder with its model.onnx (the default IMDB run)")
    parser.add_argument("--before", help="an earlier checkout to compare with (cold and load)")
    parser.add_argument("--phases", default="cold,load", help="cold, load, ray (comma-separated)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", help="write the results as JSON")
    args = parser.parse_args()
    trees = {"this tree": ROOT, **({"before": os.path.abspath(args.before)} if args.before else {})}
    phases = args.phases.split(",")
    results = {"run": os.path.abspath(args.run), "repeats": args.repeats}
    if "cold" in phases:
        results["cold"] = cold(os.path.abspath(args.run), trees, args.repeats)
    if "load" in phases:
        results["load"] = load(os.path.abspath(args.run), trees, args.repeats)
    if "ray" in phases:
        results["ray_shutdown"] = ray_shutdown(args.repeats)
    for phase in ("cold", "load", "ray_shutdown"):
        for name, values in results.get(phase, {}).items():
            print(f"{phase} {name}: median {statistics.median(values)} s of {values}")
    if args.output:
        with open(args.output, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
