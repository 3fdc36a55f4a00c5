"""Are the outputs of every command identical before and after a change? (issue 51)

    .venv/bin/python benchmarks/compare_outputs.py --old HEAD [--new .] [--work DIR] [--keep] [--list]

`--old` is a git ref (checked out with `git worktree add` into a temporary
folder, removed at the end) or a folder holding a checkout; `--new` is a
checkout folder, by default the repository this script is in. Every command
runs as its own process, `python -m hierattn ...` with this interpreter,
`PYTHONPATH=<that checkout>` (so each side imports its own code; checked
before anything runs), `PYTHONHASHSEED=0`, `TF_CPP_MIN_LOG_LEVEL=3`,
`CUDA_VISIBLE_DEVICES=""`, in a scratch folder of its own under `--work`.

Fixtures, made once with the OLD code so both sides read the same runs: a
generated single-label CSV corpus and a multi-label one (as tests/conftest.py's
`make_reviews` / `make_topics`), each trained by `train csv` with tiny settings
(about 30 s each on 2 cores): `han` (a single-label HAN run with its
model.onnx bundle), `keras` (a copy of it without model.onnx: the Keras
fallback), `multi` (a multi-label run) and `unfinished` (a copy of `han` whose
run.json says status training). Both trainings are also cases: the new side
trains the same way, and its output and recorded files are compared.

Each case (`--list` prints them) runs on both sides in a scratch folder whose
runs/ holds only the run in question (so `predict` without `--run` finds it):
for each run, predict a text (with and without `--run`, `--top-k 2`), `--file`
CSV to `--output` and to standard output with `--top-k 2`, a text file to
standard output, `-` from standard input (to standard output and `--output`),
a file with a blank and a wordless row, `evaluate` (the run's recorded test
file, and `--data ... --output`), `explain` (text, `--format json`, `--file
... --format csv --output`), `export --output` (`keras`: `export`, which
writes its bundle), `predict --engine ray ... --output DIR` when ray imports
(the parts concatenated; skipped with a note past 60 s); and the errors: a
missing run or runs/ folder, an unfinished run (named and latest), wordless or
blank texts, an existing `--output`, `--top-k 0`.

Compared: the exit code, standard output, standard error, each output file
(text; a folder of parts concatenated; ONNX bundles only by their name in the
listing) and the names of the files in the scratch folder afterwards.
Normalised, as what legitimately differs between two invocations: durations
and rates (`in 1.2 s`, `12.3doc/s`, keras's `13s - 1s/step`, `*_seconds` and
`created` / `finished` JSON fields), tqdm's bars (each one's final state,
without its times), the checkout, scratch and temporary folders' paths,
TensorBoard event file names, and run.json's bundle size: tf2onnx writes a
differently named and ordered graph at each export of the same model (same
predictions, a size that varies by about 1%).

Prints one line per case as it runs (and every 30 s while a command runs),
`same` or `DIFFERENT` with the first lines of a unified diff, and exits 1 if
any case differs. `--keep` keeps the scratch folder (`--work`, by default a
temporary one), with what was compared in reports/old and reports/new. A full
comparison takes about 10 minutes on 2 cores.
"""

import argparse
import dataclasses
import difflib
import functools
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMEOUT = 600  # seconds for one command
RAY_TIMEOUT = 60  # predict --engine ray: skipped with a note beyond this (it takes about 20 s)
DIFF_LINES = 40
HEARTBEAT = 30  # seconds: a command running longer says so

POSITIVE = ["great", "wonderful", "loved", "superb", "brilliant", "moving"]
NEGATIVE = ["awful", "boring", "hated", "terrible", "dull", "painful"]
TOPICS = {
    "sport": ["goal", "match", "team", "referee"],
    "money": ["bank", "price", "market", "shares"],
    "food": ["bread", "cheese", "wine", "dinner"],
}
# Tiny settings (as tests/conftest.py's TINY_OPTIONS); 2 epochs at a high learning rate, so the network has a weight.
TINY = ["--epochs", "2", "--learning-rate", "0.02", "--batch-size", "16", "--embedding-dim", "8"]
TINY += ["--embeddings", "none", "--no-baseline", "--config", "tiny.json"]
TINY_CONFIG = {"min_count": 1, "word_units": 8, "sentence_units": 8, "attention_units": 8}
RUN_FILES = ("config.json", "history.csv", "metrics.json", "run.json")


@dataclasses.dataclass
class Case:
    """One command: its arguments, standard input, the run its runs/ holds and the files it writes."""

    name: str
    argv: list
    run: str = None  # the fixture run copied to runs/<run> (None: runs/ is empty)
    stdin: str = None
    files: tuple = ()  # output files (or folders of parts) to compare, relative to the scratch folder
    setup: dict = dataclasses.field(default_factory=dict)  # files to write first: name -> text
    timeout: int = TIMEOUT
    skippable: bool = False  # past its timeout: skipped with a note (else: compared as timed out)


# ---------------------------------------------------------------- data


def make_reviews(n, seed):
    """tests/conftest.py's generated sentiment corpus: (texts, labels pos/neg)."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        positive = bool(rng.integers(0, 2))
        words = POSITIVE if positive else NEGATIVE
        sentences = [f"The film was {rng.choice(words)}.", f"I found the acting {rng.choice(words)}!"]
        if rng.random() < 0.5:
            sentences.append("Mr. Smith directed it in the U.S. in 1999.")
        texts.append(" ".join(rng.permutation(sentences)))
        labels.append("pos" if positive else "neg")
    return texts, labels


def make_topics(n, seed):
    """tests/conftest.py's generated multi-label corpus: (texts, label lists) on sport, money and food."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        chosen = [topic for topic in TOPICS if rng.random() < 0.4]
        words = [str(word) for topic in chosen for word in rng.choice(TOPICS[topic], 2)]
        filler = ["The news today was short.", "Nothing else happened in town."]
        sentences = [f"They talked about {word} at length." for word in words] + [str(rng.choice(filler))]
        texts.append(" ".join(rng.permutation(sentences)))
        labels.append("|".join(chosen))
    return texts, labels


def csv_text(header, rows):
    """A small CSV file's text (every field quoted)."""
    quote = lambda value: '"' + str(value).replace('"', '""') + '"'  # noqa: E731
    return "".join(",".join(map(quote, row)) + "\n" for row in [header, *rows])


@functools.cache
def corpus_files():
    """The training and test files of both corpora, and tiny.json: name -> text."""
    files = {"tiny.json": json.dumps(TINY_CONFIG)}
    for name, n, seed in (("train", 160, 0), ("test", 40, 1)):
        files[f"{name}.csv"] = csv_text(["text", "label"], zip(*make_reviews(n, seed)))
    for name, n, seed in (("ml_train", 200, 0), ("ml_test", 40, 1)):
        files[f"{name}.csv"] = csv_text(["text", "labels"], zip(*make_topics(n, seed)))
    return files


# What each run is asked: a text, a few texts, and labelled data.
SAMPLES = {
    "reviews": {
        "text": "The film was great. I loved the acting!",
        "texts": ["The film was wonderful.", "I hated it. Boring and painful.", "Superb acting!", "It was dull."],
        "labelled": "test.csv",
    },
    "topics": {
        "text": "They talked about goal at length. They talked about bank at length.",
        "texts": [
            "The match and the team.",
            "Bread, cheese and wine at dinner.",
            "The news today was short.",
            "Bank shares.",
        ],
        "labelled": "ml_test.csv",
    },
}
RUNS = {"han": "reviews", "keras": "reviews", "multi": "topics", "unfinished": "reviews"}


def inputs(run):
    """The input files every scratch folder of `run` gets: name -> text."""
    sample = SAMPLES[RUNS[run]]
    texts = sample["texts"]
    files = {"texts.csv": csv_text(["text"], [[text] for text in texts]), "texts.txt": "\n".join(texts) + "\n"}
    files["blank.csv"] = csv_text(["text"], [[texts[0]], [""], ["..."], [texts[1]]])
    files["labelled.csv"] = corpus_files()[sample["labelled"]]
    return files


# ---------------------------------------------------------------- cases


def train_cases():
    """Training both corpora: the old side's runs become the fixtures."""
    han = ["train", "csv", "train.csv", "--test", "test.csv", "--output", "runs/han", *TINY]
    multi = ["train", "csv", "ml_train.csv", "--test", "ml_test.csv", "--multi-label", "--output", "runs/multi", *TINY]
    return [
        Case("train/han", han, files=tuple(f"runs/han/{name}" for name in RUN_FILES)),
        Case("train/multi", multi, files=tuple(f"runs/multi/{name}" for name in RUN_FILES)),
    ]


def run_cases(run, ray):
    """The cases asked of one run (han, keras or multi)."""
    text, at = SAMPLES[RUNS[run]]["text"], ["--run", f"runs/{run}"]
    cases = [
        Case("predict-text", ["predict", text, *at]),
        Case("predict-text-latest", ["predict", text]),
        Case("predict-top-k", ["predict", text, "--top-k", "2", *at]),
        Case("predict-file-output", ["predict", "--file", "texts.csv", "--output", "out.csv", *at], files=("out.csv",)),
        Case("predict-file-top-k-latest", ["predict", "--file", "texts.csv", "--top-k", "2"]),
        Case("predict-file-txt-stdout", ["predict", "--file", "texts.txt", *at]),
        Case("predict-stdin", ["predict", "-", *at], stdin=inputs(run)["texts.txt"]),
        Case(
            "predict-stdin-output",
            ["predict", "-", "--output", "out.csv"],
            stdin=inputs(run)["texts.txt"],
            files=("out.csv",),
        ),
        Case("predict-file-blank-row", ["predict", "--file", "blank.csv", *at]),
        Case("evaluate", ["evaluate", *at]),
        Case(
            "evaluate-data-output",
            ["evaluate", "--data", "labelled.csv", "--output", "metrics.json", *at],
            files=("metrics.json",),
        ),
        Case("explain-text", ["explain", text, *at]),
        Case("explain-json", ["explain", text, "--format", "json", *at]),
        Case(
            "explain-file-csv",
            ["explain", "--file", "texts.csv", "--format", "csv", "--output", "words.csv", *at],
            files=("words.csv",),
        ),
        Case("export-output", ["export", "--output", "x.onnx", *at]),
    ]
    if run == "keras":  # han's model without its bundle: every predict, and the rest once; export writes the bundle
        cases = [case for case in cases if case.name.startswith("predict") or case.name in ("evaluate", "explain-text")]
        cases.append(Case("export-default", ["export", *at], files=("runs/keras/run.json",)))
    elif ray:
        argv = ["predict", "--engine", "ray", "--file", "texts.csv", "--output", "parts", "--output-format", "csv"]
        cases.append(
            Case("predict-ray", [*argv, "--workers", "1", *at], files=("parts",), timeout=RAY_TIMEOUT, skippable=True)
        )
    for case in cases:
        case.name, case.run = f"{run}/{case.name}", run
    return cases


def error_cases():
    """Commands that must fail, and how."""
    text, at = SAMPLES["reviews"]["text"], ["--run", "runs/han"]
    return [
        Case("error/missing-run", ["predict", text, "--run", "runs/missing"]),
        Case("error/no-runs-folder", ["predict", text]),
        Case("error/evaluate-missing-run", ["evaluate", "--run", "runs/missing"]),
        Case("error/unfinished-run", ["predict", text, "--run", "runs/unfinished"], run="unfinished"),
        Case("error/unfinished-latest", ["predict", text], run="unfinished"),
        Case("error/explain-unfinished", ["explain", text, "--run", "runs/unfinished"], run="unfinished"),
        Case("error/export-unfinished", ["export", "--run", "runs/unfinished"], run="unfinished"),
        Case("error/wordless-text", ["predict", "...", *at], run="han"),
        Case("error/blank-text", ["predict", "   ", *at], run="han"),
        Case("error/wordless-text-keras", ["predict", "...", "--run", "runs/keras"], run="keras"),
        Case("error/explain-wordless", ["explain", "...", *at], run="han"),
        Case("error/wordless-stdin", ["predict", "-", *at], run="han", stdin="...\n\n"),
        Case(
            "error/output-exists",
            ["predict", "--file", "texts.csv", "--output", "out.csv", *at],
            run="han",
            files=("out.csv",),
            setup={"out.csv": "keep me\n"},
        ),
        Case("error/top-k-0", ["predict", text, "--top-k", "0", *at], run="han"),
        Case("error/top-k-0-file", ["predict", "--file", "texts.csv", "--top-k", "0", *at], run="han"),
    ]


def all_cases(ray):
    """Every case, the trainings first."""
    cases = train_cases()
    for run in ("han", "keras", "multi"):
        cases += run_cases(run, ray)
    return cases + error_cases()


# ---------------------------------------------------------------- running


@dataclasses.dataclass
class Side:
    """One checkout: its path, the environment its commands run in and its scratch folder."""

    name: str
    checkout: pathlib.Path
    scratch: pathlib.Path

    def environment(self):
        env = {
            key: value for key, value in os.environ.items() if key not in ("TF_CONFIG", "RAY_ADDRESS", "HIERATTN_DATA")
        }
        env.update(PYTHONPATH=str(self.checkout), PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
        return env

    def check_imports(self):
        """Fails unless `python -m hierattn` on this side imports this checkout's package."""
        code = "import hierattn, pathlib; print(pathlib.Path(hierattn.__file__).resolve())"
        with tempfile.TemporaryDirectory() as empty:  # `-c` puts the working folder first: an empty one, as the cases'
            found = subprocess.run(
                [sys.executable, "-c", code], env=self.environment(), capture_output=True, text=True, cwd=empty
            )
        where = pathlib.Path(found.stdout.strip() or "?")
        if found.returncode or self.checkout.resolve() not in where.parents:
            sys.exit(f"the {self.name} side imports hierattn from {where}, not {self.checkout}: {found.stderr[-500:]}")


def prepare(case, side, fixtures):
    """The case's scratch folder on one side: inputs, the case's run under runs/, its own files."""
    folder = side.scratch / case.name
    folder.mkdir(parents=True)
    files = dict(corpus_files()) if case.name.startswith("train/") else inputs(case.run or "han")
    files.update(case.setup)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    if case.run:
        shutil.copytree(fixtures / case.run, folder / "runs" / case.run)
    return folder


def execute(case, side, folder):
    """Runs the case's command in `folder`; its outcome as text (None: it ran past its timeout) and its seconds."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "hierattn", *case.argv],
        cwd=folder,
        env=side.environment(),
        stdin=subprocess.DEVNULL if case.stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: ray's workers too, ended with it on a timeout
    )
    try:
        finished = wait(process, case.stdin, f"{case.name} ({side.name} side)", case.timeout)
    except BaseException:  # Ctrl-C reaches only this process: its own session would go on without it
        os.killpg(process.pid, signal.SIGKILL)
        raise
    if finished is None:
        return None, time.perf_counter() - start
    stdout, stderr = finished
    parts = [f"exit code {process.returncode}", "--- stdout", decode(stdout), "--- stderr", decode(stderr)]
    for name in case.files:
        parts += [f"--- file {name}", read_output(folder / name)]
    parts += ["--- files in the scratch folder afterwards", *listing(folder)]
    return "\n".join(parts), time.perf_counter() - start


def wait(process, stdin, label, timeout):
    """The process's (stdout, stderr), saying every HEARTBEAT seconds that it still runs; None past `timeout`."""
    data = None if stdin is None else stdin.encode("utf-8")
    start = time.perf_counter()
    while True:
        try:
            return process.communicate(data, timeout=HEARTBEAT)
        except subprocess.TimeoutExpired:
            data = None  # given once: communicate keeps writing it
        elapsed = time.perf_counter() - start
        if elapsed > timeout:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return None
        print(f"           ... {label}: running for {elapsed:.0f} s", flush=True)


def decode(data):
    return data.decode("utf-8", errors="backslashreplace")


def read_output(path):
    """An output file's text (a folder: its parts, concatenated in name order)."""
    if path.is_dir():
        return "\n".join(f"-- part {part.name}\n{read_output(part)}" for part in sorted(path.iterdir()))
    if not path.exists():
        return "(no such file)"
    return decode(path.read_bytes())


def listing(folder):
    """The scratch folder's files after the command (names only)."""
    return sorted(str(path.relative_to(folder)) + ("/" if path.is_dir() else "") for path in folder.rglob("*"))


# ---------------------------------------------------------------- comparing


TQDM_TIMES = re.compile(r"\[(\d+:)?\d+:\d+(<[\d:?]+)?, *[^\]]*\]")
PATTERNS = [
    (re.compile(r"\bin \d+(\.\d+)? ?(s|ms|seconds|min|minutes)\b"), "in <duration>"),
    (re.compile(r"\b\d+(\.\d+)? ?(it|docs?|rows|texts|reviews|documents|s)/(s|it|doc)\b"), "<rate>"),
    (re.compile(r"- \d+(\.\d+)?(s|ms) - \d+(\.\d+)?(s|ms|us)/step"), "- <duration> - <duration>/step"),
    (re.compile(r'"(\w*seconds|\w*per_second)": [^,\n}]+'), r'"\1": <duration>'),
    (re.compile(r'"(created|finished)": "[^"]*"'), r'"\1": <time>'),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?"), "<timestamp>"),
    # tf2onnx writes a different graph (the same nodes, named and ordered differently) at each export of one model
    (re.compile(r'("bundle": \{[^}]*"bytes": )\d+'), r"\1<varies>"),
    (re.compile(r"events\.out\.tfevents\.[^\s/]+"), "events.out.tfevents.<name>"),
    (re.compile(re.escape(tempfile.gettempdir().rstrip("/")) + r"/tmp[\w-]+"), "<tmp>"),
]


def normalise(text, paths):
    """`text` without what legitimately differs between two invocations (`paths`: path -> its stand-in)."""
    for path, name in sorted(paths.items(), key=lambda item: -len(item[0])):
        text = text.replace(path, name)
    text = TQDM_TIMES.sub("[<times>]", final_states(text))
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def final_states(text):
    """Each line redrawn in place (tqdm's bars, with carriage returns): only its final state."""
    lines = []
    for line in text.split("\n"):
        if "\r" in line:
            drawn = [part for part in line.split("\r") if part.strip()]
            line = drawn[-1] if drawn else ""
        lines.append(line)
    return "\n".join(lines)


def side_paths(side, folder):
    """Each of a side's own paths (both as given and resolved) -> the stand-in both sides share."""
    paths = {}
    for path, name in (
        (folder, "<cwd>"),
        (side.scratch.parent, "<work>"),
        (side.checkout, "<checkout>"),
    ):
        for form in {str(path), str(path.resolve())}:
            paths[form] = name
    return paths


def report(name, old, new):
    """Prints the case's verdict; True if the two outcomes are the same."""
    if old == new:
        print(f"same       {name}", flush=True)
        return True
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "old", "new", lineterm="", n=2))
    print(f"DIFFERENT  {name}", flush=True)
    for line in diff[:DIFF_LINES]:
        print(f"    {line}")
    if len(diff) > DIFF_LINES:
        print(f"    ... ({len(diff) - DIFF_LINES} more diff lines)")
    sys.stdout.flush()
    return False


# ---------------------------------------------------------------- main


def make_fixtures(old, fixtures):
    """The runs every case reads, from the old side's trainings: han, keras, multi and unfinished."""
    fixtures.mkdir(parents=True)
    for run in ("han", "multi"):
        trained = old.scratch / "train" / run / "runs" / run
        if not (trained / "run.json").exists():
            sys.exit(f"the old side's training of {run} left no run (see {old.scratch / 'train' / run})")
        shutil.copytree(trained, fixtures / run)
    shutil.copytree(fixtures / "han", fixtures / "keras")
    (fixtures / "keras" / "model.onnx").unlink()
    shutil.copytree(fixtures / "han", fixtures / "unfinished")
    record = json.loads((fixtures / "unfinished" / "run.json").read_text())
    record["status"] = "training"
    (fixtures / "unfinished" / "run.json").write_text(json.dumps(record, indent=2) + "\n")


def run_case(case, sides, fixtures):
    """Runs `case` on both sides and prints its verdict; True if the same (or skipped)."""
    outcomes = []
    for side in sides:
        folder = prepare(case, side, fixtures)
        text, seconds = execute(case, side, folder)
        if text is None and case.skippable:
            print(f"skipped    {case.name}: the {side.name} side ran past {case.timeout} s", flush=True)
            return True
        text = (
            f"ran past its time limit of {case.timeout} s"
            if text is None
            else normalise(text, side_paths(side, folder))
        )
        saved = side.scratch.parent / "reports" / side.name / f"{case.name.replace('/', '.')}.txt"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(text, encoding="utf-8")  # what was compared, kept with --keep
        outcomes.append((text, seconds))
    (old, old_seconds), (new, new_seconds) = outcomes
    return report(f"{case.name}  ({old_seconds:.1f} s / {new_seconds:.1f} s)", old, new)


def ray_available():
    found = subprocess.run([sys.executable, "-c", "import ray"], capture_output=True)
    return found.returncode == 0


def old_checkout(old, temporary):
    """The old side's checkout: a folder as given, or a git ref added as a worktree (returned second, to remove)."""
    if pathlib.Path(old).is_dir():
        return pathlib.Path(old).resolve(), None
    folder = temporary / "old-checkout"
    git = ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(folder), old]
    if subprocess.run(git).returncode:
        sys.exit(f"--old {old!r}: neither a folder nor a git ref of {ROOT}")
    return folder, folder


def compare(args, work):
    """Runs every case on both sides; the names of those that differ."""
    temporary = pathlib.Path(tempfile.mkdtemp(prefix="compare-outputs-"))
    worktree = None
    try:
        checkout, worktree = old_checkout(args.old, temporary)
        sides = [Side("old", checkout, work / "old"), Side("new", pathlib.Path(args.new).resolve(), work / "new")]
        for side in sides:
            side.check_imports()
        print(f"old: {checkout} ({args.old})\nnew: {sides[1].checkout}\nscratch: {work}", flush=True)
        ray = ray_available()
        if not ray:
            print("note: ray does not import: predict --engine ray is not compared", flush=True)
        different = []
        for case in all_cases(ray):
            if case.run and not (work / "fixtures").exists():
                make_fixtures(sides[0], work / "fixtures")
            if not run_case(case, sides, work / "fixtures"):
                different.append(case.name)
        return different
    finally:
        if worktree:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)])
        shutil.rmtree(temporary, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="git ref or checkout folder of the code before")
    parser.add_argument("--new", default=str(ROOT), help="checkout folder of the code after (default: %(default)s)")
    parser.add_argument("--work", help="scratch folder, must not exist (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    parser.add_argument("--list", action="store_true", help="print the cases and exit")
    args = parser.parse_args()
    if args.list:
        for case in all_cases(ray=True):
            stdin = " < (stdin)" if case.stdin is not None else ""
            print(f"{case.name:40} hierattn {' '.join(map(repr_arg, case.argv))}{stdin}")
        return 0
    if not args.old:
        parser.error("--old is required")
    if args.work and os.path.exists(args.work):
        parser.error(f"--work {args.work} exists: name a new folder")
    work = pathlib.Path(args.work).resolve() if args.work else pathlib.Path(tempfile.mkdtemp(prefix="compare-work-"))
    if args.work:
        work.mkdir(parents=True)
    start = time.perf_counter()
    try:
        different = compare(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    minutes, seconds = divmod(round(time.perf_counter() - start), 60)
    verdict = f"{len(different)} case(s) DIFFERENT: {', '.join(different)}" if different else "every case the same"
    print(f"{verdict} ({minutes}:{seconds:02d}){'; kept ' + str(work) if args.keep else ''}", flush=True)
    return 1 if different else 0


def repr_arg(arg):
    return arg if re.fullmatch(r"[\w./=-]+", arg) else repr(arg)


if __name__ == "__main__":
    sys.exit(main())
