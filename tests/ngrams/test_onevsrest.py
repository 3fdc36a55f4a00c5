"""Tests for hierattn.ngrams.onevsrest: the multi-label n-gram part's fits, one binary model per label."""

import numpy as np
import pytest
import scipy.sparse as sp

from hierattn.ngrams import recipes
from hierattn.ngrams.onevsrest import _nb_ratios, _nb_sums, fit_one_vs_rest


def problem(rng, documents=150, features=60, labels=4):
    """Sparse non-negative features whose first columns carry each label (a last label no document has)."""
    y = (rng.random((documents, labels)) < 0.3).astype(np.int8)
    y[:, -1] = 0
    dense = (rng.random((documents, features)) < 0.15) * rng.random((documents, features))
    dense[:, :labels] += y  # a label's own column
    return sp.csr_matrix(dense.astype(np.float32)), y


class Counter:
    """A progress bar that records each step and the BLAS threads in use when it moved."""

    def __init__(self):
        self.steps, self.threads = 0, set()

    def update(self, n=1):
        from threadpoolctl import threadpool_info

        self.steps += n
        self.threads |= {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


def test_each_label_at_each_c_is_as_near_the_optimum_as_scikit_learns_model_fitted_from_zero(rng):
    from sklearn.linear_model import LogisticRegression

    x, y = problem(rng)
    grid = {"C": (10.0, 30.0), "class_weights": (None,)}
    fitted = {c: tables for c, _, tables, _ in fit_one_vs_rest(x, y, grid, 4)}
    assert list(fitted) == [10.0, 30.0]
    for c, (kernel, bias) in fitted.items():  # the larger C starts from the smaller's model, asked to go nearer
        ours, cold = 0.0, 0.0
        for label in range(3):
            exact = LogisticRegression(C=c, max_iter=5000, tol=1e-10).fit(x, y[:, label]).decision_function(x)
            model = LogisticRegression(C=c, max_iter=2000).fit(x, y[:, label])  # the fit before issue #54
            ours += np.abs(x @ kernel[:, label] + bias[label] - exact).max()
            cold += np.abs(model.decision_function(x) - exact).max()
        assert ours <= cold + 1e-6
        np.testing.assert_allclose(kernel[:, 3], 0.0)
        np.testing.assert_allclose(bias[3], np.log(0.5 / 150.5), rtol=1e-6)


def test_each_label_fitted_moves_the_bar_and_the_fits_use_one_blas_thread(rng):
    x, y = problem(rng)
    bar = Counter()
    list(fit_one_vs_rest(x, y, {"C": (10.0, 30.0), "class_weights": (None,)}, 4, bar=bar))
    assert bar.steps == 3 * 2  # three labels fitted (the fourth has no document), at two Cs
    assert bar.threads == {1}


@pytest.mark.parametrize("label", [0, 1, 2])
def test_the_nb_ratios_of_every_label_from_one_product_are_each_labels_own(rng, label):
    x, y = problem(rng)
    binary = x.copy()
    binary.data[:] = 1.0
    expected = recipes._nb_ratios(binary, y[:, label] > 0)
    np.testing.assert_allclose(_nb_ratios(_nb_sums(binary, y), label), expected, rtol=1e-5, atol=1e-6)
