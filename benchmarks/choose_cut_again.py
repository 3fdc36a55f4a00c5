"""Chooses a finished run's cascade cut again on its own validation part, then saves and exports it.

For a run whose network and n-gram part were fitted before the cascade changed (its `choose_cut` step): what
`train` at this commit does after the n-gram part's weights, on the same validation texts (the run's seeded
split of its training data, rebuilt from config.json: `RunData.split`). The run's model.keras and model.onnx
are rewritten; nothing else of the run changes (its metrics.json keeps what training measured).
IMDB runs only (the run's recorded archive).

Usage:
    python benchmarks/choose_cut_again.py RUN_DIR
"""

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    args = parser.parse_args()

    from hierattn.data import load_imdb
    from hierattn.runs.config import load_config
    from hierattn.runs.export import export_run
    from hierattn.runs.run import load_run
    from hierattn.runs.run_context import RunData
    from hierattn.runs.train import save_without_optimizer

    config = load_config(args.run)
    imdb = load_imdb(config.data["imdb"]["path"], splits=("train",), download=False, progress=False)["train"]
    split = RunData(imdb).split(config.validation_split, config.seed)
    classifier = load_run(args.run).classifier
    classifier.choose_cut((split.val_texts, split.val_labels), verbose=1)
    save_without_optimizer(classifier, os.path.join(args.run, "model.keras"))
    export_run(args.run)
    print(classifier.cascade_report)


if __name__ == "__main__":
    main()
