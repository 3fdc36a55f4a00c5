"""The cascade of a `TextClassifier`: the network reads only what the n-gram part is not sure of, tuned on validation.

The tuning's steps on synthetic scores: tests/test_tuning.py; the policy's arithmetic: tests/test_policy.py.
"""

import keras
import numpy as np
import pytest

import hierattn
from hierattn.calibration import calibrated, choose_temperature, expected_calibration_error
from hierattn.decision import thresholds_at
from hierattn.errors import ArgumentError
from hierattn.ngrams.mixing import ngram_logits
from hierattn.policy import MULTI, DecisionPolicy
from hierattn.tuning import NGRAM_SCALES, _whole_temperatures, cascade_line, choose_thresholds, outcomes

from conftest import TINY_OPTIONS, eagerly, make_reviews, make_topics


@pytest.fixture(scope="module")
def classifier():
    """A tiny HAN whose two parts both weigh in (the weights set), its cut chosen on its validation texts."""
    texts, labels = make_reviews(160)
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    with eagerly():
        clf.fit(texts, labels, epochs=1, batch_size=16, verbose=0, validation_split=0.25)
    clf.policy = clf.policy.replace(weights=(0.6, 0.8))
    return clf


def _ids_and_margins(clf, texts):
    x = clf.preprocessor(texts)
    return x, clf.cascade.margins(ngram_logits(clf.ngram_logits, x["ngram_ids"]))


def test_tune_chooses_the_cut_on_validation_texts_only(classifier):
    texts, labels = make_reviews(60, seed=4)
    report, policy = dict(classifier.cascade_report), classifier.policy
    try:
        cut = classifier.tune((texts, labels)).cut
        _, margins = _ids_and_margins(classifier, texts)
        ranked = np.unique(margins)
        assert cut is None or cut == 0.0 or np.isclose(cut, (ranked[:-1] + ranked[1:]) / 2).any()
        assert classifier.cascade_report["validation_documents"] == 60
        scale = classifier.cascade_report["ngram_scale"]  # the n-gram part's own temperature, on validation
        assert scale in NGRAM_SCALES and classifier.cascade.ngram_scale == scale
        # The whole combination's temperatures: fitted on the validation documents the network reads, and on all.
        x, _ = _ids_and_margins(classifier, texts)
        whole, ids = classifier.predict_ids(x, part="whole"), classifier.label_ids(labels)
        read = margins < cut if cut is not None else np.ones(len(texts), bool)
        read = read if read.any() else np.ones(len(texts), bool)
        expected, _ = _whole_temperatures(whole, ids, read)  # (its cases: the test above)
        assert {k: classifier.cascade_report[k] for k in expected} == expected
        assert classifier.cascade.temperature == classifier.cascade_report["temperature"]
        assert classifier.cascade_report["calibration"]["temperature"]["documents"] == read.sum()
        assert "60 validation documents" in cascade_line(classifier.cascade_report)
        # what the parts said of the validation texts is kept: one pass of the network served every step
        x, _ = _ids_and_margins(classifier, texts)
        np.testing.assert_allclose(classifier.validation_scores.network, classifier.predict_ids(x, part="network"))
        assert classifier.tune(None).cut == classifier.policy.cut  # no validation texts: what was chosen is kept
    finally:
        classifier.cascade_report, classifier.policy = report, policy


def test_the_cascade_gives_the_whole_combination_where_the_network_reads(classifier):
    texts = make_reviews(80, seed=9)[0] + ["", "<br />", "Qwxzv blorptk."]
    x, margins = _ids_and_margins(classifier, texts)
    ranked = np.unique(margins)
    policy = classifier.policy
    cut = float(ranked[len(ranked) // 2 - 1 : len(ranked) // 2 + 1].mean())
    classifier.policy = policy.replace(cut=cut, temperature=1.7, temperature_always=0.6)
    try:
        read = margins < classifier.cascade.cut
        assert 0 < read.sum() < len(texts)
        found, whole = classifier.predict_ids(x), classifier.predict_ids(x, part="whole")
        # where the network reads: the whole combination at the classifier's temperature; the same decisions
        np.testing.assert_allclose(found[read], calibrated(whole[read], 1.7), rtol=0, atol=1e-6)
        np.testing.assert_array_equal(found[read].argmax(1), whole[read].argmax(1))
        logits = ngram_logits(classifier.ngram_logits, x["ngram_ids"])
        np.testing.assert_allclose(found[~read], classifier.cascade.ngram_probabilities(logits)[~read], atol=1e-6)
        labels = np.arange(len(texts)) % 2
        found_once = outcomes(classifier.policy, *classifier.part_outputs(x), labels)  # one pass: every answer
        np.testing.assert_allclose(found_once["probabilities"], found, atol=1e-6)
        np.testing.assert_allclose(found_once["whole"], calibrated(whole, 0.6), atol=1e-6)  # as network="always"
        assert found_once["share"] == pytest.approx(read.mean())
        calibration = found_once["calibration"]
        assert calibration["temperature"] == 1.7 and set(calibration) == {"temperature", "before", "after"}
        uncalibrated = classifier.policy.replace(temperature=None).probabilities(logits, whole)
        ece = [expected_calibration_error(p, labels, p.argmax(1)) for p in (uncalibrated, found)]
        assert [calibration["before"]["ece"], calibration["after"]["ece"]] == [round(e, 5) for e in ece]
        always = classifier.policy.for_network("always")  # every document: the whole combination at the other one
        np.testing.assert_allclose(classifier.predict_ids(x, policy=always), calibrated(whole, 0.6), atol=1e-6)
        assert classifier.policy.network == "auto"  # asked another way, the classifier is unchanged
        classifier.network = "always"
        np.testing.assert_allclose(classifier.predict(texts, verbose=0), calibrated(whole, 0.6), atol=1e-6)
    finally:
        classifier.network, classifier.policy = "auto", policy


def test_the_policy_and_the_network_setting_are_saved(classifier, tmp_path):
    policy = classifier.policy
    classifier.policy, classifier.network = policy.replace(cut=1.25), "always"
    try:
        classifier.save(tmp_path / "clf.keras")
        loaded = keras.saving.load_model(tmp_path / "clf.keras")
        assert loaded.network == "always" and loaded.policy == classifier.policy
        assert loaded.cascade.cut is None  # "always": the network reads every document
        loaded.network = "auto"
        assert loaded.cascade.cut == 1.25 and loaded.cascade_report == classifier.cascade_report
    finally:
        classifier.policy, classifier.network = policy, "auto"
    with pytest.raises(ArgumentError, match="network must be one of auto, always"):
        classifier.network = "sometimes"


def test_a_classifier_without_ngrams_has_no_cascade():
    clf = hierattn.TextClassifier("han", ngrams=False, embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    assert clf.cascade is None


def test_a_multi_label_classifier_is_calibrated_per_label_on_validation_texts_only(multilabel_run):
    texts, labels = make_topics(60, seed=5)
    report, policy = dict(multilabel_run.cascade_report), multilabel_run.policy
    reports = multilabel_run.ngram_report, multilabel_run.threshold_report, multilabel_run.validation_scores
    x = multilabel_run.preprocessor(texts)
    try:
        multilabel_run.tune((texts, labels))
        raw = choose_thresholds(multilabel_run.predict_ids(x, part="whole"), multilabel_run.label_ids(labels))[0]
        cascade, ids = multilabel_run.cascade, multilabel_run.label_ids(labels)
        # one temperature a label, fitted on the cascade's probabilities of these validation texts alone
        whole = multilabel_run.predict_ids(x, part="whole")
        logits = ngram_logits(multilabel_run.ngram_logits, x["ngram_ids"])
        found = multilabel_run.policy.replace(temperature=None, thresholds=raw).probabilities(logits, whole)
        temperatures, note = choose_temperature(found, ids, multi_label=True)
        assert (
            cascade.temperature == temperatures and multilabel_run.cascade_report["calibration"]["temperature"] == note
        )
        assert multilabel_run.cascade_report["temperature_always"] == cascade.temperature
        # the thresholds moved with the probabilities: the same thresholds before them, the same decisions
        assert cascade.raw_thresholds() == pytest.approx(raw)
        assert multilabel_run.thresholds == thresholds_at(raw, cascade.temperature)
        decided = DecisionPolicy(multilabel_run.label_names, MULTI, thresholds=raw).labels(found)  # at the raw ones
        assert multilabel_run.predict_labels(texts) == decided
        np.testing.assert_allclose(
            multilabel_run.predict_ids(x), calibrated(found, cascade.temperature, multi_label=True), atol=1e-6
        )
        assert "labels kept one, on 60 validation documents" in cascade_line(multilabel_run.cascade_report)
    finally:
        multilabel_run.cascade_report, multilabel_run.policy = report, policy
        multilabel_run.ngram_report, multilabel_run.threshold_report, multilabel_run.validation_scores = reports
