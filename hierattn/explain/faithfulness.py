"""Is an explanation faithful to the classifier? ERASER's comprehensiveness and sufficiency.

For every document `x` the whole classifier (network and n-gram part) gives
the probability `p_c(x)` of its predicted class `c`. A ranking orders the
explanation's words (`Explanation.words`, what it shows), most important
first; its top `k` words are the rationale, and

* comprehensiveness at `k` is `p_c(x) - p_c(x without its top k words)`:
  large when the words the ranking puts first are what the decision rests on;
* sufficiency at `k` is `p_c(x) - p_c(only the top k words, in order)`:
  small when those words alone keep the decision.

`k` runs over ERASER's bins, 1, 5, 10, 20 and 50% of the document's words
(`k = max(1, ceil(f * n))`, at most `n`: a short text has the same `k` in
several bins, each counted), and each measure's AOPC is its mean over the
bins. An erased document is the text's token forms without the erased
words (sentences kept, a sentence left without words dropped), encoded by
the classifier's own preprocessor, so the network reads the remaining words
within its limits and the n-gram part reads the whole remaining text, as
`predict` does; erasing nothing gives back `predict(text)`. Words of a long
text beyond what the explanation shows are never ranked; they stay in for
comprehensiveness and go with sufficiency (only the rationale is kept).
The erasing itself is `hierattn.explain.erasure`'s.

A multi-label classifier's explanation explains one label of a text
(`Explanation.label`, against its threshold): `c` is then that label, and
`p_c` its own (sigmoid) probability; a text explained for several labels
counts once per label.

Rankings compared:

* `evidence`: `WordWeight.evidence`, each word's signed share of the margin
  of the predicted class (largest, i.e. most for the prediction, first);
* `attention`: `WordWeight.weight` (HAN: word x sentence weight), words the
  network does not read last;
* `gradient`: gradient x input of the network's probability of `c`
  (`gradient_times_input`), largest first, words the network does not read last;
* `random`: `random_draws` seeded random orders, averaged.

The verdict (`FaithfulnessReport.verdict`) calls a ranking faithful when its
comprehensiveness AOPC is positive and at least `FAITHFUL_RATIO` (2) times
random's and its sufficiency AOPC is below random's: random orders score what
an explanation that knows nothing would, twice their effect is beyond noise
(IMDB: 14x, `benchmarks/bench_faithfulness.py`). No verdict where every text
has one word, or no erasure moves the prediction by `NO_EFFECT` (0.005).

Reference:
    DeYoung et al. "ERASER: A Benchmark to Evaluate Rationalized NLP
    Models." ACL 2020, section 4 (comprehensiveness, sufficiency, AOPC).
"""

import dataclasses

import numpy as np

from hierattn.data.ids import token_ids
from hierattn.data.progress import tqdm
from hierattn.errors import HierattnError
from hierattn.explain.attributions import gradient_times_input
from hierattn.explain.erasure import BINS, MEASURES, Document, erasure_scores
from hierattn.explain.explainer import Explainer

RANKINGS = ("evidence", "attention", "gradient", "random")
FAITHFUL_RATIO, NO_EFFECT = 2.0, 0.005  # the verdict's bars (see the module docstring)


def rank(scores, read=None):
    """Word indices, most important first: largest score first, ties in text order, words not `read` last.

    Example:

    >>> rank([0.1, 0.5, 0.5, 0.9], read=[True, True, True, False]).tolist()
    [1, 2, 0, 3]
    """
    scores = np.asarray(scores, dtype=float)
    read = np.ones(len(scores), bool) if read is None else np.asarray(read, bool)
    return np.lexsort((np.arange(len(scores)), -scores, ~read))


def word_orders(explanations, gradients, random_draws, seed, numbers=None):
    """Each ranking's orders of each explanation's words (`rank`), for `erasure_scores`.

    `gradients` holds each word's gradient x input (0 where not read); the
    random orders of document `i` come from the seed `(seed, numbers[i])`
    (default: its place in the list), so they do not depend on the chunking.

    Example:

    >>> from types import SimpleNamespace as Item
    >>> words = [Item(evidence=0.1, weight=0.5, used=True), Item(evidence=0.9, weight=0.2, used=True),
    ...          Item(evidence=-0.3, weight=0.0, used=False)]
    >>> orders = word_orders([Item(words=words)], [[0.2, 0.4, 0.0]], random_draws=2, seed=0)
    >>> [orders[r][0][0].tolist() for r in ("evidence", "attention", "gradient")], len(orders["random"][0])
    ([[1, 0, 2], [0, 1, 2], [1, 0, 2]], 2)
    """
    orders = {name: [] for name in RANKINGS}
    numbers = range(len(explanations)) if numbers is None else numbers
    for number, explanation, gradient in zip(numbers, explanations, gradients):
        words = explanation.words
        read = [w.used for w in words]
        orders["evidence"].append([rank([w.evidence for w in words])])
        orders["attention"].append([rank([w.weight for w in words], read)])
        orders["gradient"].append([rank(gradient, read)])
        rng = np.random.default_rng([seed, number])
        orders["random"].append([rng.permutation(len(words)) for _ in range(random_draws)])
    return orders


def word_gradients(classifier, explanations, ids, classes):
    """Gradient x input of the network's probability of `classes`, one value per shown word (0 if not read).

    Args:
        classifier: The `TextClassifier` (its backbone, its preprocessor's mode).
        explanations: `Explanation`s of the documents.
        ids: The network's ids of the documents `(n, ...)`.
        classes: Int array `(n,)`: each document's class.

    Example:

    >>> from types import SimpleNamespace as Item
    >>> from hierattn.models import RNNBackbone
    >>> classifier = Item(backbone=RNNBackbone(vocabulary_size=30, num_classes=2, embedding_dim=4, units=4),
    ...                   preprocessor=Item(mode="flat"))
    >>> words = [Item(used=True, sentence=0, index=0), Item(used=True, sentence=0, index=1), Item(used=False)]
    >>> scores = word_gradients(classifier, [Item(words=words)], np.array([[5, 7]]), np.array([1]))
    >>> len(scores[0]), scores[0][2]
    (3, 0.0)
    """
    scores = gradient_times_input(classifier.backbone, ids, classes)
    hierarchical = classifier.preprocessor.mode == "hierarchical"
    return [
        [float(s[(w.sentence, w.index) if hierarchical else (p,)]) if w.used else 0.0 for p, w in enumerate(e.words)]
        for e, s in zip(explanations, scores)
    ]


@dataclasses.dataclass
class FaithfulnessReport:
    """Mean comprehensiveness and sufficiency per ranking and bin, their AOPCs and the verdict.

    Attributes:
        documents: Documents checked.
        bins: Shares of each document's words erased.
        random_draws: Random orders averaged per document.
        comprehensiveness: `{ranking: {bin: mean p_c(x) - p_c(x without the top words)}}`.
        sufficiency: `{ranking: {bin: mean p_c(x) - p_c(only the top words)}}`.
        mean_words: Mean number of words per document (what the explanations show).

    Example:

    >>> report = FaithfulnessReport(
    ...     10, (0.1, 0.5), 5, {"evidence": {0.1: 0.4, 0.5: 0.6}, "random": {0.1: 0.02, 0.5: 0.1}},
    ...     {"evidence": {0.1: 0.1, 0.5: 0.0}, "random": {0.1: 0.4, 0.5: 0.3}}, 200.0)
    >>> report.aopc("comprehensiveness"), report.faithful()
    (0.5, True)
    >>> report.verdict()
    'evidence: comprehensiveness 0.50 (random 0.06), sufficiency 0.05 (random 0.35): faithful'
    """

    documents: int
    bins: tuple
    random_draws: int
    comprehensiveness: dict
    sufficiency: dict
    mean_words: float

    def aopc(self, measure="comprehensiveness", ranking="evidence"):
        """The mean of `measure` over the bins (ERASER's area over the perturbation curve)."""
        return float(np.mean([getattr(self, measure)[ranking][f] for f in self.bins]))

    def faithful(self, ranking="evidence"):
        """Comprehensiveness AOPC positive and at least `FAITHFUL_RATIO` x random's, sufficiency AOPC below random's."""
        c, s = (self.aopc(m, ranking) for m in MEASURES)
        c_random, s_random = (self.aopc(m, "random") for m in MEASURES)
        return c > 0 and c >= FAITHFUL_RATIO * c_random and s < s_random

    def verdict(self, ranking="evidence"):
        """One line: the ranking's AOPCs beside random's, and whether it is faithful (see the module docstring)."""
        c, s = (self.aopc(m, ranking) for m in MEASURES)
        c_random, s_random = (self.aopc(m, "random") for m in MEASURES)
        verdict = "faithful" if self.faithful(ranking) else "not faithful"
        if self.mean_words <= 1:  # every document has one word: every ranking erases it, as random does
            verdict = "no verdict (one word per text: every ranking erases the same)"
        elif max(abs(c), abs(s), abs(c_random), abs(s_random)) < NO_EFFECT:
            verdict = "no verdict (erasing words hardly moves the prediction)"
        return f"{ranking}: comprehensiveness {c:.2f} (random {c_random:.2f}), sufficiency {s:.2f} (random {s_random:.2f}): {verdict}"

    def to_dict(self):
        """Plain values (what `explain --dataset ... --check` writes)."""
        per_bin = {m: {r: {_bin(f): v[f] for f in self.bins} for r, v in getattr(self, m).items()} for m in MEASURES}
        return {
            "documents": self.documents,
            "bins": list(self.bins),
            "random_draws": self.random_draws,
            "mean_words": self.mean_words,
            **per_bin,
            "aopc": {r: {m: self.aopc(m, r) for m in MEASURES} for r in self.comprehensiveness},
            "faithful": {r: self.faithful(r) for r in self.comprehensiveness if r != "random"},
            "verdict": self.verdict(),
        }

    def to_markdown(self):
        """A table (ranking x measure: each bin and the AOPC), a line on the documents, and the verdict last."""
        lines = [
            "| ranking | measure | " + " | ".join(_bin(f) for f in self.bins) + " | AOPC |",
            "|" + " --- |" * (len(self.bins) + 3),
        ]
        for ranking in self.comprehensiveness:
            for measure in MEASURES:
                cells = " | ".join(f"{getattr(self, measure)[ranking][f]:.3f}" for f in self.bins)
                lines.append(f"| {ranking} | {measure} | {cells} | {self.aopc(measure, ranking):.3f} |")
        lines.append(
            f"{self.documents:,} document(s), {self.mean_words:.0f} words on average; bins: shares of each "
            f"document's words (at least 1); random: {self.random_draws} draw(s) per document"
        )
        lines.append(self.verdict())
        return "\n".join(lines)


def _bin(f):
    return f"{100 * f:g}%"


def _chunk_scores(classifier, explanations, numbers, bins, random_draws, seed, batch_size):
    """The erasure scores of one chunk of explanations with words (`erasure_scores`' first value).

    `numbers` are the explanations' places among all the documents checked
    (they seed the random orders, `word_orders`); the gradient ranking is
    towards the class predicted for each whole text (`word_gradients`), and
    each erasure is predicted by the whole classifier through its own
    preprocessor.
    """
    documents = [Document.of(e, classifier.preprocessor.tokenizer) for e in explanations]
    ids = classifier.preprocessor.encode_tokens([d.erase([]) for d in documents])
    base = classifier.predict_ids(ids, batch_size)
    if not classifier.multi_label:
        classes = classifier.policy.ids(base)
    else:  # each explanation's own label
        names = [str(name) for name in classifier.label_names]
        classes = np.array([names.index(str(e.label)) for e in explanations])
    gradients = word_gradients(classifier, explanations, token_ids(ids), classes)
    orders = word_orders(explanations, gradients, random_draws, seed, numbers)

    def predict(documents):  # the classifier's own preprocessor: the n-gram part reads the whole remaining text
        return classifier.predict_ids(classifier.preprocessor.encode_tokens(documents), batch_size)

    return erasure_scores(predict, documents, orders, bins, base, classes)[0]


def _checked_bins(bins, random_draws):
    """`bins` sorted, once each; refuses bins outside (0, 1] and fewer than one random draw (`HierattnError`)."""
    bins = tuple(sorted({float(f) for f in bins}))
    if not bins or bins[0] <= 0 or bins[-1] > 1:
        raise HierattnError(f"every bin must be a share of the words in (0, 1]. Received: bins={bins}")
    if random_draws < 1:
        raise HierattnError(f"random_draws must be at least 1. Received: random_draws={random_draws}")
    return bins


def check_faithfulness(
    classifier,
    texts=None,
    explanations=None,
    bins=BINS,
    random_draws=5,
    seed=0,
    chunk_size=64,
    batch_size=64,
    progress=False,
    label=None,
):
    """ERASER's comprehensiveness and sufficiency of a classifier's explanations (see the module docstring).

    Args:
        classifier: A trained `TextClassifier` with attention pooling (or a
            `Run` holding one).
        texts: Raw texts, explained here; or None with `explanations`.
        explanations: The texts' `Explanation`s from this classifier, if
            already computed (they hold their texts).
        bins: Shares of each document's words to erase, each in (0, 1].
        random_draws: Random orders averaged per document (at least 1).
        seed: Seed of the random orders.
        chunk_size: Documents explained and erased together (bounds memory).
        batch_size: Documents per model call.
        progress: Show a progress bar.
        label: A multi-label classifier's label, or a list of them, to
            explain and check in every text (default: each text's predicted
            labels; see `Explainer.explain`). With `explanations`, the labels
            they explain are checked.

    Returns:
        A `FaithfulnessReport`.

    Raises:
        HierattnError: No text with words, bins outside (0, 1], or no random draw.

    Example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> report = check_faithfulness(clf, texts[:4], random_draws=2)
    >>> report.documents, list(report.comprehensiveness), report.verdict().startswith("evidence: comprehensiveness")
    (4, ['evidence', 'attention', 'gradient', 'random'], True)
    """
    bins = _checked_bins(bins, random_draws)
    classifier = getattr(classifier, "classifier", classifier)
    if explanations is None:
        texts = [t for t in texts or [] if t and classifier.preprocessor.has_words(t)]  # not markup or spaces only
        explainer, total = Explainer(classifier), len(texts)
        explainer.label_indices(label)  # refused before any work
    else:
        explanations, total = list(explanations), len(explanations)
    parts, words = [], []
    bar = tqdm(total=total, desc="faithfulness check", unit="doc", disable=not progress)
    seen = 0  # explanations so far (a multi-label classifier's text may have several): each seeds its random orders
    for start in range(0, total, chunk_size):
        end = start + chunk_size
        if explanations is None:  # attention is ranked too: where the network would read, also where it did not
            chunk = explainer.explain(texts[start:end], label=label, attention=True)
        else:
            chunk = explanations[start:end]
        numbers = [seen + j for j, e in enumerate(chunk) if e.words]
        seen += len(chunk)
        chunk = [e for e in chunk if e.words]
        if chunk:
            parts.append(_chunk_scores(classifier, chunk, numbers, bins, random_draws, seed, batch_size))
            words += [len(e.words) for e in chunk]
        bar.update(min(chunk_size, total - start))
    bar.close()
    if not parts:
        raise HierattnError("no text with words to check")
    means = {
        m: {r: dict(zip(bins, np.concatenate([p[r][m] for p in parts]).mean(0).tolist())) for r in RANKINGS}
        for m in MEASURES
    }
    return FaithfulnessReport(len(words), bins, random_draws, **means, mean_words=float(np.mean(words)))
