"""English unchanged by issue #65 (every language): the same words as before, and the in-run baseline it now chooses.

* words: `Tokenizer().sentences(text)` of this checkout against those of `hierattn/data/text.py` at `--before`
  (a git revision, read with `git show`), text by text, on IMDB's `train/` and every devsuite `train.csv`;
* the in-run baseline (`hierattn.runs.baseline.run_baseline`: the better of word 1-2 grams and character 1-3
  grams + LR on validation) on each devsuite set, with a run's split (`RunData.split(0.1, seed=0)`): which it
  chooses, both validation accuracies, its test scores, and the seconds both fits take.

Usage:
    python benchmarks/english_unchanged.py [--before 0123abc] [--data ../shared/datasets]
        [--output results.json]
"""

import argparse
import importlib.util
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_export_runtime import report  # noqa: E402


def old_tokenizer(revision):
    """`hierattn.data.text.Tokenizer` as it was at `revision`."""
    source = subprocess.run(
        ["git", "show", f"{revision}:hierattn/data/text.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    path = pathlib.Path(tempfile.mkdtemp()) / "text_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("text_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Tokenizer()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="e0630a2", help="the last commit before issue #65")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

    from hierattn.data import load_imdb, load_table
    from hierattn.data.text import Tokenizer
    from hierattn.runs.baseline import run_baseline
    from hierattn.runs.run_context import RunData

    data = pathlib.Path(args.data)
    devsuite = sorted(path.parent.name for path in (data / "devsuite").glob("*/train.csv"))
    new, old = Tokenizer(), old_tokenizer(args.before)
    tables = {name: load_table(data / "devsuite" / name / "train.csv")[0] for name in devsuite}
    corpora = {"imdb": load_imdb(data / "aclImdb_v1.tar.gz", splits=("train",), progress=False)["train"].texts}
    corpora.update({name: table.texts for name, table in tables.items()})
    results = {"before": args.before, "words": {}, "baseline": {}}
    for name, texts in corpora.items():
        differ = [text for text in texts if new.sentences(text) != old.sentences(text)]
        results["words"][name] = {"texts": len(texts), "differ": len(differ), "examples": [t[:200] for t in differ[:3]]}
        print(name, results["words"][name]["texts"], results["words"][name]["differ"], flush=True)
    for name, train in tables.items():
        test, _ = load_table(data / "devsuite" / name / "test.csv", label_map=train.label_map)
        split = RunData(train, name=name).split(0.1, seed=0)
        started = time.perf_counter()
        evaluate = {"validation": (split.val_texts, split.val_labels), "test": (test.texts, test.labels)}
        found = run_baseline(split.fit_texts, split.fit_labels, train.label_map.names, evaluate)
        results["baseline"][name] = {
            "features": found["features"],
            "validation_accuracy": found["candidates"],
            "test": {key: found["test"][key] for key in ("accuracy", "macro_f1")},
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(name, results["baseline"][name], flush=True)
    report(results, args.output)


if __name__ == "__main__":
    main()
