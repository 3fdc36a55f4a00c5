"""The two kinds of classifier, as values: `SINGLE` (one class per text) and `MULTI` (a set of labels per text).

Code that differs by kind asks the kind (`kind.noun`, `kind.metric`,
`kind.answer_key`, ...) instead of testing a `multi_label` flag; the
decision arithmetic that differs lives in `hierattn.decision` and
`hierattn.policy`. Plain Python: no NumPy, no TensorFlow.

Example:

>>> kind_of(True), kind_of(False).noun, MULTI.answer_key
(<Kind multi-label>, 'class', 'labels')
>>> f"{MULTI.accuracy_name} 0.91"
'exact-match accuracy 0.91'
"""

import dataclasses


@dataclasses.dataclass(frozen=True, repr=False)
class Kind:
    """What a kind of classifier is called and measured by.

    Attributes:
        name: `"single-label"` or `"multi-label"`.
        multi_label: Whether each text has a set of labels (the flag the files and the API keep).
        activation: The output activation: `"softmax"` over classes, or `"sigmoid"` per label.
        noun, nouns: `"class"` / `"classes"`, or `"label"` / `"labels"`.
        answer_key: The key of an answer in a prediction's JSON: `"label"` or `"labels"`.
        metric: The metric training reports and validation decides by: `"accuracy"` or `"micro_f1"`.
        accuracy_name: What its accuracy is: `"accuracy"`, or `"exact-match accuracy"` (the whole set right).
        labels_are: What a text's labels are, in an error message: `"one class per text"` or `"label sets"`.
        fewest_classes: The fewest classes (labels) training needs: 2 for a softmax, 1 label for sigmoids.

    Example:

    >>> kind = kind_of(True)
    >>> f"{kind.nouns}: {kind.activation} outputs, scored by {kind.metric}"
    'labels: sigmoid outputs, scored by micro_f1'
    """

    name: str
    multi_label: bool
    activation: str
    noun: str
    nouns: str
    answer_key: str
    metric: str
    accuracy_name: str
    labels_are: str
    fewest_classes: int

    def __repr__(self):
        return f"<Kind {self.name}>"

    def __str__(self):
        return self.name


SINGLE = Kind(
    name="single-label",
    multi_label=False,
    activation="softmax",
    noun="class",
    nouns="classes",
    answer_key="label",
    metric="accuracy",
    accuracy_name="accuracy",
    labels_are="one class per text",
    fewest_classes=2,
)
MULTI = Kind(
    name="multi-label",
    multi_label=True,
    activation="sigmoid",
    noun="label",
    nouns="labels",
    answer_key="labels",
    metric="micro_f1",
    accuracy_name="exact-match accuracy",
    labels_are="label sets",
    fewest_classes=1,
)
KINDS = (SINGLE, MULTI)


def kind_of(value):
    """The kind of a `multi_label` flag, a kind's name, or anything with a `kind` or a `multi_label` attribute.

    >>> kind_of("multi-label") is MULTI, kind_of(False) is SINGLE
    (True, True)

    Raises:
        ValueError: a string that names no kind.
    """
    if isinstance(value, Kind):
        return value
    if isinstance(value, str):
        for kind in KINDS:
            if value == kind.name:
                return kind
        raise ValueError(f"kind must be one of {', '.join(kind.name for kind in KINDS)}, not {value!r}")
    found = getattr(value, "kind", None)
    if isinstance(found, Kind):
        return found
    flag = getattr(value, "multi_label", value)
    return MULTI if bool(flag) else SINGLE


__all__ = ["KINDS", "MULTI", "SINGLE", "Kind", "kind_of"]
