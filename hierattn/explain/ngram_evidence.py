"""The n-gram part's share of an explanation: what it reads of a text, and its contributions spread over words.

Mixed into `hierattn.explain.Explainer` (`NgramEvidence`), as the
multi-label steps are (`hierattn.explain.labels`).
"""

import numpy as np

from hierattn.explain.explanation import NgramContribution
from hierattn.ngrams.twin import ngram_features


class NgramEvidence:
    """The n-gram part's steps of `Explainer` (which sets `classifier` and `preprocessor`).

    Example:

    >>> import hierattn
    >>> from hierattn.explain import Explainer
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, ["pos", "neg", "pos", "neg"] * 5, epochs=1, verbose=0)
    >>> e = Explainer(clf).explain(["A great film."])[0]
    >>> sum(g.contribution for g in e.ngrams) == e.decision["ngrams"]   # each n-gram's exact share
    True
    """

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

    def _ngrams_alone_note(self):
        """Why a text's decision is the n-gram part's alone: the network has no weight, or the cascade did not need it."""
        if self.policy.weights[0] != 0.0:
            return (
                f"the n-gram part decided this text alone: it was surer of it than {self.policy.cut_text()}, where "
                "reading such texts with the network changed too few decisions to be worth its cost, so the "
                'network did not read it (with network="always" it reads every text)'
            )
        return (
            "this classifier decides from its n-gram part alone (the words and short phrases it scores): "
            "the network has no weight in it (the weighting chosen on texts held out in training gave it "
            "none), so the attention view is left out: which words the network looked at does not change "
            "the decision"
        )

    def _ngram_evidence(self, explanation, ids, tokens, slots, feature_ids, contributions):
        """The n-gram contributions to the margin, and each spread evenly over the tokens of its occurrences.

        Adds each word's share to its `evidence` (and `ngram_evidence`);
        returns the `NgramContribution`s and the total share of the tokens
        not shown (beyond what the explanation lists).
        """
        layer = self.classifier.ngram_logits
        # Which token sits at each (row, position) of the ids, rows as the n-gram layer reads them.
        at = {
            (int(np.ravel_multi_index(slot[:-1], ids.shape[:-1])) if len(slot) > 1 else 0, slot[-1]): (token, read)
            for token, (slot, read) in zip(tokens, (s or (None, False) for s in slots))
            if slot is not None
        }
        occurrences = {}  # feature id -> [(row, position, n)] of each occurrence
        for n, positions in enumerate(ngram_features(layer, ids[None]), start=1):
            positions = np.asarray(positions)
            for row, t in zip(*np.nonzero(positions >= 0)):
                occurrences.setdefault(int(positions[row, t]), []).append((int(row), int(t), n))
        words = {w.start: w for w in explanation.words}
        ngrams, unshown = [], 0.0
        for feature, contribution in zip(feature_ids, contributions):
            if feature < 0:
                continue
            places = occurrences[int(feature)]
            row, t, n = places[0]
            gram = [at[(row, t + j)] for j in range(n)]
            start, end = gram[0][0].start, gram[-1][0].end
            text = explanation.text[start:end]
            ngrams.append(
                NgramContribution(text, gram[0][0].sentence, start, end, float(contribution), all(r for _, r in gram))
            )
            share = float(contribution) / sum(n for _, _, n in places)
            for row, t, n in places:
                for j in range(n):
                    word = words.get(at[(row, t + j)][0].start)
                    if word is None:
                        unshown += share
                    else:
                        word.ngram_evidence += share
                        word.evidence += share
        return ngrams, unshown
