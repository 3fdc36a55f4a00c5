"""Erasing an explanation's words from its text, and how far that moves the prediction: ERASER's two measures.

The part of `hierattn.explain.faithfulness` that erases (its module
docstring defines comprehensiveness, sufficiency and the bins): a
`Document` is a text's token forms by sentence and where the words its
explanation shows sit among them; `erasure_scores` erases a ranking's top
`k` of those words (comprehensiveness) or keeps only them (sufficiency),
for each `k` of `bin_sizes`, and measures the drop in the probability of
the predicted class.
"""

import dataclasses
import math

import numpy as np

from hierattn.errors import HierattnError

BINS = (0.01, 0.05, 0.1, 0.2, 0.5)
MEASURES = ("comprehensiveness", "sufficiency")


def bin_sizes(n, bins=BINS):
    """The number of top words each bin erases in an `n`-word document: `max(1, ceil(f * n))`, at most `n`.

    Example:

    >>> bin_sizes(3), bin_sizes(30), bin_sizes(200)
    ([1, 1, 1, 1, 2], [1, 2, 3, 6, 15], [2, 10, 20, 40, 100])
    """
    return [min(n, max(1, math.ceil(round(f * n, 9)))) for f in bins]  # round: 0.1 * 30 is 3.0000000000000004


@dataclasses.dataclass
class Document:
    """A text as the check erases it: its tokens' forms by sentence, and where the shown words sit among them.

    Attributes:
        sentences: Lists of token forms, one per sentence, the whole text.
        shown: `(sentence, index)` of each word the explanation shows.

    Example:

    >>> document = Document([["a", "great", "film"], ["loved", "it"]], [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)])
    >>> document.erase([3, 4]), document.erase([1, 0], keep=True)
    ([['a', 'great', 'film']], [['a', 'great']])
    """

    sentences: list
    shown: list

    @classmethod
    def of(cls, explanation, tokenizer):
        """The whole text of `explanation` tokenized, and its shown words found in it by their offsets."""
        tokens = tokenizer.tokenize(explanation.text)
        where = {t.start: (s, t.index) for s, sentence in enumerate(tokens) for t in sentence}
        missing = [w.text for w in explanation.words if w.start not in where]
        if missing:
            raise HierattnError(f"the explanation's words are not the text's (e.g. {missing[0]!r}): explain it again")
        return cls([[t.form for t in sentence] for sentence in tokens], [where[w.start] for w in explanation.words])

    def erase(self, words, keep=False):
        """The sentences without the shown `words` (indices), or with `keep` only them, in order; empty ones dropped."""
        chosen = {self.shown[i] for i in words}
        if keep:
            kept = [[] for _ in self.sentences]
            for s, t in sorted(chosen):
                kept[s].append(self.sentences[s][t])
        else:
            kept = [[f for t, f in enumerate(forms) if (s, t) not in chosen] for s, forms in enumerate(self.sentences)]
        return [sentence for sentence in kept if sentence]


def erasure_scores(predict, documents, orders, bins=BINS, base=None, classes=None):
    """Comprehensiveness and sufficiency of each document for each ranking and bin.

    Args:
        predict: Function from documents (lists of sentences of token forms)
            to class probabilities `(n, classes)`.
        documents: `Document`s.
        orders: `{ranking: [[order, ...] per document]}`: one or more orders
            (draws, averaged) of each document's shown words, most important first.
        bins: Shares of each document's words to erase.
        base: The probabilities of the documents unerased, if known.
        classes: Int array `(n,)`: the class (a multi-label classifier's
            label) whose probability each document's scores measure
            (default: the most probable class of `base`).

    Returns:
        `({ranking: {measure: array (documents, bins)}}, base)`.

    Example:

    >>> def predict(documents):   # decided by one word
    ...     p = np.array([0.9 if any("great" in s for s in d) else 0.3 for d in documents])
    ...     return np.stack([1 - p, p], 1)
    >>> document = Document([["a", "great", "film"]], [(0, 0), (0, 1), (0, 2)])
    >>> scores, _ = erasure_scores(predict, [document], {"oracle": [[[1, 0, 2]]]}, bins=(0.1, 0.5))
    >>> scores["oracle"]["comprehensiveness"].round(3).tolist(), scores["oracle"]["sufficiency"].tolist()
    ([[0.6, 0.6]], [[0.0, 0.0]])
    """
    if base is None:
        base = predict([d.erase([]) for d in documents])
    predicted = base.argmax(1) if classes is None else np.asarray(classes)
    variants, rows, jobs = [], {}, []
    for i, document in enumerate(documents):
        sizes = bin_sizes(len(document.shown), bins)
        for ranking, draws in orders.items():
            for order in draws[i]:
                for m, keep in enumerate((False, True)):  # comprehensiveness erases the top k, sufficiency keeps them
                    for b, k in enumerate(sizes):
                        key = (i, keep, frozenset(int(w) for w in order[:k]))  # the same erasure is predicted once
                        if key not in rows:
                            rows[key] = len(variants)
                            variants.append(document.erase(order[:k], keep=keep))
                        jobs.append((ranking, len(draws[i]), m, i, b, rows[key]))
    probabilities = predict(variants) if variants else np.zeros((0, base.shape[1]))
    scores = {r: {m: np.zeros((len(documents), len(bins))) for m in MEASURES} for r in orders}
    for ranking, draws, m, i, b, row in jobs:
        scores[ranking][MEASURES[m]][i, b] += (base[i, predicted[i]] - probabilities[row, predicted[i]]) / draws
    return scores, base
