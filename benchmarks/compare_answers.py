"""The same answers before and after a change (issue 66): every probability, label and explanation, within 1e-6.

    .venv/bin/python benchmarks/compare_answers.py dump --tree /work/base --out /work/bench/compare/base
    .venv/bin/python benchmarks/compare_answers.py dump --tree . --out /work/bench/compare/main
    .venv/bin/python benchmarks/compare_answers.py dump --tree . --load-from /work/bench/compare/base \\
        --out /work/bench/compare/main-load
    .venv/bin/python benchmarks/compare_answers.py compare /work/bench/compare/base /work/bench/compare/main
    .venv/bin/python benchmarks/compare_answers.py compare /work/bench/compare/base /work/bench/compare/main-load
    .venv/bin/python benchmarks/compare_answers.py list

(`benchmarks/compare_outputs.py`, of issue 51, compares the text every command prints, exactly; this compares
the numbers of the Python API, the exported bundle and the command line, within a tolerance.)

`dump` runs each case (`list` names them) in its own process with this interpreter and `PYTHONPATH=<tree>`
(checked: the process must import hierattn from that tree), so one script drives any checkout. Each process
has `PYTHONHASHSEED=0`, `TF_DETERMINISTIC_OPS=1`, `CUDA_VISIBLE_DEVICES=""` and `TF_CPP_MIN_LOG_LEVEL=3`, and
calls `keras.utils.set_random_seed(0)` before it builds anything. A case trains a small classifier (seed 0,
`embeddings="none"`, small layers, Adam at 0.01 so that 2 epochs give the network a weight) through the
Python API (`hierattn.TextClassifier(...).fit(texts, labels, epochs=2, verbose=0, validation_split=0.2 or
validation_data=...)`) or the command line (`cli.py train csv ... --limit 400 --epochs 2`), on a few hundred
texts of /work/shared/datasets (devsuite's agnews, airline_tweets and trec6; Reuters, multi-label; waimai_10k,
Chinese); one case answers from a run saved before instead (/work/bench/dev-trec6, `train csv` of the whole
trec6, whose cut and temperatures 0.9728 / 1.0545 no small training gives: none of the single-label trainings
here keeps a temperature, and only one has a cut). Each writes under `--out/<case>/`:

* `tuned.json`, the decision settings: `decision`, read through attributes (`label_names`, `multi_label`,
  `network`, `thresholds`, `offsets`, `decision_metric`, the weights `(a, b)` from `policy.weights` or
  `combination.mixing`, `ngram_report["recipe"]`, and `cascade`'s cut, `ngram_weight`, `ngram_scale`,
  temperature and thresholds with the network "auto" and "always"), so the same whatever the config's layout;
  `config`, the classifier's `get_config()` without its backbone, preprocessor and n-gram layer (the cascade
  report with its validation scores and calibration notes, `ngram_report`...); the same `decision` of the
  bundle's predictor (`bundle_decision`) and its metadata without vocabulary and preprocessor (`bundle`);
* the answers, as `.npy` (arrays) or `.json`, of held-out texts (the first 60 of the set's test.csv; the
  first 4 for explanations), with the network "auto" and "always": `predict`, `predict_labels` (also with
  `min_confidence=0.9`), `predict_top_k(texts, 3)`, `predict_texts` of edge texts (empty, wordless, one past
  the length limits: NaN rows where no words), `explain(texts).to_json()`; once: each part alone
  (`predict_ids(preprocessor(texts), part=...)`: network, ngrams, whole) and `evaluate(texts, labels,
  return_dict=True)`; of the bundle `clf.export(path)` writes, read by `hierattn.runtime.load(path)`:
  `predict`, `predict_labels`, `predict_top_k`, `predict_texts`, "auto" and "always" (`bundle.*`); of the
  refitted case, the answers after the first fit (`first.*`); of the command-line and saved-run cases,
  `evaluate --output`, `predict --file --top-k 2 --output` (the CSV's cells) and `explain --file --format
  json` of the run, its metrics.json (durations, dates and paths left out) and its model files' SHA-256
  (`run_files`); of a loaded classifier (saved run, `--load-from`), a new export's answers (`reexport.*`);
* `model.keras`, `model.onnx` (or under `run/`), `texts.json` (what the answers are of) and
  `outputs.json` (the list, the seconds, any error with its traceback, the versions). `--out/dump.json`: the
  tree (commit, changed files), each case's exit status and seconds; `--out/<case>.log` its output.

The network setting: `obj.network = "always"` (hierattn 0.5's settable attribute), else
`obj.with_network("always")` (a copy), for the classifier and the bundle's predictor alike.

`dump --load-from REF` trains nothing: each case loads REF's `model.keras` (`hierattn.load_classifier`) and
`model.onnx` (`hierattn.runtime.load`) with `--tree`'s code and writes the same answers of the same texts
(REF's bundle's as `bundle.*`; a new export of the loaded classifier as `reexport.*`, compared with REF's
`bundle.*`); the command-line case runs its commands on a copy of REF's run. Files saved before the change
must answer as before.

`compare A B` compares each output of each case: arrays and JSON values number by number (max |difference|,
PASS within `--tolerance`, default 1e-6; NaN where NaN), everything else (labels, names, flags, shapes, keys)
exactly; an output that failed on both sides with the same error is BOTH-ERROR (not a failure). Then the tuned
numbers (`compare_tuned`): a value that changed, or any change of `decision`, is a difference; keys of the
config or bundle metadata found on one side only, or moved with their value, are layout (listed, not a
failure). It prints a line per output and writes a JSON summary (`--output`, default `B/compare.json`). Exit
status 1 if a case FAILs: an output differs, is missing on one side or failed on one side only, or a tuned
number differs. With `--allow-tuned`, a case whose tuned numbers differ is TUNED, not FAIL, whatever its
outputs (for a change of the validation split: then the tuned numbers are what to report).

Every case, on 2 cores shared with other work (load average 4 to 7): 11.5 minutes for `dump` (20 at a load
of 7.5; 9 CPU-minutes), 10.5 for `dump --load-from` (6 CPU-minutes); `--cases` runs some. Two dumps of
ba875e3 were identical to the last bit, and so was its `dump --load-from` of its own files.
"""

import argparse
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import time
import traceback

import numpy as np

DATA = pathlib.Path("/work/shared/datasets")
TOLERANCE = 1e-6
HELD_OUT = 60  # test texts whose answers are compared
EXPLAINED = 4  # of them, explained
SEED = 0
LEARNING_RATE = 0.01  # ten times the default: in 2 epochs the network learns enough to weigh in the combination
ENVIRONMENT = {
    "PYTHONHASHSEED": "0",
    "TF_DETERMINISTIC_OPS": "1",
    "CUDA_VISIBLE_DEVICES": "",
    "TF_CPP_MIN_LOG_LEVEL": "3",
}
HEAVY_CONFIG = ("backbone", "preprocessor", "ngram_logits", "name", "trainable", "dtype")
HEAVY_METADATA = ("vocabulary", "preprocessor")
RUN_FILES = ("model.keras", "model.onnx", "config.json", "run.json", "metrics.json", "history.csv")

# Small backbones: the answers, not the accuracy, are compared.
HAN = {"embedding_dim": 32, "word_units": 16, "sentence_units": 16, "attention_units": 16}
SMALL = {"embeddings": "none", "seed": SEED}

# Each case: the data (devsuite / multilabel / multilingual set), how many training texts, the validation
# (`split`: validation_split; `data`: that many more texts of train.csv as validation_data; None: none), the
# classifier's arguments, and for "refit" a second fit without validation data.
CASES = {
    "han-airline-cut-macro-f1": {  # 3,500 validation texts: enough for the cascade's bound to allow a cut
        "data": "devsuite/airline_tweets",
        "train": 600,
        "validation": ("data", 3500),
        "classifier": {"backbone": "han", "decision_metric": "macro_f1", **HAN, **SMALL},
    },
    "han-reuters-multilabel": {
        "data": "multilabel/reuters",
        "train": 300,
        "validation": ("split", 0.2),
        "classifier": {"backbone": "han", "multi_label": True, "max_sentences": 8, "max_words": 30, **HAN, **SMALL},
        "label_names": "labels.txt",  # all 90: a validation or test label may be missing from the training part
    },
    "han-reuters-multilabel-temperatures": {  # 1,000 validation texts: some labels keep a temperature
        "data": "multilabel/reuters",
        "train": 400,
        "validation": ("data", 1000),
        "classifier": {"backbone": "han", "multi_label": True, "max_sentences": 8, "max_words": 30, **HAN, **SMALL},
        "label_names": "labels.txt",
    },
    "han-waimai-chinese": {
        "data": "multilingual/waimai_10k",
        "train": 500,
        "validation": ("split", 0.2),
        "classifier": {"backbone": "han", "text_units": "auto", **HAN, **SMALL},
    },
    "transformer-trec6-validation-data": {
        "data": "devsuite/trec6",
        "train": 500,
        "validation": ("data", 200),
        "classifier": {"backbone": "transformer", "embedding_dim": 32, "num_heads": 2, **SMALL},
    },
    "rnn-agnews-network-always": {
        "data": "devsuite/agnews",
        "train": 400,
        "validation": ("split", 0.2),
        "classifier": {"backbone": "rnn", "network": "always", "embedding_dim": 32, **SMALL},
    },
    "han-trec6-no-validation": {
        "data": "devsuite/trec6",
        "train": 400,
        "validation": None,
        "classifier": {"backbone": "han", **HAN, **SMALL},
    },
    "han-airline-no-ngrams-macro-f1": {
        "data": "devsuite/airline_tweets",
        "train": 500,
        "validation": ("split", 0.2),
        "classifier": {"backbone": "han", "ngrams": False, "decision_metric": "macro_f1", **HAN, **SMALL},
    },
    "han-agnews-refit": {  # answers after the first fit (`first.*`); then a fit without validation data keeps them
        "data": "devsuite/agnews",
        "train": 500,
        "validation": ("split", 0.2),
        "classifier": {"backbone": "han", **HAN, **SMALL},
        "refit": 200,
    },
    "cli-trec6-macro-f1": {
        "data": "devsuite/trec6",
        "cli": ["--limit", "400", "--epochs", "2", "--metric", "macro-f1", "--embeddings", "none"]
        + ["--embedding-dim", "32", "--learning-rate", str(LEARNING_RATE), "--no-baseline", "--seed", str(SEED)],
    },
    "saved-run-trec6-cut-temperature": {  # `train csv` of the whole trec6, by the code of 11-29 03:38 (before
        "data": "devsuite/trec6",  # ba875e3): a cut (14% of validation read), temperatures 0.9728 / 1.0545
        "run": "/work/bench/dev-trec6",
    },
}


# ---------------------------------------------------------------- the case, in its own process


def read_table(data, name):
    """A set's train.csv or test.csv: (texts, labels); a multi-label set's labels as lists."""
    import pandas as pd

    frame = pd.read_csv(data / name, keep_default_na=False)
    if "labels" in frame.columns:
        return list(frame["text"]), [value.split("|") if value else [] for value in frame["labels"]]
    return list(frame["text"]), list(frame["label"])


def set_network(model, value):
    """`model` with the network setting `value`: `model.network = value`, else `model.with_network(value)`."""
    try:
        model.network = value
        return model
    except AttributeError:
        if hasattr(model, "with_network"):
            return model.with_network(value)
        raise


class Recorder:
    """Writes each output of a case into its folder and lists it (with any error) in outputs.json."""

    def __init__(self, folder):
        self.folder = folder
        self.outputs = {}

    def save(self, name, compute, *args, **kwargs):
        """Saves `compute(*args, **kwargs)`: an ndarray as `name.npy`, else as `name.json`; an error is recorded."""
        start = time.perf_counter()
        try:
            value = compute(*args, **kwargs)
        except Exception as error:  # recorded: a failure on one side only is a difference
            self.outputs[name] = {"error": f"{type(error).__name__}: {error}", "trace": traceback.format_exc()[-2000:]}
            print(f"    {name}: {type(error).__name__}: {str(error)[:200]}", flush=True)
            return None
        if isinstance(value, np.ndarray):
            np.save(self.folder / f"{name}.npy", value)
            entry = {"file": f"{name}.npy", "shape": list(value.shape), "dtype": str(value.dtype)}
        else:
            (self.folder / f"{name}.json").write_text(json.dumps(plain(value), indent=1, allow_nan=True) + "\n")
            entry = {"file": f"{name}.json"}
        self.outputs[name] = dict(entry, seconds=round(time.perf_counter() - start, 3))
        return value

    def write(self, **extra):
        (self.folder / "outputs.json").write_text(json.dumps({**extra, "outputs": self.outputs}, indent=1) + "\n")


def plain(value):
    """JSON-ready: NumPy scalars and arrays as Python numbers and lists, tuples as lists."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def tuned_numbers(clf, predictor):
    """The decision settings, twice: `decision`, read through attributes both hierattn 0.5 and a refactored tree
    are expected to keep (the same whatever the config's layout), and `config`, the classifier's `get_config()`
    without its backbone, preprocessor and n-gram layer, with the bundle's metadata without its vocabulary."""
    found = {"decision": attempt(decision_numbers, clf, True)}
    found["config"] = attempt(lambda: {k: v for k, v in clf.get_config().items() if k not in HEAVY_CONFIG})
    if predictor is not None:
        found["bundle_decision"] = attempt(decision_numbers, predictor, False)
        found["bundle"] = {key: value for key, value in predictor.metadata.items() if key not in HEAVY_METADATA}
    return found


def attempt(compute, *args):
    """`compute(*args)`, or the error's text (so that one missing attribute hides nothing else)."""
    try:
        return compute(*args)
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}


def decision_numbers(model, weights):
    """What turns a classifier's (or bundle's) part outputs into answers, by attributes: the classes, thresholds,
    offsets, the combination's weights (a, b) (with `weights`: a bundle's `a` is inside its graph), the n-gram
    recipe, and the cascade with the network "auto" and "always" (cut, b, the n-gram part's scale, temperature,
    thresholds)."""
    found = {
        "label_names": list(model.label_names),
        "multi_label": bool(model.multi_label),
        "network": model.network,
        "thresholds": attempt(lambda: plain(model.thresholds)),
        "offsets": attempt(lambda: plain(model.offsets)),
        "decision_metric": getattr(model, "decision_metric", None),
        "recipe": attempt(lambda: (getattr(model, "ngram_report", None) or {}).get("recipe")),
    }
    if weights:
        found["weights"] = attempt(combination_weights, model)
    own = model.network
    for network in ("auto", "always"):
        model = set_network(model, network)
        found[f"cascade_{network}"] = attempt(cascade_numbers, model.cascade)
    set_network(model, own)
    return found


def combination_weights(clf):
    """(a, b) of `softmax(a log p_network + b z)`: `policy.weights`, else `combination.mixing` (None without an
    n-gram part)."""
    policy = getattr(clf, "policy", None)
    if policy is not None and getattr(policy, "weights", None) is not None:
        return [float(w) for w in policy.weights]
    if getattr(clf, "combination", None) is not None:
        return [float(w) for w in np.asarray(clf.combination.mixing)]
    return None


def cascade_numbers(cascade):
    if cascade is None:
        return None
    names = ("cut", "ngram_weight", "ngram_scale", "temperature", "thresholds")
    return {name: plain(getattr(cascade, name, None)) for name in names}


def classifier_outputs(record, clf, texts, labels, edge):
    """The classifier's answers, network "auto" then "always" (its own setting restored after)."""
    own = clf.network
    for network in ("auto", "always"):
        clf = set_network(clf, network)
        at = network
        record.save(f"predict.{at}", clf.predict, texts, verbose=0)
        record.save(f"labels.{at}", clf.predict_labels, texts)
        record.save(f"labels_min_confidence.{at}", clf.predict_labels, texts, min_confidence=0.9)
        record.save(f"top_k.{at}", clf.predict_top_k, texts, 3)
        record.save(f"predict_texts_edge.{at}", clf.predict_texts, edge)
        record.save(f"explain.{at}", explained, clf, texts[:EXPLAINED])
    clf = set_network(clf, own)
    x = clf.preprocessor(texts)
    for part in ("network", "ngrams", "whole"):
        if part == "network" or getattr(clf, "ngram_logits", None) is not None:
            record.save(f"part.{part}", clf.predict_ids, x, part=part)
    record.save("evaluate", clf.evaluate, texts, labels, return_dict=True, verbose=0)
    return clf


def explained(clf, texts):
    """The explanations of `texts`, as `to_json` writes them."""
    return json.loads(clf.explain(texts).to_json())


def bundle_outputs(record, predictor, texts, edge, prefix="bundle"):
    """The bundle's answers (`hierattn.runtime`), network "auto" then "always"."""
    for network in ("auto", "always"):
        predictor = set_network(predictor, network)
        record.save(f"{prefix}.predict.{network}", predictor.predict, texts)
        record.save(f"{prefix}.labels.{network}", predictor.predict_labels, texts)
        record.save(f"{prefix}.top_k.{network}", predictor.predict_top_k, texts, 3)
        record.save(f"{prefix}.predict_texts_edge.{network}", predictor.predict_texts, edge)
    return set_network(predictor, "auto")


def fitted(spec, data, record, texts):
    """A classifier trained as the case says, and the seconds of its fit (a refitted one's first answers recorded)."""
    import keras

    import hierattn

    keras.utils.set_random_seed(SEED)
    train, labels = read_table(data, "train.csv")
    n = spec["train"]
    fit = {"epochs": 2, "verbose": 0}
    kind = (spec["validation"] or (None,))[0]
    if kind == "split":
        fit["validation_split"] = spec["validation"][1]
    elif kind == "data":
        more = spec["validation"][1]
        fit["validation_data"] = (train[n : n + more], labels[n : n + more])
    arguments = dict(spec["classifier"])
    if spec.get("label_names"):
        arguments["label_names"] = sorted((data / spec["label_names"]).read_text(encoding="utf-8").split())
    clf = hierattn.TextClassifier(**arguments)
    clf.compile(optimizer=keras.optimizers.Adam(LEARNING_RATE, clipnorm=1.0))  # 2 epochs: the network gets a weight
    start = time.perf_counter()
    clf.fit(train[:n], labels[:n], **fit)
    if spec.get("refit"):
        record.save("first.tuned", tuned_numbers, clf, None)
        for network in ("auto", "always"):
            clf = set_network(clf, network)
            record.save(f"first.predict.{network}", clf.predict, texts, verbose=0)
            record.save(f"first.labels.{network}", clf.predict_labels, texts)
        clf = set_network(clf, "auto")
        later = slice(len(train) - spec["refit"], len(train))  # other texts, no validation data
        clf.fit(train[later], labels[later], epochs=1, verbose=0)
    return clf, time.perf_counter() - start


def cli(tree, *argv, cwd=None):
    """Runs `python <tree>/cli.py ARGV` (exit status 0 or an error)."""
    found = subprocess.run([sys.executable, str(tree / "cli.py"), *argv], capture_output=True, text=True, cwd=cwd)
    if found.returncode:
        raise RuntimeError(f"cli.py {' '.join(argv[:2])} exited {found.returncode}: {found.stderr[-3000:]}")
    return found.stdout


def cli_outputs(record, tree, run, texts, folder):
    """The command line's answers from `run`: evaluate, predict --file, explain --file, and its metrics.json."""
    import pandas as pd

    table = folder / "texts.csv"
    pd.DataFrame({"text": texts}).to_csv(table, index=False)
    few = folder / "few.csv"
    pd.DataFrame({"text": texts[:EXPLAINED]}).to_csv(few, index=False)

    def evaluate():
        cli(tree, "evaluate", "--run", str(run), "--output", str(folder / "cli-evaluate.json"))
        return without_times(json.loads((folder / "cli-evaluate.json").read_text()), folder)

    def predict():
        output = folder / "cli-predict.csv"
        cli(tree, "predict", "--file", str(table), "--top-k", "2", "--run", str(run), "--output", str(output))
        return csv_cells(output)

    def explain():
        output = folder / "cli-explain.json"
        cli(tree, "explain", "--file", str(few), "--format", "json", "--run", str(run), "--output", str(output))
        return without_times(json.loads(output.read_text()), folder)

    record.save("cli.evaluate", evaluate)
    record.save("cli.predict_file", predict)
    record.save("cli.explain_file", explain)
    record.save("cli.metrics", lambda: without_times(json.loads((run / "metrics.json").read_text()), folder))


def csv_cells(path):
    """A CSV file's rows as lists of cells: numbers where a cell reads as one, else text."""
    import csv

    def cell(text):
        try:
            return float(text)
        except ValueError:
            return text

    with open(path, newline="", encoding="utf-8") as file:
        return [[cell(text) for text in row] for row in csv.reader(file)]


TIMES = ("seconds", "per_second")  # keys holding durations and rates (a substring of the key)
PLACES = ("created", "finished", "started", "date", "time", "path", "run", "run_dir", "file", "data")  # whole keys


def without_times(value, folder):
    """A JSON value without what differs between two runs of the same code: durations, rates, dates; `folder`
    (the case's) written `<case>` in text."""
    if isinstance(value, dict):
        return {
            key: without_times(item, folder)
            for key, item in value.items()
            if key not in PLACES and not any(word in key for word in TIMES)
        }
    if isinstance(value, list):
        return [without_times(item, folder) for item in value]
    if isinstance(value, str):
        return value.replace(str(folder), "<case>")
    return value


def digests(run):
    """The SHA-256 of the run's model files: the same files answered on both sides."""
    import hashlib

    return {name: hashlib.sha256((run / name).read_bytes()).hexdigest() for name in ("model.keras", "model.onnx")}


def versions():
    from importlib import metadata

    names = ("keras", "tensorflow", "numpy", "onnxruntime", "scikit-learn", "tf2onnx", "onnx")
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def case_main(args):
    """One case, in this process: train (or load), then write every output under `args.out`."""
    tree = pathlib.Path(args.tree).resolve()
    import hierattn

    where = pathlib.Path(hierattn.__file__).resolve()
    if tree not in where.parents:
        sys.exit(f"this process imports hierattn from {where}, not from {tree}")
    from hierattn import runtime

    spec, data = CASES[args.case], pathlib.Path(args.data)
    folder = pathlib.Path(args.out)
    folder.mkdir(parents=True)
    record = Recorder(folder)
    test_texts, test_labels = read_table(data / spec["data"], "test.csv")
    texts, labels = test_texts[:HELD_OUT], test_labels[:HELD_OUT]
    joiner = "" if "waimai" in spec["data"] else " "
    edge = ["", "...", joiner.join(test_texts[HELD_OUT : HELD_OUT + 40])]  # empty, wordless, past the limits
    source = pathlib.Path(args.load_from) / args.case if args.load_from else None
    if source is not None:  # the texts the reference answered
        saved = json.loads((source / "texts.json").read_text())
        texts, labels, edge = saved["texts"], saved["labels"], saved["edge"]
    (folder / "texts.json").write_text(json.dumps({"texts": texts, "labels": labels, "edge": edge}, indent=1))
    seconds = {}
    start = time.perf_counter()
    run = None
    if "cli" in spec or "run" in spec:
        run = folder / "run"
        if source is not None:  # the reference's run, copied: the commands of this tree answer from its files
            shutil.copytree(source / "run", run)
        elif "run" in spec:  # a run saved before: its files (not its logs), copied
            run.mkdir()
            for name in RUN_FILES:
                shutil.copy2(pathlib.Path(spec["run"]) / name, run / name)
        else:  # `train` seeds itself (`--seed`)
            train = data / spec["data"]
            files = [str(train / "train.csv"), "--test", str(train / "test.csv")]
            cli(tree, "train", "csv", *files, *spec["cli"], "--output", str(run))
        clf = hierattn.load_classifier(run / "model.keras")
        bundle = run / "model.onnx"
    elif source is not None:
        clf = hierattn.load_classifier(source / "model.keras")
        bundle = source / "model.onnx"
    else:
        clf, seconds["fit"] = fitted(spec, data / spec["data"], record, texts)
        clf.save(folder / "model.keras")
        bundle = folder / "model.onnx"
        clf.export(bundle, verbose=False)
    seconds["train_or_load"] = round(time.perf_counter() - start, 2)
    predictor = runtime.load(bundle)
    record.save("tuned", tuned_numbers, clf, predictor)
    clf = classifier_outputs(record, clf, texts, labels, edge)
    bundle_outputs(record, predictor, texts, edge)
    if source is not None or "run" in spec:  # the loaded classifier exported by this tree
        again = folder / "reexport.onnx"
        clf.export(again, verbose=False)
        bundle_outputs(record, runtime.load(again), texts, edge, prefix="reexport")
    if run is not None:
        cli_outputs(record, tree, run, texts, folder)
        if "run" in spec:  # (a run trained here has new files each time: zip dates, tf2onnx's node names)
            record.save("run_files", digests, run)
    seconds["total"] = round(time.perf_counter() - start, 2)
    record.write(case=args.case, hierattn=str(where), seconds=seconds, loaded_from=args.load_from, versions=versions())
    return 0


# ---------------------------------------------------------------- dump: every case, each in its own process


def tree_state(tree):
    """The tree's commit and whether it has changes (git), as far as git can tell."""

    def git(*argv):
        found = subprocess.run(["git", "-C", str(tree), *argv], capture_output=True, text=True)
        return found.stdout.strip() if found.returncode == 0 else None

    changes = git("status", "--porcelain")
    return {"commit": git("rev-parse", "HEAD"), "changed_files": None if changes is None else len(changes.splitlines())}


def dump(args):
    """Runs each case with `--tree`'s code; writes `--out/<case>/` and `--out/dump.json`."""
    tree, out = pathlib.Path(args.tree).resolve(), pathlib.Path(args.out).resolve()
    names = args.cases.split(",") if args.cases else list(CASES)
    unknown = [name for name in names if name not in CASES]
    if unknown:
        sys.exit(f"unknown case(s) {', '.join(unknown)}; `list` names them")
    if args.load_from and not all((pathlib.Path(args.load_from) / name / "outputs.json").exists() for name in names):
        sys.exit(f"--load-from {args.load_from} lacks a dumped case of {', '.join(names)}")
    out.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key not in ("TF_CONFIG", "HIERATTN_DATA")}
    env.update(ENVIRONMENT, PYTHONPATH=str(tree))
    summary = {
        "tree": str(tree),
        **tree_state(tree),
        "load_from": args.load_from and str(pathlib.Path(args.load_from).resolve()),
        "python": sys.executable,
        "environment": ENVIRONMENT,
        "cases": {},
    }
    if (out / "dump.json").exists():  # a dump of some cases again: the others' entries kept, if of the same tree
        before = json.loads((out / "dump.json").read_text())
        if (before.get("tree"), before.get("load_from")) == (summary["tree"], summary["load_from"]):
            summary["cases"] = {name: case for name, case in before["cases"].items() if name in CASES}
    start = time.perf_counter()
    for name in names:
        folder = out / name
        if folder.exists():
            shutil.rmtree(folder)
        argv = [sys.executable, __file__, "_case", name, "--tree", str(tree), "--out", str(folder)]
        argv += ["--data", args.data]
        if args.load_from:
            argv += ["--load-from", str(pathlib.Path(args.load_from).resolve())]
        print(f"{name} ...", flush=True)
        began = time.perf_counter()
        found = subprocess.run(argv, env=env, cwd=out, capture_output=True, text=True)
        seconds = round(time.perf_counter() - began, 1)
        (out / f"{name}.log").write_text(found.stdout + found.stderr)
        errors = []
        if (folder / "outputs.json").exists():
            outputs = json.loads((folder / "outputs.json").read_text())["outputs"]
            errors = [key for key, entry in outputs.items() if "error" in entry]
        summary["cases"][name] = {"exit": found.returncode, "seconds": seconds, "errors": errors}
        print(f"{name}: exit {found.returncode}, {seconds} s, {len(errors)} output error(s) {errors or ''}", flush=True)
        if found.returncode:
            print(found.stderr[-2000:], flush=True)
    summary["seconds"] = round(time.perf_counter() - start, 1)  # of this invocation's cases
    (out / "dump.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"dumped {len(names)} case(s) in {summary['seconds']} s into {out}")
    return int(any(case["exit"] for case in summary["cases"].values()))


# ---------------------------------------------------------------- compare


def leaves(value, path=""):
    """A JSON value as {path: leaf}; a list's or dict's own length and keys are leaves too."""
    found = {}
    if isinstance(value, dict):
        found[f"{path}{{}}"] = sorted(value)
        for key, item in value.items():
            found.update(leaves(item, f"{path}.{key}" if path else str(key)))
    elif isinstance(value, list):
        found[f"{path}[]"] = len(value)
        for index, item in enumerate(value):
            found.update(leaves(item, f"{path}[{index}]"))
    else:
        found[path] = value
    return found


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def leaf_difference(a, b):
    """|a - b| for two numbers (0 for two NaN, inf for NaN against a number), else 0 if equal and None if not."""
    if is_number(a) and is_number(b):
        if math.isnan(a) or math.isnan(b):
            return 0.0 if math.isnan(a) and math.isnan(b) else math.inf
        if math.isinf(a) or math.isinf(b):
            return 0.0 if a == b else math.inf
        return abs(a - b)
    return 0.0 if a == b and type(a) is type(b) else None


def compare_json(a, b, tolerance):
    """(max |difference| of the numbers, list of problems) of two JSON values."""
    left, right = leaves(a), leaves(b)
    problems, largest = [], 0.0
    for path in sorted(set(left) | set(right)):
        if path not in left or path not in right:
            problems.append(f"{path}: only in {'A' if path in left else 'B'}")
            continue
        difference = leaf_difference(left[path], right[path])
        if difference is None:
            problems.append(f"{path}: {short(left[path])} != {short(right[path])}")
        else:
            largest = max(largest, difference)
            if difference > tolerance:
                problems.append(f"{path}: {short(left[path])} vs {short(right[path])} (|diff| {difference:.3g})")
    return largest, problems


def compare_arrays(a, b, tolerance):
    """(max |difference|, problems) of two arrays: shapes and NaN positions exactly, numbers within `tolerance`."""
    if a.shape != b.shape:
        return math.inf, [f"shape {a.shape} != {b.shape}"]
    a, b = a.astype(np.float64), b.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    problems = [] if (nan_a == nan_b).all() else [f"NaN at {int((nan_a != nan_b).sum())} place(s) of one side only"]
    both = ~(nan_a | nan_b)
    largest = float(np.abs(a[both] - b[both]).max()) if both.any() else 0.0
    if largest > tolerance:
        where = np.unravel_index(np.argmax(np.where(both, np.abs(a - b), -1.0)), a.shape)
        problems.append(
            f"max |diff| {largest:.3g} at {tuple(int(i) for i in where)}: {float(a[where])!r} vs {float(b[where])!r}"
        )
    return largest, problems


def short(value, width=80):
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def load_output(folder, entry):
    path = folder / entry["file"]
    return np.load(path) if path.suffix == ".npy" else json.loads(path.read_text())


ALIASES = {"reexport.": "bundle."}  # a loading dump's new export, compared with the reference's bundle
TRAINING_ONLY = ("first.",)  # outputs a loading dump cannot have (before a refit)


def compare_case(a_folder, b_folder, tolerance):
    """Each output of one case on both sides: `{name: {max_diff, verdict, problems}}`, and the tuned numbers'
    `{name: {"differences": [...], "layout": [...]}}` (`compare_tuned`)."""
    a_outputs = json.loads((a_folder / "outputs.json").read_text())["outputs"]
    b_record = json.loads((b_folder / "outputs.json").read_text())
    b_outputs = b_record["outputs"]
    rows, tuned = {}, {}
    for name in sorted(set(a_outputs) | set(b_outputs)):
        if b_record.get("loaded_from") and name.startswith(TRAINING_ONLY):
            continue
        a_name = name
        for alias, target in ALIASES.items():
            if name.startswith(alias) and name not in a_outputs:
                a_name = target + name[len(alias) :]
        a_entry, b_entry = a_outputs.get(a_name), b_outputs.get(name)
        if a_entry is None or b_entry is None:
            rows[name] = {"verdict": "MISSING", "problems": [f"only in {'B' if a_entry is None else 'A'}"]}
            continue
        if "error" in a_entry or "error" in b_entry:
            same = a_entry.get("error") == b_entry.get("error")
            errors = [f"A: {a_entry.get('error', 'ok')}", f"B: {b_entry.get('error', 'ok')}"]
            rows[name] = {"verdict": "BOTH-ERROR" if same else "FAIL", "problems": errors}
            continue
        a_value, b_value = load_output(a_folder, a_entry), load_output(b_folder, b_entry)
        if name == "tuned" or name.endswith(".tuned"):
            tuned[name] = compare_tuned(a_value, b_value)
            continue
        if isinstance(a_value, np.ndarray) and isinstance(b_value, np.ndarray):
            largest, problems = compare_arrays(a_value, b_value, tolerance)
        elif isinstance(a_value, np.ndarray) or isinstance(b_value, np.ndarray):
            largest, problems = math.inf, ["an array on one side only"]
        else:
            largest, problems = compare_json(a_value, b_value, tolerance)
        rows[name] = {"max_diff": largest, "verdict": "FAIL" if problems else "PASS", "problems": problems}
    return rows, tuned


STRICT = ("decision", "bundle_decision")  # tuned.json's parts read by attributes: any change of shape is a difference


def compare_tuned(a, b):
    """The tuned numbers' `{"differences": [...], "layout": [...]}`.

    A difference is a value that changed (at the same path, or moved: a leaf found under another path on the
    other side, matched by its last key where that name is unique among each side's unmatched leaves), or any
    leaf of `decision` / `bundle_decision` on one side only. Layout: the config's and the bundle metadata's
    leaves on one side only, and values moved unchanged (a config arranged otherwise).
    """
    left, right = leaves(a), leaves(b)
    differences, layout = [], []
    for path in sorted(set(left) & set(right)):
        difference = leaf_difference(left[path], right[path])
        if difference is None or difference > 0:
            (layout if path.endswith("{}") else differences).append(
                f"{path}: {short(left[path])} -> {short(right[path])}"
            )
    only_a, only_b = sorted(set(left) - set(right)), sorted(set(right) - set(left))
    for path in [*only_a, *only_b]:
        if path.startswith(STRICT):
            side = "A" if path in left else "B"
            differences.append(f"{path}: only in {side} ({short(left.get(path, right.get(path)))})")
    only_a = [path for path in only_a if not path.startswith(STRICT)]
    only_b = [path for path in only_b if not path.startswith(STRICT)]

    def by_last_key(paths):
        names = {}
        for path in paths:
            names.setdefault(path.rsplit(".", 1)[-1], []).append(path)
        return {name: found[0] for name, found in names.items() if len(found) == 1}

    moved_a, moved_b = by_last_key(only_a), by_last_key(only_b)
    for name in sorted(set(moved_a) & set(moved_b)):
        a_path, b_path = moved_a[name], moved_b[name]
        difference = leaf_difference(left[a_path], right[b_path])
        if difference is not None and difference == 0:
            layout.append(f"moved {a_path} -> {b_path}")
        else:
            differences.append(f"moved {a_path} -> {b_path}: {short(left[a_path])} -> {short(right[b_path])}")
        only_a.remove(a_path)
        only_b.remove(b_path)
    layout += [f"{path}: only in A ({short(left[path])})" for path in only_a]
    layout += [f"{path}: only in B ({short(right[path])})" for path in only_b]
    return {"differences": differences, "layout": layout}


def compare(args):
    """Compares two dumps; prints a line per output and writes the JSON summary."""
    a, b = pathlib.Path(args.a).resolve(), pathlib.Path(args.b).resolve()
    dumped = json.loads((b / "dump.json").read_text())["cases"] if (b / "dump.json").exists() else {}
    names = sorted(set(dumped) or {p.parent.name for p in [*a.glob("*/outputs.json"), *b.glob("*/outputs.json")]})
    summary = {"a": str(a), "b": str(b), "tolerance": args.tolerance, "allow_tuned": args.allow_tuned, "cases": {}}
    summary["not_dumped_in_b"] = sorted({p.parent.name for p in a.glob("*/outputs.json")} - set(names))
    failures = []
    for name in names:
        missing = [side for side, root in (("A", a), ("B", b)) if not (root / name / "outputs.json").exists()]
        if missing:  # B's: the case failed before its end (see B/<case>.log)
            print(f"\n{name}: MISSING in {' and '.join(missing)}")
            failures.append(name)
            summary["cases"][name] = {"verdict": "MISSING"}
            continue
        rows, tuned = compare_case(a / name, b / name, args.tolerance)
        failed = [output for output, row in rows.items() if row["verdict"] in ("FAIL", "MISSING")]
        retuned = any(found["differences"] for found in tuned.values())
        if "tuned" not in tuned:  # missing, or failed on a side: listed with the outputs
            verdict = "FAIL"
        elif not failed and not retuned:
            verdict = "PASS"
        else:
            verdict = "TUNED" if args.allow_tuned and retuned else "FAIL"
        print(f"\n{name}: {verdict}")
        for output, row in rows.items():
            largest = row.get("max_diff")
            print(f"  {row['verdict']:10} {'' if largest is None else f'{largest:.3g}':>10}  {output}")
            for problem in row["problems"][:5]:
                print(f"               {problem}")
            if len(row["problems"]) > 5:
                print(f"               ... {len(row['problems']) - 5} more")
        for output, found in sorted(tuned.items()):
            differences, layout = found["differences"], found["layout"]
            print(f"  {output}: {len(differences) or 'no'} difference(s) of tuned numbers, {len(layout)} of layout")
            for line in differences[:40] + [f"(layout) {line}" for line in layout[:10]]:
                print(f"    {line}")
        if "tuned" not in tuned:
            print("  tuned numbers: not compared (missing or failed on a side)")
        if verdict != "PASS":
            failures.append(name)
        largest = max((row.get("max_diff", 0.0) for row in rows.values()), default=0.0)
        summary["cases"][name] = {"verdict": verdict, "max_diff": largest, "outputs": rows, "tuned": tuned}
    failed = [name for name in failures if summary["cases"][name]["verdict"] != "TUNED"]
    summary["failures"], summary["tuned"] = failed, [name for name in failures if name not in failed]
    summary["max_diff"] = max((case.get("max_diff", 0.0) for case in summary["cases"].values()), default=0.0)
    output = pathlib.Path(args.output) if args.output else b / "compare.json"
    output.write_text(json.dumps(summary, indent=1, default=str) + "\n")
    verdict = f"{len(failed)} case(s) FAIL: {', '.join(failed)}" if failed else f"every case of {len(names)} PASS"
    if summary["not_dumped_in_b"]:
        verdict += f"; not dumped in B: {', '.join(summary['not_dumped_in_b'])}"
    if summary["tuned"]:
        verdict += f"; {len(summary['tuned'])} with other tuned numbers (--allow-tuned): {', '.join(summary['tuned'])}"
    print(f"\n{verdict}; largest |difference| {summary['max_diff']:.3g}; summary: {output}")
    return 1 if failed else 0


# ---------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("dump", help="run the cases with a tree's code and write their outputs")
    run.add_argument("--tree", required=True, help="checkout whose hierattn runs (PYTHONPATH)")
    run.add_argument("--out", required=True, help="folder of the outputs (a case's folder is replaced)")
    run.add_argument("--load-from", help="a dump whose saved files to load instead of training")
    run.add_argument("--cases", help="comma-separated names (default: every case)")
    run.add_argument("--data", default=str(DATA), help="the shared datasets folder (default: %(default)s)")
    check = commands.add_parser("compare", help="compare two dumps")
    check.add_argument("a", help="the reference dump")
    check.add_argument("b", help="the dump to check")
    check.add_argument("--tolerance", type=float, default=TOLERANCE, help="largest |difference| (default: %(default)s)")
    check.add_argument("--allow-tuned", action="store_true", help="a case whose tuned numbers differ does not fail")
    check.add_argument("--output", help="the JSON summary (default: B/compare.json)")
    commands.add_parser("list", help="print the cases")
    case = commands.add_parser("_case", help="(what dump runs) one case, in this process")
    case.add_argument("case")
    case.add_argument("--tree", required=True)
    case.add_argument("--out", required=True)
    case.add_argument("--data", required=True)
    case.add_argument("--load-from")
    args = parser.parse_args()
    if args.command == "list":
        for name, spec in CASES.items():
            print(f"{name:36} {json.dumps(spec)}")
        return 0
    return {"dump": dump, "compare": compare, "_case": case_main}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
