"""Tests for hierattn.cli.render: the text renderings of predictions, run metrics, evaluations and corpus summaries."""

import doctest

import hierattn.cli.render
from hierattn.cli.render import answer_text, confusion_text, corpus_text, evaluation_text, metrics_text
from hierattn.data.tables import rows_text

from conftest import sample_explanation


def sample():
    """Six words in two sentences, without evidence or a decision."""
    return sample_explanation(evidence=False)


def test_the_examples_run():
    assert doctest.testmod(hierattn.cli.render).failed == 0


def test_answer_text_of_one_prediction():  # (replaces test_prediction_text: prediction_text, unused, is gone)
    answer = {"label": "pos", "probabilities": {"neg": 0.25, "pos": 0.75}}
    assert answer_text(answer) == "predicted: pos\n  neg: 0.2500\n  pos: 0.7500"


def test_a_multi_label_answer_shows_its_labels_most_probable_first_and_counts_the_rest():
    names = [f"label{i:02d}" for i in range(20)]
    probabilities = {name: round(0.01 * (i + 1), 2) for i, name in enumerate(names)}
    probabilities["label03"] = 0.97
    answer = {"labels": ["label03"], "thresholds": dict.fromkeys(names, 0.5), "probabilities": probabilities}
    lines = answer_text(answer).splitlines()
    assert lines[0] == "predicted: label03"
    assert lines[1] == "  label03: 0.9700 (threshold 0.50)"  # the predicted label first, not in the model's order
    assert [line.split(":")[0].strip() for line in lines[2:7]] == [f"label{i}" for i in (19, 18, 17, 16, 15)]
    assert lines[7:] == ["  ... 14 more under their thresholds (--top-k 20 shows every label)"]


METRICS = {
    "validation": {"accuracy": 0.9, "macro_f1": 0.85, "documents": 1234},
    "test": {"accuracy": 0.8, "macro_f1": 0.75, "documents": 40},
    "parts": {
        "network_weight": 1.0,
        "ngram_weight": 0.5,
        "network_share": 0.66667,
        "network": {"test": {"accuracy": 0.7, "macro_f1": 0.6}},
        "ngrams": {},
    },
    "baseline": {"validation": {"accuracy": 0.5, "macro_f1": 0.4}},
}


def test_metrics_text_puts_parts_and_baseline_beside_each_split():
    assert metrics_text(METRICS).splitlines() == [
        (
            "the network and the n-gram part combined with weights 1.00 and 0.50 (network share 0.67, chosen on "
            "validation)"
        ),
        (
            "validation: accuracy 0.9000, macro-F1 0.8500 (1,234 documents) | TF-IDF+LR baseline: accuracy 0.5000, "
            "macro-F1 0.4000"
        ),
        "test: accuracy 0.8000, macro-F1 0.7500 (40 documents) | network alone: accuracy 0.7000, macro-F1 0.6000",
    ]
    trained = {"epochs_trained": 12, "epoch_budget": 38, "time_budget_seconds": 1200, "stopped_by": "time budget"}
    assert metrics_text(trained) == "the network trained 12 epochs of at most 38 (or 20 min); stopped: time budget"
    trained.update(epochs_trained=1, time_budget_seconds=None, stopped_by="epochs setting")
    assert metrics_text(trained) == "the network trained 1 epoch of at most 38; stopped: epochs setting"
    skipped = metrics_text({"baseline": {"skipped": "one class"}})
    assert skipped == "no baseline: scikit-learn could not fit it (one class)"
    assert metrics_text({}) == ""


def test_evaluation_text_and_rows_text():
    metrics = {
        "accuracy": 0.5,
        "macro_f1": 0.25,
        "documents": 2000,
        "labels": ["neg", "pos"],
        "confusion_matrix": [[1000, 0], [1000, 0]],
    }
    assert evaluation_text(metrics) == (
        "accuracy 0.5000, macro-F1 0.2500 on 2,000 documents\n"
        "confusion matrix (rows: true class, columns: predicted class):\n"
        "  true \\ predicted    neg  pos\n"
        "  neg               1,000    0\n"
        "  pos               1,000    0"
    )
    calibration = {
        "temperature": 0.8,
        "before": {"ece": 0.0301, "log_loss": 0.1982, "brier": 0.1012, "coverage": {}},
        "after": {
            "ece": 0.0088,
            "log_loss": 0.1901,
            "brier": 0.0998,
            "coverage": {"1": 0.9265, "0.9": 0.958, "0.8": 0.976, "0.5": 0.994},
        },
    }
    assert evaluation_text(dict(metrics, calibration=calibration)).splitlines()[1:3] == [
        (
            "calibration (temperature 0.8): expected calibration error 3.01% -> 0.88%, log-loss 0.1982 -> 0.1901, "
            "Brier 0.1012 -> 0.0998"
        ),
        "accuracy of the surest 90% / 80% / 50% of documents: 95.80% / 97.60% / 99.40% (all: 92.65%)",
    ]
    with_test = dict(METRICS, calibration={"validation": calibration, "test": calibration})
    assert metrics_text(with_test).splitlines()[-2].startswith("test calibration (temperature 0.8): expected")
    report = {
        "rows": 1200,
        "used": 1200,
        "text_column": "text",
        "label_column": "label",
        "skipped_missing_text": 0,
        "skipped_missing_label": 0,
    }
    assert rows_text("t.csv", report) == (
        "t.csv: 1,200 of 1,200 rows used (text column 'text', label column 'label')",
        None,
    )
    report.update(used=1197, skipped_missing_text=1, skipped_missing_label=2)
    assert rows_text("t.csv", report)[1] == "  skipped 1 without text, 2 without a label (empty, NaN, NA, null, ...)"


def test_the_confusion_matrix_names_the_true_classes_down_the_side_and_the_predicted_across():
    assert confusion_text(["World", "Sports", "Sci/Tech"], [[90, 3, 7], [1, 99, 0], [12, 0, 88]]).splitlines() == [
        "true \\ predicted  World  Sports  Sci/Tech",
        "World                90       3         7",
        "Sports                1      99         0",
        "Sci/Tech             12       0        88",
    ]
    assert confusion_text([0, 1], [[12345, 0], [7, 3]]).splitlines() == [
        "true \\ predicted       0  1",
        "0                 12,345  0",
        "1                      7  3",
    ]  # integer labels; counts with their thousands
    # Names too long to head a column: numbered columns, rows by number and name, cut past 32 characters.
    labels = ["comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "a label far too long to show in full here"]
    assert confusion_text(labels, [[5, 1, 0], [2, 4, 0], [0, 0, 6]]).splitlines() == [
        "true \\ predicted                    1  2  3",
        "1 comp.sys.ibm.pc.hardware          5  1  0",
        "2 comp.sys.mac.hardware             2  4  0",
        "3 a label far too long to show ...  0  0  6",
    ]


def test_corpus_text_names_the_top_words_of_each_predicted_class():
    from hierattn.explain.corpus import CorpusSummary, CorpusWords

    words = CorpusWords(top_k=2, min_count=3)
    for _ in range(3):
        words.add(sample())
    summary = CorpusSummary(documents=3, skipped_empty=1, correct=2, labelled=3, words=words, outputs=[])
    ranked = words.top("pos", 2), words.top("pos", 2, by="attention")
    assert corpus_text(summary, 2) == (
        "explained 3 documents (skipped 1 without words); accuracy 0.6667\n  pos (3 documents)\n"
        f"    most evidence for it: {', '.join(ranked[0])}\n"
        f"    most attention, relative to uniform: {', '.join(ranked[1])}"
    )
    assert ranked[1] == ["great", "film"]  # sample()'s top two by weight, read in every document
