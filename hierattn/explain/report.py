"""Rendering explanations: plain text, CSV rows, JSON and a self-contained HTML page."""

import csv
import html
import io

import numpy as np

from hierattn.baseline import NAME
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
    "weight",
    "word_weight",
    "sentence_weight",
    "evidence",
    "oov",
    "used",
]


def to_text(explanation, top_k=10, show_sentences=True):
    """A human-readable summary: prediction, top words, sentence weights."""
    lines = [] if explanation.doc_id is None else [f"document: {explanation.doc_id}"]
    if explanation.true_label is not None:
        lines.append(f"true label: {explanation.true_label}")
    lines.append(f"predicted: {explanation.label}")
    lines += [f"  {name}: {p:.4f}" for name, p in explanation.probabilities.items()]
    lines.append(f"top {top_k} words (importance, sentence:word, characters; * = not in vocabulary):")
    for w in explanation.top_words(top_k):
        evidence = f"  evidence {w.evidence:+.4f}"
        lines.append(
            f"  {w.weight:8.4f}  {w.text}{'*' if w.oov else ''}  s{w.sentence}:w{w.index}  [{w.start}:{w.end}]"
            f"{evidence}"
        )
    if show_sentences and len(explanation.sentences) > 1:
        lines.append("sentences (weight):")
        for s in explanation.sentences:
            snippet = s["text"] if len(s["text"]) <= 80 else s["text"][:77] + "..."
            lines.append(f"  {s['weight']:8.4f}  {snippet}" + ("" if s["used"] else "  (cut)"))
    if explanation.decision is not None:
        lines += _decision_lines(explanation, top_k)
    lines += [f"note: {warning}" for warning in explanation.warnings]
    return "\n".join(lines)


def _decision_lines(explanation, top_k):
    """The exact account of a decision by a network plus an n-gram part (`Explanation.decision`)."""
    d = explanation.decision
    lines = [
        (
            f"decision: score margin of {explanation.label} over {d['versus']} = {d['margin']:+.4f} = network "
            f"{d['network']:+.4f} + n-gram bias {d['ngram_bias']:+.4f} + n-grams {d['ngrams']:+.4f} "
            f"(weights {d['network_weight']:.2f} / {d['ngram_weight']:.2f})"
        ),
        f"top {top_k} n-grams (exact contribution to that margin; + for {explanation.label}):",
    ]
    lines += [
        f"  {g.contribution:+8.4f}  {g.text}  [{g.start}:{g.end}]"
        + ("" if g.network_reads else "  (beyond the network's limits: read by the n-gram part only)")
        for g in explanation.top_ngrams(top_k)
    ]
    return lines


def to_rows(explanations, start_index=0):
    """One dict per word of every explanation (columns `CSV_COLUMNS`)."""
    for number, explanation in enumerate(explanations, start=start_index):
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
                "weight": round(w.weight, 8),
                "word_weight": round(w.word_weight, 8),
                "sentence_weight": round(w.sentence_weight, 8),
                "evidence": round(w.evidence, 8),
                "oov": w.oov,
                "used": w.used,
            }


def to_json(explanations, top_k=10):
    return dumps([e.to_dict(top_k) for e in explanations], indent=2)


_STYLE = """
body { font-family: Georgia, 'Times New Roman', serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.3em; } .doc { border-top: 1px solid #ccc; padding: 1em 0; }
.prediction, .doc h2 { font-family: Helvetica, Arial, sans-serif; margin-bottom: .6em; }
.doc h2 { font-size: 1em; color: #555; margin: 0 0 .3em; }
.prediction b { font-size: 1.1em; } .probs span { margin-right: 1em; color: #555; }
.right { color: #1e7b34; } .wrong { color: #c0392b; font-weight: bold; }
.sentence { display: flex; align-items: flex-start; margin: .25em 0; line-height: 1.7; }
.bar { flex: 0 0 5em; height: 1.2em; margin: .25em .8em 0 0; background: #eee; position: relative; }
.bar span { position: absolute; top: 0; left: 0; bottom: 0; background: #c0392b; }
.words { flex: 1; } .w { padding: 0 .08em; border-radius: 2px; }
.oov { text-decoration: underline dotted #999; } .cut { color: #aaa; }
.legend, .note { font-family: Helvetica, Arial, sans-serif; font-size: .85em; color: #666; }
.note { background: #fff4d6; border-left: 3px solid #e0a800; padding: .3em .6em; color: #5a4500; }
.scale { display: inline-block; width: 8em; height: .9em; vertical-align: middle; margin: 0 .4em;
         border: 1px solid #ccc; }
.signed h3 { font-family: Helvetica, Arial, sans-serif; font-size: .9em; color: #555; margin: .8em 0 .3em; }
"""


def _legend(signed):
    parts = [
        (
            '<p class="legend">Word importance (attention): 0<span class="scale" style="background: '
            "linear-gradient(to right, rgba(41,128,185,0), rgba(41,128,185,1))\"></span>the review's most important "
            "word (shade grows with the square root of the weight). Red bar: sentence weight, relative to the top "
            "sentence. Underlined: not in the vocabulary. Grey: beyond the network's length limits, not read by it "
            "(the n-gram part, if any, reads the whole text).</p>"
        )
    ]
    if signed:
        parts.append(
            '<p class="legend">Evidence (each word\'s share of the decision\'s margin): against the prediction<span class="scale" '
            'style="background: linear-gradient(to right, rgba(192,57,43,1), rgba(255,255,255,0), '
            'rgba(39,174,96,1))"></span>for it, relative to the strongest word.</p>'
        )
    return "".join(parts)


def _words_html(e, s, colour):
    """One sentence's text with each word wrapped in a span shaded by `colour(word)` -> (css colour, alpha)."""
    cells, cursor = [], s["start"]
    for w in (w for w in e.words if w.sentence == s["index"]):
        cells.append(html.escape(e.text[cursor : w.start]))
        classes = "w" + (" oov" if w.oov else "") + ("" if w.used else " cut")
        rgb, alpha, value = colour(w)
        ink = "; color: #fff" if alpha > 0.6 else ""  # keep dark shades readable
        cells.append(
            f'<span class="{classes}" style="background: rgba({rgb},{alpha:.3f}){ink}" '
            f'title="{value}">{html.escape(w.text)}</span>'
        )
        cursor = w.end
    cells.append(html.escape(e.text[cursor : s["end"]]))
    return "".join(cells)


def to_html(explanations, title="hierattn explanation"):
    """One self-contained HTML page (inline CSS, no scripts or external assets).

    For each document: its id and true label when known, the prediction,
    then any warning (such as the text being cut to the model's limits)
    before the text. Each sentence is a line with a red bar for its weight on
    the left; each word is shaded blue by its importance relative to the
    document's most important word (the HAN paper's figures). A second view
    (`WordWeight.evidence`) shades each word
    green when it supports the prediction and red when it speaks against it.
    A legend explains the colour scales. Out-of-vocabulary words are
    underlined, words beyond the model's limits greyed out.
    """
    explanations = list(explanations)
    signed = any(w.evidence for e in explanations for w in e.words)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        _legend(signed),
    ]
    for number, e in enumerate(explanations):
        top = max((w.weight for w in e.words), default=0.0) or 1.0
        probs = "".join(f"<span>{html.escape(n)}: {p:.3f}</span>" for n, p in e.probabilities.items())
        name = f"Document {html.escape(str(e.doc_id if e.doc_id is not None else number + 1))}"
        truth = ""
        if e.true_label is not None:
            right = str(e.true_label) == str(e.label)
            truth = (
                f' <span class="{"right" if right else "wrong"}">(true label: {html.escape(str(e.true_label))}'
                f"{'' if right else ', wrong'})</span>"
            )
        parts.append(
            f'<div class="doc" id="doc-{number}"><h2>{name}</h2><div class="prediction">Prediction: '
            f'<b>{html.escape(str(e.label))}</b>{truth} <span class="probs">{probs}</span></div>'
        )
        for warning in e.warnings:
            parts.append(f'<p class="note">{html.escape(warning)}</p>')
        max_sentence = max((s["weight"] for s in e.sentences), default=0.0) or 1.0

        def attention(w, top=top):
            return "41,128,185", (w.weight / top) ** 0.5 if w.used else 0.0, f"{w.weight:.4f}"

        for s in e.sentences:
            width = 100.0 * s["weight"] / max_sentence
            parts.append(
                f'<div class="sentence"><div class="bar" title="{s["weight"]:.4f}">'
                f'<span style="width: {width:.1f}%"></span></div>'
                f'<div class="words">{_words_html(e, s, attention)}</div></div>'
            )
        if any(w.evidence for w in e.words):
            strongest = max(abs(w.evidence) for w in e.words if w.evidence is not None) or 1.0

            def evidence(w, strongest=strongest):
                if w.evidence is None:
                    return "255,255,255", 0.0, "not read"
                rgb = "39,174,96" if w.evidence >= 0 else "192,57,43"
                return rgb, (abs(w.evidence) / strongest) ** 0.5, f"{w.evidence:+.4f}"

            parts.append('<div class="signed"><h3>Evidence for (green) and against (red) the prediction</h3>')
            parts += [
                f'<div class="sentence"><div class="words">{_words_html(e, s, evidence)}</div></div>'
                for s in e.sentences
            ]
            parts.append("</div>")
        if e.decision is not None:
            lines = _decision_lines(e, 10)
            parts.append(
                f'<div class="ngrams"><h3>{html.escape(lines[0])}</h3><p class="legend">'
                f"{html.escape(lines[1])}</p><pre>{html.escape(chr(10).join(lines[2:]))}</pre></div>"
            )
        parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


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
        + (f" (skipped {summary.skipped_empty} empty)" if summary.skipped_empty else "")
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
