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
"""

import numpy as np

from hierattn.defaults import NGRAMS

# a = scale * share, b = scale * (1 - share): `share` is the network's share of
# the combined score, `scale` its temperature (1/4 to 4, steps of sqrt(2)).
SHARES = tuple(np.round(np.linspace(0.0, 1.0, 21), 2))
SCALES = tuple(np.round(np.geomspace(0.25, 4.0, 9), 3))


def feature_matrix(layer, x, batch_size=256):
    """The binary document x feature matrix (SciPy CSR) of id arrays `x`, from `layer.feature_ids`."""
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


def fit_parts(classifier, training, validation=None, verbose=True):
    """Fits a classifier's n-gram part on `training` and sets the combination's weights.

    Called by `TextClassifier.fit` once the backbone is trained.

    Args:
        classifier: A `TextClassifier` with an n-gram part.
        training: `(ids, class ids)` the backbone was trained on.
        validation: `(ids, class ids)` to choose the weights on; without it
            they are `hierattn.defaults.NGRAMS["weights"]`.
        verbose: Print what was fitted and chosen.

    Returns:
        A JSON-ready dict: `training_seconds`, `network_weight` (`a`),
        `ngram_weight` (`b`), `network_share` (`a / (a + b)`) and, with
        validation data, the validation accuracy of each part alone and
        combined and the log-loss and accuracy of every share tried.
    """
    import time

    started = time.perf_counter()
    layer = classifier.ngram_logits
    fit_ngram_logits(layer, *training)
    report = {"train_documents": len(training[0])}
    if validation is not None and len(validation[0]):
        x, labels = validation
        labels = np.asarray(labels)
        probabilities = classifier.predict_ids(x, part="network")
        logits = ngram_logits(layer, x)
        (a, b), report["shares"] = choose_mixing(probabilities, logits, labels)
        report["validation_accuracy"] = {
            "network": float((probabilities.argmax(1) == labels).mean()),
            "ngrams": float((logits.argmax(1) == labels).mean()),
            "combined": float((combine(probabilities, logits, a, b).argmax(1) == labels).mean()),
        }
        chosen = "chosen on the validation texts (log-loss)"
    else:
        a, b = NGRAMS["weights"]
        chosen = "the default (no validation texts)"
    classifier.combination.mixing.assign(np.array([a, b], np.float32))
    report.update(
        network_weight=float(a),
        ngram_weight=float(b),
        network_share=float(a / (a + b)),
        training_seconds=round(time.perf_counter() - started, 1),
    )
    if verbose:
        print(
            f"n-gram part fitted on {len(training[0]):,} documents in {report['training_seconds']} s; "
            f"weights {a:.2f} (network) and {b:.2f} (n-grams), {chosen}"
        )
    return report
