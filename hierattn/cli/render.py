"""Text renderings of what the application returns: a prediction, a run's metrics, an evaluation, a corpus summary."""

from hierattn.calibration import calibration_temperature
from hierattn.defaults import MULTILABEL
from hierattn.kinds import kind_of
from hierattn.runs.baseline import NAME


def answer_text(answer):
    """One text's prediction (`hierattn.runs.predict.predict_one`): its class or label set, then the probabilities.

    Every class in the model's order; with `top_k`, only the ranked classes,
    most probable first. A multi-label model's labels show their thresholds,
    most probable first: those predicted and a few more
    (`MULTILABEL["shown_under_threshold"]`), the rest counted.

    >>> print(answer_text({"label": "pos", "probabilities": {"neg": 0.25, "pos": 0.75}}))
    predicted: pos
      neg: 0.2500
      pos: 0.7500
    >>> print(answer_text({"labels": ["food"], "thresholds": {"sport": 0.4, "food": 0.35},
    ...     "probabilities": {"sport": 0.1, "food": 0.9}, "top_k": [["food", 0.9]]}))
    predicted: food
    top 1 of 2 labels:
      food: 0.9000 (threshold 0.35)
    >>> print(answer_text({"label": None, "answered": False, "confidence": 0.75, "probabilities": {"neg": 0.25, "pos": 0.75}}))
    predicted: none: not sure enough (confidence 0.7500, under the minimum), left for a person
      neg: 0.2500
      pos: 0.7500
    """
    probabilities, thresholds = answer["probabilities"], answer.get("thresholds")
    if answer.get("answered") is False:
        sure = answer["confidence"]
        lines = [f"predicted: none: not sure enough (confidence {sure:.4f}, under the minimum), left for a person"]
    elif thresholds is None:
        lines = [f"predicted: {answer['label']}"]
    else:
        lines = [f"predicted: {', '.join(answer['labels']) or '(no label over its threshold)'}"]
    if answer.get("answered"):
        lines[0] += f" (confidence {answer['confidence']:.4f})"
    shown, rest = list(probabilities.items()), 0
    if "top_k" in answer:
        shown = [(name, p) for name, p in answer["top_k"]]
        kind = "labels" if thresholds is not None else "classes"
        lines.append(f"top {len(shown)} of {len(probabilities)} {kind}:")
    elif thresholds is not None:
        shown, rest = _labels_shown(answer)
    for name, p in shown:
        lines.append(f"  {name}: {p:.4f}" + (f" (threshold {thresholds[name]:.2f})" if thresholds is not None else ""))
    if rest:
        lines.append(f"  ... {rest} more under their thresholds (--top-k {len(probabilities)} shows every label)")
    return "\n".join(lines)


def _labels_shown(answer, under=None):
    """A multi-label answer's labels to show, most probable first (those predicted and a few more), and how many not.

    Every predicted label is shown (one with a low threshold may be less
    probable than labels that are not predicted), then the most probable of
    the others.

    >>> _labels_shown({"labels": ["b"], "probabilities": {"a": 0.1, "b": 0.9, "c": 0.3}}, under=1)
    ([('b', 0.9), ('c', 0.3)], 1)
    >>> _labels_shown({"labels": ["rare"], "probabilities": {"a": 0.4, "b": 0.3, "rare": 0.2}}, under=1)
    ([('rare', 0.2), ('a', 0.4)], 1)
    """
    ranked = sorted(answer["probabilities"].items(), key=lambda item: -item[1])
    predicted = set(answer.get("labels") or [])
    under = MULTILABEL["shown_under_threshold"] if under is None else under
    others = [item for item in ranked if item[0] not in predicted]
    shown = [item for item in ranked if item[0] in predicted] + others[:under]
    return shown, len(others) - len(others[:under])


def metrics_text(metrics):
    """A training run's metrics (metrics.json): its epochs and what stopped them, then each split's scores.

    Each split's scores are shown beside its parts' and the baseline's.
    """
    baseline, parts = metrics.get("baseline", {}), metrics.get("parts", {})
    lines = []
    if "epochs_trained" in metrics:  # the network's epochs, and what ended them (`hierattn.models.budget`)
        seconds, trained = metrics.get("time_budget_seconds"), metrics["epochs_trained"]
        lines.append(
            f"the network trained {trained} epoch{'s' if trained != 1 else ''} of at most {metrics['epoch_budget']}"
            + (f" (or {seconds / 60:g} min)" if seconds else "")
            + f"; stopped: {metrics['stopped_by']}"
        )
    if parts:
        lines.append(
            f"the network and the n-gram part combined with weights {parts['network_weight']:.2f} and "
            f"{parts['ngram_weight']:.2f} (network share {parts['network_share']:.2f}, chosen on validation)"
        )
        recipe = parts.get("ngram_recipe")
        unit = {"characters": "character", "subwords": "subword"}.get(metrics.get("units", {}).get("units"), "word")
        if recipe:  # runs before the recipes were chosen have none
            lines.append(
                f"the n-gram part: {recipe['weighting']} of {unit} 1-{recipe['ngram_max']} grams, C={recipe['C']:g}"
                f"{', balanced class weights' if recipe['class_weight'] else ''} (the best of "
                f"{len(parts.get('recipes_tried') or [])} recipes on validation)"
            )
    read = parts.get("network_read", {})
    if read:
        lines.append(
            "the network read "
            + ", ".join(f"{read[split]:.1%} of {split} documents" for split in ("validation", "test") if split in read)
            + " (the others decided by the n-gram part alone, surer than the cut chosen on validation)"
        )
    if "skipped" in baseline:
        lines.append(f"no baseline: scikit-learn could not fit it ({baseline['skipped']})")
    for split in ("validation", "test"):
        if split in metrics:
            m = metrics[split]
            line = f"{split}: {scores_text(m, full=True)} ({m['documents']:,} documents)"
            for part, label in (
                ("whole", "network on every document"),
                ("network", "network alone"),
                ("ngrams", "n-gram part alone"),
            ):
                if split in parts.get(part, {}):
                    line += f" | {label}: {scores_text(parts[part][split])}"
            if split in baseline:
                line += f" | {NAME} baseline: {scores_text(baseline[split])}"
            lines.append(line)
    calibration = metrics.get("calibration", {}).get("test")
    if calibration:  # runs before calibration have none
        lines.append(
            "test " + calibration_text(calibration, "micro-F1" if "micro_f1" in metrics["test"] else "accuracy")
        )
    decision = metrics.get("decision")
    if decision and "test" in decision:  # the decision rule for macro-F1 (`hierattn.tuning`)
        lines.append(
            f"decision rule for macro-F1 (prior weight {decision['prior_weight']:g}, chosen on validation): test "
            f"with the most probable class instead: {scores_text(decision['test']['argmax'])}"
        )
    return "\n".join(lines)


def scores_text(metrics, full=False):
    """Accuracy and macro-F1 (multi-label: micro- and macro-F1, and with `full` samples-F1, subset accuracy, Hamming loss).

    >>> scores_text({"accuracy": 0.9, "macro_f1": 0.85})
    'accuracy 0.9000, macro-F1 0.8500'
    >>> scores_text({"micro_f1": 0.87, "macro_f1": 0.5, "samples_f1": 0.88, "subset_accuracy": 0.8, "hamming_loss": 0.004}, full=True)
    'micro-F1 0.8700, macro-F1 0.5000, samples-F1 0.8800, subset accuracy 0.8000, Hamming loss 0.0040'
    """
    if "micro_f1" not in metrics:
        return f"accuracy {metrics['accuracy']:.4f}, macro-F1 {metrics['macro_f1']:.4f}"
    text = f"micro-F1 {metrics['micro_f1']:.4f}, macro-F1 {metrics['macro_f1']:.4f}"
    if full:
        text += (
            f", samples-F1 {metrics['samples_f1']:.4f}, subset accuracy {metrics['subset_accuracy']:.4f}, "
            f"Hamming loss {metrics['hamming_loss']:.4f}"
        )
    return text


def confusion_text(labels, matrix, width=12, row_width=32):
    """A confusion matrix as an aligned table: true classes down the side, predicted classes across the top.

    Columns are headed by the class names when none is longer than `width`
    characters; otherwise by the classes' numbers, each row then starting
    with its class's number and name. Names longer than `row_width` are cut
    (their end replaced by "...").

    Args:
        labels: The class names, in the matrix's order.
        matrix: Counts, `matrix[i][j]` the documents of true class `i`
            predicted as class `j`.
        width: The longest name that heads a column.
        row_width: The longest name shown in full at the start of a row.

    Example:

    >>> print(confusion_text(["neg", "pos"], [[480, 20], [35, 465]]))
    true \\ predicted  neg  pos
    neg               480   20
    pos                35  465
    >>> print(confusion_text(["comp.sys.mac.hardware", "sci.space"], [[9, 1], [0, 10]]))
    true \\ predicted         1   2
    1 comp.sys.mac.hardware  9   1
    2 sci.space              0  10
    """
    names = [str(name) for name in labels]
    numbered = any(len(name) > width for name in names)
    short = [name if len(name) <= row_width else name[: row_width - 3] + "..." for name in names]
    heads = [str(i + 1) for i in range(len(names))] if numbered else names
    rows = [f"{i + 1} {name}" for i, name in enumerate(short)] if numbered else names
    corner = "true \\ predicted"
    side = max(len(corner), *(len(row) for row in rows))
    cells = [[f"{int(v):,}" for v in row] for row in matrix]
    widths = [max(len(heads[j]), *(len(row[j]) for row in cells)) for j in range(len(heads))]
    lines = [f"{corner:<{side}}  " + "  ".join(f"{h:>{w}}" for h, w in zip(heads, widths))]
    lines += [
        f"{name:<{side}}  " + "  ".join(f"{v:>{w}}" for v, w in zip(row, widths)) for name, row in zip(rows, cells)
    ]
    return "\n".join(lines)


def evaluation_text(metrics):
    """Accuracy and macro-F1 of an evaluation (`hierattn.runs.evaluate.evaluate_classifier`), then its confusion matrix.

    The matrix is labelled (`confusion_text`): true classes down the side, predicted across the top.
    """
    read = ""
    if "network_read" in metrics:
        read = (
            f"\nthe network read {metrics['network_read']:.1%} of them; with the network on every document: "
            f"{scores_text(metrics['whole'])}"
        )
    if "calibration" in metrics:
        read += "\n" + calibration_text(metrics["calibration"], "micro-F1" if "micro_f1" in metrics else "accuracy")
    if "abstention" in metrics:
        read += "\n" + abstention_text(metrics["abstention"])
    if "micro_f1" in metrics:
        return multilabel_text(metrics) + read
    scores = scores_text(metrics)
    lines = [
        f"{scores} on {metrics['documents']:,} documents{read}",
        "confusion matrix (rows: true class, columns: predicted class):",
    ]
    lines += ["  " + line for line in confusion_text(metrics["labels"], metrics["confusion_matrix"]).splitlines()]
    return "\n".join(lines)


def calibration_text(calibration, score="accuracy"):
    """Two lines on calibration (`TextClassifier.calibration_report`): before and after the temperature, and by coverage."""
    before, after = calibration["before"], calibration["after"]
    coverage = " / ".join(f"{after['coverage'][k]:.2%}" for k in ("0.9", "0.8", "0.5"))
    return (
        f"calibration (temperature {calibration_temperature(calibration)}): expected calibration error "
        f"{before['ece']:.2%} -> {after['ece']:.2%}, log-loss {before['log_loss']:.4f} -> {after['log_loss']:.4f}, "
        f"Brier {before['brier']:.4f} -> {after['brier']:.4f}\n"
        f"{score} of the surest 90% / 80% / 50% of documents: {coverage} (all: {after['coverage']['1']:.2%})"
    )


def abstention_text(abstention):
    """One line on a minimum confidence (`hierattn.runs.evaluate.abstention`): what it answers, and how well.

    >>> print(abstention_text({"min_confidence": 0.9, "answered": 80, "left": 20, "coverage": 0.8, "accuracy": 0.975}))
    with a minimum confidence of 0.9: 80 answered (coverage 80.00%), accuracy 97.50%; 20 left for a person
    """
    name = "micro-F1" if "micro_f1" in abstention else "accuracy"
    return (
        f"with a minimum confidence of {abstention['min_confidence']:g}: {abstention['answered']:,} answered "
        f"(coverage {abstention['coverage']:.2%}), {name} {abstention[name.replace('-', '_').lower()]:.2%}; "
        f"{abstention['left']:,} left for a person"
    )


def corpus_text(summary, words=10):
    """What `explain_corpus` did (a `CorpusSummary`): documents, accuracy, each class's top `words` by evidence and attention."""
    lines = [
        f"explained {summary.documents:,} documents"
        + (f" (skipped {summary.skipped_empty} without words)" if summary.skipped_empty else "")
        + (f"; {kind_of(summary).accuracy_name} {summary.accuracy:.4f}" if summary.labelled else "")
    ]
    where = " where it is predicted" if summary.multi_label else ""
    for label, count in sorted(summary.class_documents.items(), key=lambda item: str(item[0])):
        lines.append(f"  {label} ({count:,} documents{where})")
        for by, what in (("evidence", "most evidence for it"), ("attention", "most attention, relative to uniform")):
            top = summary.words.top(label, words, by) or [f"(no word occurs {summary.words.min_count}+ times)"]
            lines.append(f"    {what}: {', '.join(top)}")
    return "\n".join(lines)


def multilabel_text(metrics):
    """A multi-label evaluation: its scores, then each label's documents, precision, recall and F1, most frequent first."""
    lines = [f"{scores_text(metrics, full=True)} on {metrics['documents']:,} documents", "per label:"]
    report = metrics["report"]
    rows = sorted((str(name) for name in metrics["labels"]), key=lambda name: -report[name]["support"])
    width = max(len("label"), *(len(name) for name in rows))
    lines.append(f"  {'label':<{width}}  documents  precision  recall      F1")
    for name in rows:
        r = report[name]
        lines.append(
            f"  {name:<{width}}  {int(r['support']):>9,}  {r['precision']:>9.4f}  {r['recall']:>6.4f}  {r['f1-score']:.4f}"
        )
    return "\n".join(lines)
