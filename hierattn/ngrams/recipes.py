"""The n-gram part's linear recipes: fitted with scikit-learn, the best chosen on validation texts.

A recipe is how the n-gram counts of a document become features, and the
logistic regression fitted on them (`hierattn.defaults.NGRAMS["recipes"]`):

- `"tfidf"`: sublinear TF-IDF (`1 + log count`, scikit-learn's smoothed
  idf, rows scaled to unit length) of word 1-2 or 1-3 grams, multinomial
  logistic regression;
- `"nb"`: NB-weighted binarised 1-3 grams (Wang & Manning 2012): each
  feature scaled by its naive-Bayes log-count ratio `r`, one logistic
  regression per class against the rest (one in all for two classes); the
  ratios are folded into the kernel, so the layer reads plain binary
  features.

Each is fitted at every `C` of its grid, with and without
`class_weight="balanced"` when the classes are imbalanced (the largest at
least `NGRAMS["balanced_above"]` times the smallest), on the features of
the n-grams seen in at least `NGRAMS["min_df"]` training documents (all
of them in a corpus where none is seen that often). The
candidate with the smallest validation log-loss (the criterion the
combination's weights are chosen by; each candidate at its best
temperature, `hierattn.ngrams.mixing.scored_at_best_scale`) is set into the `NgramLogits` layer, which then computes
exactly the features and logits the fit used; features outside the fitted
vocabulary are ignored, as scikit-learn's vectorizer ignores unseen words.

For multi-label data (multi-hot label rows) every recipe is one binary
logistic regression per label (one-vs-rest; the NB ratios per label), the
log-loss the mean binary one, and no class weights are tried; a label with
no positive (or no negative) training document gets no features and the
log-odds of its training frequency as its bias (`hierattn.ngrams.onevsrest`
fits them, each label's Cs warm-started).

With `progress`, a bar ("n-gram part") moves with each model fitted: each
candidate, and for multi-label each label's model of each candidate, so a
fit of many labels shows from its first second.

Each candidate fitted is logged in one line to this module's logger
(`hierattn.ngrams.recipes`) at DEBUG level: shown by `hierattn --verbose`,
or in Python by `logging.basicConfig(level=logging.DEBUG)` or a handler on
the `hierattn` logger. The library adds no handler of its own.
"""

import logging
import time

import numpy as np

from hierattn.data.batching import trim_padding
from hierattn.data.progress import tqdm
from hierattn.defaults import NGRAMS
from hierattn.errors import DataError
from hierattn.metrics import classification_metrics, multilabel_metrics
from hierattn.ngrams.mixing import scored_at_best_scale
from hierattn.ngrams.onevsrest import fit_one_vs_rest

logger = logging.getLogger(__name__)


def count_matrices(layer, x, orders, batch_size=256):
    """Count matrices (SciPy CSR, documents x `layer.num_buckets`) of id arrays `x`: one of the 1..n grams per n.

    Args:
        layer: An `NgramLogits` layer with `ngram_max >= max(orders)` (its
            hashing gives the feature ids).
        x: Ids `(n, ..., length)`; every row of a document counts.
        orders: The longest n-grams wanted, e.g. `(2, 3)`.
        batch_size: Documents per batch.

    Returns:
        `{n: matrix}`, the counts of each document's 1..n grams.
    """
    # SciPy takes about a second to load: predicting never needs it, only fitting.
    import scipy.sparse as sp

    x = np.asarray(x)
    entries = {n: ([], []) for n in range(1, max(orders) + 1)}
    for start in range(0, len(x), batch_size):
        batch = trim_padding(x[start : start + batch_size])
        per_document = int(np.prod(batch.shape[1:-1]))  # rows (sentences) of each document
        for n, features in enumerate(layer.ngram_features(batch)[: max(orders)], start=1):
            features = np.asarray(features)
            r, c = np.nonzero(features >= 0)
            entries[n][0].append(r // per_document + start)
            entries[n][1].append(features[r, c])
    matrices, total = {}, None
    for n in range(1, max(orders) + 1):
        rows, columns = (np.concatenate(part) if part else np.zeros(0, np.int64) for part in entries[n])
        counts = sp.csr_matrix(
            (np.ones(len(rows), np.float32), (rows, columns)), shape=(len(x), layer.num_buckets)
        )  # duplicates summed: counts
        total = counts if total is None else total + counts
        if n in orders:
            matrices[n] = total
    return matrices


def _features(counts, recipe, idf):
    """The recipe's feature rows of a count matrix restricted to the kept features."""
    features = counts.astype(np.float32).tocsr(copy=True)
    if recipe["weighting"] == "nb":
        features.data[:] = 1.0
        return features
    features.data = 1.0 + np.log(features.data)
    features = features.multiply(idf).tocsr()
    norms = np.sqrt(np.asarray(features.multiply(features).sum(axis=1)).ravel())
    return features.multiply(1.0 / np.maximum(norms, 1e-12)[:, None]).tocsr()


def _nb_ratios(features, positive, alpha=NGRAMS["nb_alpha"]):
    """Wang & Manning's log-count ratio of each binary feature for `positive` documents against the rest."""
    p = alpha + np.asarray(features[positive].sum(axis=0)).ravel()
    q = alpha + np.asarray(features[~positive].sum(axis=0)).ravel()
    return np.log((p / p.sum()) / (q / q.sum())).astype(np.float32)


def _as_tables(coefficients, intercepts, classes, num_classes):
    """`(kernel (features, num_classes), bias)` from scikit-learn's coefficients; two classes split `+-w / 2`."""
    if len(classes) == 2 and len(coefficients) == 1:
        coefficients = np.stack([-coefficients[0] / 2, coefficients[0] / 2])
        intercepts = np.array([-intercepts[0] / 2, intercepts[0] / 2])
    kernel = np.zeros((coefficients.shape[1], num_classes), np.float32)
    bias = np.zeros(num_classes, np.float32)
    for row, label in enumerate(classes):
        kernel[:, label] = coefficients[row]
        bias[label] = intercepts[row]
    return kernel, bias


def _fit_tfidf(features, labels, grid, num_classes):
    """Multinomial logistic regression at each `(C, class_weight)`.

    Each fit starts from zero: started from the solution at a smaller C,
    lbfgs stops at once on large corpora (the change in the gradient is below
    its tolerance), which gave the smaller C's model again.
    """
    from sklearn.linear_model import LogisticRegression

    for class_weight in grid["class_weights"]:
        for c in grid["C"]:
            started = time.perf_counter()
            model = LogisticRegression(C=c, max_iter=NGRAMS["max_iter"], class_weight=class_weight)
            model.fit(features, labels)
            tables = _as_tables(model.coef_, model.intercept_, model.classes_, num_classes)
            yield c, class_weight, tables, time.perf_counter() - started


def _fit_nb(features, labels, grid, num_classes):
    """One logistic regression per class on NB-scaled features (one for two classes); the ratios go in the kernel."""
    from sklearn.linear_model import LogisticRegression

    classes = np.unique(labels)
    modelled = classes[1:] if len(classes) == 2 else classes
    for class_weight in grid["class_weights"]:
        for c in grid["C"]:
            started = time.perf_counter()
            coefficients, intercepts = [], []
            for label in modelled:
                positive = labels == label
                ratios = _nb_ratios(features, positive)
                model = LogisticRegression(  # liblinear shuffles: seeded, so a fit can be repeated
                    C=c, solver="liblinear", max_iter=NGRAMS["max_iter"], class_weight=class_weight, random_state=0
                )
                model.fit(features.multiply(ratios).tocsr(), positive)
                coefficients.append(model.coef_[0] * ratios)
                intercepts.append(model.intercept_[0])
            tables = _as_tables(np.array(coefficients), np.array(intercepts), modelled, num_classes)
            yield c, class_weight, tables, time.perf_counter() - started


def _class_weights(labels):
    """`(None,)`, or `(None, "balanced")` when the largest class is `balanced_above` times the smallest or more."""
    if labels.ndim == 2:  # multi-label: the thresholds, chosen per label, take the place of class weights
        return (None,)
    counts = np.bincount(labels)
    counts = counts[counts > 0]
    return (None, "balanced") if counts.max() >= NGRAMS["balanced_above"] * counts.min() else (None,)


def _checked_labels(labels):
    """`labels` as an array, refused (`DataError`, a `ValueError`) when no model can be fitted to them."""
    labels = np.asarray(labels)
    if labels.ndim == 2:
        counts = labels.sum(axis=0)
        if not np.any((counts > 0) & (counts < len(labels))):
            raise DataError("the n-gram part needs a label that some training documents have and others lack")
        return labels
    present = np.unique(labels)
    if len(present) < 2:
        raise DataError(
            f"the n-gram part needs two or more classes in its training labels. Received: {present.tolist()}"
        )
    return labels


def fit_recipes(layer_factory, x, labels, validation=None, recipes=None, progress=False):
    """Fits every recipe candidate on `x` and returns the best on `validation`, as a fitted `NgramLogits`.

    Args:
        layer_factory: `layer_factory(ngram_max, tf, normalize)` gives a new
            `NgramLogits` (the vocabulary, classes and buckets fixed).
        x: Training ids (the n-gram part's input).
        labels: Their class ids, or multi-hot rows (multi-label).
        validation: `(ids, labels)` to choose on; `None`: the first of
            `recipes` (default `NGRAMS["fallback"]`, one `C`) is fitted, and
            of its grid the first model fitted is kept.
        recipes: The recipes to try (default `NGRAMS["recipes"]`); a
            recipe's `"class_weights"` (e.g. `(None,)`), when given, replaces
            the grid's choice of `class_weight`.
        progress: Show a progress bar ("n-gram part"), moved by each model
            fitted: each candidate, and for multi-label each label's model
            of each candidate.

    Returns:
        `(layer, report)`: the fitted layer of the chosen candidate and a
        JSON-ready dict: `recipe` (the chosen one's settings), `candidates`
        (each one's settings, validation accuracy, macro-F1, log-loss and
        fit seconds) and `train_documents`.

    Raises:
        DataError: Fewer than two classes in `labels` (multi-label: no
            label both present and absent).
    """
    labels = _checked_labels(labels)
    if validation is None or not len(validation[1]):
        recipes, validation = [(recipes or [NGRAMS["fallback"]])[0]], None
    recipes = [dict(r) for r in (recipes or NGRAMS["recipes"])]
    class_weights = _class_weights(labels)
    grids = [{"C": r["C"], "class_weights": r.get("class_weights", class_weights)} for r in recipes]
    with tqdm(total=_fits(grids, labels), desc="n-gram part", unit="fit", disable=not progress) as bar:
        longest = max(r["ngram_max"] for r in recipes)
        counter = layer_factory(longest, "binary", True)
        orders = sorted({r["ngram_max"] for r in recipes})
        train_counts = count_matrices(counter, x, orders)
        val_counts = count_matrices(counter, validation[0], orders) if validation is not None else None
        best, candidates = None, []
        for recipe, grid in zip(recipes, grids):
            bar.set_postfix(recipe=f"{recipe['weighting']} 1-{recipe['ngram_max']}")
            counts = train_counts[recipe["ngram_max"]]
            kept, idf = _kept_features(counts, len(labels))
            features = _features(counts[:, kept], recipe, idf)
            val_features = _features(val_counts[recipe["ngram_max"]][:, kept], recipe, idf) if validation else None
            for c, class_weight, (kernel, bias), seconds in _fitted(features, labels, grid, recipe, counter, bar):
                row = {
                    "weighting": recipe["weighting"],
                    "ngram_max": recipe["ngram_max"],
                    "C": c,
                    "class_weight": class_weight,
                    "features": len(kept),
                    "fit_seconds": round(seconds, 1),
                }
                if validation is not None:
                    row.update(_scored(np.asarray(val_features @ kernel) + bias, validation[1]))
                candidates.append(row)
                logger.debug("n-gram recipe %s", _describe(row))
                if best is None or (validation is not None and row["val_log_loss"] < best[0]["val_log_loss"]):
                    best = (row, kept, idf, kernel, bias)
    row, kept, idf, kernel, bias = best
    sublinear = row["weighting"] == "tfidf"
    layer = layer_factory(row["ngram_max"], "sublinear" if sublinear else "binary", sublinear)
    weights = idf if sublinear else np.ones(len(kept), np.float32)
    layer.set_tables(kept, weights, kernel, bias, 0.0)
    chosen = {k: row[k] for k in ("weighting", "ngram_max", "C", "class_weight")}
    return layer, {"recipe": chosen, "candidates": candidates, "train_documents": len(labels)}


def _fits(grids, labels):
    """How many models the grids make: one per candidate, times the labels fitted for multi-label."""
    candidates = sum(len(grid["C"]) * len(grid["class_weights"]) for grid in grids)
    if labels.ndim == 1:
        return candidates
    counts = labels.sum(axis=0)
    return candidates * int(np.count_nonzero((counts > 0) & (counts < len(labels))))


def _kept_features(counts, documents):
    """The features of n-grams seen in `min_df` training documents or more (every one in a tiny corpus), and their idf."""
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    kept = np.flatnonzero(df >= NGRAMS["min_df"])
    if not len(kept):  # a tiny corpus: every n-gram seen
        kept = np.flatnonzero(df)
    return kept, (np.log((1.0 + documents) / (1.0 + df[kept])) + 1.0).astype(np.float32)


def _fitted(features, labels, grid, recipe, counter, bar):
    """The recipe's candidates fitted on `features`: `(C, class_weight, (kernel, bias), seconds)` each."""
    nb = recipe["weighting"] == "nb"
    if labels.ndim == 2:
        yield from fit_one_vs_rest(features, labels, grid, counter.num_classes, nb, bar=bar)
        return
    for candidate in (_fit_nb if nb else _fit_tfidf)(features, labels, grid, counter.num_classes):
        bar.update()
        yield candidate


def _scored(logits, labels):
    """Validation accuracy, macro-F1 and log-loss (at the best temperature) of a candidate's logits.

    Multi-label: micro-F1 instead of the accuracy, both F1s of the labels over log-odds 0.
    """
    if labels.ndim == 2:
        metrics = multilabel_metrics(labels, logits > 0, list(range(logits.shape[1])))
        return {
            "val_micro_f1": metrics["micro_f1"],
            "val_macro_f1": metrics["macro_f1"],
            "val_log_loss": round(scored_at_best_scale(logits, labels), 5),
        }
    metrics = classification_metrics(labels, logits.argmax(1), list(range(logits.shape[1])))
    return {
        "val_accuracy": metrics["accuracy"],
        "val_macro_f1": metrics["macro_f1"],
        "val_log_loss": round(scored_at_best_scale(logits, labels), 5),
    }


def _describe(row):
    """One line of a candidate, as the fit log writes it."""
    text = f"{row['weighting']} 1-{row['ngram_max']} C={row['C']:g}"
    text += " balanced" if row["class_weight"] else ""
    if "val_accuracy" in row:
        text += f": validation accuracy {row['val_accuracy']:.4f}, macro-F1 {row['val_macro_f1']:.4f}"
    elif "val_micro_f1" in row:
        text += f": validation micro-F1 {row['val_micro_f1']:.4f}, macro-F1 {row['val_macro_f1']:.4f}"
    return text + f" ({row['features']:,} features, {row['fit_seconds']} s)"
