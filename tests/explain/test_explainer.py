"""Tests for hierattn.explain.explainer: weights mapped back to the user's words."""

import re

import numpy as np
import pytest

from hierattn.errors import HierattnError
from hierattn.explain.explainer import Explainer

from conftest import make_run

TEXTS = [
    "The film was great. I loved the acting!",
    "Awful plot. Mr. Smith's zzyzx acting was dull... Really dull?",
]


@pytest.fixture(scope="module")
def rnn_run(tiny_csv, tmp_path_factory):
    """An RNN run of its own (not the session's `rnn_run`): Luong attention, and texts cut at 6 words."""
    return make_run(
        tiny_csv,
        tmp_path_factory.mktemp("rnn") / "run",
        "rnn",
        backbone={"attention": "luong-general"},
        sequence_length=6,
        bundle=False,
    )


def test_han_weights_are_distributions_and_match_the_model(han_run):
    explanations = Explainer(han_run).explain(TEXTS, attention=True)  # also where the n-gram part decided alone
    raw = han_run.backbone.attention_model().predict(han_run.preprocessor(TEXTS)["token_ids"], verbose=0)
    for e, text, i in zip(explanations, TEXTS, range(2)):
        assert sum(w.weight for w in e.words) == pytest.approx(1.0, abs=1e-5)
        for s in range(len(e.sentences)):
            assert sum(w.word_weight for w in e.words if w.sentence == s) == pytest.approx(1.0, abs=1e-5)
        assert sum(s["weight"] for s in e.sentences) == pytest.approx(1.0, abs=1e-5)
        for w in e.words:
            assert text[w.start : w.end] == w.text  # offsets point into the original text
            assert w.word_weight == pytest.approx(float(raw["word_attention"][i, w.sentence, w.index]), abs=1e-6)
        assert e.probabilities[e.label] == max(e.probabilities.values())
        assert list(e.probabilities) == [str(n) for n in han_run.label_names]  # the order the colours follow
        np.testing.assert_allclose(list(e.network_probabilities.values()), raw["probabilities"][i], atol=1e-6)
        np.testing.assert_allclose(list(e.probabilities.values()), han_run.predict([text])[0], atol=1e-5)
    second = explanations[1]
    oov = [w.text for w in second.words if w.oov]
    assert "zzyzx" in oov  # shown as written, marked OOV
    assert all(han_run.preprocessor.encoder.vocabulary.lookup(w.form) == 1 for w in second.words if w.oov)
    assert all(han_run.preprocessor.encoder.vocabulary.lookup(w.form) > 1 for w in second.words if not w.oov)
    assert any(w.text == "Smith's" for w in second.words)
    top = second.top_words(3)
    assert len(top) == 3 and top[0].weight >= top[1].weight >= top[2].weight


def test_flat_model_weights_follow_truncation(rnn_run):
    (e,) = Explainer(rnn_run).explain(["one two three four five six seven eight"], attention=True)
    used = [w.text for w in e.words if w.used]
    assert used == ["one", "two", "three", "four", "five", "six"]  # the first sequence_length words are kept
    assert sum(w.weight for w in e.words) == pytest.approx(1.0, abs=1e-5)
    assert e.cut_words == 2 and "2 of the 8 words shown were not read by the network" in e.warnings[0]


def test_known_words_warning_and_empty_text(han_run):
    (e,) = Explainer(han_run).explain(["qqqq wwww eeee"])
    assert any("none of the words is in the model's vocabulary" in w for w in e.warnings)
    with pytest.raises(HierattnError, match="cannot explain an empty text"):
        Explainer(han_run).explain(["   "])
    with pytest.raises(
        HierattnError, match=r"^cannot explain a text without words \(only markup or symbols\) \(text 2\)"
    ):
        Explainer(han_run).explain(["A fine film.", "<br /><br />"])


def test_long_text_is_cut_with_a_notice(han_run):
    text = " ".join(f"Sentence number {i} was great." for i in range(han_run.preprocessor.encoder.max_sentences + 3))
    (e,) = Explainer(han_run).explain([text], attention=True)
    assert e.cut_words > 0 and not e.sentences[-1]["used"]
    assert sum(w.weight for w in e.words) == pytest.approx(1.0, abs=1e-5)


def test_a_very_long_text_is_explained_in_bounded_time_and_size(han_run, rnn_run):
    import time

    text = "The film was great. " * 250_000  # 5 MB, 250,000 sentences
    for run in (han_run, rnn_run):
        encoder = run.preprocessor.encoder
        explainer = Explainer(run)
        explainer.explain(["The film was great."])  # traces the model's functions once: not what is timed
        started = time.perf_counter()
        (e,) = explainer.explain([text])
        assert time.perf_counter() - started < 10
        shown = (
            2 * encoder.max_sentences * min(encoder.max_words, 4)
            if run.preprocessor.mode == "hierarchical"
            else 2 * encoder.sequence_length
        )
        assert len(e.words) <= shown and len(e.sentences) <= 2 * max(encoder.max_sentences, encoder.sequence_length)
        end = e.sentences[-1]["end"]
        assert e.unshown_characters == len(text.rstrip()) - end > 4_000_000
        assert f"the {e.unshown_characters:,} characters after character {end:,} are not shown" in e.warnings[0]


def test_trailing_markup_or_symbols_are_not_an_unread_rest(han_run):
    for text in ("Great movie.<br />", "Great movie. :)", "A great film. <i></i>"):
        (e,) = Explainer(han_run).explain([text])
        assert e.unshown_characters == 0 and not any("longer than" in w for w in e.warnings), (text, e.warnings)


def account(e):
    """The explanation's words' evidence plus its named constant terms, and the margin they should add up to."""
    d = e.decision
    constants = d["network_baseline"] + d["integration_error"] + d["ngram_bias"] + d["not_shown"]
    return sum(w.evidence for w in e.words) + constants, d["margin"]


def test_word_evidence_adds_up_to_the_decision_margin(han_run, rnn_run):
    for run in (han_run, rnn_run):
        text = "The film was great. I loved it! " + "word " * 40  # the RNN's limit cuts it
        (e,) = Explainer(run).explain([text], ids=["doc-7"], labels=["pos"])
        assert e.doc_id == "doc-7" and e.true_label == "pos"
        total, margin = account(e)
        assert total == pytest.approx(margin, abs=1e-6)
        d = e.decision
        # completeness of the integrated gradients: the quadrature leaves under 1% of the network's term
        assert abs(d["integration_error"]) <= 0.01 * abs(d["network"] - d["network_baseline"]) + 1e-6
        assert sum(w.network_evidence for w in e.words) == pytest.approx(
            d["network"] - d["network_baseline"] - d["integration_error"], abs=1e-6
        )
        assert all(w.network_evidence == 0.0 for w in e.words if not w.used)  # the network did not read them
        # the n-gram part's contributions, spread over their tokens, are all there
        assert sum(w.ngram_evidence for w in e.words) + d["not_shown"] == pytest.approx(d["ngrams"], abs=1e-6)
        for w in e.words:
            assert w.evidence == pytest.approx(w.network_evidence + w.ngram_evidence, abs=1e-9)
        great = next(g for g in e.ngrams if g.text == "great")  # a unigram's share is its whole contribution
        word = next(w for w in e.words if w.text == "great")
        inside = {id(g): [w for w in e.words if g.start <= w.start and w.end <= g.end] for g in e.ngrams}
        shared = sum(g.contribution / len(inside[id(g)]) for g in e.ngrams if word in inside[id(g)])  # "great": once
        assert word.ngram_evidence == pytest.approx(shared, abs=1e-6) and great.contribution != 0.0


def test_a_network_without_weight_gets_no_evidence_and_no_gradient_pass(han_run, monkeypatch):
    import hierattn.explain.explainer

    mixing = np.asarray(han_run.combination.mixing)
    monkeypatch.setattr(hierattn.explain.explainer, "integrated_gradients", None)  # it must not be called
    try:
        han_run.combination.mixing.assign([0.0, 2.0])
        (e,) = Explainer(han_run).explain(["The film was great. The plot was dull."])
    finally:
        han_run.combination.mixing.assign(mixing)
    assert all(w.network_evidence == 0.0 for w in e.words) and e.decision["network"] == 0.0
    total, margin = account(e)
    assert total == pytest.approx(margin, abs=1e-6)


def test_a_text_the_ngram_part_decides_alone_is_explained_by_it_without_a_gradient_pass(han_run, monkeypatch):
    import hierattn.explain.explainer

    mixing, policy = np.asarray(han_run.combination.mixing), han_run.policy
    try:
        han_run.combination.mixing.assign([0.5, 0.5])
        han_run.policy = han_run.policy.replace(cut=1e9)  # every margin is under it: the network reads every text
        assert all(e.decision["network_read"] for e in Explainer(han_run).explain(TEXTS))
        han_run.policy = han_run.policy.replace(cut=0.0)  # none is: the n-gram part decides every text
        monkeypatch.setattr(hierattn.explain.explainer, "integrated_gradients", None)  # it must not be called
        explanations = Explainer(han_run).explain(TEXTS)
        probabilities = han_run.predict(TEXTS, verbose=0)
        (asked,) = Explainer(han_run).explain(TEXTS[:1], attention=True)  # where it would read: one pass more
    finally:
        han_run.policy = policy
        han_run.combination.mixing.assign(mixing)
    for e, p in zip(explanations, probabilities):
        d = e.decision
        assert not d["network_read"] and d["network"] == 0.0 and d["network_weight"] == 0.0
        assert list(e.probabilities.values()) == pytest.approx(p.tolist(), abs=1e-6)  # the decision made
        assert all(w.evidence == w.ngram_evidence and w.weight == 0.0 for w in e.words)  # no pass of the network
        assert e.network_probabilities is None
        total, margin = account(e)
        assert total == pytest.approx(margin, abs=1e-6)
        (note,) = [w for w in e.warnings if "decided this text alone" in w]
        assert "training (0)" in note and 'network="always"' in note
    assert sum(w.weight for w in asked.words) == pytest.approx(1.0, abs=1e-5)


def test_words_cut_inside_an_over_long_sentence_are_said_and_counted(han_run):
    text = "The film was great and " + "very " * 120 + "long. The end was dull."
    (e,) = Explainer(han_run).explain([text])
    listed = {w.start for w in e.words}
    first = text.index("long.") + len("long")
    cut = [m.start() for m in re.finditer(r"\w+", text[:first]) if m.start() not in listed]  # "very"s and "long"
    assert cut and [w.text for w in e.words][-4:] == ["The", "end", "was", "dull"]  # the next sentence is listed
    assert any(f"{len(cut):,} words at the ends of sentences longer than shown" in w for w in e.warnings), e.warnings
    total, margin = account(e)
    assert total == pytest.approx(margin, abs=1e-6)


def test_evidence_without_an_n_gram_part_is_the_network_s_alone(tiny_csv, tmp_path):
    run = make_run(tiny_csv, tmp_path / "run", "han", ngrams=False, bundle=False)
    (e,) = Explainer(run).explain(["The film was great. The plot was dull."])
    total, margin = account(e)
    assert total == pytest.approx(margin, abs=1e-6)
    p = sorted(e.probabilities.values(), reverse=True)
    assert margin == pytest.approx(np.log(p[0]) - np.log(p[1]), abs=1e-5)
    assert e.ngrams is None and e.decision["ngrams"] == 0.0 and e.decision["network_weight"] == 1.0


def test_a_network_without_weight_is_said_to_explain_nothing(han_run):
    mixing = np.asarray(han_run.combination.mixing)
    try:
        han_run.combination.mixing.assign([0.0, 2.0])  # what the weights can be where the n-gram part is perfect
        e = Explainer(han_run).explain(TEXTS[:1])[0]
        assert e.decision["network"] == 0.0
        (note,) = [w for w in e.warnings if "the network has no weight" in w]
        assert note.startswith("this classifier decides from its n-gram part alone") and "is left out" in note
        han_run.combination.mixing.assign([0.5, 0.5])
        assert not any("no weight" in w for w in Explainer(han_run).explain(TEXTS[:1])[0].warnings)
    finally:
        han_run.combination.mixing.assign(mixing)


@pytest.mark.parametrize("fixture", ["han_run", "rnn_run"])
def test_the_decision_is_accounted_for_exactly(fixture, request):
    run = request.getfixturevalue(fixture)
    texts = TEXTS + ["one " * 60 + TEXTS[0]]  # the last one is cut by the rnn's limit
    probabilities = run.predict(texts)
    explanations = Explainer(run).explain(texts)
    for e, p, text in zip(explanations, probabilities, texts):
        d = e.decision
        runner_up = run.label_names.index(d["versus"])
        assert d["versus"] != e.label
        assert d["margin"] == pytest.approx(float(np.log(p.max()) - np.log(p[runner_up])), abs=1e-4)
        assert d["margin"] == pytest.approx(d["network"] + d["ngram_bias"] + d["ngrams"], abs=1e-6)
        assert d["ngrams"] == pytest.approx(sum(g.contribution for g in e.ngrams), abs=1e-6)
        used = {w.start for w in e.words if w.used}
        for g in e.ngrams:  # the n-gram part reads the whole text; the network reads what its limits keep
            tokens = [t for sentence in run.preprocessor.tokenizer.tokenize(g.text) for t in sentence]
            assert text[g.start : g.end] == g.text and g.network_reads == all(g.start + t.start in used for t in tokens)
        top = e.top_ngrams(3)
        assert [abs(g.contribution) for g in top] == sorted((abs(g.contribution) for g in top), reverse=True)
        assert e.to_dict()["decision"] == d and len(e.to_dict(top_k=2)["top_ngrams"]) == min(2, len(e.ngrams))
    if fixture == "rnn_run":  # n-grams past its limit are read by the n-gram part only
        assert run.preprocessor.sequence_length < 60 and not all(g.network_reads for g in explanations[-1].ngrams)
