"""Explaining whole datasets: per predicted class, the words with the most evidence and the most attention.

Every document is explained (see `hierattn.explain`); for each predicted
class the words (by their normalised vocabulary form) are counted over their
occurrences in the documents predicted as that class:

* `occurrences`, `documents`: how often the word occurs, and in how many
  documents;
* `evidence`: its summed evidence for the class (`WordWeight.evidence`, its
  share of each decision's margin), and `mean_evidence` per occurrence;
* `mean_attention`: its mean attention relative to uniform, over the
  occurrences the network read (in the documents it decided; the n-gram part
  decides the others alone, `TextClassifier.cascade`): a word's weight times the number of words
  the network read in that document, so 1 is what every word would get
  from uniform attention, and a frequent word gets no credit for being
  frequent (on short texts nearly every word is in a document's top 10).

A multi-label classifier's labels are ranked alike, each label over the
documents where it is predicted (over its threshold), from that label's
explanations (its evidence against its threshold); a document counts once
for each of its predicted labels, and one with none predicted for none.
With true labels (joined by `|`), `CorpusSummary.accuracy` is then the
share of documents whose predicted labels are exactly the true ones.

Only words with at least `min_count` occurrences (`mean_attention`: read
occurrences) are ranked, by either column (`evidence_rank`,
`attention_rank`); the rows come in evidence order. A second file lists each
document's top-k words by evidence. Both are written as the documents
stream past in batches, and only renamed into place when complete.
"""

import collections
import contextlib
import csv
import dataclasses
import itertools
import pathlib

from hierattn.data.progress import tqdm
from hierattn.data.tables import split_labels
from hierattn.defaults import CORPUS_MIN_COUNT, MULTILABEL
from hierattn.errors import ArgumentError
from hierattn.kinds import MULTI, SINGLE
from hierattn.utils.atomic import atomic_open

WORD_COLUMNS = [
    "predicted",
    "word",
    "occurrences",
    "documents",
    "evidence",
    "mean_evidence",
    "evidence_rank",
    "mean_attention",
    "attention_rank",
]
DOCUMENT_COLUMNS = [
    "document",
    "id",
    "label",
    "predicted",
    "probability",
    "rank",
    "text",
    "word",
    "evidence",
    "weight",
    "sentence",
    "index",
    "start",
    "end",
    "oov",
]


def documents_path(output):
    """Where the per-document file goes next to `output` (`words.csv` → `words.documents.csv`)."""
    output = pathlib.Path(output)
    return output.with_name(f"{output.stem}.documents{output.suffix or '.csv'}")


class CorpusWords:
    """Accumulates per-class word statistics from explanations (see the module docstring).

    Args:
        top_k: Words of each document's top list (by evidence).
        min_count: The fewest occurrences of a word in a class's documents
            for it to be ranked (for its attention: read occurrences).

    Example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> words = CorpusWords(top_k=3, min_count=2)
    >>> for explanation in clf.explain(texts[:8]):
    ...     top = words.add(explanation)          # the document's 3 words with the most evidence
    >>> sum(words.class_documents.values())
    8
    >>> list(next(words.rows()))
    ['predicted', 'word', 'occurrences', 'documents', 'evidence', 'mean_evidence', 'evidence_rank', 'mean_attention', 'attention_rank']
    """

    def __init__(self, top_k=10, min_count=CORPUS_MIN_COUNT):
        if top_k < 1:
            raise ArgumentError("{argument} must be at least 1", argument="top_k")
        if min_count < 1:
            raise ArgumentError("{argument} must be at least 1", argument="min_count")
        self.top_k = top_k
        self.min_count = min_count
        self.class_documents = collections.Counter()
        self._occurrences = collections.defaultdict(collections.Counter)  # class -> form -> occurrences
        self._documents = collections.defaultdict(collections.Counter)
        self._evidence = collections.defaultdict(collections.Counter)  # class -> form -> summed evidence
        self._read = collections.defaultdict(collections.Counter)  # class -> form -> occurrences the network read
        self._attention = collections.defaultdict(collections.Counter)  # ... -> summed attention x words read

    def add(self, explanation):
        """Counts one `Explanation`; returns its top-k words by evidence."""
        label = explanation.label
        self.class_documents[label] += 1
        read = sum(w.used for w in explanation.words)
        passed = any(w.weight for w in explanation.words)  # the network read the text (no pass: no attention)
        for w in explanation.words:
            self._occurrences[label][w.form] += 1
            self._evidence[label][w.form] += w.evidence
            if w.used and passed:
                self._read[label][w.form] += 1
                self._attention[label][w.form] += w.weight * read
        self._documents[label].update({w.form for w in explanation.words})
        return sorted(explanation.words, key=lambda w: (-w.evidence, w.start))[: self.top_k]

    def _ranked(self, label):
        """A class's ranked words: by summed evidence, by mean attention relative to uniform, and those means."""
        counts = self._occurrences[label]
        kept = [f for f in counts if counts[f] >= self.min_count]
        attended = [f for f in kept if self._read[label][f] >= self.min_count]
        mean_attention = {f: self._attention[label][f] / self._read[label][f] for f in attended}
        by_evidence = sorted(kept, key=lambda f: (-self._evidence[label][f], f))
        return {
            "evidence": by_evidence,
            "attention": sorted(attended, key=lambda f: (-mean_attention[f], f)),
        }, mean_attention

    def top(self, label, n=10, by="evidence"):
        """The `n` highest-ranked words of a predicted class, by `"evidence"` or `"attention"`."""
        return self._ranked(label)[0][by][:n]

    def rows(self, labels=None):
        """The ranked words (dicts with `WORD_COLUMNS`), class by class, in evidence order.

        Args:
            labels: Only these classes (default: all, sorted).
        """
        for label in sorted(self._occurrences, key=str) if labels is None else labels:
            ranked, mean_attention = self._ranked(label)
            attention_rank = {f: r for r, f in enumerate(ranked["attention"], start=1)}
            counts = self._occurrences[label]
            for rank, form in enumerate(ranked["evidence"], start=1):
                yield {
                    "predicted": label,
                    "word": form,
                    "occurrences": counts[form],
                    "documents": self._documents[label][form],
                    "evidence": round(self._evidence[label][form], 8),
                    "mean_evidence": round(self._evidence[label][form] / counts[form], 8),
                    "evidence_rank": rank,
                    "mean_attention": round(mean_attention[form], 6) if form in mean_attention else None,
                    "attention_rank": attention_rank.get(form),
                }


@dataclasses.dataclass
class CorpusSummary:
    """What `explain_corpus` did.

    Example:

    >>> import pathlib
    >>> import tempfile
    >>> from hierattn.explain import Explainer, explain_corpus
    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Wonderful acting!", "A boring, slow plot."] * 5
    >>> labels = ["pos", "neg", "pos", "neg"] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> output = pathlib.Path(tempfile.mkdtemp()) / "words.csv"
    >>> summary = explain_corpus(Explainer(clf), texts + [""], output=output, labels=labels + [None], progress=False)
    >>> summary.documents, summary.skipped_empty, summary.labelled
    (20, 1, 20)
    >>> sum(summary.class_documents.values()), 0 <= summary.accuracy <= 1
    (20, True)
    >>> [pathlib.Path(path).name for path in summary.outputs]
    ['words.csv', 'words.documents.csv']
    """

    documents: int
    skipped_empty: int
    correct: int
    labelled: int
    words: CorpusWords
    outputs: list
    multi_label: bool = False  # then `accuracy` is the share of exact label sets, and a class is a label

    @property
    def class_documents(self):
        """Documents per predicted class."""
        return dict(self.words.class_documents)

    @property
    def accuracy(self):
        return self.correct / self.labelled if self.labelled else None


def explain_corpus(
    explainer,
    texts,
    output=None,
    labels=None,
    ids=None,
    top_k=10,
    batch_size=256,
    total=None,
    progress=True,
    min_count=CORPUS_MIN_COUNT,
    label=None,
):
    """Explains every text and ranks each predicted class's words by evidence and by attention.

    A multi-label classifier's words are ranked per label, over the
    documents where the label is predicted (see the module docstring).

    Args:
        explainer: A `hierattn.explain.Explainer`.
        texts: Iterable of raw texts (streamed; those without words are skipped and
            counted).
        output: Path of the word table (CSV); the per-document table goes to
            `documents_path(output)`. Neither may exist. `None`: nothing is
            written (the summary still holds the statistics).
        labels: Optional true label names, parallel to `texts` (a
            multi-label classifier's: each text's joined by `|`, an empty or
            missing one for none).
        ids: Optional document identifiers, parallel to `texts`.
        top_k: Words of each document's top list (by evidence).
        min_count: The fewest occurrences of a ranked word (`CorpusWords`).
        batch_size: Texts explained together.
        total: Number of texts, for the progress bar.
        progress: Show a progress bar.
        label: A multi-label classifier's label, or a list of them: rank only
            these (default: every label).

    Returns:
        A `CorpusSummary`.
    """
    chosen = label  # `label` is each document's true label below
    explainer.label_indices(chosen)  # a label the classifier does not have is refused before any file is opened
    if labels is not None and explainer.classifier.multi_label:  # a table's empty label cell: a text without labels
        labels = ("" if value is None else value for value in labels)
    words = CorpusWords(top_k, min_count)
    targets = _new_targets(output)
    summary = CorpusSummary(0, 0, 0, 0, words, [str(t) for t in targets], explainer.classifier.multi_label)
    with contextlib.ExitStack() as files:  # both tables appear complete, or neither (hierattn.utils.atomic)
        writer = None
        if targets:
            word_file = files.enter_context(atomic_open(targets[0], newline="", overwrite=False))
            writer = csv.DictWriter(
                files.enter_context(atomic_open(targets[1], newline="", overwrite=False)), fieldnames=DOCUMENT_COLUMNS
            )
            writer.writeheader()
        with tqdm(total=total, desc="explaining", unit="doc", disable=not progress) as bar:
            none = itertools.repeat(None)
            stream = zip(texts, none if labels is None else labels, none if ids is None else ids)
            batch = []
            for number, (text, label, doc_id) in enumerate(stream):
                if not text or not explainer.preprocessor.has_words(str(text)):  # empty, or only markup
                    summary.skipped_empty += 1
                    bar.update(1)
                    continue
                batch.append((number, text, label, doc_id))
                if len(batch) == batch_size:
                    _explain_batch(explainer, batch, words, writer, summary, bar, chosen)
                    batch = []
            if batch:
                _explain_batch(explainer, batch, words, writer, summary, bar, chosen)
        if targets:
            table = csv.DictWriter(word_file, fieldnames=WORD_COLUMNS)
            table.writeheader()
            table.writerows(words.rows())
    return summary


def _new_targets(output):
    """The word table and the per-document table of `output` (none for `None`), refused if either exists."""
    targets = [] if output is None else [pathlib.Path(output), documents_path(output)]
    for target in targets:
        if target.exists():
            raise ArgumentError(
                f"{target} already exists; choose another {{argument}} (nothing was overwritten)", argument="output"
            )
    return targets


def _explain_batch(explainer, batch, words, writer, summary, bar, chosen=None):
    """Explains a batch of `(number, text, label, id)` and counts it, as the explainer's kind of classifier does."""
    explain = {SINGLE: _explain_classes, MULTI: _explain_labels}[explainer.policy.kind]
    explain(explainer, batch, words, writer, summary, chosen)
    bar.update(len(batch))


def _explain_classes(explainer, batch, words, writer, summary, chosen):
    """A single-label classifier's batch: each text's explanation counted for its predicted class."""
    explanations = explainer.explain([text for _, text, _, _ in batch])
    for (number, _, label, doc_id), explanation in zip(batch, explanations):
        summary.documents += 1
        if label is not None:
            summary.labelled += 1
            summary.correct += int(str(label) == str(explanation.label))
        _count(words, writer, number, label, doc_id, explanation)


def _explain_labels(explainer, batch, words, writer, summary, chosen):
    """A multi-label classifier's batch: each predicted label's explanation counted (those of `chosen` only)."""
    explanations = explainer.explain([text for _, text, _, _ in batch], label=chosen)
    predicted = {}  # place in the batch -> the text's predicted labels
    for explanation in explanations:
        predicted[explanation.document] = [str(name) for name in explanation.predicted_labels]
    for place, (_, _, label, _) in enumerate(batch):
        summary.documents += 1
        if label is not None:
            summary.labelled += 1
            true = split_labels(label, MULTILABEL["separator"]) if isinstance(label, str) else list(label)
            summary.correct += int(sorted(map(str, true)) == sorted(predicted.get(place, [])))
    for explanation in explanations:
        if str(explanation.label) in predicted[explanation.document]:  # the label's documents: where it is predicted
            number, _, label, doc_id = batch[explanation.document]
            _count(words, writer, number, label, doc_id, explanation)


def _count(words, writer, number, label, doc_id, explanation):
    """Counts one explanation's words and writes its top words to the per-document table."""
    top = words.add(explanation)
    if writer:
        probability = explanation.probabilities[str(explanation.label)]
        for rank, w in enumerate(top, start=1):
            writer.writerow(
                {
                    "document": number,
                    "id": doc_id,
                    "label": label,
                    "predicted": explanation.label,
                    "probability": round(probability, 6),
                    "rank": rank,
                    "text": w.text,
                    "word": w.form,
                    "evidence": round(w.evidence, 8),
                    "weight": round(w.weight, 8),
                    "sentence": w.sentence,
                    "index": w.index,
                    "start": w.start,
                    "end": w.end,
                    "oov": w.oov,
                }
            )
