"""The one picture of an explanation: the text shaded by evidence, the prediction in words, the margin's parts.

Every view (`hierattn.explain.report`'s text, JSON and CSV, the HTML page,
a notebook's `_repr_html_`) reads the same few summaries, those of
`hierattn.explain.summaries` (the prediction in words, the top evidence,
the margin's parts and their shares, the margin in one sentence, whether
attention is worth showing); this module draws them as HTML (`to_html`).

Evidence is measured between two classes, the prediction and the runner-up,
and `to_html` shades each word in the colour of the class its evidence
pushes towards. Each class has its own colour (`class_colour`: a fixed
colour-blind-safe palette indexed by the class's position among the
classifier's labels), so a class keeps its colour on every page of the same
classifier, and the legend names the class of each colour. Then come a bar
of the margin's parts, the attention as a second layer in a colour of its
own (`ATTENTION`, not a class's) with its own legend, and the n-grams.
Its CSS is scoped under one root class (`ROOT`), so the same fragment can sit
in a notebook without restyling it; `page=True` wraps it in a standalone page.

The text may be in any script, read in units of any size (words; or, for
Chinese and other scripts written without spaces, characters or subwords,
each its own span): the page's own words are English (`lang="en"`), the
text's language is not known, so every element that holds the user's text
takes its direction from the text (`dir="auto"`: Arabic and Hebrew right to
left, the rest as before), the fonts fall back to faces with Chinese,
Japanese, Korean, Thai and Arabic letters (`SANS`, `SERIF`), and what stands
between two units is the text's own (nothing between two adjacent characters).
"""

import html

from hierattn.explain.summaries import (
    PART_NAMES,
    kind,
    margin_parts,
    margin_sentence,
    margin_shares,
    prediction_words,
    runner_up,
    shows_attention,
    signed,
    top_ngrams,
    wording,
)
from hierattn.kinds import MULTI, SINGLE

ROOT = "hierattn-x"
# The classes' colours, "r,g,b", by the class's position among the classifier's labels: Okabe & Ito's
# colour-blind-safe palette without its blues (attention's) and black, then Tol's wine.
CLASS_COLOURS = ("213,94,0", "0,158,115", "204,121,167", "230,159,0", "136,34,85", "240,228,66")
ATTENTION = "41,128,185"  # blue: no class's colour
AGAINST = "120,120,120"  # grey: evidence against a multi-label classifier's label (towards its threshold)
PART_COLOURS = {"network": "#34495e", "ngrams": "#95a5a6", "constant": "#d5d8dc"}
# The fonts: the Latin faces first, as they always were, then faces with the letters of other scripts (Noto's, then
# macOS's and Windows'), so a Chinese, Thai or Arabic text shows its letters wherever one of them is installed. Named
# rather than left to the browser's own fallback, which picks a face by the page's language (English) and may find
# none: then every letter is the same empty box ("tofu"). Han characters read as Simplified Chinese (SC) forms.
SANS = (
    'Helvetica, Arial, "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", "Noto Sans Thai", '
    '"Leelawadee UI", "Noto Sans Arabic", "Segoe UI", sans-serif'
)
SERIF = (
    'Georgia, "Times New Roman", "Noto Serif", "Noto Serif CJK SC", "Noto Sans CJK SC", "Songti SC", SimSun, '
    '"Microsoft YaHei", "Noto Serif Thai", "Noto Sans Thai", "Leelawadee UI", "Noto Naskh Arabic", '
    '"Noto Sans Arabic", serif'
)

# Every selector starts with the root class: nothing outside the explanation's own <div> is styled. A unit's shade
# reaches a little beyond its letters (padding), but takes no room (the negative margin): the text is laid out as
# written, two adjacent characters no further apart than in the text itself.
_STYLE = f"""
.{ROOT} {{ font-family: {SANS}; color: #222; line-height: 1.5; max-width: 60em; }}
.{ROOT} .x-doc {{ border-top: 1px solid #ccc; padding: .6em 0 .8em; }}
.{ROOT} .x-doc h3 {{ font-size: 1em; color: #555; margin: 0 0 .2em; }}
.{ROOT} .x-pred {{ margin: 0 0 .4em; }} .{ROOT} .x-right {{ color: #1e7b34; }}
.{ROOT} .x-wrong {{ color: #c0392b; font-weight: bold; }}
.{ROOT} .x-text {{ font-family: {SERIF}; font-size: 1.05em; line-height: 1.8;
  overflow-wrap: anywhere; }}
.{ROOT} .x-text p {{ margin: 0 0 .2em; }}
.{ROOT} .w {{ padding: 0 .08em; margin: 0 -.08em; border-radius: 2px; }}
.{ROOT} .oov {{ text-decoration: underline dotted #999; }}
.{ROOT} .cut {{ color: #999; }}
.{ROOT} .x-legend, .{ROOT} .x-note {{ font-size: .85em; color: #555; margin: .3em 0; }}
.{ROOT} .x-note {{ background: #fff4d6; border-left: 3px solid #e0a800; padding: .2em .6em; color: #5a4500; }}
.{ROOT} .x-scale {{ display: inline-block; width: 7em; height: .85em; vertical-align: middle; margin: 0 .4em;
  border: 1px solid #ccc; }}
.{ROOT} .x-bar {{ display: flex; height: .7em; margin: .5em 0 .2em; max-width: 30em; }}
.{ROOT} .x-bar span {{ display: block; height: 100%; }}
.{ROOT} .x-part {{ white-space: nowrap; }}
.{ROOT} .x-key {{ display: inline-block; width: .8em; height: .8em; margin: 0 .25em 0 .8em; vertical-align: -.05em; }}
.{ROOT} .x-key.x-first {{ margin-left: 0; }}
.{ROOT} h4 {{ font-size: .9em; color: #555; margin: .8em 0 .2em; }}
.{ROOT} .x-sentence {{ display: flex; align-items: flex-start; }}
.{ROOT} .x-sbar {{ flex: 0 0 4em; height: 1em; margin: .4em .6em 0 0; background: #eee; position: relative; }}
.{ROOT} .x-sbar span {{ position: absolute; top: 0; left: 0; bottom: 0; background: rgb({ATTENTION}); }}
.{ROOT} .x-gram {{ display: inline-block; margin: .1em .3em .1em 0; padding: 0 .3em; border-radius: 3px;
  font-size: .9em; }}
"""
_PAGE_STYLE = "body { margin: 2em auto; max-width: 62em; padding: 0 1em; background: #fff; }"


def class_colour(explanation, label):
    """The colour of `label`, `"r,g,b"`: `CLASS_COLOURS` at the class's position among the classifier's labels.

    The position is the label's among `explanation.probabilities`, which
    the explainer records in the order of the classifier's `label_names`;
    so a class has the same colour on every page of the same classifier
    (the palette repeats after `len(CLASS_COLOURS)` classes).

    >>> from hierattn.explain import Explanation
    >>> e = Explanation("Fine.", "pos", {"neg": 0.3, "pos": 0.7}, [], [], 0, [])
    >>> class_colour(e, "neg"), class_colour(e, "pos")
    ('213,94,0', '0,158,115')
    """
    names = [str(name) for name in explanation.probabilities]
    position = names.index(str(label)) if str(label) in names else 0
    return CLASS_COLOURS[position % len(CLASS_COLOURS)]


def evidence_colours(explanation):
    """The colours of the two classes evidence is measured between: `(prediction's, runner-up's)`.

    Each is its class's `class_colour`; where the palette repeats and both
    would get the same colour, the runner-up takes the palette's next one.
    A multi-label classifier's label is measured against its threshold:
    evidence against it is grey (`AGAINST`, no class's colour).
    """
    mine, versus = class_colour(explanation, explanation.label), runner_up(explanation)
    if versus is None:  # a multi-label classifier's label, against its threshold: no class
        return mine, AGAINST
    theirs = class_colour(explanation, versus)
    if theirs == mine:
        theirs = CLASS_COLOURS[(CLASS_COLOURS.index(mine) + 1) % len(CLASS_COLOURS)]
    return mine, theirs


def _ink(rgb, alpha):
    """White text where a shade is dark enough to need it (the shade over white, by its luminance)."""
    r, g, b = (alpha * int(c) + (1 - alpha) * 255 for c in rgb.split(","))
    return "; color: #fff" if 0.299 * r + 0.587 * g + 0.114 * b < 128 else ""


def _words_html(e, s, colour):
    """One sentence's text, each word a span shaded by `colour(word)` -> (rgb, alpha, tooltip)."""
    cells, cursor = [], s["start"]
    for w in (w for w in e.words if w.sentence == s["index"]):
        cells.append(html.escape(e.text[cursor : w.start]))
        classes = "w" + (" oov" if w.oov else "") + ("" if w.used else " cut")
        rgb, alpha, value = colour(w)
        cells.append(
            f'<span class="{classes}" style="background: rgba({rgb},{alpha:.3f}){_ink(rgb, alpha)}" '
            f'title="{html.escape(value)}">{html.escape(w.text)}</span>'
        )
        cursor = w.end
    cells.append(html.escape(e.text[cursor : s["end"]]))
    return "".join(cells)


def _evidence_colour(e, strongest):
    (mine, theirs), label, versus = evidence_colours(e), str(e.label), str(runner_up(e))
    sides = [side.format(label=label, versus=versus) for side in wording(e).sides]

    def colour(w):
        towards = (mine, sides[0]) if w.evidence >= 0 else (theirs, sides[1])
        return towards[0], (abs(w.evidence) / strongest) ** 0.5, f"evidence {w.evidence:+.4f} ({towards[1]})"

    return colour


def _key(rgb, first=False):
    return f'<span class="x-key{" x-first" if first else ""}" style="background: rgb({rgb})"></span>'


def _scale(*stops):
    return f'<span class="x-scale" style="background: linear-gradient(to right, {", ".join(stops)})"></span>'


def _evidence_legend(e, strongest):
    words = wording(e)
    if not strongest:
        return f'<p class="x-legend">No word has evidence for {words.no_evidence}.</p>'
    (mine, theirs), label, versus = evidence_colours(e), html.escape(str(e.label)), html.escape(str(runner_up(e)))
    sides = [side.format(label=f"<b>{label}</b>", versus=f"<b>{versus}</b>") for side in words.legend]
    return (
        f'<p class="x-legend">{_key(mine, first=True)}{sides[0]}{_key(theirs)}{sides[1]}. The deeper the shade, the '
        f"stronger the word's evidence (hover over a word for its value). Underlined: not in the vocabulary; "
        f"{words.grey}: beyond the network's length limits.</p>"
    )


def _parts_html(e):
    parts = margin_parts(e)
    if parts is None:
        return ""
    bar, against = _bar_html(parts)
    shares = margin_shares(parts)
    keys = "".join(
        f'<span class="x-part"><span class="x-key" style="background: {PART_COLOURS[key]}"></span>{name} '
        f"{signed(parts[key], 2)}{f' ({shares[key]}%)' if shares else ''}</span>"
        for key, name in PART_NAMES.items()
    )
    versus = wording(e).over.format(versus=html.escape(str(parts["versus"])))
    plain = "" if shares else " (no percentages: the parts pull against each other, so shares of this margin mislead)"
    plain += ". Striped, after the line: what pulls against the decision" if against else ""
    return (
        f'<div class="x-bar">{bar}</div><p class="x-legend">Margin of {html.escape(str(e.label))} over {versus}: '
        f"<b>{signed(parts['margin'], 2)}</b> ={keys}{plain}</p>"
        f'<p class="x-legend">{html.escape(margin_sentence(e))}</p>'
    )


def _bar_html(parts):
    """The margin's parts as one bar, widths by size: those for the decision first, then those against it, striped.

    Returns:
        `(html, whether a part pulls against the decision)`.
    """
    total = sum(abs(parts[key]) for key in PART_COLOURS) or 1.0
    sign = -1.0 if parts["margin"] < 0 else 1.0
    sides = {False: [], True: []}
    for key, colour in PART_COLOURS.items():
        against = sign * parts[key] < 0
        fill = f"repeating-linear-gradient(135deg, {colour} 0 3px, #fff 3px 6px)" if against else colour
        sides[against].append(
            f'<span class="x-{"against" if against else "for"}" style="width: {100 * abs(parts[key]) / total:.1f}%; '
            f'background: {fill}" title="{key} {signed(parts[key], 4)}'
            + (': pulls against the decision"' if against else '"')
            + "></span>"
        )
    line = '<span class="x-line" style="flex: 0 0 2px; background: #333"></span>' if sides[True] else ""
    return "".join(sides[False]) + line + "".join(sides[True]), bool(sides[True])


def _attention_html(e):
    top = max((w.weight for w in e.words), default=0.0) or 1.0
    top_sentence = max((s["weight"] for s in e.sentences), default=0.0) or 1.0

    def attention(w):
        return ATTENTION, (w.weight / top) ** 0.5 if w.used else 0.0, f"attention {w.weight:.4f}"

    rows = []
    for s in e.sentences:
        bar = (
            f'<div class="x-sbar" title="sentence weight {s["weight"]:.4f}"><span style="width: '
            f'{100 * s["weight"] / top_sentence:.1f}%"></span></div>'
            if len(e.sentences) > 1
            else ""
        )
        rows.append(
            f'<div class="x-sentence">{bar}<div class="x-text" dir="auto">{_words_html(e, s, attention)}</div></div>'
        )
    legend = (
        f'<p class="x-legend">Attention: where the network read, not which class a word favours (blue, the colour of '
        f"no class): 0{_scale(f'rgba({ATTENTION},0)', f'rgba({ATTENTION},1)')}the most attended word (shade grows "
        "with the square root of the weight)"
        + (". Bars: sentence weights, relative to the top sentence." if len(e.sentences) > 1 else ".")
        + "</p>"
    )
    return "<h4>Where the network read</h4>" + "".join(rows) + legend


def _ngrams_html(e, k):
    grams = top_ngrams(e, k, digits=2)  # as shown: none that would read +0.00
    if not grams:
        return ""
    mine, theirs = evidence_colours(e)
    strongest = max(abs(g.contribution) for g in grams)
    chips = "".join(
        f'<span class="x-gram" style="background: rgba({mine if g.contribution >= 0 else theirs},'
        f'{0.15 + 0.5 * abs(g.contribution) / strongest:.3f})" title="{g.start}:{g.end}'
        f'{"" if g.network_reads else ", beyond the network: read by the n-gram part only"}" dir="auto">'
        f"{html.escape(g.text)} {signed(g.contribution, 2)}</span>"
        for g in grams
    )
    return (
        "<h4>The n-grams (single words and short phrases) that weighed most: their exact parts of the margin, coloured like "
        f"the words</h4><div>{chips}</div>"
    )


def _class_truth(e):
    """The true class beside the prediction: right, or wrong."""
    right = str(e.true_label) == str(e.label)
    return (
        f' <span class="{"x-right" if right else "x-wrong"}">(true label: {html.escape(str(e.true_label))}'
        f"{'' if right else ', wrong'})</span>"
    )


def _labels_truth(e):
    """A text's true labels beside one of its labels: shown as they are."""
    return f" (true labels: {html.escape(str(e.true_label))})"


_TRUTH = {SINGLE: _class_truth, MULTI: _labels_truth}


def _document_html(e, number, name_it, top_k):
    parts = [f'<div class="x-doc" id="x-doc-{number}">']
    words = wording(e)
    if name_it:  # by its id, else its place (a multi-label classifier's label: its text's, `document`)
        place = e.document if e.document is not None else number
        name = html.escape(str(e.doc_id if e.doc_id is not None else place + 1))
        parts.append(f"<h3>{words.title.format(name=name, label=html.escape(str(e.label)))}</h3>")
    truth = "" if e.true_label is None else _TRUTH[kind(e)](e)
    label, rest = html.escape(str(e.label)), html.escape(prediction_words(e)[len(str(e.label)) :])
    parts.append(f'<p class="x-pred">{words.heading.capitalize()} <b>{label}</b>{rest}{truth}</p>')
    parts += [f'<p class="x-note">{html.escape(warning)}</p>' for warning in e.warnings]
    strongest = max((abs(w.evidence) for w in e.words), default=0.0)
    colour = _evidence_colour(e, strongest) if strongest else lambda w: ("255,255,255", 0.0, "no evidence")
    parts.append('<div class="x-text" dir="auto">')  # the user's text: its direction its own (Arabic: right to left)
    parts += [f"<p>{_words_html(e, s, colour)}</p>" for s in e.sentences]
    parts.append("</div>")
    parts.append(_evidence_legend(e, strongest))
    parts.append(_parts_html(e))
    if shows_attention(e):
        parts.append(_attention_html(e))
    parts.append(_ngrams_html(e, top_k))
    parts.append("</div>")
    return "".join(parts)


def to_html(explanations, title="hierattn explanation", page=True, top_k=10):
    """The picture of each explanation, as a standalone page or a notebook fragment.

    For each text: the prediction and its probability in words, any warning,
    then the text with each word shaded in the colour of the class its
    evidence (`WordWeight.evidence`) pushes towards, the prediction's or the
    runner-up's (`evidence_colours`), with a legend that names both; a bar
    of how much of the margin came from the network's words, the n-gram
    part's words and the constant terms (their percentages only where
    `margin_shares` gives them) and one plain sentence on what the margin
    and the constant terms are (`margin_sentence`); attention as a second
    layer ("where the network read", in blue, no class's colour, with
    sentence bars; left out when the network has no weight); and the top
    `top_k` n-grams (none that would show as +0.00). Everything is escaped;
    no scripts or external assets. The page's words are English
    (`lang="en"`); each element holding the user's text (the text, each
    attended sentence, each n-gram) is `dir="auto"`, and between two units
    stands exactly what stands between them in the text.

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
        f'<style>{_PAGE_STYLE}</style></head><body>\n<h1 style="font: bold 1.3em {html.escape(SANS)}">'
        f"{html.escape(title)}</h1>\n{fragment}\n</body></html>\n"
    )


__all__ = [
    "AGAINST",
    "ATTENTION",
    "CLASS_COLOURS",
    "ROOT",
    "SANS",
    "SERIF",
    "class_colour",
    "evidence_colours",
    "to_html",
]
