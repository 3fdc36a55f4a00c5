"""`hierattn.models.cascade`: the network reads only what the n-gram part is not sure of, the cut chosen on validation."""

import keras
import numpy as np
import pytest

import hierattn
from hierattn.calibration import calibrated, choose_temperature, expected_calibration_error
from hierattn.decision import Decision, thresholds_at
from hierattn.errors import ArgumentError
from hierattn.models.cascade import NGRAM_SCALES, _whole_temperatures, ngram_scale
from hierattn.ngrams.mixing import ngram_logits

from conftest import TINY_OPTIONS, eagerly, make_reviews, make_topics


def test_the_ngram_scale_is_the_temperature_of_the_smallest_validation_log_loss(rng):
    logits = rng.normal(size=(400, 3))
    labels = np.array([rng.choice(3, p=np.exp(2.0 * z) / np.exp(2.0 * z).sum()) for z in logits])  # drawn at s = 2
    chosen = ngram_scale(logits, labels)
    assert chosen in NGRAM_SCALES and 1.2 < chosen < 3.3

    def loss(scale):
        p = np.exp(scale * logits) / np.exp(scale * logits).sum(1, keepdims=True)
        return -np.log(p[np.arange(400), labels]).mean()

    assert loss(chosen) == min(loss(s) for s in NGRAM_SCALES)


def _sharp(rng, n, sharpness):
    scores = rng.normal(size=(n, 2))
    labels = np.array([rng.choice(2, p=p) for p in np.exp(scores) / np.exp(scores).sum(1, keepdims=True)])
    sharp = np.exp(sharpness * scores)
    return sharp / sharp.sum(1, keepdims=True), labels


def test_the_documents_the_network_reads_take_every_documents_temperature_only_when_too_few(rng):
    p, labels = _sharp(rng, 3000, 3.0)  # over-confident everywhere: every document's temperature near 3
    every = np.ones(3000, bool)
    found, notes = _whole_temperatures(p, labels, every)  # the network reads all: one temperature
    assert found["temperature"] == found["temperature_always"] > 2.5 and set(notes) == {"temperature"}
    few = np.arange(3000) < 20  # too few to fit one on: every document's, said so
    found, notes = _whole_temperatures(p, labels, few)
    assert found["temperature"] == found["temperature_always"] and notes["temperature"]["used"]
    # enough documents read, calibrated already: they keep 1, not every document's (never checked on them)
    calibrated_read, read_labels = _sharp(rng, 600, 1.0)
    both, both_labels = np.concatenate([calibrated_read, p]), np.concatenate([read_labels, labels])
    read = np.arange(3600) < 600
    found, notes = _whole_temperatures(both, both_labels, read)
    assert found["temperature"] == 1.0 and found["temperature_always"] > 2.0 and "used" not in notes["temperature"]
    # enough read, over-confident: their own
    found, notes = _whole_temperatures(p, labels, np.arange(3000) < 1000)
    assert notes["temperature"]["kept"] and notes["temperature"]["documents"] == 1000 and found["temperature"] > 2.0


def test_train_says_what_the_cut_and_the_temperature_are_and_why():
    from hierattn.models.cascade import _cut_line, _temperature_line

    scores = {"whole": {"accuracy": 0.9}, "cascade": {"accuracy": 0.9}}
    report = {"cut": None, "tolerance": 0.0005, "validation_documents": 500, "measured_share": 0.11}
    assert _cut_line(report) == (
        "cascade: the network reads every document (chosen on 500 validation documents, too few to show that "
        "skipping it costs under 0.05 points; as measured alone, it would read 11.0%)"
    )
    report = {
        "cut": 0.5,
        "validation_documents": 9000,
        "validation_share": 0.3,
        "measured_share": 0.2,
        "validation": scores,
    }
    assert (
        "reads 30.0% of 9,000 validation documents (those of margin under 0.5; as measured alone, it would read 20.0%)"
        in (_cut_line(report))
    )
    note = {"documents": 500, "kept": False, "fitted": 0.984, "reason": "..."}
    report = {"cut": None, "validation_documents": 500, "temperature": 1.0, "calibration": {"temperature": note}}
    assert _temperature_line(report) == (
        "calibration: the whole combination's temperature 1 (on 500 validation documents, one fitted at 0.984 did "
        "not lower both the held-out folds' log-loss, by more than its standard error, and their calibration error)"
    )
    note = {"documents": 120, "kept": True, "fitted": 0.8, "held_out_gain": 0.0123, "held_out_ece": [0.031, 0.012]}
    report = {"cut": 0.4, "validation_documents": 9000, "temperature": 0.8, "calibration": {"temperature": note}}
    assert _temperature_line(report).endswith(
        "0.8 (fitted on 120 validation documents the network reads; cross-fitted, it lowered their log-loss by "
        "0.0123 and their calibration error from 3.10% to 1.20%)"
    )
    note = {"documents": 3, "kept": False, "fitted": None, "reason": "too few to fit one on (fewer than 30)"}
    report["calibration"]["temperature"] = dict(note, used="every validation document's")
    assert _temperature_line(report).endswith(
        "(every validation document's: the 3 the network reads are too few to fit one on (fewer than 30))"
    )
    note = {"documents": 777, "labels_kept": 40, "labels_too_few": 45, "labels_no_gain": 5, "kept": True}
    report = {"cut": None, "temperature": [0.9, 1.0, 1.3], "calibration": {"temperature": note}}
    assert _temperature_line(report) == (
        "calibration: the whole combination's temperature per label, 0.9 to 1.3 (40 labels kept one, on 777 "
        "validation documents; 1 for 45 with too few positive or negative documents, and for 5 where one did not "
        "help held-out folds)"
    )
    # a classifier saved before these notes: its temperature, said as before
    assert _temperature_line({"cut": 0.3, "temperature": 0.8}) == "calibration: the whole combination's temperature 0.8"


@pytest.fixture(scope="module")
def classifier():
    """A tiny HAN whose two parts both weigh in (the weights set), its cut chosen on its validation texts."""
    texts, labels = make_reviews(160)
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    with eagerly():
        clf.fit(texts, labels, epochs=1, batch_size=16, verbose=0, validation_split=0.25)
    clf.combination.mixing.assign(np.array([0.6, 0.8], np.float32))
    return clf


def _ids_and_margins(clf, texts):
    x = clf.preprocessor(texts)
    return x, clf.cascade.margins(ngram_logits(clf.ngram_logits, x["ngram_ids"]))


def test_fit_chooses_the_cut_on_validation_texts_only(classifier):
    texts, labels = make_reviews(60, seed=4)
    report = dict(classifier.cascade_report)
    try:
        cut = classifier.choose_cut((texts, labels))
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
        assert classifier.choose_cut(None) is None  # no validation texts: no cut
        assert "validation texts" in classifier.cascade_line()
    finally:
        classifier.cascade_report = report


def test_the_cascade_gives_the_whole_combination_where_the_network_reads(classifier):
    texts = make_reviews(80, seed=9)[0] + ["", "<br />", "Qwxzv blorptk."]
    x, margins = _ids_and_margins(classifier, texts)
    ranked = np.unique(margins)
    report = classifier.cascade_report
    cut = float(ranked[len(ranked) // 2 - 1 : len(ranked) // 2 + 1].mean())
    classifier.cascade_report = {"cut": cut, "temperature": 1.7, "temperature_always": 0.6}
    try:
        read = margins < classifier.cascade.cut
        assert 0 < read.sum() < len(texts)
        found, whole = classifier.predict_ids(x), classifier.predict_ids(x, part="whole")
        # where the network reads: the whole combination at the classifier's temperature; the same decisions
        np.testing.assert_allclose(found[read], calibrated(whole[read], 1.7), rtol=0, atol=1e-6)
        np.testing.assert_array_equal(found[read].argmax(1), whole[read].argmax(1))
        logits = ngram_logits(classifier.ngram_logits, x["ngram_ids"])
        np.testing.assert_allclose(found[~read], classifier.cascade.ngram_probabilities(logits)[~read], atol=1e-6)
        probabilities, both, share = classifier.predict_with_whole(x)
        np.testing.assert_allclose(probabilities, found, atol=1e-6)
        np.testing.assert_allclose(both, calibrated(whole, 0.6), atol=1e-6)  # as network="always" gives them
        assert share == pytest.approx(read.mean())
        labels = np.arange(len(texts)) % 2
        calibration = classifier.calibration_report(x, labels, whole)
        assert calibration["temperature"] == 1.7 and set(calibration) == {"temperature", "before", "after"}
        uncalibrated = classifier.cascade.uncalibrated().predict(logits, lambda index: whole[index])
        ece = [expected_calibration_error(p, labels, p.argmax(1)) for p in (uncalibrated, found)]
        assert [calibration["before"]["ece"], calibration["after"]["ece"]] == [round(e, 5) for e in ece]
        classifier.network = "always"  # every document: the whole combination at the other temperature
        np.testing.assert_allclose(classifier.predict(texts, verbose=0), calibrated(whole, 0.6), atol=1e-6)
        probabilities, both, share = classifier.predict_with_whole(x)
        assert share is None
        np.testing.assert_allclose(probabilities, calibrated(whole, 0.6), atol=1e-6)
    finally:
        classifier.network, classifier.cascade_report = "auto", report


def test_the_cut_and_the_network_setting_are_saved(classifier, tmp_path):
    report = classifier.cascade_report
    classifier.cascade_report, classifier.network = {"cut": 1.25, "validation_share": 0.3}, "always"
    try:
        classifier.save(tmp_path / "clf.keras")
        loaded = keras.saving.load_model(tmp_path / "clf.keras")
        assert loaded.cascade_report == {"cut": 1.25, "validation_share": 0.3} and loaded.network == "always"
        assert loaded.cascade.cut is None  # "always": the network reads every document
        loaded.network = "auto"
        assert loaded.cascade.cut == 1.25
    finally:
        classifier.cascade_report, classifier.network = report, "auto"
    with pytest.raises(ArgumentError, match="network must be one of auto, always"):
        classifier.network = "sometimes"


def test_a_classifier_without_ngrams_has_no_cascade():
    clf = hierattn.TextClassifier("han", ngrams=False, embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    assert clf.cascade is None
    with pytest.raises(ValueError, match="no n-gram part"):
        clf.choose_cut(None)


def test_a_multi_label_classifier_is_calibrated_per_label_on_validation_texts_only(multilabel_run):
    texts, labels = make_topics(60, seed=5)
    report, thresholds = dict(multilabel_run.cascade_report), list(multilabel_run.thresholds)
    x = multilabel_run.preprocessor(texts)
    try:
        raw = multilabel_run.cascade.raw_thresholds()
        multilabel_run.choose_cut((texts, labels))
        cascade, ids = multilabel_run.cascade, multilabel_run.label_ids(labels)
        # one temperature a label, fitted on the cascade's probabilities of these validation texts alone
        whole = multilabel_run.predict_ids(x, part="whole")
        logits = ngram_logits(multilabel_run.ngram_logits, x["ngram_ids"])
        found = cascade.uncalibrated().predict(logits, lambda index: whole[index])
        temperatures, note = choose_temperature(found, ids, multi_label=True)
        assert (
            cascade.temperature == temperatures and multilabel_run.cascade_report["calibration"]["temperature"] == note
        )
        assert multilabel_run.cascade_report["temperature_always"] == cascade.temperature
        # the thresholds moved with the probabilities: the same thresholds before them, the same decisions
        assert cascade.raw_thresholds() == pytest.approx(raw)
        assert multilabel_run.thresholds == thresholds_at(raw, cascade.temperature)
        decided = Decision(multilabel_run.label_names, True, raw).labels(found)  # the raw cascade's, at its thresholds
        assert multilabel_run.predict_labels(texts) == decided
        np.testing.assert_allclose(
            multilabel_run.predict_ids(x), calibrated(found, cascade.temperature, multi_label=True), atol=1e-6
        )
        assert "labels kept one, on 60 validation documents" in multilabel_run.cascade_line()
    finally:
        multilabel_run.cascade_report, multilabel_run.thresholds = report, thresholds
