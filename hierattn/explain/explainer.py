"""The explainer: each word's evidence for the decision, and where the network read.

Which weights are used, and why:

* HAN: a word's importance is its word-attention weight (within its sentence)
  times its sentence's sentence-attention weight, so the importances of all
  words of a document sum to 1, as in the HAN paper's visualisations.
* Transformer and recurrent models: the weights of their attention pooling
  over the words (`ContextAttention`, Bahdanau or Luong), which is the
  distribution the classifier's input is averaged with; they sum to 1 over the
  document's words. (The Transformer's self-attention maps mix positions
  before that and are not used.)

The decision is the margin of the predicted class `c` over the runner-up
`r` (for two classes: the log-odds). A classifier with an n-gram part
(`TextClassifier(ngrams=True)`, the default) decides by `softmax(a log
p_network + b z)`, `z` being the logits of a linear model over the
document's word n-grams, so its margin is the network's term `a (log
p_network(c) - log p_network(r))` plus the n-gram part's bias term plus one
exact linear contribution per distinct n-gram (`Explanation.ngrams`);
without one, `a = 1`, `b = 0`. Every word's evidence (`WordWeight.evidence`)
is its share of that margin:

* the network's share: integrated gradients of the network's term on the
  word's embedding, from the padding embedding (Sundararajan et al. 2017;
  `hierattn.explain.attributions.integrated_gradients`), whose words' terms
  sum to the network's term minus its value at that all-padding baseline;
* the n-gram part's share: each n-gram's contribution spread evenly over the
  tokens of its occurrences.

With the constant terms of `Explanation.decision` (the network's baseline
value, the quadrature's integration error, the n-gram bias and the share of
words beyond what is shown) the words' evidence adds up exactly to the
margin. The attention weights say where the network read; they are not
evidence.

Words that fall beyond the model's limits (`max_sentences`, `max_words`,
`sequence_length`) get no weight and are reported as cut. An explanation
lists the text up to twice those limits (`hierattn.defaults.EXPLAIN_SHOWN`)
and summarises the rest in one note, so any text is explained in bounded
time and output.

A multi-label classifier (`TextClassifier(multi_label=True)`) predicts
each label alone, when its probability `sigmoid(s_l)` is over its threshold
`t_l`, `s_l = a logit p_network(l) + b z_l` (`logit p = log p - log(1 -
p)`, each clipped at 1e-7). Each label is explained alone (one
`Explanation` per text and label, `Explanation.threshold` set): its margin
is `s_l - logit t_l`, positive when the label is predicted; the network's
term `a logit p_network(l)` is integrated as above (the log-odds of one
sigmoid output), the n-gram part's contributions and bias are label `l`'s,
and the threshold's `-logit t_l` is one more constant term
(`Explanation.decision["threshold_term"]`). Attention does not depend on
the label. By default each predicted label is explained (none predicted:
the most probable label); `label` names the labels to explain instead.
"""

import numpy as np

from hierattn.data.ids import token_ids
from hierattn.data.vocabulary import OOV
from hierattn.defaults import EVIDENCE
from hierattn.defaults import EXPLAIN_SHOWN as SHOWN
from hierattn.errors import HierattnError
from hierattn.explain.attributions import integrated_gradients
from hierattn.explain.explanation import Explanation, WordWeight, sentence_row
from hierattn.explain.labels import LabelExplanations, logit
from hierattn.explain.ngram_evidence import NgramEvidence
from hierattn.kinds import MULTI, SINGLE
from hierattn.ngrams.twin import contributions


class Explainer(NgramEvidence, LabelExplanations):
    """Explains a classifier's predictions.

    Args:
        classifier: A trained `TextClassifier`, or a `Run` holding one.
        policy: The `DecisionPolicy` whose decisions are explained (None: the classifier's `policy`, as it is
            at each call), e.g. `classifier.policy.for_network("always")`.

    Example:

    A tiny classifier, trained for the example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> explanation = Explainer(clf).explain(["A great film. The plot was dull."])[0]
    >>> explanation.label in clf.label_names
    True
    >>> [(word.text, word.sentence) for word in explanation.words]
    [('A', 0), ('great', 0), ('film', 0), ('The', 1), ('plot', 1), ('was', 1), ('dull', 1)]
    >>> round(sum(word.weight for word in explanation.words), 3)   # word weights x sentence weights
    1.0
    """

    def __init__(self, classifier, policy=None):
        self.classifier = getattr(classifier, "classifier", classifier)
        self._policy = policy
        self.backbone = self.classifier.backbone
        self.preprocessor = self.classifier.preprocessor
        if not self.backbone.attention_layers:
            raise HierattnError("this model has no attention pooling to explain (e.g. a Transformer with mean pooling)")

    @property
    def policy(self):
        """The `DecisionPolicy` explained: the one given, else the classifier's."""
        return self._policy or self.classifier.policy

    def explain(self, texts, ids=None, labels=None, label=None, attention=False):
        """Explanations for raw texts, in order.

        Every word gets its evidence (`WordWeight.evidence`): its signed share of the margin of the predicted
        class over the runner-up, which with the named constant terms of `Explanation.decision` adds up to that
        margin exactly (see the module docstring). A multi-label classifier's texts get one explanation per
        label explained, text by text (`Explanation.document`: the text's place in `texts`): each predicted
        label's (none predicted: the most probable label's), or those of `label`.

        Args:
            texts: Raw texts.
            ids: Optional document ids, shown with the explanations.
            labels: Optional true labels, shown beside the prediction.
            label: A multi-label classifier's label to explain in every
                text, or a list of them (default: each text's predicted
                labels).
            attention: Where the network would read also in the texts the
                n-gram part decided alone (one more pass of the network;
                by default only the texts it decides get attention).

        Raises:
            HierattnError: An empty or whitespace-only text, or one without
                words (only markup or symbols).
            ArgumentError: A `label` the classifier does not have, or one
                given to a classifier that is not multi-label.
        """
        chosen = self.label_indices(label)
        texts = list(texts)
        if not texts:
            return []
        tokenized = self._tokenized(texts)
        # Encode the forms just tokenized instead of tokenizing every text again.
        documents = [[[token.form for token in sentence] for sentence in sentences] for sentences, _ in tokenized]
        x = token_ids(self.preprocessor.encode_tokens(documents))
        ngram_parts, a, b, read = None, 1.0, 0.0, np.ones(len(texts), bool)
        if self.classifier.ngram_logits is not None:
            # The n-gram layer's own logits, feature ids and exact contributions, one document at a time, on
            # what it reads: the whole text (up to the preprocessor's `ngram_length`), or the network's ids.
            layer = self.classifier.ngram_logits
            ngram_inputs = [self._ngram_input(text, x[i], tokenized[i][0]) for i, text in enumerate(texts)]
            ngram_parts = [[v[0] for v in contributions(layer, ids[None])] for ids, _, _ in ngram_inputs]
            # the weights of a text the network reads, at the combination's temperature (`DecisionPolicy`)
            a, b = self.policy.weights_at_temperature
            logits = np.stack([p[0] for p in ngram_parts])
            read = self.policy.needs_network(logits)  # all but those the n-gram part is sure of (`cascade`)
        # Where the network read, and its own probabilities: one pass over the texts it decides (all with
        # `attention`); the others get no attention and NaN probabilities.
        outputs = self._attention(x, read | attention)
        network_probabilities = outputs["probabilities"]
        if ngram_parts is not None:  # the classifier's probabilities, as `predict` gives them from the same parts
            whole = self.policy.combine(network_probabilities, logits)
            outputs["probabilities"] = self.policy.probabilities(logits, whole)
        explain = {SINGLE: self._explain_classes, MULTI: self._explain_labels}[self.policy.kind]
        explained = (texts, ids, labels, tokenized, x, outputs, network_probabilities, ngram_parts, a, b, read)
        return explain(chosen, *explained, ngram_inputs if ngram_parts is not None else None)

    def _explain_classes(
        self, chosen, texts, ids, labels, tokenized, x, outputs, network, ngram_parts, a, b, read, inputs
    ):
        """A single-label classifier's explanations: the class decided against the runner-up, one per text."""
        # The prediction and the runner-up of each text, and the network's share of the margin between them.
        order = self.policy.decided_order(outputs["probabilities"])
        versus = order[:, min(1, order.shape[1] - 1)]
        evidence, baselines = self._network_evidence(x, order[:, 0], versus, a, read)
        names = self.classifier.label_names
        explanations = []
        for i in range(len(texts)):
            slots = self.preprocessor.slots(tokenized[i][0])
            outputs_i = {k: v[i] for k, v in outputs.items()}
            explanation = self._one(
                texts[i], *tokenized[i], slots, x[i], outputs_i, evidence[i], names[int(order[i, 0])]
            )
            ngrams = (inputs[i], ngram_parts[i][1:]) if ngram_parts is not None else None
            classes = int(order[i, 0]), int(versus[i])
            # the weights in this text's decision: the combination's, or the n-gram part's own scale alone
            weights = (a, b) if read[i] else (0.0, self.policy.cascade.ngram_scale)
            self._account(explanation, classes, *weights, network[i], float(baselines[i]), ngrams)
            self._offset_term(explanation, self.policy.offset_term(*classes))
            explanation.decision["network_read"] = bool(read[i])
            if read[i]:  # the weights above are the combination's divided by its temperature, if any
                explanation.decision.update(self.policy.temperature_entries())
            explanation.doc_id = None if ids is None else ids[i]
            explanation.true_label = None if labels is None else labels[i]
            explanations.append(explanation)
        return explanations

    @staticmethod
    def _offset_term(explanation, term):
        """A decision rule's offsets (the class's less the runner-up's): a constant term of the margin, if any."""
        if term is not None:
            explanation.decision.update(offset_term=term, margin=explanation.decision["margin"] + term)

    def _attention(self, x, needed):
        """`TextClassifier.attention` of the texts `needed`; zero weights and NaN probabilities for the others."""
        if needed.all():
            return self.classifier.attention(x)
        outputs = {"probabilities": np.full((len(x), len(self.classifier.label_names)), np.nan, np.float32)}
        if needed.any():
            for key, value in self.classifier.attention(x[needed]).items():
                outputs.setdefault(key, np.zeros((len(x),) + value.shape[1:], value.dtype))[needed] = value
        return outputs

    def _network_evidence(self, x, classes, versus, a, read, odds=False):
        """Each token's share of the network's term, and its baseline, for the texts it decides (0 for the others)."""
        evidence, baselines = np.zeros(x.shape, np.float32), np.zeros(len(x), np.float32)
        if a != 0.0 and read.any():  # without weight, the network's share of every word's evidence is 0
            found, _, at_baseline = integrated_gradients(
                self.backbone, x[read], classes[read], versus[read], a, odds=odds, **EVIDENCE
            )
            evidence[read], baselines[read] = found, at_baseline
        return evidence, baselines

    def _tokenized(self, texts):
        """Each text's sentences of tokens and their spans; an empty text, or one without words, refused."""
        # Twice what the model reads is shown (the words beyond its limits marked as not read); the rest of a
        # longer text is summarised in a note (`Explanation.unshown_characters`), so the work is bounded.
        limits = self.preprocessor.shown_limits(SHOWN)
        tokenized = []
        for i, text in enumerate(texts):
            which = f" (text {i + 1})" if len(texts) > 1 else ""
            if not text or not str(text).strip():
                raise HierattnError(f"cannot explain an empty text{which}")
            tokenized.append(self.preprocessor.tokenizer.tokenize(text, return_spans=True, **limits))
            if not tokenized[-1][0]:
                raise HierattnError(f"cannot explain a text without words (only markup or symbols){which}")
        return tokenized

    def _one(self, text, sentences, spans, slots, ids, outputs, evidence, label):
        """The explanation of `label` in one text: its words, sentences and notes (the decision's account: `_account`)."""
        names = self.classifier.label_names
        probabilities = np.asarray(outputs["probabilities"], dtype=float)
        if len(outputs) > 1:
            word_w = np.asarray(self.backbone.word_attention(outputs), dtype=float)
            sentence_w = self.backbone.sentence_attention(outputs)
        else:  # no pass of the network over this text (the n-gram part decided it): no attention
            word_w, sentence_w = np.zeros(ids.shape), np.zeros(ids.shape[:-1]) if ids.ndim > 1 else None
        vocabulary = self.preprocessor.vocabulary
        tokens = [t for sentence in sentences for t in sentence]
        rows = {}  # sentence -> its row of ids, for the sentences the network reads
        for token, slot in zip(tokens, slots):
            if slot is not None:
                rows.setdefault(token.sentence, slot[:-1])
        # A token's sentence weight: its sentence's, where the network weighs sentences, else 1.
        row_weight = {s: float(sentence_w[row]) for s, row in rows.items()} if sentence_w is not None else None
        words = []
        for token, slot in zip(tokens, slots):
            used = slot is not None
            w = float(word_w[slot]) if used else 0.0
            s_weight = 1.0 if row_weight is None else row_weight.get(token.sentence, 0.0)
            oov = bool(ids[slot] == OOV) if used else vocabulary.lookup(token.form) == OOV
            words.append(
                WordWeight.of_token(
                    token,
                    w * s_weight,
                    w,
                    s_weight,
                    oov,
                    used,
                    float(evidence[slot]) if used else 0.0,
                )
            )
        sentence_rows = []
        for s in range(len(sentences)):
            if row_weight is None:
                weight = sum(w.weight for w in words if w.sentence == s)
            else:
                weight = row_weight.get(s, 0.0)
            sentence_rows.append(sentence_row(text, s, spans[s], weight, s in rows))
        warnings = []
        unread = sum(not w.used for w in words)  # the words shown that the network does not read
        unshown = 0  # the characters after the last shown sentence, if a word follows (not only markup or spaces)
        if spans and self.preprocessor.tokenizer.tokenize(text[spans[-1][1] :], max_tokens=1):
            unshown = len(text.rstrip()) - spans[-1][1]
        if unread or unshown > 0:
            warnings.append(
                "the text is longer than the model's limits: "
                + ", and ".join(
                    ([f"{unread:,} of the {len(words):,} words shown were not read by the network"] if unread else [])
                    + (
                        [
                            (
                                f"the {unshown:,} characters after character {spans[-1][1]:,} are not shown "
                                "(not read by the network; the n-gram part, if any, reads them)"
                            )
                        ]
                        if unshown > 0
                        else []
                    )
                )
            )
        if words and all(w.oov for w in words if w.used):
            warnings.append("none of the words is in the model's vocabulary; the prediction is uninformed")
        return Explanation(
            text=text,
            label=label,
            probabilities={str(n): float(p) for n, p in zip(names, probabilities)},
            words=words,
            sentences=sentence_rows,
            cut_words=unread,
            warnings=warnings,
            unshown_characters=max(unshown, 0),
        )

    def _account(self, explanation, classes, a, b, network_probabilities, baseline, ngrams=None, threshold=None):
        """Adds the decision's exact account to `explanation`, and the n-gram part's share to each word's evidence.

        On entry each word's evidence is the network's (integrated
        gradients of the margin of `classes`, the prediction and the
        runner-up; `baseline` the network's term at the all-padding input).
        `ngrams`, for a classifier with an n-gram part, is `((ids, tokens,
        slots), (feature_ids, contributions))`: what the n-gram part reads
        (`_ngram_input`: each token's slot in `ids` and whether the network
        reads it) and the layer's own feature ids `(k,)` and contributions
        `(k, classes)` (`NgramLogits(..., return_contributions=True)`, in NumPy: `hierattn.ngrams.twin`).

        With a `threshold` (a multi-label classifier's, of label `c`; `r`
        is then `None`), the margin is label `c`'s log-odds over it: the
        network's term is `a logit p_network(c)`, the n-gram part's are
        label `c`'s alone, and `-logit threshold` is a constant term.
        """
        names = self.classifier.label_names
        c, r = classes
        if threshold is None:
            log_p = np.log(max(network_probabilities[c], 1e-7)) - np.log(max(network_probabilities[r], 1e-7))
        else:
            log_p = logit(network_probabilities[c])
        network = a * float(log_p) if a else 0.0  # without the network's pass, its probabilities are NaN
        ngram_list, ngram_bias, unshown = [], 0.0, 0.0
        if ngrams is not None:
            (ids, tokens, slots), (feature_ids, contributions) = ngrams
            bias = np.asarray(self.classifier.ngram_logits.bias)
            if threshold is None:
                contributions, ngram_bias = contributions[:, c] - contributions[:, r], float(b * (bias[c] - bias[r]))
            else:
                contributions, ngram_bias = contributions[:, c], float(b * bias[c])
            ngram_list, unshown = self._ngram_evidence(explanation, ids, tokens, slots, feature_ids, b * contributions)
            explanation.network_probabilities = (
                None  # the network made no pass over the text
                if np.isnan(network_probabilities).any()
                else {str(n): float(p) for n, p in zip(names, network_probabilities)}
            )
            explanation.ngrams = ngram_list
            # Words the n-gram part reads inside the shown text that the explanation leaves out (the ends of
            # sentences longer than twice the network's limit): said, not dropped in silence.
            shown = {w.start for w in explanation.words}
            end = explanation.sentences[-1]["end"] if explanation.sentences else 0
            inside = sum(t.start < end and t.start not in shown for t in tokens)
            if inside:
                explanation.warnings.append(
                    f"{inside:,} words at the ends of sentences longer than shown are left out of the words "
                    "listed (the n-gram part reads them: their evidence is in the constant term for words not shown)"
                )
        ngram_total = float(sum(g.contribution for g in ngram_list))
        # What the quadrature leaves of the network's term: named, so that the account adds up exactly.
        residual = network - baseline - sum(w.network_evidence for w in explanation.words)
        threshold_term = 0.0 if threshold is None else 0.0 - logit(threshold)  # never -0.0
        explanation.decision = {
            "versus": None if r is None else names[r],
            "margin": network + ngram_bias + ngram_total + threshold_term,
            "network": network,
            "ngram_bias": ngram_bias,
            "ngrams": ngram_total,
            "network_weight": a,
            "ngram_weight": b,
            "network_baseline": baseline,
            "integration_error": residual,
            "not_shown": unshown,
        }
        if threshold is not None:  # a multi-label classifier's label: its log-odds over its threshold
            explanation.decision.update(threshold=float(threshold), threshold_term=threshold_term)
        if ngrams is not None and a == 0.0:
            explanation.warnings.append(self._ngrams_alone_note())
