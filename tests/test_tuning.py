"""`hierattn.tuning`: a decision policy tuned in one pass, each step a pure function of validation scores.

NumPy only, on synthetic scores: every test here takes milliseconds (the fast tier).
"""

import numpy as np
import pytest

from hierattn.calibration import calibrated, choose_temperature
from hierattn.cut import choose_cut
from hierattn.decision import over_thresholds, thresholds_at
from hierattn.defaults import NGRAMS
from hierattn.ngrams.mixing import combine, mixing_on_validation
from hierattn.policy import MULTI, SINGLE, DecisionPolicy
from hierattn.tuning import (
    NGRAM_SCALES,
    ValidationScores,
    _whole_temperatures,
    as_float32,
    calibration_of,
    choose_offsets,
    choose_thresholds,
    cut_line,
    decision_record,
    macro_f1,
    ngram_scale,
    offset_line,
    outcomes,
    temperature_line,
    tune,
    untuned,
)


def _scores(rng, n=600, classes=3, multi=False):
    """Validation scores of two parts that each know something: network probabilities, n-gram logits, labels."""
    if multi:
        labels = (rng.random((n, classes)) < 0.3).astype(np.int64)
        signal = 2.0 * labels - 1.0
        network = 1 / (1 + np.exp(-(signal * 1.5 + rng.normal(size=(n, classes)))))
        return ValidationScores(
            labels, network.astype(np.float32), (signal + rng.normal(size=(n, classes))).astype(np.float32)
        )
    labels = rng.choice(classes, size=n, p=np.linspace(3, 1, classes) / np.linspace(3, 1, classes).sum())
    truth = np.eye(classes)[labels]
    scores = 2.0 * truth + rng.normal(size=(n, classes))
    network = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    logits = 1.5 * truth + rng.normal(size=(n, classes))
    return ValidationScores(labels, network.astype(np.float32), logits.astype(np.float32))


# The thresholds (step 2)


def test_each_label_takes_the_threshold_of_its_best_validation_f1():
    p = np.array([[0.9, 0.2], [0.6, 0.45], [0.3, 0.1], [0.2, 0.35], [0.7, 0.05]])
    y = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [1, 0]])
    thresholds, report = choose_thresholds(p, y, grid=(0.1, 0.3, 0.5, 0.7), min_positives=2)
    # label 0: 0.3 and 0.5 both separate perfectly, the tie goes to 0.5; label 1: only 0.3 gets both positives
    assert thresholds == [0.5, 0.3]
    assert report["tuned"] == 2 and report["min_positives"] == 2
    assert over_thresholds(p, thresholds).tolist() == y.tolist()


def test_a_label_too_rare_to_tune_takes_the_shared_threshold():
    p = np.array([[0.9, 0.2, 0.15], [0.6, 0.45, 0.1], [0.3, 0.1, 0.02], [0.2, 0.35, 0.01]])
    y = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0]])
    thresholds, report = choose_thresholds(p, y, grid=(0.1, 0.3, 0.5), min_positives=2)
    assert report["tuned"] == 2
    assert thresholds[2] == report["shared"]  # one positive: not tuned alone
    # the shared value is the grid value with the best micro-F1 over every label
    micro = []
    for t in (0.1, 0.3, 0.5):
        over = p > t
        micro.append(2 * (over & (y > 0)).sum() / (over.sum() + y.sum()))
    assert report["shared"] == (0.1, 0.3, 0.5)[int(np.argmax(micro))]


def test_a_label_without_validation_positives_is_not_tuned_alone():
    p = np.array([[0.9, 0.2], [0.1, 0.6]])
    y = np.array([[1, 0], [0, 0]])
    thresholds, report = choose_thresholds(p, y, min_positives=1)
    assert report["tuned"] == 1 and thresholds[1] == report["shared"]


def test_over_thresholds_is_strictly_above():
    assert over_thresholds(np.array([[0.5, 0.51]]), [0.5, 0.5]).tolist() == [[0, 1]]
    assert over_thresholds(np.array([[0.5, 0.51]]), [0.5, 0.5]).dtype == np.int8


# The cut, the n-gram part's scale and the temperatures (step 3)


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
    scores = {"whole": {"accuracy": 0.9}, "cascade": {"accuracy": 0.9}}
    report = {"cut": None, "tolerance": 0.0005, "validation_documents": 500, "measured_share": 0.11}
    assert cut_line(report) == (
        "cascade: the network reads every document (chosen on 500 validation documents, too few to show that "
        "skipping it costs under 0.05 points; as measured alone, it would read 11.0%)"
    )
    assert cut_line({"cut": None, "validation_documents": 0}).endswith("(no validation texts to choose a cut on)")
    report = {
        "cut": 0.5,
        "validation_documents": 9000,
        "validation_share": 0.3,
        "measured_share": 0.2,
        "validation": scores,
    }
    assert (
        "reads 30.0% of 9,000 validation documents (those of margin under 0.5; as measured alone, it would read 20.0%)"
        in (cut_line(report))
    )
    note = {"documents": 500, "kept": False, "fitted": 0.984, "reason": "..."}
    report = {"cut": None, "validation_documents": 500, "temperature": 1.0, "calibration": {"temperature": note}}
    assert temperature_line(report) == (
        "calibration: the whole combination's temperature 1 (on 500 validation documents, one fitted at 0.984 did "
        "not lower both the held-out folds' log-loss, by more than its standard error, and their calibration error)"
    )
    note = {"documents": 120, "kept": True, "fitted": 0.8, "held_out_gain": 0.0123, "held_out_ece": [0.031, 0.012]}
    report = {"cut": 0.4, "validation_documents": 9000, "temperature": 0.8, "calibration": {"temperature": note}}
    assert temperature_line(report).endswith(
        "0.8 (fitted on 120 validation documents the network reads; cross-fitted, it lowered their log-loss by "
        "0.0123 and their calibration error from 3.10% to 1.20%)"
    )
    note = {"documents": 3, "kept": False, "fitted": None, "reason": "too few to fit one on (fewer than 30)"}
    report["calibration"]["temperature"] = dict(note, used="every validation document's")
    assert temperature_line(report).endswith(
        "(every validation document's: the 3 the network reads are too few to fit one on (fewer than 30))"
    )
    note = {"documents": 777, "labels_kept": 40, "labels_too_few": 45, "labels_no_gain": 5, "kept": True}
    report = {"cut": None, "temperature": [0.9, 1.0, 1.3], "calibration": {"temperature": note}}
    assert temperature_line(report) == (
        "calibration: the whole combination's temperature per label, 0.9 to 1.3 (40 labels kept one, on 777 "
        "validation documents; 1 for 45 with too few positive or negative documents, and for 5 where one did not "
        "help held-out folds)"
    )
    # a classifier saved before these notes: its temperature, said as before
    assert temperature_line({"cut": 0.3, "temperature": 0.8}) == "calibration: the whole combination's temperature 0.8"


# The offsets (step 4)


def _imbalanced(rng, n, shares=(0.8, 0.15, 0.05)):
    """Probabilities of a classifier that under-answers the rare classes: true class id, and a softmax skewed to 0."""
    labels = rng.choice(len(shares), size=n, p=shares)
    scores = rng.normal(size=(n, len(shares))) + 2.5 * np.eye(len(shares))[labels]
    scores[:, 0] += 2.5  # the common class is over-answered
    e = np.exp(scores)
    return e / e.sum(1, keepdims=True), labels


def test_offsets_chosen_on_one_sample_raise_macro_f1_on_another(rng):
    validation, labels = _imbalanced(rng, 3000)
    offsets, report = choose_offsets(validation, labels)
    test, test_labels = _imbalanced(rng, 3000)
    plain, offset = DecisionPolicy(range(3)), DecisionPolicy(range(3), offsets=offsets)
    assert macro_f1(offset.ids(test), test_labels, 3) > macro_f1(plain.ids(test), test_labels, 3) + 0.02
    assert report["prior_weight"] > 0 and offsets[2] > offsets[1] > offsets[0]  # the rarer, the larger
    assert report["validation"]["offsets"]["macro_f1"] > report["validation"]["argmax"]["macro_f1"]
    # the offsets are -w log prior: add-one smoothed shares of the validation labels
    prior = (np.bincount(labels, minlength=3) + 1) / (len(labels) + 3)
    np.testing.assert_allclose(offsets, -report["prior_weight"] * np.log(prior), atol=1e-6)


def test_balanced_classes_keep_the_most_probable_class(rng):
    scores = rng.normal(size=(400, 2))
    labels = scores.argmax(1)
    offsets, report = choose_offsets(np.exp(scores) / np.exp(scores).sum(1, keepdims=True), labels)
    assert report["prior_weight"] == 0.0 and offsets == [0.0, 0.0]  # ties go to the smallest weight


def test_macro_f1_is_scikit_learns(rng):
    from sklearn.metrics import f1_score

    decided, labels = rng.integers(0, 4, 200), rng.integers(0, 3, 200)  # a class predicted that is never true
    assert macro_f1(decided, labels, 4) == pytest.approx(f1_score(labels, decided, average="macro", labels=range(4)))


# The whole tuning: one pass, the steps in order


def test_tune_takes_each_step_on_what_the_steps_before_it_give(rng):
    scores = _scores(rng)
    before = DecisionPolicy(range(3), SINGLE, weights=(1.0, 0.0))
    tuning = tune(scores, before, decision_metric="macro_f1")
    policy = tuning.policy
    # 1. the weights: the smallest validation log-loss, held as the graph's float32 variable holds them
    weights, measured = mixing_on_validation(scores.network, scores.ngram_logits, scores.labels)
    assert policy.weights == as_float32(weights) and tuning.weights == measured
    # 3. the cut, chosen on the whole combination's decisions and the n-gram part's along the margins
    a, b = policy.weights
    whole = combine(scores.network, scores.ngram_logits, a, b).astype(np.float32)
    np.testing.assert_allclose(policy.combine(scores.network, scores.ngram_logits), whole, atol=1e-7)
    plain = before.replace(weights=policy.weights, ngram_scale=policy.ngram_scale)
    margins = plain.cascade.margins(scores.ngram_logits)
    ngrams = plain.ids(plain.cascade.ngram_probabilities(scores.ngram_logits))
    cut, report = choose_cut(margins, whole.argmax(1), ngrams, scores.labels)
    assert policy.cut == cut and tuning.cascade["validation"] == report["validation"]
    assert policy.ngram_scale == ngram_scale(scores.ngram_logits, scores.labels)
    # 4. the offsets, on the probabilities the policy gives once its cut and temperatures are chosen
    offsets, offset_report = choose_offsets(
        policy.replace(offsets=None).probabilities(scores.ngram_logits, whole), scores.labels
    )
    assert list(policy.offsets) == offsets and tuning.offsets == offset_report
    assert tuning.thresholds is None and policy.network == "auto"


def test_a_multi_label_tuning_moves_the_thresholds_with_the_temperatures(rng):
    scores = _scores(rng, n=800, classes=4, multi=True)
    tuning = tune(scores, DecisionPolicy("abcd", MULTI, weights=(1.0, 0.0)))
    policy = tuning.policy
    whole = policy.combine(scores.network, scores.ngram_logits)
    raw, report = choose_thresholds(whole, scores.labels)  # step 2: on the whole combination, before temperatures
    assert tuning.thresholds["tuned"] == report["tuned"] and "validation documents" in tuning.thresholds["how"]
    assert list(policy.thresholds) == thresholds_at(raw, policy.temperature)
    assert policy.cascade.raw_thresholds() == pytest.approx(raw)
    # the temperatures are one per label, fitted on the cascade's probabilities; no decision changes with them
    uncalibrated = policy.replace(temperature=None, temperature_always=None, thresholds=raw)
    found = uncalibrated.probabilities(scores.ngram_logits, whole)
    temperatures, _ = choose_temperature(found, scores.labels, True)
    assert list(policy.temperature) == temperatures and policy.temperature == policy.temperature_always
    decided = policy.ids(policy.probabilities(scores.ngram_logits, whole))
    np.testing.assert_array_equal(decided, uncalibrated.ids(found))
    np.testing.assert_allclose(
        policy.probabilities(scores.ngram_logits, whole), calibrated(found, temperatures, True), atol=1e-6
    )
    assert policy.offsets is None and tuning.offsets is None


def test_a_classifier_without_an_ngram_part_tunes_only_its_decision(rng):
    scores = _scores(rng)
    scores = ValidationScores(scores.labels, scores.network)
    tuning = tune(scores, DecisionPolicy(range(3)), decision_metric="macro_f1")
    assert tuning.policy.weights is None and tuning.policy.cascade is None and tuning.cascade is None
    offsets, _ = choose_offsets(scores.network, scores.labels)
    assert list(tuning.policy.offsets) == offsets
    multi = _scores(rng, classes=3, multi=True)
    tuning = tune(ValidationScores(multi.labels, multi.network), DecisionPolicy("abc", MULTI))
    assert list(tuning.policy.thresholds) == choose_thresholds(multi.network, multi.labels)[0]


def test_without_validation_texts_what_was_chosen_is_kept_else_the_defaults(rng):
    first = untuned(None, True, (["neg", "pos"], SINGLE))
    assert first.policy.weights == as_float32(NGRAMS["weights"])
    assert first.policy.cut is None and first.cascade == {"cut": None, "validation_documents": 0}
    topics = untuned(None, False, ("ab", MULTI))
    assert list(topics.policy.thresholds) == [0.5, 0.5] and topics.thresholds["how"].startswith("the default")
    chosen = DecisionPolicy(["neg", "pos"], weights=(0.4, 0.6), cut=0.3, temperature=0.9)
    kept = untuned(chosen, True)
    assert kept.policy == chosen and kept.cascade is None and kept.thresholds is None


def test_outcomes_answer_every_question_from_one_pass(rng):
    scores = _scores(rng)
    policy = tune(scores, DecisionPolicy(range(3), weights=(1.0, 0.0))).policy.replace(
        cut=0.8, temperature=1.3, temperature_always=0.7
    )
    found = outcomes(policy, scores.network, scores.ngram_logits, scores.labels)
    whole = policy.combine(scores.network, scores.ngram_logits)
    read = policy.cascade.needs_network(scores.ngram_logits)
    assert 0 < read.sum() < len(read) and found["share"] == pytest.approx(read.mean())
    np.testing.assert_allclose(found["probabilities"][read], calibrated(whole[read], 1.3), atol=1e-6)
    np.testing.assert_allclose(found["whole"], calibrated(whole, 0.7), atol=1e-6)  # as network="always" gives them
    assert found["calibration"] == calibration_of(policy, scores.ngram_logits, whole, scores.labels)
    assert found["calibration"]["temperature"] == 1.3
    always = outcomes(policy.for_network("always"), scores.network, scores.ngram_logits)
    assert always["share"] is None and always["calibration"] is None
    np.testing.assert_allclose(always["probabilities"], calibrated(whole, 0.7), atol=1e-6)


def test_without_offsets_the_rule_is_the_most_probable_class_and_metrics_record_no_decision():
    policy = DecisionPolicy(["neg", "pos"])
    assert offset_line(None) == "decision rule: the most probable class"
    assert decision_record(policy, {"prior_weight": 0.5}) is None
    assert decision_record(policy.replace(offsets=(0.0, 0.2)), None) == {"offsets": [0.0, 0.2]}
