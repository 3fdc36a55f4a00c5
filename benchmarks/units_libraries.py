"""Two subword libraries for learning units from a user's own texts (issue #65, "Every language").

Compares `sentencepiece` (Unigram) and Hugging Face `tokenizers` (Unigram model, Metaspace pre-tokenizer) for
learning a subword vocabulary from the training texts of any language. For each library it measures:

1. training time of a vocabulary of 8,000 units (also 4,000 and 16,000 on waimai) on the training part;
2. tokenizing speed (documents and characters per second, one thread, best of `--repeats`) over all validation
   texts, with character offsets into the normalised text: sentencepiece `encode(list, out_type="offset_mapping")`
   and per-text `encode`; tokenizers `encode_batch` and per-text `encode` (ids and `Encoding.offsets`);
   also whether the offsets tile each text exactly (spans in order, no gaps, no overlaps);
3. size of the serialized model (`serialized_model_proto()`, `to_str()`), raw and gzipped;
4. install size of each library and the closure of its required dependencies (from the installed RECORD files),
   and the part of it that hierattn's own dependencies do not already bring;
5. validation accuracy and macro-F1 of TF-IDF (sublinear tf, min_df=2, unit 1-3 grams) + LogisticRegression
   (C in 3, 10, 30, max_iter 2000; C chosen by validation log-loss) on each library's units, and as references on
   single characters (every non-space character a unit), scikit-learn word tokens (default token pattern, 1-3
   grams) and scikit-learn `analyzer="char", ngram_range=(1, 3)`;
6. determinism: the validation texts encoded by two models loaded from the serialized bytes are identical (ids
   and offsets) to the trained model's; and retraining (8,000 units, waimai): the same serialized bytes, the same
   set of units, and the share of validation texts split into the same pieces.

Both libraries see the same text: NFKC-normalised, case-folded, runs of whitespace collapsed to one space and
stripped (done here, before either library). Everything runs on one thread (`num_threads=1` for sentencepiece;
`RAYON_NUM_THREADS=1` and `TOKENIZERS_PARALLELISM=false` for tokenizers).

Data: waimai_10k (Chinese food-delivery reviews, `train.csv` only, never `test.csv`) and, for English, 5,000
texts of devsuite `airline_tweets/train.csv` (a stratified sample); each split 80/20 stratified with
`train_test_split(random_state=0)`.

Usage:
    .venv/bin/python benchmarks/units_libraries.py \\
        --waimai /work/shared/datasets/multilingual/waimai_10k/train.csv \\
        --english /work/shared/datasets/devsuite/airline_tweets/train.csv \\
        --output /work/bench/lang/units_libraries.json
"""

import os

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import gzip  # noqa: E402
import importlib.metadata as metadata  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import unicodedata  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import sentencepiece as spm  # noqa: E402
import sklearn  # noqa: E402
import tokenizers  # noqa: E402
from packaging.requirements import Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import accuracy_score, f1_score, log_loss  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

SEED = 0
SHARED = pathlib.Path("/work/shared/datasets")
CS = (3, 10, 30)
UNK = "<unk>"


def normalise(text):
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip()


def load(path, sample=None):
    frame = pd.read_csv(path, keep_default_na=False)
    texts = [normalise(t) for t in frame["text"].astype(str)]
    labels = frame["label"].astype(str).tolist()
    if sample is not None and sample < len(texts):
        texts, _, labels, _ = train_test_split(texts, labels, train_size=sample, stratify=labels, random_state=SEED)
    return train_test_split(texts, labels, test_size=0.2, stratify=labels, random_state=SEED)


# ---------------------------------------------------------------- the two libraries


def train_sentencepiece(texts, vocab_size):
    spm.set_random_generator_seed(SEED)
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=buffer,
        model_type="unigram",
        vocab_size=vocab_size,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,  # done in normalise(); offsets then index the text as given
        character_coverage=0.9995,
        byte_fallback=False,
        hard_vocab_limit=False,
        max_sentencepiece_length=16,
        shrinking_factor=0.75,
        num_sub_iterations=2,
        input_sentence_size=0,
        num_threads=1,
        minloglevel=2,
    )
    return buffer.getvalue()


def load_sentencepiece(blob):
    return spm.SentencePieceProcessor(model_proto=blob, num_threads=1)


def new_hf():
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    return tokenizer


def train_tokenizers(texts, vocab_size):
    tokenizer = new_hf()
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size,
        special_tokens=[UNK],
        unk_token=UNK,
        max_piece_length=16,
        shrinking_factor=0.75,
        n_sub_iterations=2,
        show_progress=False,
    )
    tokenizer.train_from_iterator(iter(texts), trainer=trainer, length=len(texts))
    return tokenizer.to_str().encode("utf-8")


def load_tokenizers(blob):
    return Tokenizer.from_str(blob.decode("utf-8"))


def sp_encode_batch(model, texts):
    out = model.encode(texts, out_type="offset_mapping", num_threads=1)
    return [(d["ids"], d["offsets"], d["pieces"]) for d in out]


def sp_encode_each(model, texts):
    out = []
    for t in texts:
        d = model.encode(t, out_type="offset_mapping")
        out.append((d["ids"], d["offsets"], d["pieces"]))
    return out


def hf_encode_batch(model, texts):
    return [(e.ids, e.offsets, e.tokens) for e in model.encode_batch(texts, add_special_tokens=False)]


def hf_encode_each(model, texts):
    out = []
    for t in texts:
        e = model.encode(t, add_special_tokens=False)
        out.append((e.ids, e.offsets, e.tokens))
    return out


LIBRARIES = {
    "sentencepiece": {
        "train": train_sentencepiece,
        "load": load_sentencepiece,
        "batch": sp_encode_batch,
        "each": sp_encode_each,
        "unk_id": lambda m: m.unk_id(),
        "vocab": lambda m: m.get_piece_size(),
        "ids_only": lambda m, texts: m.encode(texts, num_threads=1),
        "units": lambda m: [m.id_to_piece(i) for i in range(m.get_piece_size())],
    },
    "tokenizers": {
        "train": train_tokenizers,
        "load": load_tokenizers,
        "batch": hf_encode_batch,
        "each": hf_encode_each,
        "unk_id": lambda m: m.token_to_id(UNK),
        "vocab": lambda m: m.get_vocab_size(),
        "ids_only": lambda m, texts: [e.ids for e in m.encode_batch_fast(texts, add_special_tokens=False)],
        "units": lambda m: list(m.get_vocab()),
    },
}


def best_time(function, repeats, *args):
    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args)
        times.append(time.perf_counter() - start)
    return min(times), result


def offsets_tile(texts, encoded, skip_prefix_marker=False):
    """Share of texts whose non-empty spans are in order, contiguous and cover the text exactly.

    With skip_prefix_marker, a token that is only the word-start marker "▁" and whose span overlaps the next
    token's (tokenizers gives the marker it prepends to a text the span (0, 1) of the first character) is left out.
    """
    good = 0
    for text, (_, offsets, pieces) in zip(texts, encoded):
        position = 0
        ok = True
        for k, ((start, end), piece) in enumerate(zip(offsets, pieces)):
            if start == end:
                continue
            if skip_prefix_marker and piece == "▁" and k + 1 < len(offsets) and offsets[k + 1][0] < end:
                continue
            if start != position or end > len(text):
                ok = False
                break
            position = end
        good += ok and position == len(text)
    return good / len(texts)


# ---------------------------------------------------------------- accuracy


def classify(train_docs, y_train, val_docs, y_val, **vectorizer):
    features = TfidfVectorizer(sublinear_tf=True, min_df=2, dtype=np.float32, **vectorizer)
    x_train = features.fit_transform(train_docs)
    x_val = features.transform(val_docs)
    best = None
    per_c = {}
    for c in CS:
        model = LogisticRegression(C=c, max_iter=2000).fit(x_train, y_train)
        proba = model.predict_proba(x_val)
        loss = log_loss(y_val, proba, labels=model.classes_)
        predicted = model.classes_[proba.argmax(1)]
        scores = {
            "log_loss": round(float(loss), 4),
            "accuracy": round(float(accuracy_score(y_val, predicted)), 4),
            "macro_f1": round(float(f1_score(y_val, predicted, average="macro")), 4),
        }
        per_c[str(c)] = scores
        if best is None or loss < best[1]["log_loss"]:
            best = (c, scores)
    return {"best_C": best[0], **best[1], "features": int(x_train.shape[1]), "per_C": per_c}


def units_docs(encoded):
    return [list(pieces) for _, _, pieces in encoded]


def identity(doc):
    return doc


def unit_ngram_options():
    return {
        "analyzer": "word",
        "tokenizer": identity,
        "preprocessor": identity,
        "lowercase": False,
        "token_pattern": None,
        "ngram_range": (1, 3),
    }


# ---------------------------------------------------------------- install size


def dist_size(name):
    dist = metadata.distribution(name)
    total = 0
    for file in dist.files or []:
        if file.size is not None:
            total += file.size
        else:
            path = file.locate()
            if path.is_file():
                total += path.stat().st_size
    return dist.metadata["Name"], dist.version, total


def closure(name):
    seen = {}
    stack = [canonicalize_name(name)]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        try:
            requires = metadata.requires(current) or []
        except metadata.PackageNotFoundError:
            seen[current] = None
            continue
        seen[current] = requires
        for text in requires:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            stack.append(canonicalize_name(requirement.name))
    return seen


def install_sizes():
    try:
        already = set(closure("hierattn"))
    except metadata.PackageNotFoundError:
        already = set()
    result = {}
    for library in ("sentencepiece", "tokenizers"):
        packages = {}
        for name in sorted(closure(library)):
            try:
                display, version, size = dist_size(name)
            except metadata.PackageNotFoundError:
                packages[name] = {"installed": False}
                continue
            packages[name] = {"name": display, "version": version, "bytes": size, "in_hierattn_deps": name in already}
        own = packages[canonicalize_name(library)]["bytes"]
        total = sum(p.get("bytes", 0) for p in packages.values())
        new = sum(p.get("bytes", 0) for p in packages.values() if not p.get("in_hierattn_deps"))
        result[library] = {"own_bytes": own, "closure_bytes": total, "new_to_hierattn_bytes": new, "packages": packages}
    return result


# ---------------------------------------------------------------- one data set


def run_set(name, split, sizes, repeats, check_retrain):
    x_train, x_val, y_train, y_val = split
    val_chars = sum(len(t) for t in x_val)
    print(
        f"\n== {name}: {len(x_train)} train / {len(x_val)} validation texts, {val_chars} validation characters",
        flush=True,
    )
    out = {"train_texts": len(x_train), "validation_texts": len(x_val), "validation_chars": val_chars, "libraries": {}}
    out["train_label_counts"] = pd.Series(y_train).value_counts().to_dict()
    references = {
        "single_characters": classify(
            [[c for c in t if not c.isspace()] for t in x_train],
            y_train,
            [[c for c in t if not c.isspace()] for t in x_val],
            y_val,
            **unit_ngram_options(),
        ),
        "sklearn_words_1_3": classify(x_train, y_train, x_val, y_val, lowercase=False, ngram_range=(1, 3)),
        "sklearn_char_1_3": classify(
            x_train, y_train, x_val, y_val, lowercase=False, analyzer="char", ngram_range=(1, 3)
        ),
    }
    out["references"] = references
    for ref, scores in references.items():
        print(
            f"  {ref:24s} acc {scores['accuracy']:.4f} F1 {scores['macro_f1']:.4f} (C={scores['best_C']})", flush=True
        )
    for library, api in LIBRARIES.items():
        per_size = {}
        for size in sizes:
            start = time.perf_counter()
            blob = api["train"](x_train, size)
            train_s = time.perf_counter() - start
            model = api["load"](blob)
            row = {
                "train_seconds": round(train_s, 3),
                "vocab_size": api["vocab"](model),
                "model_bytes": len(blob),
                "model_gzip_bytes": len(gzip.compress(blob, compresslevel=9, mtime=0)),
            }
            batch_s, encoded = best_time(api["batch"], repeats, model, x_val)
            each_s, encoded_each = best_time(api["each"], repeats, model, x_val)
            ids_s, _ = best_time(api["ids_only"], repeats, model, x_val)
            unk = api["unk_id"](model)
            tokens = sum(len(ids) for ids, _, _ in encoded)
            row.update(
                {
                    "batch_docs_per_s": round(len(x_val) / batch_s),
                    "batch_chars_per_s": round(val_chars / batch_s),
                    "each_docs_per_s": round(len(x_val) / each_s),
                    "ids_only_batch_docs_per_s": round(len(x_val) / ids_s),
                    "tokens_per_doc": round(tokens / len(x_val), 2),
                    "chars_per_token": round(val_chars / tokens, 3),
                    "unk_token_share": round(sum(i == unk for ids, _, _ in encoded for i in ids) / tokens, 5),
                    "batch_equals_each": [e[:2] for e in encoded] == [e[:2] for e in encoded_each],
                    "offsets_tile_text_share": offsets_tile(x_val, encoded),
                    "offsets_tile_text_share_without_prefix_marker": offsets_tile(x_val, encoded, True),
                }
            )
            reference = [e[:2] for e in encoded]
            row["identical_after_two_reloads"] = all(
                [e[:2] for e in api["batch"](api["load"](blob), x_val)] == reference for _ in range(2)
            )
            if check_retrain and size == 8000:
                start = time.perf_counter()
                again = api["train"](x_train, size)
                row["retrain_seconds"] = round(time.perf_counter() - start, 3)
                row["retrain_same_model_bytes"] = again == blob
                retrained = api["batch"](api["load"](again), x_val)
                row["retrain_same_units"] = sorted(api["units"](api["load"](again))) == sorted(api["units"](model))
                row["retrain_same_validation_tokens_share"] = round(
                    sum(a[2] == b[2] for a, b in zip(encoded, retrained)) / len(x_val), 5
                )
            row["accuracy"] = classify(
                units_docs(api["batch"](model, x_train)), y_train, units_docs(encoded), y_val, **unit_ngram_options()
            )
            per_size[str(size)] = row
            print(
                f"  {library:13s} {size:>6d}: train {train_s:6.2f}s vocab {row['vocab_size']:>6d} "
                f"batch {row['batch_docs_per_s']:>7d} doc/s each {row['each_docs_per_s']:>7d} doc/s "
                f"model {row['model_bytes']:>8d} B (gz {row['model_gzip_bytes']:>7d}) "
                f"tiles {row['offsets_tile_text_share']:.3f}/{row['offsets_tile_text_share_without_prefix_marker']:.3f} unk {row['unk_token_share']:.4f} "
                f"acc {row['accuracy']['accuracy']:.4f} F1 {row['accuracy']['macro_f1']:.4f} (C={row['accuracy']['best_C']})",
                flush=True,
            )
        out["libraries"][library] = per_size
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waimai", default=str(SHARED / "multilingual" / "waimai_10k" / "train.csv"))
    parser.add_argument("--english", default=str(SHARED / "devsuite" / "airline_tweets" / "train.csv"))
    parser.add_argument("--english-sample", type=int, default=5000)
    parser.add_argument("--output", default="/work/bench/lang/units_libraries.json")
    parser.add_argument("--repeats", type=int, default=9, help="timing repeats; the best is kept")
    args = parser.parse_args()
    for path in (args.waimai, args.english):
        if pathlib.Path(path).name != "train.csv":
            parser.error(f"only train.csv files are read: {path}")

    started = time.perf_counter()
    results = {
        "command": "python benchmarks/units_libraries.py "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()),
        "seed": SEED,
        "versions": {
            "python": platform.python_version(),
            "sentencepiece": spm.__version__,
            "tokenizers": tokenizers.__version__,
            "scikit-learn": sklearn.__version__,
        },
        "cpu_count": os.cpu_count(),
        "threads": 1,
        "normalisation": "NFKC, casefold, whitespace runs -> one space, strip (before both libraries)",
        "offsets": {
            "sentencepiece": "encode(..., out_type='offset_mapping') returns ids, pieces and (start, end) offsets in characters "
            "of the str given (bytes if bytes are given); out_type='proto' gives begin/end in UTF-8 bytes (and needs protobuf); "
            "'immutable_proto' raises in 0.2.3",
            "tokenizers": "Encoding.offsets: (start, end) in characters of the str given (the pre-tokenizer's ▁ maps to the space it replaced)",
        },
    }
    results["install"] = install_sizes()
    for library, info in results["install"].items():
        print(
            f"{library}: own {info['own_bytes'] / 1e6:.1f} MB, with required deps {info['closure_bytes'] / 1e6:.1f} MB, new to hierattn {info['new_to_hierattn_bytes'] / 1e6:.1f} MB"
        )
    results["waimai_10k"] = run_set("waimai_10k", load(args.waimai), (4000, 8000, 16000), args.repeats, True)
    results["english"] = run_set(
        f"english ({pathlib.Path(args.english).parent.name}, {args.english_sample} texts)",
        load(args.english, args.english_sample),
        (8000,),
        args.repeats,
        False,
    )
    results["english"]["source"] = str(args.english)
    results["seconds"] = round(time.perf_counter() - started, 1)
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(f"\nwrote {output} in {results['seconds']} s")


if __name__ == "__main__":
    main()
