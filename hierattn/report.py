"""Rendering explanations: plain text, CSV rows, JSON and a self-contained HTML page."""

import html
import json

CSV_COLUMNS = ["document", "predicted", "sentence", "word", "start", "end", "text", "weight", "word_weight",
               "sentence_weight", "oov", "used"]


def to_text(explanation, top_k=10, show_sentences=True):
    """A human-readable summary: prediction, top words, sentence weights."""
    lines = [f"predicted: {explanation.label}"]
    lines += [f"  {name}: {p:.4f}" for name, p in explanation.probabilities.items()]
    lines.append(f"top {top_k} words (importance, sentence:word, characters; * = not in vocabulary):")
    for w in explanation.top_words(top_k):
        lines.append(f"  {w.weight:8.4f}  {w.text}{'*' if w.oov else ''}  s{w.sentence}:w{w.index}  [{w.start}:{w.end}]")
    if show_sentences and len(explanation.sentences) > 1:
        lines.append("sentences (weight):")
        for s in explanation.sentences:
            snippet = s["text"] if len(s["text"]) <= 80 else s["text"][:77] + "..."
            lines.append(f"  {s['weight']:8.4f}  {snippet}" + ("" if s["used"] else "  (cut)"))
    lines += [f"note: {warning}" for warning in explanation.warnings]
    return "\n".join(lines)


def to_rows(explanations, start_index=0):
    """One dict per word of every explanation (columns `CSV_COLUMNS`)."""
    for number, explanation in enumerate(explanations, start=start_index):
        for w in explanation.words:
            yield {"document": number, "predicted": explanation.label, "sentence": w.sentence, "word": w.index,
                   "start": w.start, "end": w.end, "text": w.text, "weight": round(w.weight, 8),
                   "word_weight": round(w.word_weight, 8), "sentence_weight": round(w.sentence_weight, 8),
                   "oov": w.oov, "used": w.used}


def to_json(explanations, top_k=10):
    return json.dumps([e.to_dict(top_k) for e in explanations], ensure_ascii=False, indent=2)


_STYLE = """
body { font-family: Georgia, 'Times New Roman', serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.3em; } .doc { border-top: 1px solid #ccc; padding: 1em 0; }
.prediction { font-family: Helvetica, Arial, sans-serif; margin-bottom: .6em; }
.prediction b { font-size: 1.1em; } .probs span { margin-right: 1em; color: #555; }
.sentence { display: flex; align-items: flex-start; margin: .25em 0; line-height: 1.7; }
.bar { flex: 0 0 5em; height: 1.2em; margin: .25em .8em 0 0; background: #eee; position: relative; }
.bar span { position: absolute; top: 0; left: 0; bottom: 0; background: #c0392b; }
.words { flex: 1; } .w { padding: 0 .08em; border-radius: 2px; }
.oov { text-decoration: underline dotted #999; } .cut { color: #aaa; }
.legend, .note { font-family: Helvetica, Arial, sans-serif; font-size: .85em; color: #666; }
"""


def to_html(explanations, title="hierattn explanation"):
    """One self-contained HTML page (inline CSS, no scripts or external assets).

    Each sentence is a line with a red bar for its weight on the left; each
    word is shaded blue by its importance relative to the document's most
    important word (the HAN paper's figures). Out-of-vocabulary words are
    underlined, words beyond the model's limits greyed out.
    """
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        '<p class="legend">Red bar: sentence weight. Blue: word importance (relative to the most important '
        "word of the review). Underlined: not in the vocabulary. Grey: beyond the model's length limits.</p>",
    ]
    for number, e in enumerate(explanations):
        top = max((w.weight for w in e.words), default=0.0) or 1.0
        probs = "".join(f"<span>{html.escape(n)}: {p:.3f}</span>" for n, p in e.probabilities.items())
        parts.append(f'<div class="doc" id="doc-{number}"><div class="prediction">Prediction: '
                     f"<b>{html.escape(str(e.label))}</b> <span class=\"probs\">{probs}</span></div>")
        max_sentence = max((s["weight"] for s in e.sentences), default=0.0) or 1.0
        for s in e.sentences:
            words = [w for w in e.words if w.sentence == s["index"]]
            cells, cursor = [], s["start"]
            for w in words:
                cells.append(html.escape(e.text[cursor:w.start]))
                classes = "w" + (" oov" if w.oov else "") + ("" if w.used else " cut")
                alpha = (w.weight / top) ** 0.5 if w.used else 0.0
                ink = "; color: #fff" if alpha > 0.6 else ""  # keep dark shades readable
                cells.append(f'<span class="{classes}" style="background: rgba(41,128,185,{alpha:.3f}){ink}" '
                             f'title="{w.weight:.4f}">{html.escape(w.text)}</span>')
                cursor = w.end
            cells.append(html.escape(e.text[cursor:s["end"]]))
            width = 100.0 * s["weight"] / max_sentence
            parts.append(f'<div class="sentence"><div class="bar" title="{s["weight"]:.4f}">'
                         f'<span style="width: {width:.1f}%"></span></div><div class="words">{"".join(cells)}</div></div>')
        for warning in e.warnings:
            parts.append(f'<p class="note">{html.escape(warning)}</p>')
        parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


__all__ = ["CSV_COLUMNS", "to_html", "to_json", "to_rows", "to_text"]
