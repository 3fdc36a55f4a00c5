"""Tests for hierattn.explain.faithfulness: erasure of top-k words (ERASER comprehensiveness)."""

import numpy as np
import pytest

from hierattn.errors import HierattnError
from hierattn.explain.faithfulness import (
    check_faithfulness,
    erasure_effects,
    remove_positions,
    summarize,
    top_positions,
)

from conftest import make_run


def test_remove_positions_deletes_and_shifts_flat_and_hierarchical():
    flat = np.array([5, 6, 7, 8, 0, 0])
    np.testing.assert_array_equal(remove_positions(flat, [(1,), (3,)]), [5, 7, 0, 0, 0, 0])
    han = np.array([[5, 6, 7], [8, 9, 0], [4, 0, 0]])
    out = remove_positions(han, [(0, 0), (1, 1), (2, 0)])
    np.testing.assert_array_equal(out, [[6, 7, 0], [8, 0, 0], [0, 0, 0]])  # sentences stay in place
    np.testing.assert_array_equal(han, [[5, 6, 7], [8, 9, 0], [4, 0, 0]])  # input untouched


def test_top_positions_ignores_padding_breaks_ties_by_position_and_caps_k():
    ids = np.array([[3, 4, 0], [5, 0, 0]])
    scores = np.array([[0.2, 0.5, 9.0], [0.5, 7.0, 0.0]])  # large scores on padding must not count
    np.testing.assert_array_equal(top_positions(scores, ids, 2), [[0, 1], [1, 0]])
    assert len(top_positions(scores, ids, 10)) == 3
    assert len(top_positions(scores, np.zeros((2, 3), int), 1)) == 0


def _signal_predictor(x):
    """Known model: P(class 1) = 0.9 if the document contains id 7, else 0.3."""
    flat = x.reshape(len(x), -1)
    p1 = np.where((flat == 7).any(1), 0.9, 0.3)
    return np.stack([1 - p1, p1], 1)


def test_erasure_effects_known_answer():
    # Five words per document; the decisive word (id 7) sits at a different place in each.
    x = np.array([[7, 2, 3, 4, 5, 0], [2, 3, 7, 4, 5, 0], [2, 3, 4, 5, 7, 0]])
    oracle = (x == 7).astype(float)  # ranks the decisive word first
    wrong = (x != 7).astype(float) * (x != 0)  # ranks it last
    parts, base = erasure_effects(
        _signal_predictor, x, {"oracle": oracle, "wrong": wrong}, ks=(1, 4, 5), random_draws=3, seed=0
    )
    np.testing.assert_allclose(base[:, 1], 0.9)
    report = summarize(parts, (1, 4, 5), 3)
    assert report.drop["oracle"] == pytest.approx({1: 0.6, 4: 0.6, 5: 0.6})
    assert report.flip_rate["oracle"] == pytest.approx({1: 1.0, 4: 1.0, 5: 1.0})
    assert report.drop["wrong"] == pytest.approx({1: 0.0, 4: 0.0, 5: 0.6})  # only when all words go
    assert report.flip_rate["wrong"][4] == 0.0
    assert report.drop["random"][5] == pytest.approx(0.6)  # removing every word is the same for any order
    assert 0.0 <= report.drop["random"][1] <= 0.6
    assert report.comprehensiveness["oracle"] == pytest.approx(0.6)
    assert report.comprehensiveness["wrong"] == pytest.approx(0.2)
    assert report.ratio_to_random(1, "oracle") >= 1.0
    assert report.documents == 3
    data = report.to_dict()
    assert data["probability_drop"]["oracle"]["1"] == pytest.approx(0.6)
    assert data["flip_rate"]["wrong"]["4"] == 0.0
    assert set(data["ratio_to_random"]) == {"oracle", "wrong"}
    assert data["ratio_to_random"]["wrong"]["4"] == 0.0
    assert "| oracle | 0.6000 | 100.0% |" in report.to_markdown()


def test_random_ranking_averages_over_draws():
    # One document of 4 words with the decisive word among them: removing one
    # random word hits it with probability 1/4, so the mean drop tends to 0.15.
    x = np.tile(np.array([[2, 7, 3, 4]]), (400, 1))
    parts, _ = erasure_effects(_signal_predictor, x, {}, ks=(1,), random_draws=5, seed=1)
    assert np.mean(parts["random"][1][0]) == pytest.approx(0.15, abs=0.03)


@pytest.fixture(scope="module")
def trained_rnn(tiny_csv, tmp_path_factory):
    # The network alone: on this corpus an n-gram part is perfect on the
    # validation texts and takes all the weight, and attention would then
    # move nothing (`test_explainer` checks that this is said).
    return make_run(
        tiny_csv,
        tmp_path_factory.mktemp("faith") / "run",
        "rnn",
        epochs=12,
        backbone={"attention": "context"},
        ngrams=False,
    )


def test_check_faithfulness_on_a_trained_model(trained_rnn):
    # In the generated corpus only the sentiment words carry the label, so a
    # model that learned it must depend on them: deleting the most attended
    # word must hurt far more than deleting a random one.
    from conftest import make_reviews

    texts, _ = make_reviews(60, seed=5)
    report = check_faithfulness(trained_rnn, texts, ks=(1, 5), random_draws=3, chunk_size=25)  # 3 chunks merged
    assert list(report.drop) == ["attention", "random", "gradient"]
    assert report.documents == 60
    assert report.drop["attention"][1] > 2 * report.drop["random"][1]
    assert report.drop["attention"][5] >= report.drop["attention"][1] - 1e-6
    for ranking in report.flip_rate:
        assert all(0.0 <= v <= 1.0 for v in report.flip_rate[ranking].values())


def test_check_faithfulness_errors(trained_rnn):
    with pytest.raises(HierattnError, match="non-empty"):
        check_faithfulness(trained_rnn, ["", "   "])
    with pytest.raises(HierattnError, match="at least 1"):
        check_faithfulness(trained_rnn, ["good film"], ks=(0,))
