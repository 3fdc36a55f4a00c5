"""What word2vec's checkpoint costs: the time and size of one save of a model as large as IMDB's.

`train_word2vec(..., checkpoint=...)` saves its state after each epoch (a
run's `checkpoints/word2vec.npz`). This builds a word2vec model of
`--words` distinct words at `--dim` dimensions (no training: the arrays are
what is saved) and times `--repeats` saves.

    python benchmarks/word2vec_checkpoint.py --words 120000 --dim 200 --repeats 3
"""

import argparse
import json
import pathlib
import tempfile
import time

from hierattn.models.embeddings import _save_word2vec, _training_key


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=120000)
    parser.add_argument("--dim", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from gensim.models import Word2Vec

    model = Word2Vec(vector_size=args.dim, min_count=1, workers=1, seed=0)
    model.build_vocab([[f"w{i}" for i in range(start, start + 50)] for start in range(0, args.words, 50)])
    key = _training_key(model, 5)
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "word2vec.npz"
        seconds = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            _save_word2vec(model, path, 1, key)
            seconds.append(round(time.perf_counter() - started, 3))
        size = path.stat().st_size
    print(json.dumps({"words": len(model.wv.index_to_key), "dim": args.dim, "save_seconds": seconds, "bytes": size}))


if __name__ == "__main__":
    main()
