"""`PredictionTable`: what a classifier's decision says of rows of probabilities, built once, given in three shapes.

The same rows are a CSV (`predict --file`), a pandas DataFrame (batch
prediction on Ray or Spark) and JSON answers (`predict "text"`,
`/v1/predict`); one builder gives all three, so they cannot drift apart.
Its columns, after whatever the caller carries from the input:

    predicted           the class, or a multi-label classifier's labels joined by a separator (none: empty)
    confidence          with a minimum confidence: the probability that the decision is right
                        (`Decision.confidence`); under the minimum, `predicted` is empty (left for a person)
    p_<class>           each class's probability, in the classifier's order
    top_1, p_top_1 ...  with top_k, the most probable classes and their probabilities, most probable first

A row of NaN probabilities is a text without words: it keeps its place,
with nothing predicted (empty CSV cells, None and NaN in a DataFrame).
"""

import numpy as np

from hierattn.decision import check_min_confidence
from hierattn.defaults import MULTILABEL
from hierattn.kinds import kind_of


def top_k_columns(k):
    """The ranked columns of `k` classes: `["top_1", "p_top_1", ..., "top_k", "p_top_k"]`.

    >>> top_k_columns(2)
    ['top_1', 'p_top_1', 'top_2', 'p_top_2']
    """
    return [column for rank in range(1, k + 1) for column in (f"top_{rank}", f"p_top_{rank}")]


def prediction_columns(label_names, top_k=None, confidence=False):
    """The table's columns for a classifier with `label_names`: `predicted`, [`confidence`], `p_<class>` ..., ranks."""
    ranks = 0 if top_k is None else min(top_k, len(label_names))
    shown = ["confidence"] if confidence else []
    return ["predicted", *shown, *(f"p_{name}" for name in label_names), *top_k_columns(ranks)]


class PredictionTable:
    """Rows of class probabilities with what a `hierattn.policy.DecisionPolicy` says of them, in three shapes.

    Args:
        decision: The classifier's `policy` (a `DecisionPolicy`, or a `hierattn.decision.Decision`).
        probabilities: Rows of probabilities `(n, classes)`; a row of NaN
            is a text without words.
        top_k: With a number, rank each row's `min(top_k, classes)` most
            probable classes.
        separator: What joins a multi-label classifier's labels in a cell
            (default `hierattn.defaults.MULTILABEL["separator"]`).
        min_confidence: With a number, each row's `confidence`, and no
            answer (`predicted` empty, `label` None) where it is under it;
            `left` counts those rows.

    Example:

    >>> from hierattn.policy import DecisionPolicy
    >>> table = PredictionTable(DecisionPolicy(["neg", "pos"]), np.array([[0.25, 0.75], [np.nan, np.nan]]), top_k=1)
    >>> table.columns
    ['predicted', 'p_neg', 'p_pos', 'top_1', 'p_top_1']
    >>> table.csv_cells()
    [['pos', '0.250000', '0.750000', 'pos', '0.750000'], ['', '', '', '', '']]
    >>> table.answers()[0]
    {'label': 'pos', 'probabilities': {'neg': 0.25, 'pos': 0.75}, 'top_k': [['pos', 0.75]]}
    >>> unsure = PredictionTable(DecisionPolicy(["neg", "pos"]), np.array([[0.25, 0.75], [0.05, 0.95]]), min_confidence=0.9)
    >>> unsure.csv_cells(), unsure.left
    ([['', '0.750000', '0.250000', '0.750000'], ['pos', '0.950000', '0.050000', '0.950000']], 1)
    >>> unsure.answers()[0]
    {'label': None, 'answered': False, 'confidence': 0.75, 'probabilities': {'neg': 0.25, 'pos': 0.75}}
    """

    @classmethod
    def of(cls, model, probabilities, options, separator=None):
        """The table of a model's probabilities as `options` (a checked `hierattn.policy.PredictOptions`) ask."""
        return cls(options.policy_of(model), probabilities, options.top_k, separator, options.min_confidence)

    def __init__(self, decision, probabilities, top_k=None, separator=None, min_confidence=None):
        self.names = [str(name) for name in decision.label_names]
        self.kind = kind_of(decision)
        self.multi_label = decision.multi_label
        self.thresholds = decision.thresholds
        self.probabilities = np.asarray(probabilities, np.float32).reshape(-1, len(self.names))
        self.missing = np.isnan(self.probabilities).any(axis=1)
        self.min_confidence = check_min_confidence(min_confidence)
        # each row's confidence, shown (and computed) only with a minimum
        self.confidence = None if self.min_confidence is None else decision.confidence(self.probabilities)
        self.answered = decision.answered(self.probabilities, self.min_confidence)
        self.labels = [_names(label) for label in decision.labels(self.probabilities, self.min_confidence)]
        self.ranks = 0 if top_k is None else min(top_k, len(self.names))
        ranked = decision.top_k(np.nan_to_num(self.probabilities), self.ranks) if self.ranks else []
        self.ranked = [[(str(name), p) for name, p in row] for row in ranked]
        self.separator = MULTILABEL["separator"] if separator is None else separator
        self.columns = prediction_columns(self.names, top_k, self.min_confidence is not None)

    def __len__(self):
        return len(self.probabilities)

    @property
    def scored(self):
        """How many rows have a prediction (texts with words)."""
        return int((~self.missing).sum())

    @property
    def left(self):
        """How many rows with words have no answer: their confidence is under the minimum (left for a person)."""
        return int((~self.missing & ~self.answered).sum())

    def predicted(self):
        """Each row's `predicted` cell: a class, a multi-label classifier's joined labels, or None (no words, unsure)."""
        return [self.separator.join(label) if isinstance(label, list) else label for label in self.labels]

    def csv_cells(self):
        """Each row's cells as text, in `columns` order (probabilities to 6 decimals; all empty without words)."""
        rows = []
        shown = self.min_confidence is not None
        for i, label in enumerate(self.predicted()):
            if self.missing[i]:
                rows.append([""] * len(self.columns))
                continue
            ranked = self.ranked[i] if self.ranks else []
            sure = [f"{self.confidence[i]:.6f}"] if shown else []
            cells = ["" if label is None else label, *sure, *(f"{p:.6f}" for p in self.probabilities[i])]
            rows.append(cells + [cell for name, p in ranked for cell in (name, f"{p:.6f}")])
        return rows

    def frame_columns(self):
        """The columns for a DataFrame, `{name: array}` in `columns` order: objects (None) and float32 (NaN)."""
        columns = {"predicted": _objects(self.predicted())}
        if self.min_confidence is not None:
            columns["confidence"] = self.confidence.astype(np.float32)
        for index, name in enumerate(self.names):
            columns[f"p_{name}"] = self.probabilities[:, index]
        for rank in range(self.ranks):
            rows = [None if gone else row[rank] for row, gone in zip(self.ranked, self.missing)]
            columns[f"top_{rank + 1}"] = _objects([None if cell is None else cell[0] for cell in rows])
            columns[f"p_top_{rank + 1}"] = np.array([np.nan if cell is None else cell[1] for cell in rows], np.float32)
        return columns

    def answers(self, api=False):
        """One dict per row: `label` (or `labels` and `thresholds`), `probabilities`, and with top_k `top_k`.

        With a minimum confidence, also `answered` (false: `label` is None,
        left for a person) and `confidence`, after the label. `top_k` holds `[class, probability]` pairs; with `api` (`/v1/predict`'s
        shape), `{"label", "probability"}` objects, and no `thresholds`
        (`/v1/model` says them once).
        """
        thresholds = dict(zip(self.names, self.thresholds)) if self.multi_label and not api else None
        answers = []
        for i, label in enumerate(self.labels):
            answer = {self.kind.answer_key: label}
            if thresholds is not None:
                answer["thresholds"] = thresholds
            if self.min_confidence is not None and not self.missing[i]:
                answer.update(answered=bool(self.answered[i]), confidence=float(self.confidence[i]))
            answer["probabilities"] = {name: float(p) for name, p in zip(self.names, self.probabilities[i])}
            if self.ranks and not self.missing[i]:
                ranked = self.ranked[i]
                answer["top_k"] = (
                    [{"label": name, "probability": p} for name, p in ranked]
                    if api
                    else [[name, p] for name, p in ranked]
                )
            answers.append(answer)
        return answers


def left_line(left, count, min_confidence, unit="texts"):
    """The summary of a minimum confidence: how many of `count` rows with words were left for a person.

    >>> left_line(3, 1200, 0.9)
    '3 of 1,200 texts left for a person: their confidence is under 0.9'
    """
    return f"{left:,} of {count:,} {unit} left for a person: their confidence is under {min_confidence:g}"


def wordless_line(wordless, rows, unit="texts"):
    """The summary of the rows without words: how many of `rows` got empty prediction cells, and why.

    >>> wordless_line(1, 5)
    '1 of 5 texts has no words (blank, or only markup): its prediction cells are empty'
    """
    has, its = ("has", "its") if wordless == 1 else ("have", "their")
    return f"{wordless:,} of {rows:,} {unit} {has} no words (blank, or only markup): {its} prediction cells are empty"


def _names(label):
    """A decision's answer with its names as text (a class, or a list of labels), or None."""
    if label is None:
        return None
    return [str(name) for name in label] if isinstance(label, list) else str(label)


def _objects(values):
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


__all__ = ["PredictionTable", "left_line", "prediction_columns", "top_k_columns", "wordless_line"]
