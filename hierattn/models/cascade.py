"""The cascade of a `TextClassifier`: the network reads only the documents its n-gram part is not sure of.

`hierattn.decision.Cascade` says how a document is decided given the cut;
here the cut is chosen on the validation texts (`choose_cut`, `hierattn.models.cut`), as the
n-gram part's weights are (`hierattn.models.part`), and the classifier's
`network` setting says whether it is used (`"auto"`) or the network reads
every document (`"always"`).
"""

import numpy as np

from hierattn.calibration import calibrated, calibration_report, choose_temperature, temperature_text
from hierattn.data.dataset import validation_pair
from hierattn.data.ids import ngram_ids
from hierattn.decision import Cascade, Decision, check_network, thresholds_at
from hierattn.defaults import CASCADE, MULTILABEL
from hierattn.models.cut import choose_cut
from hierattn.ngrams.mixing import ngram_logits


def _whole_temperatures(probabilities, labels, read):
    """The whole combination's temperatures (`choose_temperature`): for the documents the network reads; for all.

    Where the documents read are too few to fit one on, they take every
    document's (if it was kept); where they are enough but show none that
    helps on held-out folds, they keep 1: every document's was not checked
    on them.

    Returns:
        `({"temperature", "temperature_always"}, notes)`: the notes of each, as `choose_temperature` gives them.
    """
    every, every_note = choose_temperature(probabilities, labels)
    if read.all():
        return {"temperature": every, "temperature_always": every}, {"temperature": every_note}
    found, note = choose_temperature(probabilities[read], labels[read])
    if note["fitted"] is None and every_note["kept"]:  # too few to fit one on: every document's
        found, note = every, dict(note, used="every validation document's")
    return {"temperature": found, "temperature_always": every}, {"temperature": note, "temperature_always": every_note}


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
    >>> sorted(clf.cascade_report)[:3]
    ['calibration', 'cut', 'measured_share']
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
        """Chooses the cascade's cut on validation texts (`fit`'s last step; `hierattn.models.cut.choose_cut`).

        Without validation texts there is no cut: the network reads every
        document. `cascade_report` then holds what was chosen and measured,
        and, for a single-label classifier, `ngram_scale`, the scale of the
        n-gram logits for the documents the n-gram part decides alone
        (`ngram_scale` of this module), and the whole combination's
        temperatures (`hierattn.calibration.choose_temperature`, 1 unless
        held-out folds show one helps): `temperature` on the validation
        documents the network reads (every document's where they are too
        few to fit one on), and `temperature_always` on all of them (with
        `network="always"`), with `calibration`, what each note says; then,
        with `decision_metric="macro_f1"`, the offsets again
        (`choose_offsets`), on these probabilities. A multi-label
        classifier's temperatures are one per label, chosen on the
        cascade's probabilities of every validation document (the same for
        both settings), and its thresholds move with them
        (`hierattn.decision.Cascade`): no decision changes.

        Args:
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset of
                `(texts, labels)`, or None.
            verbose: Print two lines (`cascade_line`): the share of validation documents the network read and
                the scores, and the temperature kept.
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
            temperature, note = choose_temperature(found, labels, True)
            temperatures = dict.fromkeys(("temperature", "temperature_always"), temperature)
            notes = {"temperature": note}
            raw = self.thresholds or [MULTILABEL["threshold"]] * len(self.label_names)
            self.thresholds = thresholds_at(raw, temperatures["temperature"])
        else:  # the whole combination's temperatures: for the documents the network reads; for all
            read = np.ones(len(margins), bool) if cut is None else margins < cut
            read = read if read.any() else np.ones(len(margins), bool)
            temperatures, notes = _whole_temperatures(probabilities, labels, read)
        self.cascade_report = dict(report, ngram_scale=scale, calibration=notes, **temperatures)
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
        """What `choose_cut` chose: a line on the cut (the share of validation documents the network read, and
        the scores), and one on the temperature (what was kept, and why when it is 1 or taken from elsewhere)."""
        report = self.cascade_report or {}
        if not report.get("validation_documents"):
            return "cascade: the network reads every document (no validation texts to choose a cut on)"
        return "\n".join(line for line in (_cut_line(report), _temperature_line(report)) if line)


def _cut_line(report):
    """`cascade_line`'s line on the cut."""
    documents = report["validation_documents"]
    if report.get("cut") is None:
        line = f"cascade: the network reads every document (chosen on {documents:,} validation documents"
        if report.get("measured_share", 1.0) < 1.0:  # the bound, not the measured scores, kept the network on all
            line += (
                f", too few to show that skipping it costs under {100 * report['tolerance']:.2g} points; "
                f"as measured alone, it would read {report['measured_share']:.1%}"
            )
        return line + ")"
    scores = report["validation"]
    name = next(iter(scores["whole"]))
    bounded = report.get("measured_share", report["validation_share"]) < report["validation_share"]
    return (
        f"cascade: the network reads {report['validation_share']:.1%} of {documents:,} validation documents "
        f"(those of margin under {report['cut']:.3g}"
        + (f"; as measured alone, it would read {report['measured_share']:.1%}" if bounded else "")
        + f"); validation {name.replace('_', '-')} {scores['cascade'][name]:.4f} against "
        f"{scores['whole'][name]:.4f} with the network on all"
    )


def _temperature_line(report):
    """`cascade_line`'s line on the whole combination's temperature (per label: a multi-label classifier's)."""
    if "temperature" not in report:
        return ""
    note = (report.get("calibration") or {}).get("temperature")
    line = f"calibration: the whole combination's temperature {temperature_text(report['temperature'])}"
    if note is None:  # a classifier fitted before the temperatures were checked
        return line
    if "labels_kept" in note:
        line += f" ({note['labels_kept']} labels kept one, on {note['documents']:,} validation documents"
        if note["labels_too_few"] or note["labels_no_gain"]:
            line += (
                f"; 1 for {note['labels_too_few']} with too few positive or negative documents, and for "
                f"{note['labels_no_gain']} where one did not help held-out folds"
            )
        return line + ")"
    read = note["documents"] < report.get("validation_documents", note["documents"])
    whose = "validation documents the network reads" if read else "validation documents"
    if note["kept"]:
        before, after = note["held_out_ece"]
        return line + (
            f" (fitted on {note['documents']:,} {whose}; cross-fitted, it lowered their log-loss by "
            f"{note['held_out_gain']:.4f} and their calibration error from {before:.2%} to {after:.2%})"
        )
    if note.get("used"):
        return (
            line + f" (every validation document's: the {note['documents']:,} the network reads are {note['reason']})"
        )
    if note.get("fitted"):
        return line + (
            f" (on {note['documents']:,} {whose}, one fitted at {note['fitted']:.3g} did not lower both "
            "the held-out folds' log-loss, by more than its standard error, and their calibration error)"
        )
    return line + f" (on {note['documents']:,} {whose}: {note['reason']})"
