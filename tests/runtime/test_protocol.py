"""`hierattn.runtime.TextPredictor`: the bundle's predictor and the Keras classifier answer to the same names."""

import numpy as np
import pytest

from hierattn import runtime
from hierattn.errors import ArgumentError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runtime.protocol import TextPredictor

pytestmark = pytest.mark.slow

TEXTS = ["The film was wonderful.", "<br />", "I found the acting dreadful!"]


@pytest.mark.parametrize("run", ["han_run", "multilabel_run"])
def test_both_predictors_give_the_same_answers_by_the_same_names(run, request):
    classifier = request.getfixturevalue(run)
    bundle = runtime.load(request.getfixturevalue(f"{run}_dir") / BUNDLE_FILE)
    assert isinstance(classifier, TextPredictor) and isinstance(bundle, TextPredictor)
    for name in ("label_names", "multi_label", "thresholds", "architecture"):
        assert getattr(bundle, name) == getattr(classifier, name), name
    assert [bundle.has_words(t) for t in TEXTS] == [classifier.has_words(t) for t in TEXTS] == [True, False, True]
    texts = [TEXTS[0], TEXTS[2]]
    x, y = bundle.preprocess(texts, workers=1), classifier.preprocess(texts, workers=1)
    np.testing.assert_array_equal(x["token_ids"], y["token_ids"])
    np.testing.assert_allclose(bundle.predict_ids(x), classifier.predict_ids(y), atol=1e-5)
    assert bundle.predict_labels(texts) == classifier.predict_labels(texts)
    assert bundle.policy == classifier.policy  # one value, from the bundle's metadata and from the .keras file


def test_a_bad_k_is_the_same_error_in_both(han_run, han_run_dir):
    bundle = runtime.load(han_run_dir / BUNDLE_FILE)
    for predictor in (bundle, han_run):
        with pytest.raises(ArgumentError, match="^k must be a whole number of at least 1, not 0$"):
            predictor.predict_top_k(TEXTS[:1], 0)
