"""Tests for explaining a multi-label classifier: each label's evidence against its threshold, and its views."""

import contextlib
import csv
import io
import json

import numpy as np
import pytest

from hierattn.errors import ArgumentError
from hierattn.explain import Explainer, Explanations, check_faithfulness, explain_corpus
from hierattn.explain.erasure import Document, bin_sizes
from hierattn.explain.faithfulness import rank
from hierattn.explain.report import CSV_COLUMNS, MULTI_LABEL_COLUMNS, render, to_csv

from conftest import make_topics

TEXTS = [
    "They talked about goal at length. They talked about bank at length. The news today was short.",
    "They talked about cheese at length. Nothing else happened in town.",
    "Nothing else happened in town. The news today was short.",
]
CONSTANTS = ("network_baseline", "integration_error", "ngram_bias", "not_shown", "threshold_term")


def logit(p):
    p = min(max(float(p), 1e-7), 1 - 1e-7)
    return float(np.log(p) - np.log(1 - p))


def account(e):
    """The explanation's words' evidence plus its named constant terms, and the margin they should add up to."""
    return sum(w.evidence for w in e.words) + sum(e.decision[term] for term in CONSTANTS), e.decision["margin"]


@contextlib.contextmanager
def weights(run, values, network="always"):
    """The classifier with its combination's weights `(a, b)` set to `values` (`None`: its own) for a while.

    The network reads every text (`network="always"`): these tests check the whole combination's account.
    """
    mixing, before = np.asarray(run.combination.mixing), run.network
    try:
        run.network = network
        if values is not None:
            run.combination.mixing.assign(values)
        yield
    finally:
        run.combination.mixing.assign(mixing)
        run.network = before


@pytest.fixture(scope="module")
def explanations(multilabel_run):
    """The texts explained with weight on the network (the tiny run's own weights may give it none)."""
    with weights(multilabel_run, [0.8, 0.6]):
        return Explainer(multilabel_run).explain(TEXTS, ids=["a", "b", "c"], labels=["sport|money", "food", ""])


@pytest.mark.parametrize("mixing", [None, [0.8, 0.6], [1.3, 0.0]])
def test_each_predicted_label_is_explained_and_its_evidence_adds_up_to_its_margin(multilabel_run, mixing):
    with weights(multilabel_run, mixing):
        explanations = Explainer(multilabel_run).explain(TEXTS, ids=["a", "b", "c"])
        probabilities = multilabel_run.predict(TEXTS)
        predicted = multilabel_run.predict_labels(TEXTS)
        temperature = multilabel_run.cascade.temperature
    names = [str(n) for n in multilabel_run.label_names]
    # each label's calibrated log-odds: the combination's divided by the label's temperature
    temperatures = np.broadcast_to(np.asarray(temperature, float), (len(names),))
    thresholds = multilabel_run.thresholds
    if mixing is not None:
        assert all(
            e.decision["network_weight"] == pytest.approx(mixing[0] / temperatures[names.index(e.label)])
            for e in explanations
        )
        assert any(w.network_evidence for e in explanations for w in e.words)  # the network's integrated log-odds
    for i in range(len(TEXTS)):
        mine = [e for e in explanations if e.document == i]
        expected = [str(n) for n in predicted[i]] or [names[int(np.argmax(probabilities[i]))]]
        assert [e.label for e in mine] == expected  # each predicted label, in label order; none: the most probable
        for e in mine:
            j = names.index(e.label)
            assert e.doc_id == "abc"[i] and e.predicted_labels == predicted[i] and e.threshold == thresholds[j]
            np.testing.assert_allclose(list(e.probabilities.values()), probabilities[i], atol=1e-5)
            d = e.decision
            assert d["versus"] is None and d["threshold"] == thresholds[j]
            assert d["threshold_term"] == pytest.approx(-logit(thresholds[j]), abs=1e-9)
            total, margin = account(e)
            assert total == pytest.approx(margin, rel=1e-4, abs=1e-5)  # the evidence adds up to the label's margin
            # the margin is the label's combined log-odds over its threshold's (where float32 keeps them): positive
            # exactly when predicted
            if 1e-5 < probabilities[i, j] < 1 - 1e-5:
                assert margin == pytest.approx(logit(probabilities[i, j]) - logit(thresholds[j]), abs=1e-3)
            assert (margin > 0) == (e.label in predicted[i])
            a, b = d["network_weight"], d["ngram_weight"]
            assert d["network"] == pytest.approx(a * logit(e.network_probabilities[e.label]), abs=1e-4)
            assert d["margin"] == pytest.approx(
                d["network"] + d["ngram_bias"] + d["ngrams"] + d["threshold_term"], abs=1e-6
            )
            assert d["ngram_bias"] == pytest.approx(b * float(np.asarray(multilabel_run.ngram_logits.bias)[j]))
            assert abs(d["integration_error"]) <= 0.01 * abs(d["network"] - d["network_baseline"]) + 1e-4
            for w in e.words:
                assert w.evidence == pytest.approx(w.network_evidence + w.ngram_evidence, abs=1e-9)
    assert [e.document for e in explanations] == sorted(e.document for e in explanations)  # text by text


def test_the_network_s_evidence_is_the_integrated_log_odds_of_the_label(multilabel_run, explanations):
    """A label's network evidence differs from another label's on the same text: it is that label's log-odds."""
    names = [str(n) for n in multilabel_run.label_names]
    with weights(multilabel_run, [0.8, 0.6]):
        (first, second) = Explainer(multilabel_run).explain(TEXTS[:1], label=names[:2])
    assert (first.label, second.label) == tuple(names[:2])
    assert [w.text for w in first.words] == [w.text for w in second.words]
    assert [w.weight for w in first.words] == [w.weight for w in second.words]  # attention does not depend on it
    assert [w.network_evidence for w in first.words] != [w.network_evidence for w in second.words]
    for e in (first, second):
        total, margin = account(e)
        assert total == pytest.approx(margin, rel=1e-4, abs=1e-5)


def test_a_label_can_be_named_and_an_unknown_one_is_refused(multilabel_run):
    names = [str(n) for n in multilabel_run.label_names]
    explanations = multilabel_run.explain(TEXTS[:2], label=names[-1])
    assert isinstance(explanations, Explanations) and [(e.document, e.label) for e in explanations] == [
        (0, names[-1]),
        (1, names[-1]),
    ]
    one = multilabel_run.explain(TEXTS[0], label=[names[1], names[0], names[1]])  # one text: still a list
    assert isinstance(one, Explanations) and [e.label for e in one] == [names[1], names[0]]
    with pytest.raises(ArgumentError, match=r"^label 'weather' is not one of the classifier's labels \(") as caught:
        multilabel_run.explain(TEXTS[0], label="weather")
    assert caught.value.argument == "label" and ", ".join(names) in str(caught.value)


def test_a_label_cannot_be_chosen_for_a_single_label_classifier(han_run):
    with pytest.raises(ArgumentError, match="^label chooses what a multi-label classifier explains"):
        Explainer(han_run).explain(["A great film."], label="pos")
    assert Explainer(han_run).explain(["A great film."], label=[])[0].threshold is None  # no label: as before


def test_the_text_view_names_the_label_and_its_threshold(explanations):
    e = next(e for e in explanations if e.label in e.predicted_labels)
    text = render([e], "text")
    lines = text.splitlines()
    assert lines[0] == "document: a" and lines[1].startswith(f"label: {e.label}, probability ")
    assert f"over its threshold {e.threshold:.2f}: predicted (the text's labels: " in lines[1]
    assert lines[2] == "true labels: sport|money"
    assert f"evidence for {e.label} (each word's part of its margin over the threshold" in text
    assert f"margin of {e.label} over its threshold: " in text and "runner-up" not in text
    assert f"threshold (-logit {e.threshold:.2f}) " in text
    none = next(e for e in explanations if e.document == 2)
    if not none.predicted_labels:  # no label predicted: the most probable one is explained, and said to be under
        assert "not over its threshold" in render([none], "text") and "no label is over its threshold" in str(none)


def test_json_says_which_label_each_block_explains(explanations):
    blocks = json.loads(render(explanations, "json"))
    assert len(blocks) == len(explanations)
    for block, e in zip(blocks, explanations):
        assert block["multi_label"] is True and block["label"] == e.label and block["document"] == e.document
        assert block["probability"] == pytest.approx(e.probabilities[e.label]) and block["threshold"] == e.threshold
        assert block["predicted"] == (e.label in e.predicted_labels) and block["predicted_labels"] == e.predicted_labels
        assert block["decision"]["threshold_term"] == e.decision["threshold_term"]
        parts = block["margin_parts"]
        assert parts["network"] + parts["ngrams"] + parts["constant"] == pytest.approx(parts["margin"], abs=1e-5)


def test_csv_rows_add_up_per_label_and_name_it(explanations):
    rows = list(csv.DictReader(io.StringIO(to_csv(explanations))))
    assert list(rows[0]) == CSV_COLUMNS + MULTI_LABEL_COLUMNS
    for e in explanations:
        mine = [r for r in rows if int(r["document"]) == e.document and r["label"] == e.label]
        assert len(mine) == len(e.words) and {r["predicted"] for r in mine} == {"|".join(e.predicted_labels)}
        total = sum(float(r["evidence"]) for r in mine) + float(mine[0]["constant_terms"])
        assert total == pytest.approx(float(mine[0]["margin"]), abs=1e-5)
        assert float(mine[0]["threshold"]) == e.threshold and mine[0]["versus"] == ""


def test_the_html_page_names_each_label(explanations):
    page = render(explanations, "html")
    for e in explanations:
        assert f"<h3>Document {e.doc_id}: {e.label}</h3>" in page
        assert f"Margin of {e.label} over its threshold: " in page
    assert "pushes it down (towards not predicting it)" in page and "runner-up" not in page
    assert "Label <b>" in page and "(true labels: sport|money)" in page


def test_single_label_csv_keeps_its_columns(han_run):
    rows = list(csv.DictReader(io.StringIO(to_csv(Explainer(han_run).explain(["A great film."])))))
    assert list(rows[0]) == CSV_COLUMNS


def test_corpus_words_are_ranked_per_predicted_label(multilabel_run, tmp_path):
    texts, labels = make_topics(30, seed=3)
    truth = ["|".join(chosen) for chosen in labels]
    predicted = multilabel_run.predict_labels(texts)
    output = tmp_path / "words.csv"
    summary = explain_corpus(Explainer(multilabel_run), texts, output, labels=truth, top_k=2, progress=False)
    assert summary.documents == 30 and summary.labelled == 30
    assert summary.correct == sum(sorted(map(str, p)) == sorted(t) for p, t in zip(predicted, labels))  # exact match
    counts = {str(n): sum(str(n) in map(str, p) for p in predicted) for n in multilabel_run.label_names}
    assert summary.class_documents == {n: c for n, c in counts.items() if c}  # the documents predicted each label
    words = list(csv.DictReader(output.open()))
    assert {r["predicted"] for r in words} <= set(counts)
    documents = list(csv.DictReader((tmp_path / "words.documents.csv").open()))
    for number in range(30):
        rows = [r for r in documents if int(r["document"]) == number]
        assert {r["predicted"] for r in rows} == set(map(str, predicted[number]))  # each predicted label's top words
        assert all(r["label"] == truth[number] for r in rows)
    only = explain_corpus(Explainer(multilabel_run), texts, labels=truth, label="money", progress=False)
    assert set(only.class_documents) <= {"money"} and only.documents == 30
    assert only.words.class_documents["money"] == counts["money"]


def test_faithfulness_measures_the_explained_label_s_probability(multilabel_run):
    names = [str(n) for n in multilabel_run.label_names]
    preprocessor = multilabel_run.preprocessor
    with weights(multilabel_run, [0.8, 0.6]):
        explanations = Explainer(multilabel_run).explain(TEXTS[:1], label=names)  # every label of one text
        report = check_faithfulness(multilabel_run, explanations=explanations, bins=(0.5,), random_draws=1)
        drops = []  # by hand: each label's own probability, less that without its top half of words by evidence
        for e in explanations:
            document = Document.of(e, preprocessor.tokenizer)
            top = rank([w.evidence for w in e.words])[: bin_sizes(len(e.words), (0.5,))[0]]
            p = multilabel_run.predict_ids(preprocessor.encode_tokens([document.erase([]), document.erase(top)]))
            drops.append(p[0, names.index(e.label)] - p[1, names.index(e.label)])
    assert report.documents == len(names)
    assert report.comprehensiveness["evidence"][0.5] == pytest.approx(float(np.mean(drops)), abs=1e-5)
    report = check_faithfulness(multilabel_run, TEXTS, random_draws=1, label=names[0])
    assert report.documents == len(TEXTS) and report.verdict().startswith("evidence: comprehensiveness")
    with pytest.raises(ArgumentError, match="^label 'weather' is not one of"):
        check_faithfulness(multilabel_run, TEXTS, label="weather")


def test_without_an_n_gram_part_a_label_s_margin_is_the_network_s_log_odds_over_its_threshold():
    import hierattn

    texts, labels = make_topics(60, seed=5)
    clf = hierattn.TextClassifier(
        "han",
        embeddings="none",
        min_count=1,
        embedding_dim=8,
        word_units=8,
        sentence_units=8,
        attention_units=8,
        multi_label=True,
        ngrams=False,
    )
    clf.fit(texts, labels, epochs=1, verbose=0)
    explanations = clf.explain(TEXTS, label=["money", "food"])
    probabilities = clf.predict(TEXTS)
    assert [(e.document, e.label) for e in explanations] == [(i, n) for i in range(3) for n in ("money", "food")]
    for e in explanations:
        d = e.decision
        assert e.ngrams is None and d["ngrams"] == 0.0 and d["ngram_bias"] == 0.0 and d["network_weight"] == 1.0
        total, margin = account(e)
        assert total == pytest.approx(margin, rel=1e-4, abs=1e-5)
        j = [str(n) for n in clf.label_names].index(e.label)
        p = probabilities[e.document, j]
        assert margin == pytest.approx(logit(p) - logit(clf.thresholds[j]), abs=1e-3)


def test_a_label_the_ngram_part_decides_alone_is_explained_by_it_against_its_threshold(multilabel_run):
    policy = multilabel_run.policy
    try:
        multilabel_run.policy = policy.replace(cut=0.0)  # no margin is under it: the n-gram part decides every text
        with weights(multilabel_run, [0.8, 0.6], network="auto"):
            explanations = Explainer(multilabel_run).explain(TEXTS)
            probabilities = multilabel_run.predict(TEXTS)
    finally:
        multilabel_run.policy = policy
    thresholds = multilabel_run.thresholds
    names = [str(n) for n in multilabel_run.label_names]
    for e in explanations:
        d, j = e.decision, names.index(e.label)
        assert not d["network_read"] and d["network"] == 0.0 and all(w.network_evidence == 0.0 for w in e.words)
        total, margin = account(e)
        assert total == pytest.approx(margin, rel=1e-4, abs=1e-5)
        assert (margin > 0) == (probabilities[e.document, j] > thresholds[j])  # the n-gram part's decision
