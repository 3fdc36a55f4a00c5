"""Properties of predicting any text (Hypothesis, `tests/hostile.py`): Keras and the runtime read and answer alike.

For any list of texts: the runtime's ids are the Keras preprocessor's, and both give the same probabilities,
finite and summing to 1 for a text with words, a row of NaN for one without (`predict_texts`), and what the model
says of padding for it in `predict`, as Keras's `predict` does; a single-label classifier's rows sum to 1.
"""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hostile import budget, hostile_texts

pytestmark = pytest.mark.keras


@pytest.fixture(scope="module", params=["han_run_dir", "multilabel_run_dir"])
def both(request):
    """A trained run's Keras classifier and its bundle's predictor: single-label, then multi-label."""
    from hierattn import runtime
    from hierattn.runs.run import load_run

    run_dir = request.getfixturevalue(request.param)
    return load_run(run_dir).classifier, runtime.load(run_dir / "model.onnx")


TEXTS = st.lists(hostile_texts(max_size=60, huge=False), min_size=1, max_size=4)


@given(texts=TEXTS)
@budget(20)
@example(texts=["", "   ", "<br />", "&amp;", "\x00", "。", "\u0301", "\U0001f44d", "!!!", "good film"])
@example(texts=["\ud800 good", "\u202egood film\u202c", "&#x110000; bad"])
def test_keras_and_the_runtime_read_a_text_into_the_same_ids(both, texts):
    classifier, predictor = both
    keras_ids, runtime_ids = classifier.preprocess(texts), predictor.preprocess(texts)
    assert set(keras_ids) == set(runtime_ids)
    for name, ids in keras_ids.items():
        np.testing.assert_array_equal(ids, runtime_ids[name])


@given(texts=TEXTS)
@budget(20)
@example(texts=["", "   ", "<br />", "&amp;", "\x00", "。", "\u0301", "\U0001f44d", "!!!", "good film"])
def test_keras_and_the_runtime_give_the_same_probabilities_and_the_same_answer_without_words(both, texts):
    classifier, predictor = both
    keras, runtime = classifier.predict_texts(texts), predictor.predict_texts(texts)
    wordless = np.array([not predictor.has_words(text) for text in texts])
    assert [classifier.has_words(text) for text in texts] == list(~wordless)
    assert np.isnan(keras[wordless]).all() and np.isnan(runtime[wordless]).all()
    assert np.isfinite(keras[~wordless]).all() and np.isfinite(runtime[~wordless]).all()
    if not classifier.kind.multi_label:
        np.testing.assert_allclose(keras[~wordless].sum(axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(keras[~wordless], runtime[~wordless], atol=1e-5)
    everyone_keras, everyone_runtime = classifier.predict(texts, verbose=0), predictor.predict(texts)
    assert np.isfinite(everyone_keras).all()
    np.testing.assert_allclose(everyone_keras, everyone_runtime, atol=1e-5)
    np.testing.assert_allclose(everyone_keras[~wordless], keras[~wordless], atol=1e-6)
