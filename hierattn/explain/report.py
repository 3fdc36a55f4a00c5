"""Rendering explanations: plain text, CSV rows and JSON (the HTML picture: `hierattn.explain.picture`)."""

import csv
import io

import numpy as np

from hierattn.baseline import NAME
from hierattn.explain.picture import margin_parts, parts_words, prediction_words, shows_attention, to_html, top_evidence
from hierattn.jsonfile import dumps

CSV_COLUMNS = [
    "document",
    "id",
    "true_label",
    "predicted",
    "sentence",
    "word",
    "start",
    "end",
    "text",
    "evidence",
    "network_evidence",
    "ngram_evidence",
    "weight",
    "word_weight",
    "sentence_weight",
    "oov",
    "used",
    "versus",
    "margin",
    "constant_terms",
]


def _word_line(w, value):
    return f"  {value}  {w.text}{'*' if w.oov else ''}  s{w.sentence}:w{w.index}  [{w.start}:{w.end}]"


def to_text(explanation, top_k=10, show_sentences=True):
    """The explanation in plain text, most telling first.

    The prediction in words; the `top_k` words with most evidence for it and
    against it; how much of the margin came from each part (the network's
    words, the n-gram part's words, the constant terms); then, as a second
    layer, where the network read (its `top_k` most attended words and the
    sentence weights; left out when the network has no weight); then the
    top `top_k` n-grams and any notes.

    Example:

    >>> from hierattn.explain import Explanation, WordWeight
    >>> words = [WordWeight("Great", "great", 0, 0, 0, 5, 1.0, 1.0, 1.0, False, True, evidence=0.8)]
    >>> sentences = [{"index": 0, "start": 0, "end": 6, "text": "Great!", "weight": 1.0, "used": True}]
    >>> print(to_text(Explanation("Great!", "pos", {"neg": 0.2, "pos": 0.8}, words, sentences, 0, [])))
    predicted: pos, probability 0.80 (runner-up: neg, 0.20)
    evidence for pos (each word's share of the margin; * = not in the vocabulary):
       +0.8000  Great  s0:w0  [0:5]
    where the network read (attention, not evidence; sentence:word, characters):
        1.0000  Great  s0:w0  [0:5]
    """
    lines = [] if explanation.doc_id is None else [f"document: {explanation.doc_id}"]
    lines.append(f"predicted: {prediction_words(explanation)}")
    if explanation.true_label is not None:
        lines.append(f"true label: {explanation.true_label}")
    label = explanation.label
    evidence = top_evidence(explanation, len(explanation.words))
    for side, words in (
        ("for", [w for w in evidence if w.evidence > 0]),
        ("against", [w for w in evidence if w.evidence < 0]),
    ):
        if words:
            lines.append(f"evidence {side} {label} (each word's share of the margin; * = not in the vocabulary):")
            lines += [_word_line(w, f"{w.evidence:+8.4f}") for w in words[:top_k]]
    parts = margin_parts(explanation)
    if parts is not None:
        d = explanation.decision
        lines.append(
            f"margin of {label} over {parts['versus']}: {parts['margin']:+.4f} (log-odds) = {parts_words(parts)}"
        )
        lines.append(
            f"  constant terms: network baseline {d.get('network_baseline', 0.0):+.4f}, integration error "
            f"{d.get('integration_error', 0.0):+.4f}, n-gram bias {d.get('ngram_bias', 0.0):+.4f}, words not shown "
            f"{d.get('not_shown', 0.0):+.4f}; weights {d['network_weight']:.2f} (network) / "
            f"{d['ngram_weight']:.2f} (n-grams)"
        )
    if shows_attention(explanation):
        lines.append("where the network read (attention, not evidence; sentence:word, characters):")
        lines += [_word_line(w, f"{w.weight:8.4f}") for w in explanation.top_words(top_k)]
        if show_sentences and len(explanation.sentences) > 1:
            lines.append("  sentences (weight):")
            for s in explanation.sentences:
                snippet = s["text"] if len(s["text"]) <= 80 else s["text"][:77] + "..."
                lines.append(f"  {s['weight']:8.4f}  {snippet}" + ("" if s["used"] else "  (cut)"))
    grams = explanation.top_ngrams(top_k)
    if grams:
        lines.append(f"n-grams (exact contribution to the margin; + for {label}):")
        lines += [
            f"  {g.contribution:+8.4f}  {g.text}  [{g.start}:{g.end}]"
            + ("" if g.network_reads else "  (beyond the network's limits: read by the n-gram part only)")
            for g in grams
        ]
    lines += [f"note: {warning}" for warning in explanation.warnings]
    return "\n".join(lines)


def to_rows(explanations, start_index=0):
    """One dict per word of every explanation (columns `CSV_COLUMNS`).

    `versus`, `margin` and `constant_terms` are the document's: its words'
    `evidence` plus `constant_terms` add up to `margin` (empty without a
    decision).
    """
    for number, explanation in enumerate(explanations, start=start_index):
        parts = margin_parts(explanation) or {"versus": None, "margin": None, "constant": None}
        for w in explanation.words:
            yield {
                "document": number,
                "id": explanation.doc_id,
                "true_label": explanation.true_label,
                "predicted": explanation.label,
                "sentence": w.sentence,
                "word": w.index,
                "start": w.start,
                "end": w.end,
                "text": w.text,
                "evidence": round(w.evidence, 8),
                "network_evidence": round(w.network_evidence, 8),
                "ngram_evidence": round(w.ngram_evidence, 8),
                "weight": round(w.weight, 8),
                "word_weight": round(w.word_weight, 8),
                "sentence_weight": round(w.sentence_weight, 8),
                "oov": w.oov,
                "used": w.used,
                "versus": parts["versus"],
                "margin": None if parts["margin"] is None else round(parts["margin"], 8),
                "constant_terms": None if parts["constant"] is None else round(parts["constant"], 8),
            }


def to_json(explanations, top_k=10):
    """A JSON list of `Explanation.to_dict(top_k)`: every word with its evidence, and the decision's terms."""
    return dumps([e.to_dict(top_k) for e in explanations], indent=2)


# The results of commands, as text -------------------------------------------------------------------------------------

FORMATS = ("text", "json", "csv", "html")


def to_csv(explanations):
    """A CSV table (header and `to_rows`, columns `CSV_COLUMNS`) of every word of every explanation."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerows(to_rows(explanations))
    return buffer.getvalue()


def render(explanations, fmt="text", top_k=10):
    """Explanations as one string in `fmt`, one of `FORMATS` (text and json end with a newline)."""
    if fmt == "text":
        return "\n\n".join(to_text(e, top_k) for e in explanations) + "\n"
    if fmt == "json":
        return to_json(explanations, top_k) + "\n"
    if fmt == "html":
        return to_html(explanations)
    if fmt == "csv":
        return to_csv(explanations)
    raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")


def prediction_text(label_names, probabilities):
    """The predicted class of one text, then each class's probability."""
    best = int(np.argmax(probabilities))
    return "\n".join(
        [f"predicted: {label_names[best]}", *(f"  {name}: {p:.4f}" for name, p in zip(label_names, probabilities))]
    )


def metrics_text(metrics):
    """A training run's metrics (metrics.json): its epochs and what stopped them, then each split's scores.

    Each split's scores are shown beside its parts' and the baseline's.
    """
    baseline, parts = metrics.get("baseline", {}), metrics.get("parts", {})
    lines = []
    if "epochs_trained" in metrics:  # the network's epochs, and what ended them (`hierattn.budget`)
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
        if recipe:  # runs before the recipes were chosen have none
            lines.append(
                f"the n-gram part: {recipe['weighting']} of word 1-{recipe['ngram_max']} grams, C={recipe['C']:g}"
                f"{', balanced class weights' if recipe['class_weight'] else ''} (the best of "
                f"{len(parts.get('recipes_tried') or [])} recipes on validation)"
            )
    if "skipped" in baseline:
        lines.append(f"no baseline: scikit-learn could not fit it ({baseline['skipped']})")
    for split in ("validation", "test"):
        if split in metrics:
            m = metrics[split]
            line = f"{split}: accuracy {m['accuracy']:.4f}, macro-F1 {m['macro_f1']:.4f} ({m['documents']:,} documents)"
            for part, label in (("network", "network alone"), ("ngrams", "n-gram part alone")):
                if split in parts.get(part, {}):
                    p = parts[part][split]
                    line += f" | {label}: accuracy {p['accuracy']:.4f}, macro-F1 {p['macro_f1']:.4f}"
            if split in baseline:
                b = baseline[split]
                line += f" | {NAME} baseline: accuracy {b['accuracy']:.4f}, macro-F1 {b['macro_f1']:.4f}"
            lines.append(line)
    return "\n".join(lines)


def evaluation_text(metrics):
    """Accuracy and macro-F1 of an evaluation (`hierattn.scoring.evaluate_classifier`), then its confusion matrix."""
    scores = f"accuracy {metrics['accuracy']:.4f}, macro-F1 {metrics['macro_f1']:.4f}"
    lines = [
        f"{scores} on {metrics['documents']:,} documents",
        f"confusion matrix (rows: true, columns: predicted; {', '.join(map(str, metrics['labels']))}):",
    ]
    lines += ["  " + " ".join(f"{v:7d}" for v in row) for row in metrics["confusion_matrix"]]
    return "\n".join(lines)


def rows_text(path, report):
    """What `load_table` read from `path`: the rows used, and a line on those skipped (None if none was).

    Returns:
        `(used, skipped)`, two strings, or a string and None.
    """
    used = (
        f"{path}: {report['used']:,} of {report['rows']:,} rows used (text column {report['text_column']!r}, "
        f"label column {report['label_column']!r})"
    )
    if report["used"] >= report["rows"]:
        return used, None
    return used, (
        f"  skipped {report['skipped_missing_text']} without text, {report['skipped_missing_label']} "
        "without a label (empty, NaN, NA, null, ...)"
    )


def corpus_text(summary, words=10):
    """What `explain_corpus` did (a `CorpusSummary`): documents, accuracy, each class's top `words` by evidence and attention."""
    lines = [
        f"explained {summary.documents:,} documents"
        + (f" (skipped {summary.skipped_empty} without words)" if summary.skipped_empty else "")
        + (f"; accuracy {summary.accuracy:.4f}" if summary.labelled else "")
    ]
    for label, count in sorted(summary.class_documents.items(), key=lambda item: str(item[0])):
        lines.append(f"  {label} ({count:,} documents)")
        for by, what in (("evidence", "most evidence for it"), ("attention", "most attention, relative to uniform")):
            top = summary.words.top(label, words, by) or [f"(no word occurs {summary.words.min_count}+ times)"]
            lines.append(f"    {what}: {', '.join(top)}")
    return "\n".join(lines)


__all__ = [
    "CSV_COLUMNS",
    "FORMATS",
    "corpus_text",
    "evaluation_text",
    "metrics_text",
    "prediction_text",
    "render",
    "rows_text",
    "to_csv",
    "to_html",
    "to_json",
    "to_rows",
    "to_text",
]
