"""Compare sentence splitters on IMDB reviews: speed, and hand-labelled cases.

Candidates: hierattn's own splitter, pysbd, syntok and nltk's punkt (untrained:
the pretrained model would need a download at run time). Libraries that are
not installed are reported as skipped (`pip install pysbd syntok nltk`).

Usage:
    python benchmarks/bench_sentence_splitters.py [--data ../shared/datasets/aclImdb_v1.tar.gz] [--reviews 1000]
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from hierattn.data import clean, load_imdb, sentence_spans  # noqa: E402

# Hand-labelled cases (the ones issue #3 names), shared with tests/test_text.py.
CASES_FILE = os.path.join(os.path.dirname(__file__), "..", "data", "sample", "sentence_cases.jsonl")
with open(CASES_FILE, encoding="utf-8") as _f:
    CASES = [(c["text"], c["sentences"]) for c in map(json.loads, _f)]


def ours(text):
    return [text[a:b] for a, b in sentence_spans(clean(text))]


def splitters():
    found = {"hierattn": ours}
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        found["pysbd"] = lambda t: [s.strip() for s in segmenter.segment(t) if s.strip()]
    except ImportError:
        print("pysbd: not installed, skipped")
    try:
        import syntok.segmenter as syntok

        def split_syntok(text):
            out = []
            for paragraph in syntok.process(text):
                for sentence in paragraph:
                    start = sentence[0].offset
                    end = sentence[-1].offset + len(sentence[-1].value)
                    out.append(text[start:end].strip())
            return out

        found["syntok"] = split_syntok
    except ImportError:
        print("syntok: not installed, skipped")
    try:
        from nltk.tokenize.punkt import PunktSentenceTokenizer

        punkt = PunktSentenceTokenizer()
        found["punkt (untrained)"] = lambda t: [t[a:b] for a, b in punkt.span_tokenize(t)]
    except ImportError:
        print("nltk: not installed, skipped")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--reviews", type=int, default=1000)
    args = parser.parse_args()
    texts = load_imdb(args.data, splits=("train",), download=False, progress=False)["train"].texts[: args.reviews]
    texts = [clean(t) for t in texts]  # same input for all: HTML breaks already turned into line breaks
    print(f"| splitter | ms per review ({len(texts)} IMDB reviews) | est. s for 50,000 | cases right ({len(CASES)}) |")
    print("| --- | --- | --- | --- |")
    for name, split in splitters().items():
        start = time.perf_counter()
        for text in texts:
            split(text)
        per_review = (time.perf_counter() - start) / len(texts) * 1000
        right = sum(split(text) == expected for text, expected in CASES)
        print(f"| {name} | {per_review:.3f} | {per_review * 50:.1f} | {right} |")


if __name__ == "__main__":
    main()
