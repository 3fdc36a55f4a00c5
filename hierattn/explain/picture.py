"""The one picture of an explanation: the text shaded by evidence, the prediction in words, the margin's parts.

Every view (`hierattn.explain.report`'s text, JSON and CSV, the HTML page,
a notebook's `_repr_html_`) reads the same few summaries defined here:

* `prediction_words`: the prediction and its probability in plain words;
* `top_evidence`: the words with the largest evidence, for or against;
* `margin_parts`: how much of the decision's margin came from each part
  (the network's words, the n-gram part's words, the constant terms);
* `shows_attention`: whether attention, the second layer ("where the network
  read"), is worth showing (not when the network has no weight).

`to_html` draws them: the text with each word shaded green (for the
prediction) or red (against it), a bar of the margin's parts, then the
attention as a second, blue layer with its own legend, then the n-grams.
Its CSS is scoped under one root class (`ROOT`), so the same fragment can sit
in a notebook without restyling it; `page=True` wraps it in a standalone page.
"""

import html

ROOT = "hierattn-x"
GREEN, RED, BLUE = "39,174,96", "192,57,43", "41,128,185"
PART_COLOURS = {"network": "#34495e", "ngrams": "#95a5a6", "constant": "#d5d8dc"}

# Every selector starts with the root class: nothing outside the explanation's own <div> is styled.
_STYLE = f"""
.{ROOT} {{ font-family: Helvetica, Arial, sans-serif; color: #222; line-height: 1.5; max-width: 60em; }}
.{ROOT} .x-doc {{ border-top: 1px solid #ccc; padding: .6em 0 .8em; }}
.{ROOT} .x-doc h3 {{ font-size: 1em; color: #555; margin: 0 0 .2em; }}
.{ROOT} .x-pred {{ margin: 0 0 .4em; }} .{ROOT} .x-right {{ color: #1e7b34; }}
.{ROOT} .x-wrong {{ color: #c0392b; font-weight: bold; }}
.{ROOT} .x-text {{ font-family: Georgia, 'Times New Roman', serif; font-size: 1.05em; line-height: 1.8;
  overflow-wrap: anywhere; }}
.{ROOT} .x-text p {{ margin: 0 0 .2em; }}
.{ROOT} .w {{ padding: 0 .08em; border-radius: 2px; }} .{ROOT} .oov {{ text-decoration: underline dotted #999; }}
.{ROOT} .cut {{ color: #999; }}
.{ROOT} .x-legend, .{ROOT} .x-note {{ font-size: .85em; color: #555; margin: .3em 0; }}
.{ROOT} .x-note {{ background: #fff4d6; border-left: 3px solid #e0a800; padding: .2em .6em; color: #5a4500; }}
.{ROOT} .x-scale {{ display: inline-block; width: 7em; height: .85em; vertical-align: middle; margin: 0 .4em;
  border: 1px solid #ccc; }}
.{ROOT} .x-bar {{ display: flex; height: .7em; margin: .5em 0 .2em; max-width: 30em; }}
.{ROOT} .x-bar span {{ display: block; height: 100%; }}
.{ROOT} .x-part {{ white-space: nowrap; }}
.{ROOT} .x-key {{ display: inline-block; width: .8em; height: .8em; margin: 0 .25em 0 .8em; vertical-align: -.05em; }}
.{ROOT} h4 {{ font-size: .9em; color: #555; margin: .8em 0 .2em; }}
.{ROOT} .x-sentence {{ display: flex; align-items: flex-start; }}
.{ROOT} .x-sbar {{ flex: 0 0 4em; height: 1em; margin: .4em .6em 0 0; background: #eee; position: relative; }}
.{ROOT} .x-sbar span {{ position: absolute; top: 0; left: 0; bottom: 0; background: rgb({BLUE}); }}
.{ROOT} .x-gram {{ display: inline-block; margin: .1em .3em .1em 0; padding: 0 .3em; border-radius: 3px;
  font-size: .9em; }}
"""
_PAGE_STYLE = "body { margin: 2em auto; max-width: 62em; padding: 0 1em; background: #fff; }"


def probability(explanation, label):
    """The probability `explanation` gives `label` (its probabilities are keyed by the label's string)."""
    probabilities = explanation.probabilities
    return probabilities.get(str(label), probabilities.get(label, 0.0))


def prediction_words(explanation):
    """The prediction in plain words, e.g. ``"pos, probability 0.93 (runner-up: neg, 0.07)"``."""
    text = f"{explanation.label}, probability {probability(explanation, explanation.label):.2f}"
    versus = (explanation.decision or {}).get("versus")
    if versus is None:
        others = [name for name in explanation.probabilities if str(name) != str(explanation.label)]
        versus = max(others, key=explanation.probabilities.get, default=None)
    if versus is not None:
        text += f" (runner-up: {versus}, {probability(explanation, versus):.2f})"
    return text


def top_evidence(explanation, k=10):
    """The `k` words with the largest evidence, for or against the prediction (`WordWeight`s, largest first).

    Words without evidence (0) are left out, so fewer than `k` may come back.
    """
    words = [w for w in explanation.words if w.evidence]
    return sorted(words, key=lambda w: (-abs(w.evidence), w.start))[:k]


def margin_parts(explanation):
    """How much of the decision's margin came from each part, or `None` without a decision.

    Returns:
        A dict: `margin`, `versus`, `network` (the network's words: the
        sum of their `network_evidence`), `ngrams` (the n-gram part's words:
        the sum of their `ngram_evidence`) and `constant` (the network's
        baseline value, the integration's error, the n-gram bias and the
        words not shown); the three parts add up to the margin.
    """
    d = explanation.decision
    if d is None:
        return None
    network = sum(w.network_evidence for w in explanation.words)
    ngrams = sum(w.ngram_evidence for w in explanation.words)
    terms = ("network_baseline", "integration_error", "ngram_bias", "not_shown")
    constant = sum(d.get(term, 0.0) for term in terms)
    return {"margin": d["margin"], "versus": d["versus"], "network": network, "ngrams": ngrams, "constant": constant}


PART_NAMES = {"network": "network's words", "ngrams": "n-gram words", "constant": "constant terms"}


def _share(parts, key):
    """A part's percentage of the margin, e.g. `" (41%)"` (nothing for a zero margin)."""
    if parts["margin"] <= 1e-12:
        return ""
    return f" ({round(100 * parts[key] / parts['margin']) + 0}%)"  # + 0: no "-0%"


def parts_words(parts, digits=4):
    """`margin_parts` in one line: each part signed, with its percentage of the margin."""
    return ", ".join(f"{name} {parts[key]:+.{digits}f}{_share(parts, key)}" for key, name in PART_NAMES.items())


def shows_attention(explanation):
    """Whether attention moves the decision at all: `False` when the network has no weight in the classifier."""
    return (explanation.decision or {}).get("network_weight", 1.0) != 0.0


def _words_html(e, s, colour):
    """One sentence's text, each word a span shaded by `colour(word)` -> (rgb, alpha, tooltip)."""
    cells, cursor = [], s["start"]
    for w in (w for w in e.words if w.sentence == s["index"]):
        cells.append(html.escape(e.text[cursor : w.start]))
        classes = "w" + (" oov" if w.oov else "") + ("" if w.used else " cut")
        rgb, alpha, value = colour(w)
        ink = "; color: #fff" if alpha > 0.6 else ""  # keep dark shades readable
        cells.append(
            f'<span class="{classes}" style="background: rgba({rgb},{alpha:.3f}){ink}" '
            f'title="{html.escape(value)}">{html.escape(w.text)}</span>'
        )
        cursor = w.end
    cells.append(html.escape(e.text[cursor : s["end"]]))
    return "".join(cells)


def _evidence_colour(strongest):
    def colour(w):
        return (GREEN if w.evidence >= 0 else RED), (abs(w.evidence) / strongest) ** 0.5, f"evidence {w.evidence:+.4f}"

    return colour


def _scale(*stops):
    return f'<span class="x-scale" style="background: linear-gradient(to right, {", ".join(stops)})"></span>'


def _parts_html(e):
    parts = margin_parts(e)
    if parts is None:
        return ""
    total = sum(abs(parts[key]) for key in PART_COLOURS) or 1.0
    bar = "".join(
        f'<span style="width: {100 * abs(parts[key]) / total:.1f}%; background: {colour}" '
        f'title="{key} {parts[key]:+.4f}"></span>'
        for key, colour in PART_COLOURS.items()
    )
    keys = "".join(
        f'<span class="x-part"><span class="x-key" style="background: {PART_COLOURS[key]}"></span>{name} '
        f"{parts[key]:+.2f}{_share(parts, key)}</span>"
        for key, name in PART_NAMES.items()
    )
    versus = html.escape(str(parts["versus"]))
    return (
        f'<div class="x-bar">{bar}</div><p class="x-legend">Margin of {html.escape(str(e.label))} over {versus}: '
        f"<b>{parts['margin']:+.2f}</b> (log-odds) ={keys}</p>"
    )


def _attention_html(e):
    top = max((w.weight for w in e.words), default=0.0) or 1.0
    top_sentence = max((s["weight"] for s in e.sentences), default=0.0) or 1.0

    def attention(w):
        return BLUE, (w.weight / top) ** 0.5 if w.used else 0.0, f"attention {w.weight:.4f}"

    rows = []
    for s in e.sentences:
        bar = (
            f'<div class="x-sbar" title="sentence weight {s["weight"]:.4f}"><span style="width: '
            f'{100 * s["weight"] / top_sentence:.1f}%"></span></div>'
            if len(e.sentences) > 1
            else ""
        )
        rows.append(f'<div class="x-sentence">{bar}<div class="x-text">{_words_html(e, s, attention)}</div></div>')
    legend = (
        f'<p class="x-legend">Attention, not evidence: 0{_scale(f"rgba({BLUE},0)", f"rgba({BLUE},1)")}the most '
        "attended word (shade grows with the square root of the weight)"
        + (". Bars: sentence weights, relative to the top sentence." if len(e.sentences) > 1 else ".")
        + "</p>"
    )
    return "<h4>Where the network read</h4>" + "".join(rows) + legend


def _ngrams_html(e, k):
    grams = e.top_ngrams(k)
    if not grams:
        return ""
    strongest = max(abs(g.contribution) for g in grams) or 1.0
    chips = "".join(
        f'<span class="x-gram" style="background: rgba({GREEN if g.contribution >= 0 else RED},'
        f'{0.15 + 0.5 * abs(g.contribution) / strongest:.3f})" title="{g.start}:{g.end}'
        f'{"" if g.network_reads else ", beyond the network: read by the n-gram part only"}">'
        f"{html.escape(g.text)} {g.contribution:+.2f}</span>"
        for g in grams
    )
    return f"<h4>The n-grams that weighed most (exact contributions to the margin)</h4><div>{chips}</div>"


def _document_html(e, number, name_it, top_k):
    parts = [f'<div class="x-doc" id="x-doc-{number}">']
    if name_it:
        parts.append(f"<h3>Document {html.escape(str(e.doc_id if e.doc_id is not None else number + 1))}</h3>")
    truth = ""
    if e.true_label is not None:
        right = str(e.true_label) == str(e.label)
        truth = (
            f' <span class="{"x-right" if right else "x-wrong"}">(true label: {html.escape(str(e.true_label))}'
            f"{'' if right else ', wrong'})</span>"
        )
    label, rest = html.escape(str(e.label)), html.escape(prediction_words(e)[len(str(e.label)) :])
    parts.append(f'<p class="x-pred">Predicted <b>{label}</b>{rest}{truth}</p>')
    parts += [f'<p class="x-note">{html.escape(warning)}</p>' for warning in e.warnings]
    strongest = max((abs(w.evidence) for w in e.words), default=0.0)
    colour = _evidence_colour(strongest) if strongest else lambda w: ("255,255,255", 0.0, "no evidence")
    parts.append('<div class="x-text">')
    parts += [f"<p>{_words_html(e, s, colour)}</p>" for s in e.sentences]
    parts.append("</div>")
    against = _scale(f"rgba({RED},1)", "rgba(255,255,255,0)", f"rgba({GREEN},1)")
    parts.append(
        f'<p class="x-legend">Evidence: against {label}{against}for {label} (each word\'s share of the margin, '
        "relative to the strongest word; hover for the value). Underlined: not in the vocabulary; grey: beyond the "
        "network's length limits.</p>"
    )
    parts.append(_parts_html(e))
    if shows_attention(e):
        parts.append(_attention_html(e))
    parts.append(_ngrams_html(e, top_k))
    parts.append("</div>")
    return "".join(parts)


def to_html(explanations, title="hierattn explanation", page=True, top_k=10):
    """The picture of each explanation, as a standalone page or a notebook fragment.

    For each text: the prediction and its probability in words, any warning,
    then the text with each word shaded green when its evidence
    (`WordWeight.evidence`) supports the prediction and red when it speaks
    against it, a bar of how much of the margin came from the network's
    words, the n-gram part's words and the constant terms, attention as a
    second layer ("where the network read", blue, with sentence bars; left
    out when the network has no weight), and the top `top_k` n-grams.
    Everything is escaped; no scripts or external assets.

    Args:
        explanations: `Explanation`s.
        title: The page's title (pages only).
        page: `True` for a standalone page; `False` for a `<div>` whose CSS
            is scoped under its root class (for notebooks).
        top_k: How many n-grams to show.

    Example:

    >>> from hierattn.explain import Explanation, WordWeight
    >>> words = [WordWeight("Great", "great", 0, 0, 0, 5, 1.0, 1.0, 1.0, False, True, evidence=0.8)]
    >>> sentences = [{"index": 0, "start": 0, "end": 6, "text": "Great!", "weight": 1.0, "used": True}]
    >>> e = Explanation("Great!", "pos", {"neg": 0.2, "pos": 0.8}, words, sentences, 0, [])
    >>> to_html([e], page=False).startswith('<div class="hierattn-x">')
    True
    >>> to_html([e]).startswith("<!DOCTYPE html>")
    True
    """
    explanations = list(explanations)
    name_it = len(explanations) > 1 or any(e.doc_id is not None for e in explanations)
    body = "".join(_document_html(e, number, name_it, top_k) for number, e in enumerate(explanations))
    fragment = f'<div class="{ROOT}"><style>{_STYLE}</style>{body}</div>'
    if not page:
        return fragment
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<style>{_PAGE_STYLE}</style></head><body>\n<h1 style="font: bold 1.3em Helvetica, Arial, sans-serif">'
        f"{html.escape(title)}</h1>\n{fragment}\n</body></html>\n"
    )


__all__ = [
    "ROOT",
    "margin_parts",
    "parts_words",
    "prediction_words",
    "probability",
    "shows_attention",
    "to_html",
    "top_evidence",
]
