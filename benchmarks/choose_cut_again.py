"""Chooses a finished run's cascade cut again on its own validation part, then saves and exports it.

For a run whose network and n-gram part were fitted before the cascade changed (its `choose_cut` step, which
also fits the whole combination's temperatures): what `train` at this commit does after the n-gram part's
weights, on the same validation texts (the run's seeded split of its training data, rebuilt from config.json:
`RunData.split`; `calibration_study.run_splits`). The run's model.keras and model.onnx are rewritten; nothing
else of the run changes (its metrics.json keeps what training measured). Runs on IMDB or on tables (their
recorded files), single- or multi-label (whose thresholds then move with their labels' temperatures).

Usage:
    python benchmarks/choose_cut_again.py RUN_DIR
"""

import argparse
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    args = parser.parse_args()

    import numpy as np
    from calibration_study import run_splits

    from hierattn.runs.export import export_run
    from hierattn.runs.run import load_run
    from hierattn.runs.train import save_without_optimizer

    val_texts, val_labels, _, _, names = run_splits(args.run)
    classifier = load_run(args.run).classifier
    if np.ndim(val_labels) == 2:  # a multi-label run's multi-hot rows: each text's label names
        named = [[names[j] for j in np.flatnonzero(row)] for row in val_labels]
    else:
        named = [names[i] for i in val_labels]
    classifier.tune((val_texts, named), verbose=1)  # the whole policy, in one pass (the cut with it)
    save_without_optimizer(classifier, os.path.join(args.run, "model.keras"))
    export_run(args.run)
    print(classifier.cascade_report)


if __name__ == "__main__":
    main()
