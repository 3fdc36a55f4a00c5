"""Document vectors learnt on the labelled and unlabelled texts, as a third part beside a run's two.

Paragraph vectors (gensim's Doc2Vec, PV-DBOW) over each text's words and
word bigrams (as in Mesnil et al. 2014 and Thongtan & Phienthrakul 2019,
with gensim's dot-product objective, not their cosine one), learnt on the
run's fitted training texts and the unlabelled texts; the validation and
test texts get theirs by inference (`infer_vector`), never by training. A
logistic regression on the fitted texts' vectors gives a third part's
logits, added to the n-gram part's at the weight with the smallest
validation log-loss (`unlabeled_study.py`'s LSA does the same). Needs
`unlabeled_study.py --cache` of the same run.

    python benchmarks/unlabeled_docvectors.py imdb RUN --imdb ../shared/datasets/aclImdb_v1.tar.gz --cache CACHE --out dv.json
"""

import argparse
import json
import pathlib
import time

import numpy as np
import unlabeled_study as study

from hierattn.data.encoding import tokenize_corpus
from hierattn.models.loading import load_classifier


def _with_bigrams(words):
    return words + [f"{a}_{b}" for a, b in zip(words, words[1:])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    study.add_data_arguments(parser)
    parser.add_argument("--cache", type=pathlib.Path, required=True)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()

    from gensim.models.doc2vec import Doc2Vec, TaggedDocument
    from sklearn.linear_model import LogisticRegression

    started = time.perf_counter()
    classifier = load_classifier(args.run / "model.keras")
    split, test, unlabeled = study._data(args, list(classifier.label_names))
    texts = {"fit": split.fit_texts, "val": split.val_texts, "test": test.texts, "unl": unlabeled}
    labels = {"fit": np.asarray(split.fit_labels), "val": np.asarray(split.val_labels), "test": test.labels}
    recipe = dict(classifier.ngram_report["recipe"])
    net, _, counts = study._inputs(args, classifier, texts, recipe, started)
    k = classifier.ngram_logits.num_classes
    kept, transform, kernel, bias = study._fit(
        counts["fit"], labels["fit"], np.ones(len(labels["fit"])), recipe, k, np.arange(len(labels["fit"]))
    )
    base = {s: np.asarray(transform(counts[s]) @ kernel) + bias for s in ("val", "test")}
    tokens = {
        name: [
            _with_bigrams([word for sentence in document for word in sentence])
            for document in tokenize_corpus(part, classifier.preprocessor.tokenizer, progress=False)
        ]
        for name, part in texts.items()
    }
    print(f"tokenized in {time.perf_counter() - started:.0f} s", flush=True)
    learnt = tokens["fit"] + tokens["unl"]
    t0 = time.perf_counter()
    model = Doc2Vec(
        [TaggedDocument(words, [i]) for i, words in enumerate(learnt)],
        dm=0,
        vector_size=args.dim,
        window=10,
        negative=5,
        sample=1e-4,
        min_count=2,
        workers=args.workers,
        epochs=args.epochs,
        seed=0,
    )
    train_seconds = time.perf_counter() - t0
    print(f"doc2vec trained in {train_seconds:.0f} s", flush=True)
    t0 = time.perf_counter()
    vectors = {"fit": np.stack([model.dv[i] for i in range(len(tokens["fit"]))])}
    for name in ("val", "test"):
        vectors[name] = np.stack([model.infer_vector(words, epochs=args.epochs) for words in tokens[name]])
    infer_seconds = time.perf_counter() - t0
    print(f"inferred in {infer_seconds:.0f} s", flush=True)
    regression = LogisticRegression(C=1.0, max_iter=2000).fit(vectors["fit"], labels["fit"])
    third = {}
    for name in ("val", "test"):
        z = regression.decision_function(vectors[name])
        third[name] = np.stack([-z / 2, z / 2], 1) if z.ndim == 1 else z
    weight, logits = study.with_third_part(net, base, third, labels)
    result = {
        "base": study._evaluate(net, base, labels),
        "with_document_vectors": study._evaluate(net, logits, labels),
        "weight": weight,
        "alone_val_accuracy": float((third["val"].argmax(1) == labels["val"]).mean()),
        "alone_test_accuracy": float((third["test"].argmax(1) == labels["test"]).mean()),
        "train_seconds": round(train_seconds, 1),
        "infer_seconds": round(infer_seconds, 1),
        "infer_per_text_ms": round(1000 * infer_seconds / (len(tokens["val"]) + len(tokens["test"])), 2),
        "args": {key: str(value) for key, value in vars(args).items()},
    }
    print(json.dumps(result), flush=True)
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
