"""What an explanation holds: the prediction, each word's attention and, with an n-gram part, the decision's account.

`Explainer.explain` (`hierattn.explain.explainer`) builds these; the
renderings of `hierattn.explain.report` and the corpus statistics of
`hierattn.explain.corpus` read them.
"""

import dataclasses

from hierattn.explain.report import to_html


@dataclasses.dataclass
class WordWeight:
    """One word of the original text and its attention."""

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
    evidence: float = None


@dataclasses.dataclass
class NgramContribution:
    """One distinct n-gram of the text and its exact share of the decision margin (n-gram part)."""

    text: str
    sentence: int
    start: int
    end: int
    contribution: float


@dataclasses.dataclass
class Explanation:
    """A prediction with the attention over the words and sentences of one text."""

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

    def top_ngrams(self, k=10):
        """The `k` n-grams with the largest contributions to the decision, for or against, largest first."""
        return sorted(self.ngrams or [], key=lambda g: (-abs(g.contribution), g.start))[:k]

    def top_words(self, k=10):
        """The `k` words with the largest importance, largest first."""
        used = [w for w in self.words if w.used]
        return sorted(used, key=lambda w: (-w.weight, w.start))[:k]

    def _repr_html_(self):
        """The HTML heatmap, for notebooks."""
        return to_html([self])

    def to_dict(self, top_k=10):
        """The explanation as plain values (what `to_json` writes), with the `top_k` words and n-grams."""
        return {
            "id": self.doc_id,
            "true_label": self.true_label,
            "label": self.label,
            "probabilities": self.probabilities,
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
                    "top_ngrams": [dataclasses.asdict(g) for g in self.top_ngrams(top_k)],
                }
            ),
        }
