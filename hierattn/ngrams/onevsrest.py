"""The multi-label n-gram part's fits: one binary logistic regression per label, label by label, with progress.

A multi-label recipe (`hierattn.ngrams.recipes`) fits one binary logistic
regression per label on features shared by every label: Reuters' 90 labels
make 90 fits per candidate, and a corpus with 1,000 labels 1,000. The fits
are what the n-gram part's time goes to, so they are made cheap here:

- one thread of BLAS per fit (`threadpoolctl`): L-BFGS's vector operations
  are too small to gain from threads, and on a busy machine OpenBLAS's
  threads wait on each other (Reuters' n-gram part took 888 s on a loaded
  machine against 115 s on an idle one; one thread gives back most of it);
- a label's C grid walked up from the smallest C, each fit started from the
  label's model at the C before it (`warm_start`, with the tolerance scaled
  down by the ratio of the Cs so that a start near the answer is not taken
  for it);
- the NB ratios' positive counts of every label from one sparse product.

Each label fitted moves the progress bar it is given by one.
"""

import collections
import concurrent.futures
import os
import time

import numpy as np

from hierattn.defaults import NGRAMS


def fit_one_vs_rest(features, labels, grid, num_classes, nb=False, bar=None, workers=None):
    """One binary logistic regression per label of multi-hot `labels`, at each C of `grid` (NB-scaled with `nb`).

    A label without both positive and negative training documents is not
    fitted: its kernel column is zero and its bias the smoothed log-odds of
    its training frequency.

    Args:
        features: Training features (SciPy CSR, documents x features).
        labels: Multi-hot rows `(documents, labels)`.
        grid: `{"C": (...), "class_weights": (...)}`.
        num_classes: The number of labels (kernel columns).
        nb: NB-scaled binary features, the ratios folded into the kernel.
        bar: A progress bar (`hierattn.data.progress.tqdm`), moved by one per label fitted.
        workers: Threads fitting labels side by side (default: one per core).

    Yields:
        `(C, class_weight, (kernel, bias), seconds)` for each C of the grid, in the grid's order.
    """
    from threadpoolctl import threadpool_limits

    counts = labels.sum(axis=0)
    fitted = np.flatnonzero((counts > 0) & (counts < len(labels)))
    sums = _nb_sums(features, labels) if nb else None
    for class_weight in grid["class_weights"]:
        results = {
            c: (np.zeros((features.shape[1], num_classes), np.float32), _prior_bias(counts, len(labels)), 0.0)
            for c in grid["C"]
        }

        def path(label, class_weight=class_weight):
            scale = _nb_ratios(sums, label) if nb else None
            x = features.multiply(scale).tocsr() if nb else features
            return label, scale, list(_label_path(x, labels[:, label] > 0, grid["C"], class_weight, nb))

        with threadpool_limits(1):
            for label, scale, fits in _in_order(path, fitted, workers or _cores()):
                for c, coefficients, intercept, seconds in fits:
                    kernel, bias, total = results[c]
                    kernel[:, label] = coefficients * scale if nb else coefficients
                    bias[label] = intercept
                    results[c] = (kernel, bias, total + seconds)
                if bar is not None:
                    bar.update(len(grid["C"]))
        for c in grid["C"]:
            kernel, bias, seconds = results[c]
            yield c, class_weight, (kernel, bias), seconds


def _label_path(features, positive, cs, class_weight, nb):
    """`(C, coefficients, intercept, seconds)` of one label's model at each C, each fit warm-started from the one before.

    The NB recipe is fitted with liblinear, which cannot start from a model:
    each of its Cs starts from zero.
    """
    from sklearn.linear_model import LogisticRegression

    model, before = None, None
    for c in sorted(cs):
        started = time.perf_counter()
        if nb:  # liblinear shuffles: seeded, so a fit can be repeated
            model = LogisticRegression(
                C=c, solver="liblinear", max_iter=NGRAMS["max_iter"], class_weight=class_weight, random_state=0
            )
        elif model is None:
            model = LogisticRegression(C=c, max_iter=NGRAMS["max_iter"], class_weight=class_weight, warm_start=True)
        else:  # the gradient at the last C's model is small already: ask for it smaller by as much as C grew
            model.set_params(C=c, tol=model.tol * before / c)
        model.fit(features, positive)
        before = c
        yield c, model.coef_[0], model.intercept_[0], time.perf_counter() - started


def _in_order(function, items, workers):
    """`function(item)` of each item, in order, computed by `workers` threads, at most `2 * workers` results ahead."""
    with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="hierattn-label") as pool:
        pending = collections.deque()
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _prior_bias(counts, documents):
    """Each label's smoothed log-odds of its training frequency: the bias of a label that is not fitted."""
    return np.log((counts + 0.5) / (documents - counts + 0.5)).astype(np.float32)


def _nb_sums(features, labels):
    """`(positive_sums, totals)`: each label's per-feature sums over its documents (CSR, labels x features), and all documents'."""
    import scipy.sparse as sp

    positive_sums = (sp.csr_matrix(labels.T, dtype=np.float64) @ features).tocsr()
    return positive_sums, np.asarray(features.sum(axis=0, dtype=np.float64)).ravel()


def _nb_ratios(sums, label, alpha=NGRAMS["nb_alpha"]):
    """Wang & Manning's log-count ratio of each binary feature for the label's documents against the rest."""
    positive_sums, totals = sums
    positive = positive_sums[label].toarray().ravel()
    p, q = alpha + positive, alpha + totals - positive
    return np.log((p / p.sum()) / (q / q.sum())).astype(np.float32)
