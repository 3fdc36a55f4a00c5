"""The devsuite with a share of each training split labelled and the rest given as unlabelled texts.

Writes, for each set, `labelled.csv` (a stratified, seeded share of
`train.csv`, columns `text,label`) and `unlabeled.csv` (the rest, the column
`text` only: its labels held back), and prints the two `train csv` commands
to compare: without and with `--unlabeled`. `test.csv` is only passed on to
the runs, which score it once at the end.

    python benchmarks/semi_devsuite.py --share 0.25 --out /tmp/semi
"""

import argparse
import pathlib
import shlex
import sys

import pandas as pd
from sklearn.model_selection import train_test_split

DEVSUITE = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "devsuite"
SETS = ("trec6", "agnews", "airline_tweets", "20newsgroups")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--share", type=float, default=0.25, help="share of each train.csv kept labelled")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--devsuite", type=pathlib.Path, default=DEVSUITE)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name in args.sets.split(","):
        train = pd.read_csv(args.devsuite / name / "train.csv", keep_default_na=False)
        labelled, held = train_test_split(train, train_size=args.share, stratify=train["label"], random_state=args.seed)
        folder = args.out / name
        folder.mkdir(parents=True, exist_ok=True)
        labelled.to_csv(folder / "labelled.csv", index=False)
        held[["text"]].to_csv(folder / "unlabeled.csv", index=False)
        test = args.devsuite / name / "test.csv"
        base = [sys.executable, "cli.py", "train", "csv", str(folder / "labelled.csv"), "--test", str(test)]
        print(f"# {name}: {len(labelled):,} labelled, {len(held):,} unlabelled")
        print(shlex.join(base + ["--output", str(folder / "without")]))
        print(shlex.join(base + ["--unlabeled", str(folder / "unlabeled.csv"), "--output", str(folder / "with")]))


if __name__ == "__main__":
    main()
