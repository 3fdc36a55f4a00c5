"""A multi-label classifier's explanations: each label explained alone, against its threshold.

Mixed into `hierattn.explain.Explainer` (`LabelExplanations`): which labels
a text's explanations are for (`label_indices`), and one explanation per
text and label (`_explain_labels`), whose margin is the label's combined
log-odds over its threshold's, `a logit p_network(l) + b z_l - logit t_l`,
accounted for as the explainer's module docstring says.
"""

import numpy as np

from hierattn.errors import ArgumentError


class LabelExplanations:
    """The multi-label steps of `Explainer` (which sets `classifier`, `backbone` and `preprocessor`).

    Example:

    A tiny multi-label classifier, trained for the example; one explanation
    per label asked for, each adding up to that label's margin over its
    threshold:

    >>> import hierattn
    >>> from hierattn.explain import Explainer
    >>> texts = ["Wheat prices rose. So it goes.", "The bank cut rates. So it goes.", "Sun. Rain."] * 6
    >>> labels = [["grain"], ["money"], []] * 6
    >>> clf = hierattn.TextClassifier("han", multi_label=True, embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> explanations = Explainer(clf).explain(["Wheat and the bank. So it goes."], label=["grain", "money"])
    >>> [(e.label, e.threshold) for e in explanations]
    [('grain', 0.5), ('money', 0.5)]
    >>> e = explanations[0]
    >>> terms = ("network_baseline", "integration_error", "ngram_bias", "not_shown", "threshold_term")
    >>> total = sum(w.evidence for w in e.words) + sum(e.decision[t] for t in terms)
    >>> abs(total - e.decision["margin"]) < 1e-3
    True
    """

    def label_indices(self, label):
        """The positions among `label_names` of the labels `label` names (`None`: each text's predicted labels)."""
        if label is None or (not isinstance(label, str) and not len(label)):
            return None
        if not self.classifier.multi_label:
            raise ArgumentError(
                "{argument} chooses what a multi-label classifier explains; this classifier gives each text one "
                "class, explained against the runner-up",
                argument="label",
            )
        names = [str(name) for name in self.classifier.label_names]
        indices = []
        for name in [label] if isinstance(label, str) else list(label):
            if str(name) not in names:
                raise ArgumentError(
                    f"{{argument}} {str(name)!r} is not one of the classifier's labels ({', '.join(names)})",
                    argument="label",
                )
            if names.index(str(name)) not in indices:
                indices.append(names.index(str(name)))
        return indices

    def _explain_labels(
        self, chosen, texts, ids, labels, tokenized, x, outputs, network, ngram_parts, a, b, read, inputs
    ):
        """A multi-label classifier's explanations: one per text and label explained (see the module docstring)."""
        names = self.classifier.label_names
        thresholds = np.asarray(self.policy.default_thresholds, dtype=float)
        probabilities = outputs["probabilities"]
        over = self.policy.over_thresholds(probabilities)
        pairs = []  # (text, label) explained, text by text
        for i in range(len(texts)):
            if chosen is not None:
                explained = chosen
            else:
                explained = [int(j) for j in np.flatnonzero(over[i])] or [int(np.argmax(probabilities[i]))]
            pairs += [(i, j) for j in explained]
        rows, classes = np.array([i for i, _ in pairs]), np.array([j for _, j in pairs])
        evidence, baselines = self._network_evidence(x[rows], classes, classes, a, read[rows], odds=True)
        # Each label's temperature divides its log-odds (`hierattn.decision.Cascade`): every term of its margin.
        scales = self.policy.label_scales[classes]
        evidence = evidence * scales.reshape((-1,) + (1,) * (evidence.ndim - 1)).astype(evidence.dtype)
        baselines = baselines * scales.astype(baselines.dtype)
        explanations = []
        for k, (i, j) in enumerate(pairs):
            slots = self.preprocessor.slots(tokenized[i][0])
            outputs_i = {key: v[i] for key, v in outputs.items()}
            explanation = self._one(texts[i], *tokenized[i], slots, x[i], outputs_i, evidence[k], names[j])
            explanation.threshold = float(thresholds[j])
            explanation.predicted_labels = [names[m] for m in np.flatnonzero(over[i])]
            explanation.document = i
            ngrams = (inputs[i], ngram_parts[i][1:]) if ngram_parts is not None else None
            weight = a if read[i] else 0.0  # the network's weight in this text's decision
            weights = (float(weight * scales[k]), float(b * scales[k]))
            self._account(explanation, (j, None), *weights, network[i], float(baselines[k]), ngrams, thresholds[j])
            explanation.decision["network_read"] = bool(read[i])
            explanation.doc_id = None if ids is None else ids[i]
            explanation.true_label = None if labels is None else labels[i]
            explanations.append(explanation)
        return explanations


def logit(p, epsilon=1e-7):
    """`log p - log(1 - p)`, each clipped at `epsilon`, as `LogLinearCombination` reads a sigmoid's output."""
    return float(np.log(max(float(p), epsilon)) - np.log(max(1.0 - float(p), epsilon)))
