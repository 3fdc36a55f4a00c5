"""Are the attention weights faithful? Erasure tests in the style of ERASER.

For every document, the model's predicted class `c` and its probability
`p_c(x)` are computed; then the `k` highest-ranked words are deleted from the
document (the words after them move up, as if they had never been written)
and the model is run again. Three rankings are compared:

* `attention`: the importance the explanation shows (HAN: word weight x
  sentence weight; other models: the attention pooling weights);
* `random`: a uniformly random order of the document's words, averaged over
  several draws;
* `gradient`: gradient x input, the gradient of `p_c` with respect to each
  word's embedding dotted with that embedding (largest positive first, i.e.
  the words that push most towards the predicted class).

The probabilities are the whole classifier's (with its n-gram part, if it
has one: deleting a word also removes the n-grams it was part of), with
one difference: here the n-gram part reads the network's ids, cut at the
network's length limits, where the classifier's own predictions give it
the whole text. The gradient ranking is the attention network's.

For each ranking and `k` the report gives the mean drop `p_c(x) - p_c(x \\ top
k)` (ERASER's comprehensiveness at that `k`) and the share of decisions that
flip. The summary `comprehensiveness` is the mean over the `k`s (ERASER's
AOPC, here over the `k`s asked for rather than percentage bins).

Only words the model sees (within `max_sentences`/`max_words`/`sequence_length`,
including out-of-vocabulary ones) are ranked and removed; a document with
fewer than `k` such words loses all of them.

Reference:
    DeYoung et al. "ERASER: A Benchmark to Evaluate Rationalized NLP
    Models." ACL 2020, section 4 (comprehensiveness, AOPC).
"""

import dataclasses

import numpy as np
from tqdm.auto import tqdm

from hierattn.data.ids import token_ids
from hierattn.errors import HierattnError
from hierattn.explain.attributions import gradient_times_input

RANKINGS = ("attention", "random", "gradient")
DEFAULT_KS = (1, 5, 10)


def remove_positions(ids, positions):
    """Deletes tokens from one encoded document.

    Args:
        ids: Int array `(length,)` (flat) or `(sentences, words)` (HAN).
        positions: Index tuples (as from `np.argwhere`) of the tokens to drop.

    Returns:
        A new array of the same shape: the remaining tokens of each row moved
        left in order, padding (0) after them. For HAN, sentences stay where
        they are (a sentence that loses every word becomes empty padding).
    """
    ids = np.asarray(ids)
    keep = ids != 0
    for position in positions:
        keep[tuple(position)] = False
    rows = ids.reshape(-1, ids.shape[-1])
    keep = keep.reshape(rows.shape)
    out = np.zeros_like(rows)
    for r in range(rows.shape[0]):
        kept = rows[r][keep[r]]
        out[r, : len(kept)] = kept
    return out.reshape(ids.shape)


def top_positions(scores, ids, k):
    """The `k` non-padding positions with the largest scores (ties: earlier first)."""
    candidates = np.argwhere(np.asarray(ids) != 0)
    if len(candidates) == 0:
        return candidates
    values = np.asarray(scores)[tuple(candidates.T)]
    order = np.argsort(-values, kind="stable")
    return candidates[order[:k]]


@dataclasses.dataclass
class FaithfulnessReport:
    """Mean effect of deleting each ranking's top-k words.

    Attributes:
        documents: Number of documents.
        ks: The `k`s.
        random_draws: Random orders averaged per document.
        drop: `{ranking: {k: mean drop of the predicted class's probability}}`.
        flip_rate: `{ranking: {k: share of documents whose decision flips}}`.
        comprehensiveness: `{ranking: mean drop over the ks}` (AOPC).

    Example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> from hierattn.explain import check_faithfulness
    >>> report = check_faithfulness(clf, texts[:4], ks=(1, 2))
    >>> report.documents, report.ks, sorted(report.drop)
    (4, (1, 2), ['attention', 'gradient', 'random'])
    >>> print(report.to_markdown().splitlines()[0])
    | ranking | drop k=1 | flips k=1 | drop k=2 | flips k=2 | comprehensiveness |
    """

    documents: int
    ks: tuple
    random_draws: int
    drop: dict
    flip_rate: dict
    comprehensiveness: dict

    def ratio_to_random(self, k, ranking="attention"):
        """How many times more the ranking's top-k removal lowers p_c than random's; None when random's is not above 0.

        (No ratio is defined then: deleting random words changed nothing, e.g.
        in a text with no known word.)
        """
        random_drop = self.drop["random"][k]
        return None if random_drop <= 0 else self.drop[ranking][k] / random_drop

    def to_dict(self):
        return {
            "documents": self.documents,
            "ks": list(self.ks),
            "random_draws": self.random_draws,
            "probability_drop": {r: {str(k): v for k, v in d.items()} for r, d in self.drop.items()},
            "flip_rate": {r: {str(k): v for k, v in d.items()} for r, d in self.flip_rate.items()},
            "comprehensiveness": self.comprehensiveness,
            "ratio_to_random": {
                r: {str(k): self.ratio_to_random(k, r) for k in self.ks}
                for r in self.drop
                if r != "random" and "random" in self.drop
            },
        }

    def to_markdown(self):
        head = "| ranking | " + " | ".join(f"drop k={k} | flips k={k}" for k in self.ks) + " | comprehensiveness |"
        lines = [head, "|" + " --- |" * (2 * len(self.ks) + 2)]
        for ranking in self.drop:
            cells = " | ".join(f"{self.drop[ranking][k]:.4f} | {self.flip_rate[ranking][k]:.1%}" for k in self.ks)
            lines.append(f"| {ranking} | {cells} | {self.comprehensiveness[ranking]:.4f} |")
        lines.append("")
        for ranking in self.drop:
            if ranking != "random" and "random" in self.drop:
                ratios = ", ".join(f"k={k}: {_times(self.ratio_to_random(k, ranking))}" for k in self.ks)
                lines.append(f"{ranking} vs random (probability drop): {ratios}")
        lines.append(f"{self.documents:,} documents, {self.random_draws} random draws per document")
        return "\n".join(lines)


def _times(ratio):
    return "n/a" if ratio is None else f"{ratio:.1f}x"


def erasure_effects(predict, x, rankings, ks=DEFAULT_KS, random_draws=5, seed=0, base=None):
    """Deletes each ranking's top-k tokens and measures the change.

    Args:
        predict: Function from id arrays `(n, ...)` to probabilities `(n, C)`.
        x: Encoded documents.
        rankings: `{name: scores shaped like x}`; larger = more important.
            `"random"` is added (`random_draws` orders per document).
        ks: Numbers of tokens to delete.
        random_draws: Random orders per document (0: no random ranking).
        seed: Seed of the random orders.
        base: Probabilities for `x` if already computed.

    Returns:
        `(report_parts, base)`: per-document arrays `{ranking: {k: (drops,
        flips)}}` and the full-document probabilities.
    """
    x = np.asarray(x)
    base = predict(x) if base is None else base
    predicted = base.argmax(1)
    p_full = base[np.arange(len(x)), predicted]
    rng = np.random.default_rng(seed)
    jobs = {name: [scores] for name, scores in rankings.items()}
    if random_draws:
        jobs["random"] = [rng.random(x.shape) for _ in range(random_draws)]
    variants, keys = [], []
    for name, draws in jobs.items():
        for d, scores in enumerate(draws):
            for k in ks:
                for i in range(len(x)):
                    variants.append(remove_positions(x[i], top_positions(scores[i], x[i], k)))
                    keys.append((name, d, k, i))
    probabilities = predict(np.stack(variants)) if variants else np.zeros((0, base.shape[1]))
    results = {name: {k: (np.zeros(len(x)), np.zeros(len(x))) for k in ks} for name in jobs}
    for (name, _, k, i), p in zip(keys, probabilities):
        drops, flips = results[name][k]
        draws = len(jobs[name])
        drops[i] += (p_full[i] - p[predicted[i]]) / draws
        flips[i] += float(p.argmax() != predicted[i]) / draws
    return results, base


def summarize(parts, ks, random_draws):
    """Averages the per-document arrays of `erasure_effects` into a report."""
    drop = {name: {k: float(np.mean(parts[name][k][0])) for k in ks} for name in parts}
    flips = {name: {k: float(np.mean(parts[name][k][1])) for k in ks} for name in parts}
    documents = len(next(iter(next(iter(parts.values())).values()))[0]) if parts else 0
    return FaithfulnessReport(
        documents=documents,
        ks=tuple(ks),
        random_draws=random_draws,
        drop=drop,
        flip_rate=flips,
        comprehensiveness={name: float(np.mean([drop[name][k] for k in ks])) for name in drop},
    )


def check_faithfulness(classifier, texts, ks=DEFAULT_KS, random_draws=5, seed=0, chunk_size=256, progress=False):
    """Erasure test of a classifier's attention on raw texts (see the module docstring).

    Args:
        classifier: A trained `TextClassifier` whose backbone has attention
            pooling (or a `Run` holding one).
        texts: Raw texts.
        ks: Numbers of top words to delete.
        random_draws: Random orders averaged per document.
        seed: Seed of the random orders.
        chunk_size: Documents processed together (bounds memory).
        progress: Show a progress bar.

    Returns:
        A `FaithfulnessReport`.
    """
    texts = [t for t in texts if t and str(t).strip()]
    if not texts:
        raise HierattnError("no non-empty texts to check")
    ks = tuple(sorted({int(k) for k in ks}))
    if not ks or ks[0] < 1:
        raise HierattnError("k must be at least 1")
    classifier = getattr(classifier, "classifier", classifier)
    model = classifier.backbone
    if not model.attention_layers:
        raise HierattnError("this model has no attention pooling to check")
    predict = classifier.predict_ids  # the whole classifier (with its n-gram part, if any)
    chunks = []
    bar = _progress(len(texts), progress)
    for start in range(0, len(texts), chunk_size):
        # What the network reads; the n-gram part then reads the same ids, so deleting a word removes it from both.
        x = token_ids(classifier.preprocessor(texts[start : start + chunk_size]))
        outputs = classifier.attention(x)
        base = predict(x)
        rankings = {
            "attention": model.token_attention(outputs),
            "gradient": gradient_times_input(model, x, base.argmax(1)),
        }
        chunks.append(erasure_effects(predict, x, rankings, ks, random_draws, seed + start, base=base)[0])
        bar.update(len(x))
    bar.close()
    merged = {
        name: {k: tuple(np.concatenate(arrays) for arrays in zip(*(c[name][k] for c in chunks))) for k in ks}
        for name in RANKINGS
        if name in chunks[0]
    }
    return summarize(merged, ks, random_draws)


def _progress(total, enabled):
    return tqdm(total=total, desc="erasure check", unit="doc", disable=not enabled)
