"""Rendering explanations: plain text, CSV rows and JSON (the HTML picture: `hierattn.explain.picture`)."""

import csv
import io
import textwrap

from hierattn.explain.picture import to_html
from hierattn.explain.summaries import (
    kind,
    margin_parts,
    margin_sentence,
    margin_shares,
    parts_words,
    prediction_words,
    probability,
    runner_up,
    shown,
    shows_attention,
    signed,
    top_evidence,
    top_ngrams,
    wording,
)
from hierattn.kinds import KINDS, MULTI, SINGLE
from hierattn.utils.jsonfile import dumps

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
# A multi-label classifier's explanations add these (`predicted` is then the text's labels, joined by "|").
MULTI_LABEL_COLUMNS = ["label", "probability", "threshold"]
# The columns each kind of explanation adds to `CSV_COLUMNS` (its cells: `_KIND_CELLS`).
_KIND_COLUMNS = {SINGLE: [], MULTI: MULTI_LABEL_COLUMNS}


def weights_text(decision):
    """The weights of a text's margin, and what they are: the combination's, divided by its temperature, or the
    n-gram part's own scale where it decided alone.

    >>> weights_text({"network_weight": 0.4, "ngram_weight": 0.49, "temperature": 0.8})
    "weights 0.40 (network) / 0.49 (n-grams): the combination's 0.32 / 0.39, as train prints them, divided by its temperature 0.8"
    >>> weights_text({"network_weight": 0.0, "ngram_weight": 1.23, "network_read": False})
    'weights 0.00 (network) / 1.23 (n-grams: the n-gram part alone, at its own scale)'
    """
    a, b = decision["network_weight"], decision["ngram_weight"]
    if decision.get("network_read") is False and a == 0.0:
        return f"weights 0.00 (network) / {b:.2f} (n-grams: the n-gram part alone, at its own scale)"
    text = f"weights {a:.2f} (network) / {b:.2f} (n-grams)"
    temperature = decision.get("temperature")
    if temperature is not None:
        text += (
            f": the combination's {a * temperature:.2f} / {b * temperature:.2f}, as train prints them, "
            f"divided by its temperature {temperature:.3g}"
        )
    return text


def _word_line(w, value):
    return f"  {value}  {w.text}{'*' if w.oov else ''}  s{w.sentence}:w{w.index}  [{w.start}:{w.end}]"


def to_text(explanation, top_k=10, show_sentences=True):
    """The explanation in plain text, most telling first.

    The prediction in words; the `top_k` words with most evidence for it and
    for the runner-up (the class the evidence is measured against), each
    list headed by its class; how much of the margin came from each part
    (the network's words, the n-gram part's words, the constant terms; with
    percentages only where `hierattn.explain.summaries.margin_shares` gives
    them) and one plain sentence on what the margin and the constant terms
    are; then, as a second layer, where the network read (its `top_k` most
    attended words and the sentence weights; left out when the network has
    no weight); then the top `top_k` n-grams and any notes. Lists leave out
    entries that would print as 0 (`+0.0000`).

    Example:

    >>> from hierattn.explain import Explanation, WordWeight
    >>> words = [WordWeight("Great", "great", 0, 0, 0, 5, 1.0, 1.0, 1.0, False, True, evidence=0.8)]
    >>> sentences = [{"index": 0, "start": 0, "end": 6, "text": "Great!", "weight": 1.0, "used": True}]
    >>> print(to_text(Explanation("Great!", "pos", {"neg": 0.2, "pos": 0.8}, words, sentences, 0, [])))
    predicted: pos, probability 0.80 (runner-up: neg, 0.20)
    evidence for pos, the prediction (each word's part of the margin; * = not in the vocabulary):
       +0.8000  Great  s0:w0  [0:5]
    where the network read (attention, not evidence; sentence:word, characters):
        1.0000  Great  s0:w0  [0:5]
    """
    said = wording(explanation)  # the prediction against the runner-up, or a label against its threshold
    lines = [] if explanation.doc_id is None else [f"document: {explanation.doc_id}"]
    lines.append(f"{said.heading}: {prediction_words(explanation)}")
    if explanation.true_label is not None:
        lines.append(f"{said.true_heading}: {explanation.true_label}")
    label, versus = explanation.label, runner_up(explanation)
    evidence = [w for w in top_evidence(explanation, len(explanation.words)) if shown(w.evidence, 4)]
    mine, theirs = [w for w in evidence if w.evidence > 0], [w for w in evidence if w.evidence < 0]
    for heading, words in zip(said.evidence_headings, (mine, theirs)):
        if words:
            lines.append(heading.format(label=label, versus=versus))
            lines += [_word_line(w, f"{signed(w.evidence, 4):>8}") for w in words[:top_k]]
    parts = margin_parts(explanation)
    if parts is not None:
        d = explanation.decision
        plain = "" if margin_shares(parts) else " (no percentages: the parts pull against each other)"
        over = said.over.format(versus=parts["versus"])
        lines.append(f"margin of {label} over {over}: {signed(parts['margin'], 4)} = {parts_words(parts)}{plain}")
        lines += textwrap.wrap(margin_sentence(explanation), 100, initial_indent="  ", subsequent_indent="  ")
        term = signed(d.get("threshold_term", 0.0), 4)
        threshold = said.threshold_term.format(threshold=explanation.threshold, term=term)
        offset = f"decision rule's offsets {signed(d['offset_term'], 4)}, " if "offset_term" in d else ""
        lines.append(
            f"  constant terms: network baseline {signed(d.get('network_baseline', 0.0), 4)}, integration error "
            f"{signed(d.get('integration_error', 0.0), 4)}, n-gram bias {signed(d.get('ngram_bias', 0.0), 4)}, "
            f"{threshold}{offset}words not shown {signed(d.get('not_shown', 0.0), 4)}; {weights_text(d)}"
        )
    if shows_attention(explanation):
        lines.append("where the network read (attention, not evidence; sentence:word, characters):")
        lines += [_word_line(w, f"{w.weight:8.4f}") for w in explanation.top_words(top_k)]
        if show_sentences and len(explanation.sentences) > 1:
            lines.append("  sentences (weight):")
            for s in explanation.sentences:
                snippet = s["text"] if len(s["text"]) <= 80 else s["text"][:77] + "..."
                lines.append(f"  {s['weight']:8.4f}  {snippet}" + ("" if s["used"] else "  (cut)"))
    grams = top_ngrams(explanation, top_k, digits=4)
    if grams:
        towards = said.signs.format(label=label, versus=versus)
        lines.append(f"n-grams (exact contribution to the margin: {towards}):")
        lines += [
            f"  {signed(g.contribution, 4):>8}  {g.text}  [{g.start}:{g.end}]"
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

    A multi-label classifier's explanation (one label of one text) also
    fills `MULTI_LABEL_COLUMNS`: the `label` explained, its `probability`
    and `threshold`; `margin` is then the label's log-odds over its
    threshold, `versus` is empty, `predicted` is the text's labels joined by
    `|`, and `document` the text's number (its labels' rows share it).
    """
    for number, explanation in enumerate(explanations, start=start_index):
        parts = margin_parts(explanation) or {"versus": None, "margin": None, "constant": None}
        if explanation.document is not None:  # a multi-label classifier's text: its labels' rows share its number
            number = start_index + explanation.document
        predicted, extra = _KIND_CELLS[kind(explanation)](explanation)
        for w in explanation.words:
            yield {
                "document": number,
                "id": explanation.doc_id,
                "true_label": explanation.true_label,
                "predicted": predicted,
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
                **extra,
            }


def _class_cells(explanation):
    """A single-label classifier's explanation's `predicted` cell (the class), and no more cells."""
    return explanation.label, {}


def _label_cells(explanation):
    """A multi-label classifier's: `predicted`, the text's labels joined by `|`, and `MULTI_LABEL_COLUMNS`' cells."""
    extra = {
        "label": explanation.label,
        "probability": round(probability(explanation, explanation.label), 8),
        "threshold": explanation.threshold,
    }
    return "|".join(map(str, explanation.predicted_labels or [])), extra


_KIND_CELLS = {SINGLE: _class_cells, MULTI: _label_cells}


def to_json(explanations, top_k=10):
    """A JSON list of `Explanation.to_dict(top_k)`: every word with its evidence, and the decision's terms."""
    return dumps([e.to_dict(top_k) for e in explanations], indent=2)


# The results of commands, as text -------------------------------------------------------------------------------------

FORMATS = ("text", "json", "csv", "html")


def to_csv(explanations):
    """A CSV table (header and `to_rows`, columns `CSV_COLUMNS`) of every word of every explanation.

    A multi-label classifier's explanations add `MULTI_LABEL_COLUMNS`.
    """
    explanations = list(explanations)
    kinds = {kind(e) for e in explanations}
    columns = CSV_COLUMNS + [column for k in KINDS if k in kinds for column in _KIND_COLUMNS[k]]  # each kind's
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns)
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


__all__ = [
    "CSV_COLUMNS",
    "FORMATS",
    "MULTI_LABEL_COLUMNS",
    "render",
    "to_csv",
    "to_html",
    "to_json",
    "to_rows",
    "to_text",
]
