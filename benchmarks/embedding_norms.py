"""How large the embedded documents of saved runs are (L2 norm per document).

Used to size `--adversarial` (the perturbation is a fraction of this norm)
and to see whether a run grew its embeddings. Reads the first N reviews of
IMDB `train/unsup` (never the test split), encodes them as each run does and
prints, per run, the median / 10th / 90th percentile of the L2 norm of the
embedding layer's outputs over each document's unpadded tokens, the standard
deviation of one coordinate, and the median number of tokens.

Usage:
    python benchmarks/embedding_norms.py RUN [RUN ...] [--texts 500]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hierattn.data import load_imdb  # noqa: E402
from hierattn.runs import load_run  # noqa: E402

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "datasets",
                      "aclImdb_v1.tar.gz")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--data", default=SHARED)
    args = parser.parse_args()
    import keras

    texts = load_imdb(args.data, splits=("unsup",), download=False, progress=False)["unsup"].texts[:args.texts]
    for path in args.runs:
        classifier = load_run(path).classifier
        x = classifier.preprocessor(texts)
        embedded = keras.Model(classifier.backbone.input, classifier.backbone.get_layer("embedding").output)
        outputs = np.asarray(embedded.predict(x, verbose=0))
        mask = (x != 0)[..., None]
        norms = np.sqrt(((outputs * mask) ** 2).sum(axis=(1, 2)))
        coordinates = outputs[np.broadcast_to(mask, outputs.shape)]
        print(f"{path}: document norm median {np.median(norms):.1f} (p10 {np.percentile(norms, 10):.1f}, "
              f"p90 {np.percentile(norms, 90):.1f}); coordinate std {coordinates.std():.2f}; "
              f"tokens median {int(np.median(mask.sum(axis=(1, 2))))}")


if __name__ == "__main__":
    main()
