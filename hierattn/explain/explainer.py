"""The explainer: which words and sentences a trained model attended to.

Which weights are used, and why:

* HAN: a word's importance is its word-attention weight (within its sentence)
  times its sentence's sentence-attention weight, so the importances of all
  words of a document sum to 1, as in the HAN paper's visualisations.
* Transformer and recurrent models: the weights of their attention pooling
  over the words (`ContextAttention`, Bahdanau or Luong), which is the
  distribution the classifier's input is averaged with; they sum to 1 over the
  document's words. (The Transformer's self-attention maps mix positions
  before that and are not used.)

A classifier with an n-gram part (`TextClassifier(ngrams=True)`, the
default) decides by `softmax(a log p_network + b z)`, `z` being the logits of
a linear model over the document's word n-grams. Its explanation also
accounts for the whole decision exactly (`Explanation.decision`): the score
margin of the predicted class over the runner-up is the sum of the
network's term `a (log p_network(c) - log p_network(r))`, the n-gram part's
bias term and one exact linear contribution per distinct n-gram of the
document (`Explanation.ngrams`). The attention weights explain the
network's term only.

Words that fall beyond the model's limits (`max_sentences`, `max_words`,
`max_len`) get no weight and are reported as cut. An explanation lists the
text up to twice those limits (`hierattn.defaults.EXPLAIN_SHOWN`) and
summarises the rest in one note, so any text is explained in bounded time
and output.
"""

import numpy as np

from hierattn.data.encoding import kept_positions
from hierattn.data.vocabulary import OOV
from hierattn.defaults import EXPLAIN_SHOWN as SHOWN
from hierattn.errors import HierattnError
from hierattn.explain.attributions import gradient_times_input, importance
from hierattn.explain.explanation import Explanation, NgramContribution, WordWeight
from hierattn.inference import batched_outputs
from hierattn.ngrams import combine


class Explainer:
    """Explains a classifier's predictions.

    Args:
        classifier: A trained `TextClassifier`, or a `Run` holding one.
    """

    def __init__(self, classifier):
        from hierattn.models import attention_outputs  # imports Keras, which the CLI loads only when needed

        self.classifier = getattr(classifier, "classifier", classifier)
        self.model = attention_outputs(self.classifier.backbone)
        self.hierarchical = self.classifier.preprocessor.mode == "hierarchical"
        if len(self.model.outputs) == 1:
            raise HierattnError("this model has no attention pooling to explain (e.g. a Transformer with mean pooling)")

    def explain(self, texts, ids=None, labels=None, signed=False):
        """Explanations for raw texts, in order.

        Args:
            texts: Raw texts.
            ids: Optional document ids, shown with the explanations.
            labels: Optional true labels, shown beside the prediction.
            signed: Also give every word its evidence for the predicted class
                (`WordWeight.evidence`): gradient x input, positive for words
                that support the prediction and negative for words against it
                (as LIME and Captum show both), which attention weights, all
                positive, cannot.

        Raises:
            HierattnError: An empty or whitespace-only text.
        """
        texts = list(texts)
        if not texts:
            return []
        for i, text in enumerate(texts):
            if not text or not str(text).strip():
                raise HierattnError("cannot explain an empty text" + (f" (text {i + 1})" if len(texts) > 1 else ""))
        encoder = self.classifier.preprocessor.encoder
        tokenized = [encoder.tokenizer.tokenize(t, return_spans=True, **self._shown_limits(encoder)) for t in texts]
        # Encode the forms just tokenized instead of tokenizing every text again.
        documents = [[[token.form for token in sentence] for sentence in sentences] for sentences, _ in tokenized]
        x = encoder.encode(mode=self.classifier.preprocessor.mode, documents=documents)
        outputs = batched_outputs(self.model, x)
        ngram_parts = network_probabilities = None
        if self.classifier.ngram_logits is not None:
            # The layer's own logits, feature ids and exact contributions, one document at a time.
            layer = self.classifier.ngram_logits
            ngram_parts = [[np.asarray(v)[0] for v in layer(x[i:i + 1], return_contributions=True)]
                           for i in range(len(x))]
            a, b = (float(v) for v in np.asarray(self.classifier.combination.mixing))
            network_probabilities = outputs["probabilities"]
            outputs["probabilities"] = combine(network_probabilities, np.stack([p[0] for p in ngram_parts]), a, b)
        evidence = None
        if signed:
            evidence = gradient_times_input(self.classifier.backbone, x, outputs["probabilities"].argmax(1))
        explanations = []
        for i in range(len(texts)):
            explanation = self._one(encoder, texts[i], *tokenized[i], x[i], {k: v[i] for k, v in outputs.items()},
                                    None if evidence is None else evidence[i])
            if ngram_parts is not None:
                self._account(explanation, x[i], tokenized[i][0], encoder, a, b, network_probabilities[i],
                              *ngram_parts[i][1:])
            explanation.doc_id = None if ids is None else ids[i]
            explanation.true_label = None if labels is None else labels[i]
            explanations.append(explanation)
        return explanations

    def _shown_limits(self, encoder):
        """How much of a text an explanation shows: twice what the model reads, so the work and output are bounded.

        The words the model read and those just beyond its limits are shown
        (marked as not read); the rest of a longer text is summarised in a
        note (`Explanation.unshown_characters`), not listed.
        """
        if self.hierarchical:
            return {"max_sentences": SHOWN * encoder.max_sentences, "max_words": SHOWN * encoder.max_words}
        return {"max_tokens": SHOWN * encoder.max_len if encoder.truncating == "post" else None}

    def _one(self, encoder, text, sentences, spans, ids, outputs, evidence=None):
        names = self.classifier.label_names
        probabilities = np.asarray(outputs["probabilities"], dtype=float)
        words, sentence_rows = [], []
        if self.hierarchical:
            word_w = np.asarray(outputs["word_attention"], dtype=float)
            sentence_w = np.asarray(outputs["sentence_attention"], dtype=float)
            for s, sentence in enumerate(sentences):
                in_model = s < encoder.max_sentences
                s_weight = float(sentence_w[s]) if in_model else 0.0
                for token in sentence:
                    used = in_model and token.index < encoder.max_words
                    w = float(word_w[s, token.index]) if used else 0.0
                    oov = bool(ids[s, token.index] == OOV) if used else encoder.vocabulary.lookup(token.form) == OOV
                    words.append(self._word(token, w * s_weight, w, s_weight, oov, used,
                                            evidence[s, token.index] if used and evidence is not None else None))
                sentence_rows.append(self._sentence(text, s, spans[s], s_weight, in_model))
        else:
            weights = importance(outputs, hierarchical=False).astype(float)
            flat = [t for sentence in sentences for t in sentence]
            slots = {p: i for i, p in enumerate(kept_positions(len(flat), encoder.max_len, encoder.truncating))}
            for position, token in enumerate(flat):
                slot = slots.get(position, -1)
                used = slot >= 0
                w = float(weights[slot]) if used else 0.0
                oov = bool(ids[slot] == OOV) if used else encoder.vocabulary.lookup(token.form) == OOV
                words.append(self._word(token, w, w, 1.0, oov, used,
                                        evidence[slot] if used and evidence is not None else None))
            for s in range(len(sentences)):
                total = sum(w.weight for w in words if w.sentence == s)
                sentence_rows.append(self._sentence(text, s, spans[s], total, any(w.used for w in words if w.sentence == s)))
        warnings = []
        cut = sum(not w.used for w in words)
        unshown = 0  # the characters after the last shown sentence, if a word follows (not only markup or spaces)
        if spans and encoder.tokenizer.tokenize(text[spans[-1][1]:], max_tokens=1):
            unshown = len(text.rstrip()) - spans[-1][1]
        if cut or unshown > 0:
            warnings.append("the text is longer than the model's limits: " + ", and ".join(
                ([f"{cut:,} of the {len(words):,} words shown were not read"] if cut else []) +
                ([f"the {unshown:,} characters after character {spans[-1][1]:,} are not shown (not read)"]
                 if unshown > 0 else [])))
        if words and all(w.oov for w in words if w.used):
            warnings.append("none of the words is in the model's vocabulary; the prediction is uninformed")
        best = int(probabilities.argmax())
        return Explanation(
            text=text,
            label=names[best],
            probabilities={str(n): float(p) for n, p in zip(names, probabilities)},
            words=words,
            sentences=sentence_rows,
            cut_words=cut,
            warnings=warnings,
            unshown_characters=max(unshown, 0),
        )

    def _account(self, explanation, ids, sentences, encoder, a, b, network_probabilities, feature_ids,
                 contributions):
        """Adds the exact decision account of a classifier with an n-gram part to `explanation`.

        `feature_ids` `(k,)` and `contributions` `(k, classes)` are the n-gram
        layer's own (`NgramLogits(..., return_contributions=True)`).
        """
        layer = self.classifier.ngram_logits
        names = self.classifier.label_names
        order = np.argsort([-explanation.probabilities[str(n)] for n in names], kind="stable")
        c, r = int(order[0]), int(order[min(1, len(order) - 1)])  # the prediction and the runner-up
        # Which token sits at each (row, position) of the ids: rows are sentences (HAN) or the document.
        if self.hierarchical:
            slots = {(s, t.index): t for s, sentence in enumerate(sentences[:encoder.max_sentences])
                     for t in sentence if t.index < encoder.max_words}
        else:
            flat = [t for sentence in sentences for t in sentence]
            slots = {(0, slot): flat[p] for slot, p in
                     enumerate(kept_positions(len(flat), encoder.max_len, encoder.truncating))}
        first = {}  # feature id -> (row, position, n) of its first occurrence
        for n, positions in enumerate(layer.ngram_features(ids[None]), start=1):
            positions = np.asarray(positions)
            for row, t in zip(*np.nonzero(positions >= 0)):
                first.setdefault(int(positions[row, t]), (int(row), int(t), n))
        ngrams = []
        for feature, contribution in zip(feature_ids, b * (contributions[:, c] - contributions[:, r])):
            if feature < 0:
                continue
            row, t, n = first[int(feature)]
            tokens = [slots[(row, t + j)] for j in range(n)]
            start, end = tokens[0].start, tokens[-1].end
            ngrams.append(NgramContribution(explanation.text[start:end], tokens[0].sentence, start, end,
                                            float(contribution)))
        bias = np.asarray(layer.bias)
        network = a * float(np.log(max(network_probabilities[c], 1e-7)) - np.log(max(network_probabilities[r], 1e-7)))
        ngram_bias = float(b * (bias[c] - bias[r]))
        ngram_total = float(sum(g.contribution for g in ngrams))
        explanation.network_probabilities = {str(n): float(p) for n, p in zip(names, network_probabilities)}
        explanation.ngrams = ngrams
        explanation.decision = {
            "versus": names[r],
            "margin": network + ngram_bias + ngram_total,
            "network": network,
            "ngram_bias": ngram_bias,
            "ngrams": ngram_total,
            "network_weight": a,
            "ngram_weight": b,
        }
        if a == 0.0:
            explanation.warnings.append("the network has no weight in this classifier (the weights chosen on its "
                                        "validation texts): the attention weights do not move its decisions; the "
                                        "n-gram contributions account for them")

    @staticmethod
    def _word(token, weight, word_weight, sentence_weight, oov, used, evidence=None):
        return WordWeight(token.text, token.form, token.sentence, token.index, token.start, token.end, weight,
                          word_weight, sentence_weight, oov, used, None if evidence is None else float(evidence))

    @staticmethod
    def _sentence(text, index, span, weight, used):
        start, end = span
        return {"index": index, "start": start, "end": end, "text": text[start:end], "weight": float(weight),
                "used": bool(used)}
