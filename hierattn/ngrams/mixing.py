"""The combination of a `TextClassifier`'s n-gram part with its attention network.

The n-gram part is a linear model over the word n-grams of the whole text
(`hierattn.ngrams.NgramLogits`, its recipe chosen on validation texts by
`hierattn.ngrams.recipes`); it is combined with the network log-linearly
(`hierattn.ngrams.LogLinearCombination`), as Mesnil et al. (2015) combined
NBSVM with neural models:

    p(c | x) = softmax_c(a log p_network(c | x) + b z_c(x))

Both parts are trained separately on the same training texts: the network
by gradient descent, the n-gram part by scikit-learn. The weights `a` and
`b` are then chosen on the validation texts by log-loss (the criterion the
n-gram part's recipe is chosen by too), as a share `a / (a + b)` (a grid that
includes the network alone and the n-gram part alone) and a scale `a + b`
(a temperature: the two parts' scores are rarely calibrated for each
other, and with `a + b` held at 1 the log-loss favours an even share even
where a lopsided one is more accurate; BENCHMARKS.md).

`TextClassifier.fit` takes these steps in turn: Keras's fit of the network,
`TextClassifier.fit_ngrams` (`hierattn.ngrams.recipes.fit_recipes`) and
`hierattn.tuning.tune` (`mixing_on_validation`); the last two can
also be called alone.

A multi-label classifier combines each label alone, on its log-odds:
`p(l | x) = sigmoid(a logit p_network(l | x) + b z_l(x))`, the weights
chosen by the mean binary log-loss. Every function here reads which kind
it has from the labels: class ids `(n,)`, or multi-hot rows `(n, labels)`.
"""

import numpy as np

from hierattn.data.batching import sort_batches_by_length, trim_padding

# a = scale * share, b = scale * (1 - share): `share` is the network's share of
# the combined score, `scale` its temperature (1/4 to 4, steps of sqrt(2)).
SHARES = tuple(np.round(np.linspace(0.0, 1.0, 21), 2))
SCALES = tuple(np.round(np.geomspace(0.25, 4.0, 9), 3))


def ngram_logits(layer, x, batch_size=256):
    """The layer's logits for id arrays `x`, as NumPy `(n, classes)` (similar lengths batched together)."""
    x = np.asarray(x)
    logits = np.zeros((len(x), layer.num_classes), np.float32)
    for index in sort_batches_by_length(x, batch_size):
        logits[index] = np.asarray(layer(trim_padding(x[index])))
    return logits


def ngram_probabilities(layer, x, batch_size=256, activation="softmax"):
    """The n-gram part's own probabilities for id arrays `x`: the softmax (or sigmoid) of its logits, `(n, classes)`."""
    logits = ngram_logits(layer, x, batch_size)
    return combine(np.full_like(logits, 0.5), logits, 0.0, 1.0, activation=activation)


def activation_for_labels(labels):
    """`"sigmoid"` for multi-hot rows (multi-label), `"softmax"` for class ids."""
    return "sigmoid" if np.ndim(labels) == 2 else "softmax"


def combine(probabilities, logits, a, b, epsilon=1e-7, activation="softmax"):
    """`softmax(a log p + b z)` (or `sigmoid(a logit p + b z)`) in NumPy, as `LogLinearCombination` computes it."""
    scores = a * np.log(np.maximum(probabilities, epsilon)) + b * logits
    if activation == "sigmoid":
        scores = scores - a * np.log(np.maximum(1.0 - probabilities, epsilon))
        with np.errstate(over="ignore"):  # exp(-scores) past float range: inf, and the probability 0, as it is
            return 1.0 / (1.0 + np.exp(-scores))
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)


def log_loss(probabilities, labels):
    """The mean negative log-probability of the true classes (of each label's truth, for multi-hot rows).

    Probabilities are clipped at 1e-12 (and `1 - 1e-12`).
    """
    if np.ndim(labels) == 2:
        p = np.clip(probabilities, 1e-12, 1.0 - 1e-12)
        return float(-(labels * np.log(p) + (1.0 - labels) * np.log(1.0 - p)).mean())
    picked = probabilities[np.arange(len(labels)), labels]
    return float(-np.log(np.maximum(picked, 1e-12)).mean())


def hits(probabilities, labels):
    """`("accuracy", share of argmax right)`, or for multi-hot rows `("micro_f1", micro-F1 over 0.5)`."""
    if np.ndim(labels) != 2:
        return "accuracy", float((probabilities.argmax(1) == labels).mean())
    predicted = probabilities > 0.5
    true_positives = float((predicted & (labels > 0)).sum())
    return "micro_f1", 2.0 * true_positives / max(float(predicted.sum() + (labels > 0).sum()), 1.0)


def scored_at_best_scale(logits, labels, score=None):
    """`log_loss` (or `score`) of `softmax(scale * logits)` at its best scale of `SCALES` (the part alone)."""
    score, neutral, activation = score or log_loss, np.full_like(logits, 0.5), activation_for_labels(labels)
    return min(score(combine(neutral, logits, 0.0, scale, activation=activation), labels) for scale in SCALES)


def choose_mixing(probabilities, logits, labels, score=None):
    """The weights `(a, b)` with the smallest validation log-loss, and the log-loss and accuracy of each share.

    Every share of `SHARES` is tried at every scale of `SCALES`
    (`a = scale * share`, `b = scale * (1 - share)`); ties go to the larger
    share, then to the scale nearer 1.

    Args:
        probabilities: The network's validation probabilities `(n, classes)`.
        logits: The n-gram part's validation logits `(n, classes)`.
        labels: Validation class ids (or multi-hot rows).
        score: What is minimised instead of the log-loss (a function of
            probabilities and labels; for studies).

    Returns:
        `(a, b)` and a list of `{"share", "scale", "log_loss", "accuracy"}`
        (`"micro_f1"` over 0.5 for multi-hot rows instead of `"accuracy"`),
        one per share (its best scale; the accuracy does not depend on it).
    """
    labels = np.asarray(labels)
    activation, table = activation_for_labels(labels), []
    for share in SHARES:
        rows = []
        for scale in SCALES:
            combined = combine(probabilities, logits, scale * share, scale * (1.0 - share), activation=activation)
            rows.append(
                {
                    "share": float(share),
                    "scale": float(scale),
                    "log_loss": (score or log_loss)(combined, labels),
                    **dict([hits(combined, labels)]),
                }
            )
        table.append(min(rows, key=lambda row: (row["log_loss"], abs(np.log(row["scale"])))))
    best = min(table, key=lambda row: (row["log_loss"], -row["share"]))
    return (best["scale"] * best["share"], best["scale"] * (1.0 - best["share"])), table


def mixing_on_validation(probabilities, logits, labels):
    """The weights `choose_mixing` picks, and what they were chosen on.

    Args:
        probabilities: The network's validation probabilities `(n, classes)`.
        logits: The n-gram part's validation logits `(n, classes)`.
        labels: Validation class ids (or multi-hot rows).

    Returns:
        `(a, b)` and a JSON-ready dict: `shares` (`choose_mixing`'s table) and
        `validation_accuracy` (`validation_micro_f1` over 0.5 for multi-hot
        rows), of the network, the n-gram part and the two combined with `(a, b)`.
    """
    labels = np.asarray(labels)
    activation = activation_for_labels(labels)
    (a, b), shares = choose_mixing(probabilities, logits, labels)
    parts = {
        "network": probabilities,
        "ngrams": combine(np.full_like(logits, 0.5), logits, 0.0, 1.0, activation=activation),
        "combined": combine(probabilities, logits, a, b, activation=activation),
    }
    measured = {part: hits(values, labels) for part, values in parts.items()}
    key = "validation_" + next(iter(measured.values()))[0]
    return (a, b), {"shares": shares, key: {part: value for part, (_, value) in measured.items()}}
