"""An evaluation as one HTML page: the scores, a reliability diagram, the accuracy-coverage curve, the confusion matrix.

`evaluate --output report.html` writes it, and `train` writes a run's own
(`report.html`, of its test split). The page is self-contained (inline
SVG and CSS, no script, nothing fetched), so it can be mailed or attached
to a ticket as it is. It draws what `hierattn.calibration.calibration_report`
measured: the reliability diagram's bins (how often the decisions of each
confidence were right, before and after the temperature; on the diagonal
they would be calibrated) and the accuracy of the surest share of documents
at each coverage.
"""

import html

from hierattn.calibration import temperature_text
from hierattn.utils.atomic import atomic_open

# The plots' size in pixels, and their margin for the axes' labels.
_SIZE, _PAD = 330, 50
_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 60em; }
.plots { display: flex; flex-wrap: wrap; gap: 2em; }
figure { margin: 0; } figcaption { font-size: 0.9em; color: #555; max-width: 320px; }
table { border-collapse: collapse; margin-top: 0.5em; } td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; }
td { text-align: right; } .before { color: #999; } .after { color: #1f5fbf; }
"""


def evaluation_html(metrics, title):
    """The page of an evaluation's metrics (`evaluate_classifier`'s, or a run's test split with its calibration).

    Args:
        metrics: The scores: `accuracy` or `micro_f1`, `macro_f1`,
            `documents`; with `calibration`, the pictures; with
            `labels` and `confusion_matrix`, the matrix; with `abstention`,
            what a minimum confidence answered.
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
        (
            f"<p>{score} <b>{metrics['micro_f1' if multi else 'accuracy']:.4f}</b>, macro-F1 "
            f"<b>{metrics['macro_f1']:.4f}</b> on {metrics.get('documents', 0):,} documents</p>"
        ),
    ]
    calibration = metrics.get("calibration")
    if calibration:
        before, after = calibration["before"], calibration["after"]
        parts.append(
            f"<p>Calibration (temperature {temperature_text(calibration['temperature'])}): expected calibration error "
            f"<span class='before'>{before['ece']:.2%}</span> &rarr; <span class='after'>{after['ece']:.2%}</span>, "
            f"log-loss {before['log_loss']:.4f} &rarr; {after['log_loss']:.4f}, "
            f"Brier {before['brier']:.4f} &rarr; {after['brier']:.4f}.</p>"
        )
        parts.append("<div class='plots'>")
        parts.append(_figure(_reliability_svg(before, after), _RELIABILITY_LABELS if multi else _RELIABILITY))
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
    if "confusion_matrix" in metrics and not multi:
        parts.append(_confusion(metrics["labels"], metrics["confusion_matrix"]))
    parts.append("</body></html>\n")
    return "\n".join(parts)


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
_COVERAGE = (
    "Accuracy-coverage: the {score} of the surest share of documents (the rest left for a person), from the "
    "surest 5% to all of them."
)


def _figure(svg, caption):
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _xy(x, y):
    """A point of the unit square on the plot (y up)."""
    return _PAD + x * (_SIZE - 2 * _PAD), _SIZE - _PAD - y * (_SIZE - 2 * _PAD)


def _axes(x_label, y_label, low=0.0):
    """The frame, its ticks at 0, 0.5 and 1 (of `[low, 1]` on the y axis) and the axes' labels."""
    (x0, y0), (x1, y1) = _xy(0, 0), _xy(1, 1)
    lines = [f"<rect x='{x0}' y='{y1}' width='{x1 - x0}' height='{y0 - y1}' fill='none' stroke='#888'/>"]
    for t in (0.0, 0.5, 1.0):
        x, _ = _xy(t, 0)
        _, y = _xy(0, t)
        lines.append(f"<text x='{x}' y='{y0 + 14}' font-size='11' text-anchor='middle'>{t:g}</text>")
        value = low + t * (1.0 - low)
        lines.append(f"<text x='{x0 - 4}' y='{y + 4}' font-size='11' text-anchor='end'>{value:g}</text>")
    lines.append(f"<text x='{(x0 + x1) / 2}' y='{_SIZE - 6}' font-size='12' text-anchor='middle'>{x_label}</text>")
    lines.append(
        f"<text x='12' y='{(y0 + y1) / 2}' font-size='12' text-anchor='middle' "
        f"transform='rotate(-90 12 {(y0 + y1) / 2})'>{y_label}</text>"
    )
    return lines


def _svg(lines):
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_SIZE}' height='{_SIZE}' role='img'>"
        + "".join(lines)
        + "</svg>"
    )


def _reliability_svg(before, after):
    lines = _axes("confidence", "accuracy")
    (x0, y0), (x1, y1) = _xy(0, 0), _xy(1, 1)
    lines.append(f"<line x1='{x0}' y1='{y0}' x2='{x1}' y2='{y1}' stroke='#bbb' stroke-dasharray='4 3'/>")
    for report, color in ((before, "#999"), (after, "#1f5fbf")):
        bins = report.get("reliability") or []
        total = sum(b["documents"] for b in bins) or 1
        points = [_xy(b["confidence"], b["accuracy"]) for b in bins]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            lines.append(f"<polyline points='{path}' fill='none' stroke='{color}' stroke-width='1.5'/>")
        for (x, y), b in zip(points, bins):
            radius = 2.0 + 10.0 * (b["documents"] / total) ** 0.5
            lines.append(
                f"<circle cx='{x:.1f}' cy='{y:.1f}' r='{radius:.1f}' fill='{color}' fill-opacity='0.5'>"
                f"<title>confidence {b['confidence']:.3f}, accuracy {b['accuracy']:.3f}, "
                f"{b['documents']:,} documents</title></circle>"
            )
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


__all__ = ["evaluation_html", "write_evaluation_html"]
