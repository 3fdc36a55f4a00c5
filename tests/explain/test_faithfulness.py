"""Tests for hierattn.explain.faithfulness: ERASER comprehensiveness and sufficiency on the whole classifier."""

import json

import numpy as np
import pytest

from hierattn.errors import HierattnError
from hierattn.explain import Explainer
from hierattn.explain.attributions import gradient_times_input
from hierattn.explain.erasure import BINS, Document
from hierattn.explain.faithfulness import RANKINGS, FaithfulnessReport, check_faithfulness, rank, word_gradients

from conftest import make_reviews, make_run


def test_rank_largest_first_ties_in_text_order_unread_words_last():
    assert rank([0.2, 0.9, 0.9, 5.0], read=[True, True, True, False]).tolist() == [1, 2, 0, 3]
    assert rank([-1.0, 0.0, -3.0]).tolist() == [1, 0, 2]


def predictor(classifier):
    """The whole classifier on documents of token forms, through its own preprocessor (what the check runs)."""
    return lambda documents: classifier.predict_ids(classifier.preprocessor.encode_tokens(documents))


TEXTS = [
    "The film was great. I loved the acting!",
    "Awful. The plot was dull &amp; boring, and I hated it.",
    # Beyond what the network reads and the explanation shows, only the n-gram part reads the last sentence.
    "<b>Brilliant</b> film.<br />Moving and superb. " * 30 + "I hated it: awful, dull and painful.",
]


def test_erasing_nothing_gives_back_predict_on_the_whole_text(han_run):
    explanations = Explainer(han_run).explain(TEXTS)
    assert explanations[2].cut_words > 0 and explanations[2].unshown_characters > 0
    documents = [Document.of(e, han_run.preprocessor.tokenizer) for e in explanations]
    assert isinstance(han_run.preprocessor.encode_tokens([documents[0].erase([])]), dict)  # the n-gram part's own ids
    # Relative: the long text's probabilities are near 0 and 1, and the tail moves the smaller by orders of magnitude.
    np.testing.assert_allclose(predictor(han_run)([d.erase([]) for d in documents]), han_run.predict(TEXTS), rtol=1e-3)


@pytest.mark.keras  # the runs, by name
@pytest.mark.parametrize("fixture", ["han_run", "rnn_run"])
def test_word_gradients_are_gradient_x_input_at_the_words_the_network_reads(fixture, request):
    classifier = request.getfixturevalue(fixture)
    explanations = Explainer(classifier).explain(TEXTS)
    documents = [Document.of(e, classifier.preprocessor.tokenizer) for e in explanations]
    ids = classifier.preprocessor.encode_tokens([d.erase([]) for d in documents])
    ids = ids["token_ids"] if isinstance(ids, dict) else ids
    classes = np.array([1, 0, 1])
    expected = gradient_times_input(classifier.backbone, ids, classes)
    gradients = word_gradients(classifier, explanations, ids, classes)
    for explanation, scores, row in zip(explanations, gradients, expected):
        read = [s for s, w in zip(scores, explanation.words) if w.used]
        assert len(read) == np.count_nonzero(row) and sorted(read) == pytest.approx(sorted(row[row != 0]))
        assert all(s == 0.0 for s, w in zip(scores, explanation.words) if not w.used)


def test_check_on_a_one_word_text_erases_it_whole_and_gives_no_verdict(han_run):
    report = check_faithfulness(han_run, ["great"], random_draws=2)
    p = han_run.predict(["great"], verbose=0)[0]
    c = p.argmax()
    empty = predictor(han_run)([[]])[0]  # the text without its one word
    for ranking in RANKINGS:
        assert list(report.sufficiency[ranking].values()) == pytest.approx([0.0] * 5, abs=1e-6)
        assert list(report.comprehensiveness[ranking].values()) == pytest.approx([p[c] - empty[c]] * 5, abs=1e-6)
    assert report.documents == 1 and report.mean_words == 1.0
    assert report.verdict().endswith(": no verdict (one word per text: every ranking erases the same)")


def assert_same_report(report, expected):
    for measure in ("comprehensiveness", "sufficiency"):
        for ranking in RANKINGS:
            np.testing.assert_allclose(
                list(getattr(report, measure)[ranking].values()),
                list(getattr(expected, measure)[ranking].values()),
                atol=1e-6,
            )


def test_check_is_the_same_in_chunks_and_with_explanations_given(han_run):
    texts, _ = make_reviews(7, seed=3)
    whole = check_faithfulness(han_run, texts, random_draws=2, seed=4)
    assert whole.documents == 7 and whole.bins == BINS
    assert_same_report(check_faithfulness(han_run, texts, random_draws=2, seed=4, chunk_size=3), whole)
    explanations = Explainer(han_run).explain(texts, attention=True)  # as the check asks: attention is ranked too
    assert_same_report(check_faithfulness(han_run, explanations=explanations, random_draws=2, seed=4), whole)
    other_seed = check_faithfulness(han_run, texts, random_draws=2, seed=5)  # only the random orders change
    assert other_seed.comprehensiveness["evidence"] == pytest.approx(whole.comprehensiveness["evidence"], abs=1e-6)


@pytest.fixture(scope="module")
def trained_rnn(tiny_csv, tmp_path_factory):
    # The network alone: on this corpus an n-gram part is perfect on the
    # validation texts and takes all the weight, so the network's words
    # would move nothing but the n-gram part's.
    return make_run(
        tiny_csv,
        tmp_path_factory.mktemp("faith") / "run",
        "rnn",
        epochs=12,
        backbone={"attention": "context"},
        ngrams=False,
        bundle=False,
    )


@pytest.mark.keras
def test_a_trained_model_s_evidence_is_faithful(trained_rnn):
    # Only the sentiment words carry the label in the generated corpus, so a
    # model that learned it depends on them: erasing the words with the most
    # evidence must hurt far more than erasing random ones, and keeping them keep the decision.
    texts, _ = make_reviews(40, seed=5)
    report = check_faithfulness(trained_rnn, texts, random_draws=3, chunk_size=15)
    aopc = {r: {m: report.aopc(m, r) for m in ("comprehensiveness", "sufficiency")} for r in RANKINGS}
    assert aopc["evidence"]["comprehensiveness"] > 2 * aopc["random"]["comprehensiveness"] > 0
    assert aopc["evidence"]["sufficiency"] < aopc["random"]["sufficiency"]
    assert aopc["attention"]["comprehensiveness"] > aopc["random"]["comprehensiveness"]
    assert report.faithful() and report.verdict().endswith(": faithful")


def report_of(evidence, random):
    """A report with each ranking's (comprehensiveness, sufficiency), the same in every bin."""
    values = {"evidence": evidence, "random": random}
    return FaithfulnessReport(
        3,
        (0.1, 0.5),
        2,
        {r: {0.1: c, 0.5: c} for r, (c, _) in values.items()},
        {r: {0.1: s, 0.5: s} for r, (_, s) in values.items()},
        12.0,
    )


def test_verdict_rule():
    assert report_of((0.41, 0.05), (0.03, 0.3)).verdict() == (
        "evidence: comprehensiveness 0.41 (random 0.03), sufficiency 0.05 (random 0.30): faithful"
    )
    assert report_of((0.41, 0.05), (0.03, 0.3)).faithful()
    assert not report_of((0.05, 0.05), (0.03, 0.3)).faithful()  # under twice random's
    assert report_of((0.06, 0.05), (0.03, 0.3)).faithful()  # twice is enough
    assert not report_of((0.41, 0.3), (0.03, 0.3)).faithful()  # sufficiency not below random's
    assert not report_of((0.0, 0.0), (-0.1, 0.3)).faithful()  # erasing its words must lower p_c
    assert report_of((0.05, 0.05), (0.03, 0.3)).verdict().endswith(": not faithful")


def test_report_renders_the_table_the_json_and_ends_with_the_verdict():
    report = report_of((0.41, 0.05), (0.03, 0.3))
    lines = report.to_markdown().splitlines()
    assert lines[0] == "| ranking | measure | 10% | 50% | AOPC |"
    assert "| evidence | comprehensiveness | 0.410 | 0.410 | 0.410 |" in lines
    assert lines[-1] == report.verdict()
    data = json.loads(json.dumps(report.to_dict()))
    assert data["sufficiency"]["random"] == {"10%": 0.3, "50%": 0.3}
    assert data["aopc"]["evidence"] == {"comprehensiveness": 0.41, "sufficiency": 0.05}
    assert data["faithful"] == {"evidence": True} and data["verdict"] == report.verdict()


def test_check_faithfulness_errors(han_run):
    with pytest.raises(HierattnError, match="no text with words"):
        check_faithfulness(han_run, ["", "   "])
    with pytest.raises(HierattnError, match="no text with words"):
        check_faithfulness(han_run, ["<br />"])
    with pytest.raises(HierattnError, match=r"in \(0, 1\]"):
        check_faithfulness(han_run, ["good film"], bins=(0.0, 0.5))
    with pytest.raises(HierattnError, match=r"in \(0, 1\]"):
        check_faithfulness(han_run, ["good film"], bins=(1.5,))
    with pytest.raises(HierattnError, match="at least 1"):
        check_faithfulness(han_run, ["good film"], random_draws=0)
