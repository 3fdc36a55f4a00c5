"""The few summaries of an explanation that every view reads: the prediction in words, the evidence, the margin's parts.

Every view (`hierattn.explain.report`'s text, JSON and CSV, the HTML page of
`hierattn.explain.picture`, a notebook's `_repr_html_`) reads the same few
summaries defined here:

* `prediction_words`: the prediction and its probability in plain words;
* `top_evidence`: the words with the largest evidence, for either class;
* `margin_parts`: how much of the decision's margin came from each part
  (the network's words, the n-gram part's words, the constant terms), and
  `margin_shares`: their percentages of it, where percentages mean something;
* `margin_sentence`: what the margin and the constant terms are, in one
  plain sentence;
* `shows_attention`: whether attention, the second layer ("where the network
  read"), is worth showing (not when the network has no weight).

Evidence is measured between two classes, the prediction and the runner-up
(`runner_up`); a multi-label classifier's explanation (its `kind` is
`MULTI`) measures one label's evidence against its threshold instead (its
`runner_up` is `None`). What the views say differently of the two kinds is
their `wording`.
"""

import dataclasses
import math

from hierattn.defaults import MARGIN_SHARES_UP_TO
from hierattn.kinds import MULTI, SINGLE


def probability(explanation, label):
    """The probability `explanation` gives `label` (its probabilities are keyed by the label's string)."""
    probabilities = explanation.probabilities
    return probabilities.get(str(label), probabilities.get(label, 0.0))


def kind(explanation):
    """What `explanation` explains (`hierattn.kinds`): `MULTI`, one label of a multi-label classifier against its
    threshold (the explanation has one); else `SINGLE`, the prediction against the runner-up.
    """
    return MULTI if getattr(explanation, "threshold", None) is not None else SINGLE


def multi_label(explanation):
    """Whether `explanation` explains one label of a multi-label classifier (against its threshold)."""
    return kind(explanation).multi_label


class ClassWording:
    """What the views say of a single-label classifier's explanation: the prediction against the runner-up.

    `wording(explanation)` gives an explanation's (`LabelWording` for a multi-label classifier's label). The
    attributes are `str.format` templates of `label` (the class explained), `versus` (the runner-up) and, for
    `threshold_term`, `threshold` and `term`; the methods give whole phrases.

    Example:

    >>> from hierattn.explain import Explanation
    >>> e = Explanation("Fine.", "pos", {"neg": 0.1, "pos": 0.9}, [], [], 0, [])
    >>> words = ClassWording()
    >>> words.prediction_words(e), words.evidence_headings[1].format(label="pos", versus=words.runner_up(e))
    ('pos, probability 0.90 (runner-up: neg, 0.10)', 'evidence for neg, the runner-up (negative: it lowers the margin):')
    """

    kind = SINGLE
    heading = "predicted"  # what the explained class is, before `prediction_words`
    true_heading = "true label"
    over = "{versus}"  # what the margin is of the class over
    evidence_headings = (
        "evidence for {label}, the prediction (each word's part of the margin; * = not in the vocabulary):",
        "evidence for {versus}, the runner-up (negative: it lowers the margin):",
    )
    sides = ("towards {label}", "towards {versus}")  # where positive, and negative, evidence pushes
    signs = "+ towards {label}, - towards {versus}"
    threshold_term = ""  # the threshold's constant term: none
    title = "Document {name}"  # a document's heading among several
    no_evidence = "either class"  # "No word has evidence for ..."
    legend = ("pushes towards {label} (the prediction)", "pushes towards {versus} (the runner-up)")
    grey = "grey"  # what marks the words beyond the network's limits

    def runner_up(self, explanation):
        """The decision's `versus`, else the second most probable class."""
        versus = (explanation.decision or {}).get("versus")
        if versus is None:
            others = [name for name in explanation.probabilities if str(name) != str(explanation.label)]
            versus = max(others, key=explanation.probabilities.get, default=None)
        return versus

    def prediction_words(self, explanation):
        text = f"{explanation.label}, probability {probability(explanation, explanation.label):.2f}"
        versus = self.runner_up(explanation)
        if versus is not None:
            text += f" (runner-up: {versus}, {probability(explanation, versus):.2f})"
        return text

    def margin_sentence(self, explanation, parts):
        label, versus = explanation.label, parts["versus"]
        return (
            f"The margin is how far {label} is ahead of {versus}, in log-odds: 0 is a tie, +0.69 means {label} is "
            f"twice as likely as {versus}, +2.30 ten times as likely (here {label} is {_times(parts['margin'])} "
            f"{versus}). Each word's evidence is its part of the margin (+ towards {label}, - towards {versus}); the "
            "constant terms are the part no word owns: what the classifier gives a text without words, and its "
            "bias (with the calculation's small error and any words not shown)."
        )


class LabelWording(ClassWording):
    """What the views say of one label of a multi-label classifier's explanation: the label against its threshold.

    Example:

    >>> from hierattn.explain import Explanation
    >>> e = Explanation("Fine.", "sport", {"sport": 0.7, "money": 0.2}, [], [], 0, [], threshold=0.4)
    >>> e.predicted_labels = ["sport"]
    >>> words = LabelWording()
    >>> words.prediction_words(e)
    "sport, probability 0.70, over its threshold 0.40: predicted (the text's labels: sport)"
    >>> words.runner_up(e), words.evidence_headings[1].format(label="sport")
    (None, 'evidence against sport (negative: it lowers the margin):')
    """

    kind = MULTI
    heading = "label"
    true_heading = "true labels"
    over = "its threshold"
    evidence_headings = (
        "evidence for {label} (each word's part of its margin over the threshold; * = not in the vocabulary):",
        "evidence against {label} (negative: it lowers the margin):",
    )
    sides = ("for {label}", "against {label}")
    signs = "+ for {label}, - against it"
    threshold_term = "threshold (-logit {threshold:.2f}) {term}, "
    title = "Document {name}: {label}"  # a text has one explanation per label explained
    no_evidence = "or against the label"
    legend = ("pushes {label} up (towards predicting it)", "pushes it down (towards not predicting it)")
    grey = "grey text"  # evidence against the label is grey too

    def runner_up(self, explanation):
        """None: the label is measured against its threshold."""
        return None

    def prediction_words(self, explanation):
        label, predicted = explanation.label, [str(name) for name in explanation.predicted_labels or []]
        over = str(label) in predicted
        return (
            f"{label}, probability {probability(explanation, label):.2f}, {'over' if over else 'not over'} its "
            f"threshold {explanation.threshold:.2f}: {'predicted' if over else 'not predicted'} ("
            + (f"the text's labels: {', '.join(predicted)})" if predicted else "no label is over its threshold)")
        )

    def margin_sentence(self, explanation, parts):
        label = explanation.label
        return (
            f"The margin is how far {label}'s log-odds are above those of its threshold ({explanation.threshold:.2f}), "
            f"the probability over which it is predicted: above 0 {label} is predicted, +0.69 means its odds are "
            f"twice those at the threshold, +2.30 ten times (here {_odds(parts['margin'])}). Each word's evidence "
            f"is its part of the margin (+ for {label}, - against it); the constant terms are the part no word "
            "owns: what the classifier gives a text without words, its bias and the threshold (with the "
            "calculation's small error and any words not shown)."
        )


WORDINGS = {SINGLE: ClassWording(), MULTI: LabelWording()}


def wording(explanation):
    """What the views say of `explanation`, by its `kind`: a `ClassWording`, or a multi-label classifier's
    `LabelWording`.

    >>> from hierattn.explain import Explanation
    >>> e = Explanation("Fine.", "pos", {"neg": 0.1, "pos": 0.9}, [], [], 0, [])
    >>> wording(e).over.format(versus="neg"), wording(e).sides[1].format(label="pos", versus="neg")
    ('neg', 'towards neg')
    >>> e.threshold = 0.5    # one label of a multi-label classifier, against its threshold
    >>> wording(e).over, wording(e).sides[1].format(label="pos", versus=None)
    ('its threshold', 'against pos')
    """
    return WORDINGS[kind(explanation)]


def runner_up(explanation):
    """The class the evidence is measured against: the decision's `versus`, else the second most probable class.

    `None` for a multi-label classifier's label, measured against its threshold.
    """
    return wording(explanation).runner_up(explanation)


def prediction_words(explanation):
    """The prediction in plain words, e.g. ``"pos, probability 0.93 (runner-up: neg, 0.07)"``.

    A multi-label classifier's label: e.g. ``"sport, probability 0.93, over its threshold 0.40: predicted (the
    text's labels: sport, money)"``.
    """
    return wording(explanation).prediction_words(explanation)


def shown(value, digits):
    """Whether `value` shows as anything but zero with `digits` decimals (lists leave out what would print 0)."""
    return round(value, digits) != 0


def signed(value, digits):
    """`value` with its sign and `digits` decimals, never `-0.00`."""
    return f"{round(value, digits) + 0.0:+.{digits}f}"


def top_evidence(explanation, k=10):
    """The `k` words with the largest evidence, for either class (`WordWeight`s, largest first).

    Subword pieces are joined into the words the user wrote (`whole_words`).
    Words without evidence (0) are left out, so fewer than `k` may come back.
    """
    words = [w for w in whole_words(explanation.words) if w.evidence]
    return sorted(words, key=lambda w: (-abs(w.evidence), w.start))[:k]


def whole_words(words):
    """`WordWeight`s of subword pieces joined into the words they are pieces of; other units as they are.

    A word's first piece is marked (`hierattn.data.units.WORD_START`); each
    piece after it without the mark, in the same sentence and touching it in
    the text, is part of the same word. The word's evidence, attention and
    parts are the sums of its pieces' (evidence adds up, so the margin's
    account is unchanged); it is out of vocabulary or read if any piece is.
    """
    from hierattn.data.units import WORD_START

    if not any(w.form.startswith(WORD_START) for w in words):
        return list(words)
    joined = []
    for w in words:
        last = joined[-1] if joined else None
        if last is None or w.form.startswith(WORD_START) or w.sentence != last.sentence or w.start != last.end:
            joined.append(dataclasses.replace(w))
            continue
        last.text, last.form, last.end = last.text + w.text, last.form + w.form, w.end
        for name in ("weight", "word_weight", "evidence", "network_evidence", "ngram_evidence"):
            setattr(last, name, getattr(last, name) + getattr(w, name))
        last.oov, last.used = last.oov or w.oov, last.used or w.used
    return joined


def top_ngrams(explanation, k=10, digits=4):
    """The `k` n-grams with the largest contributions, leaving out those that show as 0 with `digits` decimals."""
    return [g for g in explanation.top_ngrams(len(explanation.ngrams or ())) if shown(g.contribution, digits)][:k]


def margin_parts(explanation):
    """How much of the decision's margin came from each part, or `None` without a decision.

    Returns:
        A dict: `margin`, `versus`, `network` (the network's words: the
        sum of their `network_evidence`), `ngrams` (the n-gram part's words:
        the sum of their `ngram_evidence`) and `constant` (the network's
        baseline value, the integration's error, the n-gram bias, the words
        not shown and, for a multi-label classifier's label, the threshold's
        `-logit threshold`; with a decision rule's offsets, `offset_term`,
        the class's offset less the runner-up's); the three parts add up
        to the margin.
    """
    d = explanation.decision
    if d is None:
        return None
    network = sum(w.network_evidence for w in explanation.words)
    ngrams = sum(w.ngram_evidence for w in explanation.words)
    terms = ("network_baseline", "integration_error", "ngram_bias", "not_shown")
    terms += tuple(term for term in ("threshold_term", "offset_term") if term in d)
    constant = sum(d.get(term, 0.0) for term in terms)
    return {"margin": d["margin"], "versus": d["versus"], "network": network, "ngrams": ngrams, "constant": constant}


PART_NAMES = {"network": "network's words", "ngrams": "n-gram words", "constant": "constant terms"}


def margin_shares(parts):
    """Each part's percentage of the margin (whole numbers), or `None` where percentages would mislead.

    Percentages are given only when the parts' sizes add up to at most
    `hierattn.defaults.MARGIN_SHARES_UP_TO` (2) times the margin, so that
    every share lies between -50% and 150%; beyond it the parts pull against
    each other so much (or the margin is so near a tie) that a percentage of
    the small difference would read as nonsense ("-1280%"), and views show
    the parts' signed values only.

    Args:
        parts: `margin_parts`' dict.

    Example:

    >>> margin_shares({"margin": 1.0, "network": 0.6, "ngrams": 0.5, "constant": -0.1})
    {'network': 60, 'ngrams': 50, 'constant': -10}
    >>> margin_shares({"margin": 0.05, "network": -0.64, "ngrams": 0.66, "constant": 0.03}) is None
    True
    """
    margin = parts["margin"]
    size = sum(abs(parts[key]) for key in PART_NAMES)
    if margin <= 0 or size > MARGIN_SHARES_UP_TO * margin:
        return None
    return {key: round(100 * parts[key] / margin) + 0 for key in PART_NAMES}  # + 0: no "-0"


def parts_words(parts, digits=4):
    """`margin_parts` in one line: each part signed, with its percentage of the margin where one means something.

    >>> parts_words({"margin": 1.0, "network": 0.6, "ngrams": 0.5, "constant": -0.1}, 2)
    "network's words +0.60 (60%), n-gram words +0.50 (50%), constant terms -0.10 (-10%)"
    >>> parts_words({"margin": 0.05, "network": -0.64, "ngrams": 0.66, "constant": 0.03}, 2)
    "network's words -0.64, n-gram words +0.66, constant terms +0.03"
    """
    shares = margin_shares(parts)
    return ", ".join(
        f"{name} {signed(parts[key], digits)}" + (f" ({shares[key]}%)" if shares else "")
        for key, name in PART_NAMES.items()
    )


def _times(margin):
    """How many times as likely the margin makes the prediction as the runner-up, in words."""
    ratio = math.exp(min(margin, 50.0))
    if ratio >= 1e6:
        return "more than a million times as likely as"
    if 1 / 1.05 < ratio < 1.05:
        return "about as likely as"
    return f"{ratio:.1f} times as likely as" if ratio < 10 else f"{ratio:,.0f} times as likely as"


def _odds(margin):
    """How the margin puts a label's odds against those at its threshold, in words."""
    ratio = math.exp(max(min(margin, 50.0), -50.0))
    if 1 / 1.05 < ratio < 1.05:
        return "its odds are about those at the threshold"
    if ratio < 1:
        return f"its odds are {_times(-margin).replace(' as likely as', '')} smaller than at the threshold"
    return f"its odds are {_times(margin).replace(' as likely as', '')} those at the threshold"


def margin_sentence(explanation):
    """What the margin and the constant terms are, in plain words, for this explanation (`None` without a decision).

    Example:

    >>> from hierattn.explain import Explanation
    >>> e = Explanation("Fine.", "pos", {"neg": 0.1, "pos": 0.9}, [], [], 0, [])
    >>> e.decision = {"versus": "neg", "margin": 2.1972}
    >>> print(margin_sentence(e))  # doctest: +NORMALIZE_WHITESPACE
    The margin is how far pos is ahead of neg, in log-odds: 0 is a tie, +0.69 means pos is twice as likely as
    neg, +2.30 ten times as likely (here pos is 9.0 times as likely as neg). Each word's evidence is its part of
    the margin (+ towards pos, - towards neg); the constant terms are the part no word owns: what the
    classifier gives a text without words, and its bias (with the calculation's small error and any words not
    shown).
    """
    parts = margin_parts(explanation)
    return None if parts is None else wording(explanation).margin_sentence(explanation, parts)


def shows_attention(explanation):
    """Whether attention moves the decision at all: `False` when the network has no weight in the classifier."""
    return (explanation.decision or {}).get("network_weight", 1.0) != 0.0


__all__ = [
    "PART_NAMES",
    "WORDINGS",
    "ClassWording",
    "LabelWording",
    "kind",
    "margin_parts",
    "multi_label",
    "margin_sentence",
    "margin_shares",
    "parts_words",
    "prediction_words",
    "probability",
    "runner_up",
    "shown",
    "signed",
    "shows_attention",
    "top_evidence",
    "whole_words",
    "top_ngrams",
    "wording",
]
