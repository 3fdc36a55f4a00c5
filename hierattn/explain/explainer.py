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
`sequence_length`) get no weight and are reported as cut. An explanation
lists the text up to twice those limits (`hierattn.defaults.EXPLAIN_SHOWN`)
and summarises the rest in one note, so any text is explained in bounded
time and output.
"""

import numpy as np

from hierattn.data.ids import token_ids
from hierattn.data.vocabulary import OOV
from hierattn.defaults import EXPLAIN_SHOWN as SHOWN
from hierattn.errors import HierattnError
from hierattn.explain.attributions import gradient_times_input
from hierattn.explain.explanation import Explanation, NgramContribution, WordWeight
from hierattn.ngrams import combine


class Explainer:
    """Explains a classifier's predictions.

    Args:
        classifier: A trained `TextClassifier`, or a `Run` holding one.

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

    def __init__(self, classifier):
        self.classifier = getattr(classifier, "classifier", classifier)
        self.backbone = self.classifier.backbone
        self.preprocessor = self.classifier.preprocessor
        if not self.backbone.attention_layers:
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
        # Twice what the model reads is shown (the words beyond its limits marked as not read); the rest of a
        # longer text is summarised in a note (`Explanation.unshown_characters`), so the work is bounded.
        limits = self.preprocessor.shown_limits(SHOWN)
        tokenized = [self.preprocessor.tokenizer.tokenize(t, return_spans=True, **limits) for t in texts]
        # Encode the forms just tokenized instead of tokenizing every text again.
        documents = [[[token.form for token in sentence] for sentence in sentences] for sentences, _ in tokenized]
        x = token_ids(self.preprocessor.encode_tokens(documents))
        outputs = self.classifier.attention(x)
        ngram_parts = network_probabilities = None
        if self.classifier.ngram_logits is not None:
            # The n-gram layer's own logits, feature ids and exact contributions, one document at a time, on
            # what it reads: the whole text (up to the preprocessor's `ngram_length`), or the network's ids.
            layer = self.classifier.ngram_logits
            ngram_inputs = [self._ngram_input(text, x[i], tokenized[i][0]) for i, text in enumerate(texts)]
            ngram_parts = [
                [np.asarray(v)[0] for v in layer(ids[None], return_contributions=True)] for ids, _, _ in ngram_inputs
            ]
            a, b = (float(v) for v in np.asarray(self.classifier.combination.mixing))
            network_probabilities = outputs["probabilities"]
            outputs["probabilities"] = combine(network_probabilities, np.stack([p[0] for p in ngram_parts]), a, b)
        evidence = None
        if signed:
            evidence = gradient_times_input(self.classifier.backbone, x, outputs["probabilities"].argmax(1))
        explanations = []
        for i in range(len(texts)):
            slots = self.preprocessor.slots(tokenized[i][0])
            explanation = self._one(
                texts[i],
                *tokenized[i],
                slots,
                x[i],
                {k: v[i] for k, v in outputs.items()},
                None if evidence is None else evidence[i],
            )
            if ngram_parts is not None:
                self._account(explanation, *ngram_inputs[i], a, b, network_probabilities[i], *ngram_parts[i][1:])
            explanation.doc_id = None if ids is None else ids[i]
            explanation.true_label = None if labels is None else labels[i]
            explanations.append(explanation)
        return explanations

    def _one(self, text, sentences, spans, slots, ids, outputs, evidence=None):
        names = self.classifier.label_names
        probabilities = np.asarray(outputs["probabilities"], dtype=float)
        word_w = np.asarray(self.backbone.word_attention(outputs), dtype=float)
        sentence_w = self.backbone.sentence_attention(outputs)
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
                self._word(
                    token,
                    w * s_weight,
                    w,
                    s_weight,
                    oov,
                    used,
                    evidence[slot] if used and evidence is not None else None,
                )
            )
        sentence_rows = []
        for s in range(len(sentences)):
            if row_weight is None:
                weight = sum(w.weight for w in words if w.sentence == s)
            else:
                weight = row_weight.get(s, 0.0)
            sentence_rows.append(self._sentence(text, s, spans[s], weight, s in rows))
        warnings = []
        cut = sum(not w.used for w in words)
        unshown = 0  # the characters after the last shown sentence, if a word follows (not only markup or spaces)
        if spans and self.preprocessor.tokenizer.tokenize(text[spans[-1][1] :], max_tokens=1):
            unshown = len(text.rstrip()) - spans[-1][1]
        if cut or unshown > 0:
            warnings.append(
                "the text is longer than the model's limits: "
                + ", and ".join(
                    ([f"{cut:,} of the {len(words):,} words shown were not read by the network"] if cut else [])
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

    def _ngram_input(self, text, ids, sentences):
        """`(ids, tokens, slots)` the n-gram part reads for one text: the whole text's, or the network's ids."""
        preprocessor = self.preprocessor
        shown = [t for sentence in sentences for t in sentence]
        if preprocessor.ngram_length is None:
            return ids, shown, [slot and (slot, True) for slot in preprocessor.slots(sentences)]
        whole, _ = preprocessor.tokenizer.tokenize(text, return_spans=True, max_tokens=preprocessor.ngram_length)
        tokens = [t for sentence in whole for t in sentence]
        get = preprocessor.vocabulary.index.get
        read = {t.start for t, slot in zip(shown, preprocessor.slots(sentences)) if slot is not None}
        ids = np.array([get(t.form, 1) for t in tokens] or [0], np.int32)
        return ids, tokens, [((p,), t.start in read) for p, t in enumerate(tokens)]

    def _account(self, explanation, ids, tokens, slots, a, b, network_probabilities, feature_ids, contributions):
        """Adds the exact decision account of a classifier with an n-gram part to `explanation`.

        `ids`, `tokens` and `slots` are what the n-gram part reads
        (`_ngram_input`: each token's slot in `ids` and whether the network
        reads it); `feature_ids` `(k,)` and `contributions` `(k, classes)`
        are the n-gram layer's own (`NgramLogits(..., return_contributions=True)`).
        """
        layer = self.classifier.ngram_logits
        names = self.classifier.label_names
        order = np.argsort([-explanation.probabilities[str(n)] for n in names], kind="stable")
        c, r = int(order[0]), int(order[min(1, len(order) - 1)])  # the prediction and the runner-up
        # Which token sits at each (row, position) of the ids, rows as the n-gram layer reads them.
        at = {
            (int(np.ravel_multi_index(slot[:-1], ids.shape[:-1])) if len(slot) > 1 else 0, slot[-1]): (token, read)
            for token, (slot, read) in zip(tokens, (s or (None, False) for s in slots))
            if slot is not None
        }
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
            gram = [at[(row, t + j)] for j in range(n)]
            start, end = gram[0][0].start, gram[-1][0].end
            ngrams.append(
                NgramContribution(
                    explanation.text[start:end],
                    gram[0][0].sentence,
                    start,
                    end,
                    float(contribution),
                    all(read for _, read in gram),
                )
            )
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
            explanation.warnings.append(
                "the network has no weight in this classifier (the weights chosen on its "
                "validation texts): the attention weights do not move its decisions; the "
                "n-gram contributions account for them"
            )

    @staticmethod
    def _word(token, weight, word_weight, sentence_weight, oov, used, evidence=None):
        return WordWeight(
            token.text,
            token.form,
            token.sentence,
            token.index,
            token.start,
            token.end,
            weight,
            word_weight,
            sentence_weight,
            oov,
            used,
            None if evidence is None else float(evidence),
        )

    @staticmethod
    def _sentence(text, index, span, weight, used):
        start, end = span
        return {
            "index": index,
            "start": start,
            "end": end,
            "text": text[start:end],
            "weight": float(weight),
            "used": bool(used),
        }
