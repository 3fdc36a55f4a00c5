"""What an explanation holds: the prediction, each word's evidence and attention, and the decision's account.

`Explainer.explain` (`hierattn.explain.explainer`) builds these; the
renderings of `hierattn.explain.report` and `hierattn.explain.picture` and
the corpus statistics of `hierattn.explain.corpus` read them. Both an
`Explanation` and `Explanations` (several, as `TextClassifier.explain`
returns them for a list of texts) show themselves in a notebook
(`_repr_html_`), and give `to_html()`, `to_json()` and `top(k)`.
"""

import dataclasses

from hierattn.explain.picture import to_html
from hierattn.explain.report import to_json, to_text
from hierattn.explain.summaries import kind, margin_parts, probability, top_evidence
from hierattn.utils.jsonfile import dumps


@dataclasses.dataclass
class WordWeight:
    """One word of the original text: its evidence for the decision and its attention.

    `evidence` is the word's share of the margin of the predicted class over
    the runner-up (`network_evidence` + `ngram_evidence`, see
    `hierattn.explain.explainer`); `weight` is its attention (HAN: word
    weight x sentence weight), 0 where the network does not read it (`used`).

    Example:

    >>> import math
    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> text = "A GREAT film. The plot was dull."
    >>> word = clf.explain([text])[0].words[1]
    >>> word.text, text[word.start:word.end], word.form, word.sentence, word.index
    ('GREAT', 'GREAT', 'great', 0, 1)
    >>> math.isclose(word.weight, word.word_weight * word.sentence_weight, rel_tol=1e-6)
    True
    """

    text: str
    form: str
    sentence: int
    index: int
    start: int
    end: int
    weight: float
    word_weight: float
    sentence_weight: float
    oov: bool
    used: bool
    evidence: float = 0.0
    network_evidence: float = 0.0
    ngram_evidence: float = 0.0

    @classmethod
    def of_token(cls, token, weight, word_weight, sentence_weight, oov, used, evidence):
        """The word of a tokenizer's `Token`, its evidence all the network's (the n-gram part's is added after)."""
        position = (token.text, token.form, token.sentence, token.index, token.start, token.end)
        return cls(*position, weight, word_weight, sentence_weight, oov, used, evidence, evidence)


def sentence_row(text, index, span, weight, used):
    """An explanation's entry for one sentence of `text`: where it is, its text, its attention weight, if read."""
    start, end = span
    return {
        "index": index,
        "start": start,
        "end": end,
        "text": text[start:end],
        "weight": float(weight),
        "used": bool(used),
    }


@dataclasses.dataclass
class NgramContribution:
    """One distinct n-gram of the text and its exact share of the decision margin (n-gram part).

    The n-gram part reads the whole text: `network_reads` is `False` for an
    n-gram beyond the network's length limits (read by the n-gram part only).

    Example:

    >>> import math
    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> text = "A great film. The plot was dull."
    >>> explanation = clf.explain([text])[0]                  # the classifier has an n-gram part
    >>> gram = next(g for g in explanation.ngrams if g.text == "great film")
    >>> gram.sentence, text[gram.start:gram.end]
    (0, 'great film')
    >>> decision = explanation.decision                       # predicted class versus the runner-up
    >>> parts = decision["network"] + decision["ngram_bias"] + sum(g.contribution for g in explanation.ngrams)
    >>> math.isclose(parts, decision["margin"], abs_tol=1e-6)
    True
    """

    text: str
    sentence: int
    start: int
    end: int
    contribution: float
    network_reads: bool = True


@dataclasses.dataclass(repr=False)
class Explanation:
    """A prediction, each word's evidence for it, and where the network read (attention), for one text.

    In a notebook it shows itself as one picture (the text shaded by
    evidence, the margin's parts, attention below); `print` gives the text
    view (`hierattn.explain.report.to_text`), `repr` one line.

    `probabilities` holds every class, keyed by the label's string, in the
    order of the classifier's `label_names`; the picture gives each class
    the colour of its position there (`hierattn.explain.picture.class_colour`).

    A multi-label classifier's explanation explains one label of one text
    (`label`, predicted or not) against its `threshold`: `probabilities`
    are then every label's own probability, `predicted_labels` the text's
    labels over their thresholds, and `document` the text's place among
    those explained together (a text gets one explanation per label
    explained). Single-label explanations leave these three `None`.

    `decision["network_read"]` says whether the network read the text for
    the decision (`TextClassifier.cascade`): when the n-gram part was sure
    enough alone, the decision is its own (`decision["network"]` is 0, the
    network's weight in it 0) and the words' evidence is the n-gram part's.

    Example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> explanation = clf.explain(["A great film. The plot was dull."])[0]   # Explainer(clf).explain
    >>> explanation.label == max(explanation.probabilities, key=explanation.probabilities.get)
    True
    >>> [sentence["text"] for sentence in explanation.sentences]
    ['A great film.', 'The plot was dull.']
    >>> [word.text for word in explanation.words if word.oov]   # not in the vocabulary
    ['The', 'was']
    >>> len(explanation.top_words(3)), sorted(explanation.to_dict())[:3]
    (3, ['cut_words', 'decision', 'id'])
    >>> repr(explanation).startswith(f"<Explanation {explanation.label} ")
    True
    >>> type(clf.explain("Dull and slow.")).__name__          # one text: one Explanation
    'Explanation'
    >>> explanation.top(1)[0].evidence == max((w.evidence for w in explanation.words), key=abs)
    True
    """

    text: str
    label: object
    probabilities: dict
    words: list
    sentences: list
    cut_words: int
    warnings: list
    doc_id: object = None
    true_label: object = None
    network_probabilities: dict = None
    decision: dict = None
    ngrams: list = None
    unshown_characters: int = 0
    threshold: float = None
    predicted_labels: list = None
    document: int = None

    @property
    def kind(self):
        """What it explains (`hierattn.kinds`): `MULTI`, one label against its `threshold`; else `SINGLE`."""
        return kind(self)

    def top_ngrams(self, k=10):
        """The `k` n-grams with the largest contributions to the decision, for either class, largest first.

        N-grams that contribute nothing (0) are left out, so fewer than `k` may come back.
        """
        grams = [g for g in self.ngrams or [] if g.contribution]
        return sorted(grams, key=lambda g: (-abs(g.contribution), g.start))[:k]

    def top(self, k=10):
        """The `k` words with the largest evidence, for the prediction or the runner-up (`WordWeight`s, largest first).

        Words without evidence are left out, so fewer than `k` may come back.
        """
        return top_evidence(self, k)

    def top_words(self, k=10):
        """The `k` words the network attended to most (attention, not evidence), largest first."""
        used = [w for w in self.words if w.used]
        return sorted(used, key=lambda w: (-w.weight, w.start))[:k]

    def _repr_html_(self):
        """The picture, for notebooks: one `<div>` whose CSS styles nothing outside it."""
        return to_html([self], page=False)

    def to_html(self, title="hierattn explanation"):
        """The picture as a standalone HTML page (`hierattn.explain.picture.to_html`)."""
        return to_html([self], title)

    def to_json(self, top_k=10):
        """`to_dict(top_k)` as a JSON object."""
        return dumps(self.to_dict(top_k), indent=2)

    def __repr__(self):
        words = " ".join(f"{'+' if w.evidence > 0 else '-'}{w.text}" for w in self.top(3))
        return f"<Explanation {self.label} {probability(self, self.label):.2f}" + (f": {words} ...>" if words else ">")

    def __str__(self):
        return to_text(self)

    def to_dict(self, top_k=10):
        """The explanation as plain values (what `to_json` writes).

        A multi-label classifier's explanation also says which label it
        explains (`label`) and that it is one (`multi_label`), the text's
        place (`document`), the label's `probability` and `threshold`,
        whether it is `predicted`, and the text's `predicted_labels`; its
        `decision` has `threshold` and `threshold_term` (`-logit threshold`).

        Every word with its `evidence`, `network_evidence` and
        `ngram_evidence`; the `top_k` words by evidence (`top_evidence`) and
        by attention (`top_words`); with a decision, its terms (`decision`),
        `margin_parts` (see `hierattn.explain.summaries.margin_parts`) and the
        `top_k` n-grams.
        """
        return {
            "id": self.doc_id,
            "true_label": self.true_label,
            "label": self.label,
            **(
                {}
                if self.threshold is None
                else {
                    "multi_label": True,
                    "document": self.document,
                    "probability": probability(self, self.label),
                    "threshold": self.threshold,
                    "predicted": self.label in (self.predicted_labels or []),
                    "predicted_labels": self.predicted_labels,
                }
            ),
            "probabilities": self.probabilities,
            "top_evidence": [dataclasses.asdict(w) for w in self.top(top_k)],
            "top_words": [dataclasses.asdict(w) for w in self.top_words(top_k)],
            "sentences": self.sentences,
            "words": [dataclasses.asdict(w) for w in self.words],
            "cut_words": self.cut_words,
            "unshown_characters": self.unshown_characters,
            "warnings": self.warnings,
            **(
                {}
                if self.decision is None
                else {
                    "network_probabilities": self.network_probabilities,
                    "decision": self.decision,
                    "margin_parts": margin_parts(self),
                    "top_ngrams": [dataclasses.asdict(g) for g in self.top_ngrams(top_k)],
                }
            ),
        }


class Explanations(list):
    """Several explanations: a list (index it, iterate it) that also shows itself in a notebook.

    `TextClassifier.explain` returns one for a list of texts.

    Example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> explanations = clf.explain(["A great film.", "Dull and slow."])
    >>> len(explanations), type(explanations[0]).__name__, len(explanations.top(2))
    (2, 'Explanation', 2)
    >>> explanations.to_html().startswith("<!DOCTYPE html>"), explanations._repr_html_().startswith("<div")
    (True, True)
    >>> type(explanations[:1]).__name__
    'Explanations'
    """

    def __getitem__(self, index):
        found = super().__getitem__(index)
        return Explanations(found) if isinstance(index, slice) else found  # a slice shows itself too

    def top(self, k=10):
        """Each explanation's `Explanation.top(k)`: a list of lists of `WordWeight`s."""
        return [e.top(k) for e in self]

    def to_html(self, title="hierattn explanation"):
        """The picture of every explanation, as one standalone HTML page."""
        return to_html(self, title)

    def to_json(self, top_k=10):
        """A JSON list of each explanation's `to_dict(top_k)`."""
        return to_json(self, top_k)

    def _repr_html_(self):
        return to_html(self, page=False)

    def __str__(self):
        return "\n\n".join(to_text(e) for e in self)
