"""An evaluation as one HTML page: the scores, a reliability diagram, the accuracy-coverage curve, the confusion matrix.

`evaluate --output report.html` writes it, and `train` writes a run's own
(`report.html`, of its test split: `split_page_metrics`). The page is
self-contained (inline SVG and CSS, no script, nothing fetched), so it can
be mailed or attached to a ticket as it is. It shows what the text output
shows (`hierattn.cli.render`), with the same numbers alike formatted: the
scores, the share of documents the network read and the scores with the
network on every document, calibration and the score of the surest 90, 80
and 50% of documents, what a minimum confidence answered, and the confusion
matrix (multi-label: each label's scores). It draws what
`hierattn.calibration.calibration_report` measured: the reliability
diagram's bins (how often the decisions of each confidence were right,
before and after the temperature; on the diagonal they would be calibrated)
and the score of the surest share of documents at each coverage.
"""

import html

from hierattn.calibration import calibration_temperature
from hierattn.utils.atomic import atomic_open

# A reliability bin of fewer documents (multi-label: document-label pairs) than this is drawn hollow and left out
# of the line. Its accuracy is a fraction of so few that one document moves it by 10 points or more, and its
# standard error (up to 0.5 / sqrt(n): 0.16 at n = 10) makes a 95% interval wider than half the diagram: a bin of
# one wrong document would pull the line to 0 and say nothing. It is a count, not a share, since a count is what
# sets that error: 10 documents of a million are as telling as 10 of a thousand.
MIN_BIN_DOCUMENTS = 10

# The plots' size in pixels, and their margin for the axes' labels.
_SIZE, _PAD = 330, 50
# A reliability dot's radius: the smallest, plus this times the square root of its bin's share (its area the share).
_DOT_MIN, _DOT_SCALE = 2.0, 10.0
# The unit square is drawn this far inside the frame, so that the largest dot (and its stroke) stays in it.
_INSET = _DOT_MIN + _DOT_SCALE + 1.0
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 60em; }
.plots { display: flex; flex-wrap: wrap; gap: 2em; }
figure { margin: 0; } figcaption { font-size: 0.9em; color: #555; max-width: 320px; }
table { border-collapse: collapse; margin-top: 0.5em; } td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; }
td { text-align: right; } th.label { text-align: left; } .before { color: #999; } .after { color: #1f5fbf; }
"""


def evaluation_html(metrics, title):
    """The page of an evaluation's metrics (`evaluate_classifier`'s, or a run's split: `split_page_metrics`).

    Args:
        metrics: The scores: `accuracy` or `micro_f1` (multi-label, with
            `samples_f1`, `subset_accuracy` and `hamming_loss` where
            measured), `macro_f1`, `documents`; with `network_read` and
            `whole`, the share the network read and the scores with it on
            every document; with `calibration`, its figures and the
            pictures; with `labels` and `confusion_matrix`, the matrix
            (multi-label: with `report`, each label's scores); with
            `abstention`, what a minimum confidence answered.
        title: The page's heading (e.g. the run's name and the data).

    Returns:
        The page, as text.
    """
    multi = "micro_f1" in metrics
    score = "micro-F1" if multi else "accuracy"
    parts = [
        (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        ),
        f"<p>{_scores(metrics, full=True)} on {metrics.get('documents', 0):,} documents</p>",
    ]
    if "network_read" in metrics:
        whole = f"; with the network on every document: {_scores(metrics['whole'])}" if "whole" in metrics else ""
        parts.append(f"<p>The network read <b>{metrics['network_read']:.1%}</b> of them{whole}.</p>")
    calibration = metrics.get("calibration")
    if calibration:
        before, after = calibration["before"], calibration["after"]
        parts.append(
            f"<p>Calibration (temperature {calibration_temperature(calibration)}): expected calibration error "
            f"<span class='before'>{before['ece']:.2%}</span> &rarr; <span class='after'>{after['ece']:.2%}</span>, "
            f"log-loss {before['log_loss']:.4f} &rarr; {after['log_loss']:.4f}, "
            f"Brier {before['brier']:.4f} &rarr; {after['brier']:.4f}.</p>"
        )
        coverage = after.get("coverage") or {}
        if all(key in coverage for key in ("0.9", "0.8", "0.5", "1")):
            surest = " / ".join(f"<b>{coverage[key]:.2%}</b>" for key in ("0.9", "0.8", "0.5"))
            parts.append(
                f"<p>The {score} of the surest 90% / 80% / 50% of documents: {surest} (all: {coverage['1']:.2%}).</p>"
            )
        unit = "document-label pairs" if multi else "documents"
        small = any(b["documents"] < MIN_BIN_DOCUMENTS for r in (before, after) for b in r.get("reliability") or [])
        caption = _RELIABILITY_LABELS if multi else _RELIABILITY
        caption += _SMALL_BINS.format(n=MIN_BIN_DOCUMENTS, unit=unit) if small else ""
        parts.append("<div class='plots'>")
        parts.append(_figure(_reliability_svg(before, after, unit), caption))
        parts.append(_figure(_coverage_svg(after["coverage_curve"], score), _COVERAGE.format(score=score)))
        parts.append("</div>")
    abstention = metrics.get("abstention")
    if abstention:
        name = "micro_f1" if multi else "accuracy"
        parts.append(
            f"<p>With a minimum confidence of {abstention['min_confidence']:g}: {abstention['answered']:,} answered "
            f"(coverage {abstention['coverage']:.2%}), {score} {abstention[name]:.2%}; "
            f"{abstention['left']:,} left for a person.</p>"
        )
    if multi and "report" in metrics:
        parts.append(_per_label(metrics["labels"], metrics["report"]))
    elif "confusion_matrix" in metrics and not multi:
        parts.append(_confusion(metrics["labels"], metrics["confusion_matrix"]))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def split_page_metrics(metrics, split="test"):
    """A run's metrics (metrics.json) of one split, in the page's shape (`evaluate_classifier`'s).

    The split's scores, with its `calibration`, and with an n-gram part its
    `network_read` and `whole` (from `parts`), as `train`'s summary prints
    them (`hierattn.cli.render.metrics_text`).

    >>> run = {"test": {"accuracy": 0.9, "macro_f1": 0.89, "documents": 10},
    ...        "parts": {"network_read": {"test": 0.25}, "whole": {"test": {"accuracy": 0.91, "macro_f1": 0.9}}}}
    >>> split_page_metrics(run)  # doctest: +NORMALIZE_WHITESPACE
    {'accuracy': 0.9, 'macro_f1': 0.89, 'documents': 10, 'network_read': 0.25,
     'whole': {'accuracy': 0.91, 'macro_f1': 0.9}}
    """
    page = dict(metrics[split])
    calibration = (metrics.get("calibration") or {}).get(split)
    if calibration:
        page["calibration"] = calibration
    parts = metrics.get("parts") or {}
    for key in ("network_read", "whole"):
        if split in (parts.get(key) or {}):
            page[key] = parts[key][split]
    return page


def write_evaluation_html(path, metrics, title, overwrite=False):
    """Writes `evaluation_html` to `path` (atomically; an existing file is refused unless `overwrite`)."""
    with atomic_open(path, overwrite=overwrite) as handle:
        handle.write(evaluation_html(metrics, title))


_RELIABILITY = (
    "Reliability: for the decisions of each confidence (15 bins), how often they were right, before "
    "(grey) and after (blue) the temperature; each dot's area is its share of documents. On the diagonal, "
    "a probability of 0.8 is right 80% of the time."
)
_RELIABILITY_LABELS = (
    "Reliability: for the label probabilities of each bin (15 bins, every document and label), how often the "
    "label was on, before (grey) and after (blue) the temperatures; each dot's area is its share of them. On the "
    "diagonal, a probability of 0.8 is right 80% of the time."
)
_SMALL_BINS = " Hollow dots: bins of fewer than {n} {unit}, too few to judge, left out of the line."
_COVERAGE = (
    "Accuracy-coverage: the {score} of the surest share of documents (the rest left for a person), from the "
    "surest 5% to all of them."
)


def _scores(metrics, full=False):
    """The scores as `hierattn.cli.render.scores_text` writes them, the numbers in bold."""
    if "micro_f1" not in metrics:
        return f"accuracy <b>{metrics['accuracy']:.4f}</b>, macro-F1 <b>{metrics['macro_f1']:.4f}</b>"
    text = f"micro-F1 <b>{metrics['micro_f1']:.4f}</b>, macro-F1 <b>{metrics['macro_f1']:.4f}</b>"
    if full and "samples_f1" in metrics:
        text += (
            f", samples-F1 <b>{metrics['samples_f1']:.4f}</b>, subset accuracy <b>{metrics['subset_accuracy']:.4f}</b>, "
            f"Hamming loss <b>{metrics['hamming_loss']:.4f}</b>"
        )
    return text


def _figure(svg, caption):
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _xy(x, y):
    """A point of the unit square on the plot (y up), `_INSET` inside the frame."""
    side = _SIZE - 2 * _PAD - 2 * _INSET
    return _PAD + _INSET + x * side, _SIZE - _PAD - _INSET - y * side


def _axes(x_label, y_label, low=0.0):
    """The frame, its ticks at 0, 0.5 and 1 (of `[low, 1]` on the y axis) outside it, and the axes' labels."""
    left, top, right, bottom = _PAD, _PAD, _SIZE - _PAD, _SIZE - _PAD
    lines = [f"<rect x='{left}' y='{top}' width='{right - left}' height='{bottom - top}' fill='none' stroke='#888'/>"]
    for t in (0.0, 0.5, 1.0):
        x, y = _xy(t, t)
        lines.append(f"<line x1='{x:.1f}' y1='{bottom}' x2='{x:.1f}' y2='{bottom + 4}' stroke='#888'/>")
        lines.append(f"<text x='{x:.1f}' y='{bottom + 16}' font-size='11' text-anchor='middle'>{t:g}</text>")
        lines.append(f"<line x1='{left - 4}' y1='{y:.1f}' x2='{left}' y2='{y:.1f}' stroke='#888'/>")
        value = low + t * (1.0 - low)
        lines.append(f"<text x='{left - 6}' y='{y + 4:.1f}' font-size='11' text-anchor='end'>{value:g}</text>")
    lines.append(f"<text x='{_SIZE / 2}' y='{_SIZE - 6}' font-size='12' text-anchor='middle'>{x_label}</text>")
    lines.append(
        f"<text x='12' y='{_SIZE / 2}' font-size='12' text-anchor='middle' "
        f"transform='rotate(-90 12 {_SIZE / 2})'>{y_label}</text>"
    )
    return lines


def _svg(lines):
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_SIZE}' height='{_SIZE}' role='img'>"
        + "".join(lines)
        + "</svg>"
    )


def _reliability_svg(before, after, unit="documents"):
    """The bins before and after the temperature: dots of area their share, the line through those large enough.

    `unit` names what a bin counts (multi-label: document-label pairs).
    """
    lines = _axes("confidence", "accuracy")
    (x0, y0), (x1, y1) = _xy(0, 0), _xy(1, 1)
    lines.append(f"<line x1='{x0}' y1='{y0}' x2='{x1}' y2='{y1}' stroke='#bbb' stroke-dasharray='4 3'/>")
    for report, color in ((before, "#999"), (after, "#1f5fbf")):
        bins = report.get("reliability") or []
        total = sum(b["documents"] for b in bins) or 1
        points = [_xy(b["confidence"], b["accuracy"]) for b in bins]
        kept = [point for point, b in zip(points, bins) if b["documents"] >= MIN_BIN_DOCUMENTS]
        if len(kept) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in kept)
            lines.append(f"<polyline points='{path}' fill='none' stroke='{color}' stroke-width='1.5'/>")
        for (x, y), b in zip(points, bins):
            radius = min(_DOT_MIN + _DOT_SCALE * (b["documents"] / total) ** 0.5, _DOT_MIN + _DOT_SCALE)
            tip = f"confidence {b['confidence']:.3f}, accuracy {b['accuracy']:.3f}, {b['documents']:,} {unit}"
            if b["documents"] < MIN_BIN_DOCUMENTS:
                paint = f"fill='none' stroke='{color}' stroke-width='1' class='small'"
                radius, tip = max(radius, 3.0), tip + ": too few to judge"
            else:
                paint = f"fill='{color}' fill-opacity='0.5'"
            lines.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='{radius:.1f}' {paint}><title>{tip}</title></circle>")
    return _svg(lines)


def _coverage_svg(curve, score):
    low = min([0.5] + [s for _, s in curve])  # the y axis from 0.5 (lower if a score is)
    lines = _axes("coverage (surest share answered)", score, low)
    points = [_xy(share, (s - low) / (1.0 - low) if low < 1.0 else 1.0) for share, s in curve]
    if points:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        lines.append(f"<polyline points='{path}' fill='none' stroke='#1f5fbf' stroke-width='2'/>")
        for (x, y), (share, s) in zip(points, curve):
            lines.append(
                f"<circle cx='{x:.1f}' cy='{y:.1f}' r='2.5' fill='#1f5fbf'>"
                f"<title>surest {share:.0%}: {score} {s:.4f}</title></circle>"
            )
    return _svg(lines)


def _confusion(labels, matrix):
    head = "".join(f"<th>{html.escape(str(name))}</th>" for name in labels)
    rows = "".join(
        f"<tr><th>{html.escape(str(name))}</th>" + "".join(f"<td>{count:,}</td>" for count in row) + "</tr>"
        for name, row in zip(labels, matrix)
    )
    return (
        "<h2>Confusion matrix</h2><p>Rows: the true class; columns: the predicted class.</p>"
        f"<table><tr><th></th>{head}</tr>{rows}</table>"
    )


def _per_label(labels, report):
    """Each label's documents, precision, recall and F1, most frequent first (`hierattn.cli.render.multilabel_text`)."""
    names = sorted((str(name) for name in labels), key=lambda name: -report[name]["support"])
    rows = "".join(
        f"<tr><th class='label'>{html.escape(name)}</th><td>{int(report[name]['support']):,}</td>"
        f"<td>{report[name]['precision']:.4f}</td><td>{report[name]['recall']:.4f}</td>"
        f"<td>{report[name]['f1-score']:.4f}</td></tr>"
        for name in names
    )
    return (
        "<h2>Per label</h2><table><tr><th class='label'>label</th><th>documents</th><th>precision</th>"
        f"<th>recall</th><th>F1</th></tr>{rows}</table>"
    )


__all__ = ["MIN_BIN_DOCUMENTS", "evaluation_html", "split_page_metrics", "write_evaluation_html"]
