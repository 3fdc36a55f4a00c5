"""The cascade of a `TextClassifier`: the network reads only the documents its n-gram part is not sure of.

`hierattn.decision.Cascade` says how a document is decided given the cut;
here the cut is chosen on the validation texts (`choose_cut`), as the
n-gram part's weights are (`hierattn.models.part`), and the classifier's
`network` setting says whether it is used (`"auto"`) or the network reads
every document (`"always"`).
"""

import numpy as np

from hierattn.calibration import calibrated, calibration_report, fit_temperature, temperature_text
from hierattn.data.dataset import validation_pair
from hierattn.data.ids import ngram_ids
from hierattn.decision import Cascade, Decision, check_network, thresholds_at
from hierattn.defaults import CASCADE, MULTILABEL
from hierattn.ngrams.mixing import ngram_logits


def _f1(true_positives, predicted, actual):
    """F1 from counts (0 where there is nothing to count), element-wise."""
    denominator = predicted + actual
    return np.where(denominator > 0, 2.0 * true_positives / np.maximum(denominator, 1), 0.0)


def cascade_scores(order, whole, ngrams, labels):
    """The accuracy and macro-F1 (micro-F1 for multi-hot rows) of every cascade along `order`.

    The cascade `k` lets the network decide the first `k` documents of
    `order` (the least sure first) and the n-gram part the rest.

    Args:
        order: The documents, least sure first `(n,)`.
        whole: The whole combination's decisions: class ids `(n,)` or multi-hot rows `(n, labels)`.
        ngrams: The n-gram part's decisions, in the same form.
        labels: The true class ids, or multi-hot rows.

    Returns:
        `{name: (n + 1,) array}` for k = 0 .. n: `"accuracy"` and `"macro_f1"`,
        or for multi-hot rows `"micro_f1"`.
    """
    whole, ngrams, labels = (np.asarray(a)[order] for a in (whole, ngrams, labels))

    width = (
        labels.shape[1]
        if labels.ndim == 2
        else 1 + int(max(labels.max(initial=0), whole.max(initial=0), ngrams.max(initial=0)))
    )

    def counts(decided):  # per document: (predicted, true positives), one column per class or label
        if labels.ndim == 2:
            predicted = decided.astype(np.int64)
            return predicted, predicted * labels
        predicted = np.eye(width, dtype=np.int64)[decided]
        return predicted, predicted * (decided == labels)[:, None]

    def along(values_whole, values_ngrams):  # sum over the first k of `whole` and the rest of `ngrams`
        zero = np.zeros((1,) + values_whole.shape[1:], np.int64)
        first = np.concatenate([zero, np.cumsum(values_whole, axis=0)])
        rest = np.concatenate([zero, np.cumsum(values_ngrams, axis=0)])
        return first + rest[-1] - rest

    (p_whole, t_whole), (p_ngrams, t_ngrams) = counts(whole), counts(ngrams)
    predicted, true_positives = along(p_whole, p_ngrams), along(t_whole, t_ngrams)
    if labels.ndim == 2:
        return {"micro_f1": _f1(true_positives.sum(1), predicted.sum(1), labels.sum())}
    support = np.bincount(labels, minlength=width)
    return {
        "accuracy": true_positives.sum(1) / max(len(labels), 1),
        "macro_f1": _f1(true_positives, predicted, support).mean(1),
    }


def choose_cut(margins, whole, ngrams, labels, tolerance=CASCADE["tolerance"]):
    """The cut of the cheapest cascade whose validation scores, and every costlier one's, stay near the whole's.

    Args:
        margins: The n-gram part's margins of the validation documents (`Cascade.margins`).
        whole: The whole combination's decisions of them (class ids, or multi-hot rows).
        ngrams: The n-gram part's decisions of them, in the same form.
        labels: Their true labels, in the same form.
        tolerance: How far under the whole combination's a score may be.

    Returns:
        `(cut, report)`: the margin under which the network reads a
        document (`None`: every document), and a JSON-ready report:
        `cut`, `tolerance`, `validation_documents`, `validation_share` (the
        share of them the network read) and `validation` (the scores of
        the whole combination, the cascade and the n-gram part alone).
    """
    margins = np.asarray(margins, np.float64)
    n = len(margins)
    order = np.argsort(margins, kind="stable")
    scores = cascade_scores(order, whole, ngrams, labels)
    ranked = margins[order]
    # A cut falls between two different margins (documents of equal margin go the same way), or before or after all.
    allowed = np.concatenate([[True], ranked[1:] > ranked[:-1], [True]]) if n else np.array([True])
    good = np.all([values >= values[-1] - tolerance - 1e-12 for values in scores.values()], axis=0)
    # The cheapest allowed cascade from which every costlier allowed one is good as well.
    bad_after = np.flatnonzero(allowed & ~good)
    k = int(np.flatnonzero(allowed[: n + 1] & (np.arange(n + 1) > (bad_after.max() if len(bad_after) else -1)))[0])
    cut = None if k == n else (0.0 if k == 0 else float((ranked[k - 1] + ranked[k]) / 2.0))
    report = {
        "cut": cut,
        "tolerance": tolerance,
        "validation_documents": n,
        "validation_share": round(k / n, 4) if n else 1.0,
        "validation": {
            part: {name: float(values[at]) for name, values in scores.items()}
            for part, at in (("whole", n), ("cascade", k), ("ngrams", 0))
        },
    }
    return cut, report


# The n-gram part's own scales tried (`ngram_scale`).
NGRAM_SCALES = tuple(np.round(np.geomspace(0.05, 20.0, 53), 4))


def ngram_scale(logits, labels):
    """The scale `s` of the n-gram part's logits with the smallest validation log-loss of `softmax(s z)`.

    What a document the n-gram part decides alone gets (`Cascade`): its own
    probabilities, at the temperature that fits the validation texts, not
    those of the combination without the network's term (`softmax(b z)`:
    too soft where the network carries much of the combination's scale).
    """
    logits, labels = np.asarray(logits, np.float64), np.asarray(labels)

    def loss(scale):
        scores = scale * logits
        scores = scores - scores.max(axis=1, keepdims=True)
        log_p = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
        return -log_p[np.arange(len(labels)), labels].mean()

    return float(min(NGRAM_SCALES, key=loss))


class Cascading:
    """The cascade's methods of `TextClassifier` (which sets `network`, `cascade_report` and the n-gram part).

    Example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0, validation_split=0.2)   # chooses the cut last
    >>> sorted(clf.cascade_report)[:4]
    ['cut', 'ngram_scale', 'temperature', 'temperature_always']
    >>> x = clf.preprocessor(["A great film."])
    >>> clf.network = "always"                  # the network reads every document: the whole combination
    >>> from hierattn.calibration import calibrated
    >>> whole = clf.predict_ids(x, part="whole")  # as the graph gives it; the classifier's, at its temperature:
    >>> bool(np.allclose(clf.predict_ids(x), calibrated(whole, clf.cascade_report["temperature_always"])))
    True
    """

    cascade_report = None

    @property
    def network(self):
        """`"auto"`: the network reads only documents the n-gram part is not sure of; `"always"`: every document."""
        return getattr(self, "_network", CASCADE["network"])

    @network.setter
    def network(self, value):
        self._network = check_network(value)

    @property
    def cascade(self):
        """How `predict` decides each document (`hierattn.decision.Cascade`), or None without an n-gram part.

        Its cut is None (the network reads every document) with
        `network="always"`, or before `choose_cut` chose one.
        """
        if self.ngram_logits is None:
            return None
        report = self.cascade_report or {}
        cut = report.get("cut") if self.network == "auto" else None
        temperature = report.get("temperature" if self.network == "auto" else "temperature_always")
        b = float(np.asarray(self.combination.mixing)[1])
        return Cascade(cut, b, self.multi_label, self.thresholds, report.get("ngram_scale"), temperature)

    def _raw_thresholds(self):
        """A multi-label classifier's thresholds before its temperatures (`Cascade.raw_thresholds`), else None."""
        cascade = self.cascade if self.multi_label and self.cascade_report else None
        return self.thresholds if cascade is None else cascade.raw_thresholds()

    def choose_cut(self, validation_data=None, verbose=0, tolerance=CASCADE["tolerance"]):
        """Chooses the cascade's cut on validation texts (`fit`'s last step; `choose_cut` of this module).

        Without validation texts there is no cut: the network reads every
        document. `cascade_report` then holds what was chosen and measured,
        and, for a single-label classifier, `ngram_scale`, the scale of the
        n-gram logits for the documents the n-gram part decides alone
        (`ngram_scale` of this module), and the whole combination's
        temperatures (`hierattn.calibration.fit_temperature`): `temperature`
        fitted on the validation documents the network reads, and
        `temperature_always` on all of them (with `network="always"`); then,
        with `decision_metric="macro_f1"`, the offsets again
        (`choose_offsets`), on these probabilities. A
        multi-label classifier's temperatures are one per label, fitted on
        the cascade's probabilities of every validation document (the same
        for both settings), and its thresholds move with them
        (`hierattn.decision.Cascade`): no decision changes.

        Args:
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset of
                `(texts, labels)`, or None.
            verbose: Print one line: the share of validation documents the network read, and the scores.
            tolerance: How far under the whole combination's the cascade's validation scores may be.

        Returns:
            The cut (None: the network reads every document).
        """
        if self.ngram_logits is None:
            raise ValueError("this classifier has no n-gram part (it was made with ngrams=False): it has no cascade")
        x = None
        if validation_data is not None:
            x, labels = self._ids_and_label_ids(*validation_pair(validation_data), "validation_data")
        if self.multi_label:  # the thresholds of the probabilities before any temperature, for the cut
            self.thresholds = self._raw_thresholds()
        if x is None or not len(labels):
            self.cascade_report = {"cut": None, "validation_documents": 0}
            return None
        logits = ngram_logits(self.ngram_logits, ngram_ids(x))
        scale = None if self.multi_label else ngram_scale(logits, labels)
        b = float(np.asarray(self.combination.mixing)[1])
        cascade = Cascade(None, b, self.multi_label, self.thresholds, scale)
        decide = Decision(self.label_names, self.multi_label, self.thresholds).ids  # before any offsets
        probabilities = self.predict_ids(x, part="whole")
        margins = cascade.margins(logits)
        cut, report = choose_cut(
            margins, decide(probabilities), decide(cascade.ngram_probabilities(logits)), labels, tolerance
        )
        if self.multi_label:  # per label, on the cascade's probabilities; the thresholds move with them
            found = Cascade(cut, b, True, self.thresholds).predict(logits, lambda index: probabilities[index])
            temperatures = dict.fromkeys(("temperature", "temperature_always"), fit_temperature(found, labels, True))
            raw = self.thresholds or [MULTILABEL["threshold"]] * len(self.label_names)
            self.thresholds = thresholds_at(raw, temperatures["temperature"])
        else:  # the whole combination's temperatures: for the documents the network reads; for all
            read = np.ones(len(margins), bool) if cut is None else margins < cut
            read = read if read.any() else np.ones(len(margins), bool)
            temperatures = {
                "temperature": fit_temperature(probabilities[read], labels[read]),
                "temperature_always": fit_temperature(probabilities, labels),
            }
        self.cascade_report = dict(report, ngram_scale=scale, **temperatures)
        if verbose:
            print(self.cascade_line())
        if getattr(self, "decision_metric", None) == "macro_f1":  # chosen on the probabilities as they are now
            self.choose_offsets(validation_data, verbose=verbose)
        return cut

    def predict_with_whole(self, x, batch_size=32, progress=False, labels=None):
        """The classifier's probabilities for ids, the whole combination's, and the share the network read.

        The network reads every document once (for the whole combination);
        the classifier's answers are the cascade's from the same passes.

        Args:
            x: Ids as the preprocessor gives them.
            batch_size: Documents per batch.
            progress: Show a progress bar.
            labels: The documents' labels: also return how calibrated the
                probabilities are (`calibration_report`), from the same passes.

        Returns:
            `(probabilities, whole, share)`: `whole` as the classifier gives
            them with `network="always"` (at its temperature for that);
            `share` is None without a cascade (`network="always"`, no cut,
            no n-gram part), when the two are the same. With `labels`,
            `calibration_report`'s answer fourth.
        """
        raw = self.predict_ids(x, batch_size, progress, part="whole")
        cascade = self.cascade
        found, calibration = (raw, raw, None), None
        if cascade is not None and isinstance(x, dict):
            always = (self.cascade_report or {}).get("temperature_always")
            whole = calibrated(raw, 1.0 if always is None else always, self.multi_label)
            logits = None
            if cascade.cut is not None or labels is not None:
                logits = ngram_logits(self.ngram_logits, ngram_ids(x))
            if cascade.cut is None:
                found = (cascade.whole_probabilities(raw), whole, None)
            else:
                share = float(cascade.needs_network(logits).mean()) if len(logits) else 0.0
                found = (cascade.predict(logits, lambda index: raw[index]), whole, share)
            if labels is not None:
                calibration = self._calibration(cascade, logits, raw, labels)
        return found if labels is None else (*found, calibration)

    def calibration_report(self, x, labels, whole=None):
        """How calibrated the classifier's probabilities of ids `x` are: before and after its temperature.

        `hierattn.calibration.calibration_report` of the probabilities as
        the cascade gives them (the whole combination's at temperature 1,
        then at the classifier's): ECE, log-loss, Brier score, and accuracy
        (micro-F1 for a multi-label classifier) of the surest 100, 90, 80
        and 50% of documents.

        Args:
            x: Ids as the preprocessor gives them.
            labels: Their class ids (multi-hot rows for a multi-label classifier).
            whole: The whole combination's probabilities of `x`, if already
                computed (`predict_with_whole`).

        Returns:
            `{"temperature", "before", "after"}`, or None without an n-gram part.
        """
        cascade = self.cascade
        if cascade is None or not isinstance(x, dict):
            return None
        whole = self.predict_ids(x, part="whole") if whole is None else whole
        return self._calibration(cascade, ngram_logits(self.ngram_logits, ngram_ids(x)), whole, labels)

    def _calibration(self, cascade, logits, whole, labels):
        """`calibration_report` of the cascade's probabilities given the n-gram logits and the whole combination's."""
        found = {"temperature": cascade.temperature}
        for name, at in (("before", cascade.uncalibrated()), ("after", cascade)):
            probabilities = at.predict(logits, lambda index: whole[index])
            decide = Decision(self.label_names, self.multi_label, at.thresholds, self.offsets).ids
            found[name] = calibration_report(probabilities, labels, decide, self.multi_label)
        return found

    def cascade_line(self):
        """One line on the cascade: the share of validation documents the network read, and the scores."""
        report = self.cascade_report or {}
        temperature = (
            f"; the whole combination's temperature {temperature_text(report['temperature'])}"
            if "temperature" in report
            else ""
        )
        if report.get("cut") is None:
            return "cascade: the network reads every document" + (
                temperature if report.get("validation_documents") else " (no validation texts to choose a cut on)"
            )
        scores = report["validation"]
        name = next(iter(scores["whole"]))
        return (
            f"cascade: the network reads {report['validation_share']:.1%} of validation documents "
            f"(those of margin under {report['cut']:.3g}); validation {name.replace('_', '-')} "
            f"{scores['cascade'][name]:.4f} against {scores['whole'][name]:.4f} with the network on all{temperature}"
        )
