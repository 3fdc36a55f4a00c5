"""How calibrated a run's probabilities are, and what temperatures fitted on its validation part would make them (#53).

For finished single-label runs (IMDB or tables), from each run's bundle on the runtime: its validation part
(the run's seeded split of its training data, rebuilt from config.json) and its test split, each scored
once with the n-gram part alone (its logits `z`) and with the network on every document (the whole
combination's probabilities). The cascade's probabilities follow from them exactly as `Cascade` gives them.
Then, with every temperature fitted on the validation part only:

* `as_is`: the cascade as the run has it (documents the n-gram part decides: `softmax(s z)`, `s` fitted by
  log-loss on every validation document; the others: the whole combination's);
* `two_temperatures`: `s` fitted again on the validation documents the n-gram part decides, and a temperature
  `T` for the whole combination fitted on those the network reads;
* `one_temperature`: one temperature over the cascade's final probabilities;
* `always` / `always_calibrated`: the network on every document, without and with a temperature fitted on every
  validation document.

Each: test ECE (15 bins), log-loss, Brier score, and accuracy at 100/90/80/50% coverage, with the validation
figures beside them; and, as the run has them, the documents the n-gram part decides and those the network
reads, each alone: accuracy, mean confidence, ECE.

Usage:
    python benchmarks/calibration_study.py RUN_DIR [RUN_DIR ...] [--cache DIR] [--output results.json]
"""

import argparse
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_export_runtime import report  # noqa: E402


def run_splits(run_dir):
    """`(validation texts, validation class ids, test texts, test class ids, class names)` of a finished run."""
    from hierattn.data import load_imdb
    from hierattn.data.tables import load_table
    from hierattn.runs.config import load_config
    from hierattn.runs.run_context import RunData

    config = load_config(run_dir)
    if "imdb" in config.data:
        parts = load_imdb(config.data["imdb"]["path"], splits=("train", "test"), download=False, progress=False)
        train, test = parts["train"], parts["test"]
    else:
        options = {key: config.data.get(key) for key in ("text_column", "label_column", "encoding", "label_separator")}
        train, _ = load_table(config.data["train"]["path"], **options)
        test, _ = load_table(config.data["test"]["path"], label_map=train.label_map, **options)
    data = RunData(train, test)
    if config.limit:
        data = data.limited(config.limit, config.seed)
    split = data.split(config.validation_split, config.seed)
    return split.val_texts, split.val_labels, list(data.test.texts), data.test.labels, list(train.label_map.names)


def scored(run_dir, cache):
    """The n-gram logits and the whole combination's probabilities of a run's validation and test texts (cached)."""
    from hierattn import runtime

    path = pathlib.Path(cache) / (pathlib.Path(run_dir).name + ".npz")
    if path.is_file():
        return dict(np.load(path, allow_pickle=True))
    val_texts, val_labels, test_texts, test_labels, names = run_splits(run_dir)
    predictor = runtime.load(pathlib.Path(run_dir) / "model.onnx", network="always")
    order = [names.index(name) for name in predictor.label_names]  # the bundle's columns in the data's class ids
    found = {"names": np.array(predictor.label_names, object)}
    for part, texts, labels in (("val", val_texts, val_labels), ("test", test_texts, test_labels)):
        whole = predictor.encoder.encode(texts, mode="whole", whole_length=predictor._ngram_length)
        found[part + "_z"] = predictor._ngram_logits(whole)
        x = predictor.preprocess(texts)  # the graph's own output: the whole combination before any temperature
        found[part + "_whole"] = predictor._run(predictor._session, x, predictor._output, 32)
        found[part + "_labels"] = np.argsort(order)[np.asarray(labels)]
        print(run_dir, part, len(texts), flush=True)
    found["cut"] = np.array(predictor.metadata["cascade"]["cut"])
    found["b"] = np.array(predictor.metadata["cascade"]["ngram_weight"])
    found["s"] = np.array(predictor.metadata["cascade"]["ngram_scale"])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **found)
    return found


def study(arrays):
    from hierattn.calibration import calibrated, calibration_report, expected_calibration_error, fit_temperature
    from hierattn.decision import Cascade
    from hierattn.tuning import ngram_scale

    def accuracy(labels, probabilities):
        return np.mean(probabilities.argmax(1) == labels)

    def decide(probabilities):
        return np.asarray(probabilities).argmax(1)

    cascade = Cascade(float(arrays["cut"]), float(arrays["b"]), ngram_scale=float(arrays["s"]))
    val_read = cascade.needs_network(arrays["val_z"])
    s_decided = ngram_scale(arrays["val_z"][~val_read], arrays["val_labels"][~val_read]) if (~val_read).any() else 1.0
    t_read = fit_temperature(arrays["val_whole"][val_read], arrays["val_labels"][val_read])
    t_all = fit_temperature(arrays["val_whole"], arrays["val_labels"])

    def variants(part):
        z, whole = arrays[part + "_z"], arrays[part + "_whole"]
        read = cascade.needs_network(z)
        as_is = cascade.predict(z, lambda index: whole[index])
        again = Cascade(cascade.cut, cascade.ngram_weight, ngram_scale=s_decided)
        two = again.predict(z, lambda index: calibrated(whole[index], t_read))
        return {
            "as_is": as_is,
            "two_temperatures": two,
            "always": whole,
            "always_calibrated": calibrated(whole, t_all),
        }, read

    val, _ = variants("val")
    t_final = fit_temperature(val["as_is"], arrays["val_labels"])
    val["one_temperature"] = calibrated(val["as_is"], t_final)
    test, read = variants("test")
    test["one_temperature"] = calibrated(test["as_is"], t_final)
    results = {
        "validation_documents": len(arrays["val_labels"]),
        "test_documents": len(arrays["test_labels"]),
        "test_network_read": round(float(read.mean()), 4),
        "temperatures": {
            "s_as_is": float(arrays["s"]),
            "s_decided": s_decided,
            "t_read": t_read,
            "t_all": t_all,
            "t_final": t_final,
        },
    }
    for part, labels, probabilities, network_read in (
        ("validation", arrays["val_labels"], val["as_is"], val_read),
        ("test", arrays["test_labels"], test["as_is"], read),
    ):  # each kind of document alone, as the run has them: accuracy against mean confidence, and ECE
        results.setdefault("by_kind", {})[part] = {
            kind: {
                "documents": int(chosen.sum()),
                "accuracy": round(float(accuracy(labels[chosen], probabilities[chosen])), 4),
                "mean_confidence": round(float(probabilities[chosen].max(1).mean()), 4),
                "ece": round(
                    expected_calibration_error(probabilities[chosen], labels[chosen], probabilities[chosen].argmax(1)),
                    4,
                ),
            }
            for kind, chosen in (("ngram_decided", ~network_read), ("network_read", network_read))
        }
    for name in ("as_is", "two_temperatures", "one_temperature", "always", "always_calibrated"):
        results[name] = {
            "test": calibration_report(test[name], arrays["test_labels"], decide),
            "validation": calibration_report(val[name], arrays["val_labels"], decide),
        }
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--cache", default="/tmp/calibration_study")
    parser.add_argument("--output")
    args = parser.parse_args()
    results = {}
    for run in args.runs:
        results[run] = study(scored(run, args.cache))
        print(
            {
                run: {
                    k: v["test"]["ece"]
                    for k, v in results[run].items()
                    if isinstance(v, dict) and "ece" in v.get("test", {})
                }
            }
        )
    report(results, args.output)


if __name__ == "__main__":
    main()
