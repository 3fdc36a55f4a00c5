"""Fitting the n-gram part of a `TextClassifier` and its combination with the attention network.

The n-gram part is a linear model over the word 1-2 grams of the ids
the network reads (`hierattn.layers.NgramLogits`); it is combined with the
network log-linearly (`hierattn.layers.LogLinearCombination`), as Mesnil et
al. (2015) combined NBSVM with neural models:

    p(c | x) = softmax_c(a log p_network(c | x) + b z_c(x))

Both parts are trained separately on the same training texts: the network
by gradient descent, the n-gram part by scikit-learn's logistic regression
on TF-IDF-weighted binary n-gram features (computed by the layer itself, so
training and inference see the same features). The weights `a` and `b` are
then chosen on the validation texts by log-loss, as a share `a / (a + b)`
(a grid that includes the network alone and the n-gram part alone) and a
scale `a + b` (a temperature: the two parts' scores are rarely calibrated
for each other, and with `a + b` held at 1 the log-loss favours an even
share even where a lopsided one is more accurate; BENCHMARKS.md).

`TextClassifier.fit` takes these steps in turn: Keras's fit of the network,
`TextClassifier.fit_ngrams` (`fit_ngram_logits`) and
`TextClassifier.choose_weights` (`mixing_on_validation`); the last two can
also be called alone.
"""

import numpy as np

from hierattn.defaults import NGRAMS

# a = scale * share, b = scale * (1 - share): `share` is the network's share of
# the combined score, `scale` its temperature (1/4 to 4, steps of sqrt(2)).
SHARES = tuple(np.round(np.linspace(0.0, 1.0, 21), 2))
SCALES = tuple(np.round(np.geomspace(0.25, 4.0, 9), 3))


def feature_matrix(layer, x, batch_size=256):
    """The binary document x feature matrix (SciPy CSR) of id arrays `x`, from `layer.feature_ids`."""
    # SciPy and scikit-learn take about a second to load: predicting never needs them, only fitting.
    import scipy.sparse as sp

    rows, columns = [], []
    for start in range(0, len(x), batch_size):
        ids = np.asarray(layer.feature_ids(x[start : start + batch_size]))
        r, c = np.nonzero(ids >= 0)
        rows.append(r + start)
        columns.append(ids[r, c])
    rows, columns = np.concatenate(rows), np.concatenate(columns)
    return sp.csr_matrix((np.ones(len(rows), np.float32), (rows, columns)), shape=(len(x), layer.num_buckets))


def fit_ngram_logits(layer, x, labels, c=NGRAMS["C"], max_iter=NGRAMS["max_iter"]):
    """Fits an `NgramLogits` layer's tables to id arrays `x` and class ids `labels` (scikit-learn).

    The idf comes from `TfidfTransformer` (smoothed, as scikit-learn's
    default) on the binary features; `LogisticRegression` (lbfgs,
    multinomial) is fitted on the TF-IDF rows, over the features that occur
    in `x` only (the others would get zero weight anyway). The layer keeps
    those features only, with their idf and kernel rows, and the idf of an
    unseen feature (`NgramLogits.set_tables`). With two classes, the single
    weight vector `w` becomes `+-w / 2` for the two classes (the same
    probabilities, and contributions symmetric between the classes).

    Raises:
        ValueError: Fewer than two classes in `labels`.
    """
    # As above: only fitting loads scikit-learn.
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegression

    labels = np.asarray(labels)
    present = np.unique(labels)
    if len(present) < 2:
        raise ValueError(
            f"the n-gram part needs two or more classes in its training labels. Received: {present.tolist()}"
        )
    features = feature_matrix(layer, x)
    tfidf = TfidfTransformer().fit(features)
    features = tfidf.transform(features)
    seen = np.unique(features.indices)
    model = LogisticRegression(C=c, max_iter=max_iter).fit(features[:, seen], labels)
    kernel = np.zeros((len(seen), layer.num_classes), np.float32)
    bias = np.zeros(layer.num_classes, np.float32)
    if len(model.classes_) == 2:
        coefficients = np.stack([-model.coef_[0] / 2, model.coef_[0] / 2])
        intercepts = np.array([-model.intercept_[0] / 2, model.intercept_[0] / 2])
    else:
        coefficients, intercepts = model.coef_, model.intercept_
    for row, label in enumerate(model.classes_):
        kernel[:, label] = coefficients[row]
        bias[label] = intercepts[row]
    idf = tfidf.idf_.astype(np.float32)
    # Every feature in no training document has the same idf, log(1 + n) + 1;
    # id 0 (padding) is never a feature, so it is one of them.
    layer.set_tables(seen, idf[seen], kernel, bias, idf[0])
    return layer


def ngram_logits(layer, x, batch_size=256):
    """The layer's logits for id arrays `x`, as NumPy `(n, classes)`."""
    return np.concatenate(
        [np.asarray(layer(x[start : start + batch_size])) for start in range(0, len(x), batch_size)]
        or [np.zeros((0, layer.num_classes))]
    )


def ngram_probabilities(layer, x, batch_size=256):
    """The n-gram part's own class probabilities for id arrays `x`: the softmax of its logits, `(n, classes)`."""
    logits = ngram_logits(layer, x, batch_size)
    return combine(np.ones_like(logits), logits, 0.0, 1.0)


def combine(probabilities, logits, a, b, epsilon=1e-7):
    """`softmax(a log p + b z)` in NumPy (as `LogLinearCombination` computes it)."""
    scores = a * np.log(np.maximum(probabilities, epsilon)) + b * logits
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)


def log_loss(probabilities, labels):
    """The mean negative log-probability of the true classes (probabilities clipped at 1e-12)."""
    picked = probabilities[np.arange(len(labels)), labels]
    return float(-np.log(np.maximum(picked, 1e-12)).mean())


def choose_mixing(probabilities, logits, labels):
    """The weights `(a, b)` with the smallest validation log-loss, and the log-loss and accuracy of each share.

    Every share of `SHARES` is tried at every scale of `SCALES`
    (`a = scale * share`, `b = scale * (1 - share)`); ties go to the larger
    share, then to the scale nearer 1.

    Args:
        probabilities: The network's validation probabilities `(n, classes)`.
        logits: The n-gram part's validation logits `(n, classes)`.
        labels: Validation class ids.

    Returns:
        `(a, b)` and a list of `{"share", "scale", "log_loss", "accuracy"}`,
        one per share (its best scale; the accuracy does not depend on it).
    """
    labels = np.asarray(labels)
    table = []
    for share in SHARES:
        rows = []
        for scale in SCALES:
            combined = combine(probabilities, logits, scale * share, scale * (1.0 - share))
            rows.append(
                {
                    "share": float(share),
                    "scale": float(scale),
                    "log_loss": log_loss(combined, labels),
                    "accuracy": float((combined.argmax(1) == labels).mean()),
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
        labels: Validation class ids.

    Returns:
        `(a, b)` and a JSON-ready dict: `shares` (`choose_mixing`'s table) and
        `validation_accuracy`, of the network, the n-gram part and the two
        combined with `(a, b)`.
    """
    labels = np.asarray(labels)
    (a, b), shares = choose_mixing(probabilities, logits, labels)
    accuracy = {
        "network": float((probabilities.argmax(1) == labels).mean()),
        "ngrams": float((logits.argmax(1) == labels).mean()),
        "combined": float((combine(probabilities, logits, a, b).argmax(1) == labels).mean()),
    }
    return (a, b), {"shares": shares, "validation_accuracy": accuracy}
