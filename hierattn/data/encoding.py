"""Turning tokenized documents into padded int32 arrays, fast."""

import collections
import gc
import multiprocessing
import os
from itertools import chain, islice, repeat

import numpy as np

from hierattn.data.progress import tqdm
from hierattn.data.text import Tokenizer
from hierattn.data.vocabulary import Vocabulary
from hierattn.defaults import MAX_DOCUMENT_IDS

# Below this many documents, worker processes cost more than they save.
PARALLEL_THRESHOLD = 4000
CHUNK = 1000

_STATE = None


def _init_worker(state):
    global _STATE
    _STATE = state


def _run(job):
    function, texts = job
    return function(_STATE, texts)


def map_chunks(function, state, texts, workers=None, progress=True, desc="processing"):
    """Applies `function(state, chunk_of_texts)` to chunks of `texts`.

    Large inputs are spread over `workers` processes (default: all cores);
    `state` is sent once per worker, and only each chunk's (small) result
    comes back. Shows a progress bar in documents.

    Returns:
        The list of per-chunk results, in order.
    """
    texts = list(texts)
    chunks = [texts[i : i + CHUNK] for i in range(0, len(texts), CHUNK)]
    workers = workers or os.cpu_count() or 1
    results = []
    with tqdm(total=len(texts), desc=desc, disable=not progress, unit="doc") as bar:
        if workers <= 1 or len(texts) < PARALLEL_THRESHOLD:
            for chunk in chunks:
                results.append(function(state, chunk))
                bar.update(len(chunk))
            return results
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        # Garbage collected in a forked worker can hold TensorFlow objects whose destructors wait on threads that
        # do not exist there (a deadlock seen in CI): collect it here, and keep the workers' collector off the rest.
        gc.collect()
        gc.freeze()
        try:
            pool = context.Pool(min(workers, len(chunks)), initializer=_init_worker, initargs=(state,))
        finally:
            gc.unfreeze()
        with pool:
            for chunk, result in zip(chunks, pool.imap(_run, [(function, c) for c in chunks])):
                results.append(result)
                bar.update(len(chunk))
    return results


def _tokenize_part(state, texts):
    # One string per document ("\n" between sentences, " " between tokens,
    # which never contain white space) pickles far faster than token lists.
    tokenizer = Tokenizer.from_config(state["tokenizer"])
    return ["\n".join(" ".join(s) for s in tokenizer.sentences(t)) for t in texts]


def _unpack(packed):
    return [s.split(" ") for s in packed.split("\n")] if packed else []


def tokenize_corpus(texts, tokenizer=None, workers=None, progress=True, desc="tokenizing"):
    """Splits many documents into sentences of token forms.

    Args:
        texts: Sequence of documents.
        tokenizer: A `Tokenizer` (default settings if `None`).
        workers: Number of processes (default: all cores; 1: this process).
        progress: Show a progress bar.
        desc: Progress bar label.

    Returns:
        A list (one entry per document) of lists of sentences of token forms.
    """
    tokenizer = tokenizer or Tokenizer()
    state = {"tokenizer": tokenizer.get_config()}
    parts = map_chunks(_tokenize_part, state, texts, workers, progress, desc)
    return [_unpack(packed) for part in parts for packed in part]


def _count_part(state, texts):
    tokenizer = Tokenizer.from_config(state["tokenizer"])
    counts = collections.Counter()
    sentences, words, totals = [], [], []
    for text in texts:
        document = tokenizer.sentences(text)
        for sentence in document:
            counts.update(sentence)
        stats = [len(s) for s in document]
        sentences.append(len(document))
        words.extend(stats)
        totals.append(sum(stats))
    return counts, sentences, words, totals


def _encode_documents(documents, state):
    """One array per mode in `state["modes"]` for tokenized documents."""
    vocabulary = state["vocabulary"]
    arrays = []
    for mode in state["modes"]:
        if mode == "hierarchical":
            arrays.append(encode_hierarchical(documents, vocabulary, state["max_sentences"], state["max_words"]))
        elif mode == "flat":
            arrays.append(encode_flat(documents, vocabulary, state["sequence_length"]))
        else:  # "whole": as wide as the longest document, up to the cap
            longest = max((sum(len(s) for s in d) for d in documents), default=0)
            arrays.append(encode_flat(documents, vocabulary, max(1, min(longest, state["whole_length"]))))
    return arrays


def _encode_part(state, texts):
    tokenizer = Tokenizer.from_config(state["tokenizer"])
    if state["modes"] == ("whole",):  # the same ids without splitting sentences (`Tokenizer.words`): faster
        return _encode_documents([[tokenizer.words(t, max_tokens=state["whole_length"])] for t in texts], state)
    return _encode_documents([tokenizer.sentences(t) for t in texts], state)


def encode_hierarchical(documents, vocabulary, max_sentences, max_words):
    """Encodes documents as `(docs, max_sentences, max_words)` int32 ids.

    Sentences beyond `max_sentences` and words beyond `max_words` are cut
    (the first ones are kept); the rest is padded with 0. An empty document
    is all zeros.

    Args:
        documents: Lists of sentences of token forms.
        vocabulary: A `Vocabulary`.
        max_sentences: Sentences per document.
        max_words: Words per sentence.

    Returns:
        A `numpy.ndarray` of dtype int32.
    """
    out = np.zeros((len(documents), max_sentences, max_words), dtype=np.int32)
    get = vocabulary.index.get
    for i, document in enumerate(documents):
        row = out[i]
        for j, sentence in enumerate(document[:max_sentences]):
            ids = [get(t, 1) for t in sentence[:max_words]]
            row[j, : len(ids)] = ids
    return out


def kept_positions(length, sequence_length):
    """Which token positions of a `length`-token document a flat encoding keeps (the first ones).

    Args:
        length: Number of tokens in the document.
        sequence_length: Tokens per encoded document.

    Returns:
        A `range` of kept positions, in order; the i-th of them goes to slot
        i of the encoding.
    """
    return range(min(length, sequence_length))


def encode_flat(documents, vocabulary, sequence_length):
    """Encodes documents as `(docs, sequence_length)` int32 ids (sentences joined).

    The first `sequence_length` tokens of a longer document are kept (see
    `kept_positions`).

    Args:
        documents: Lists of sentences of token forms.
        vocabulary: A `Vocabulary`.
        sequence_length: Tokens per document.

    Returns:
        A `numpy.ndarray` of dtype int32, padded with 0 at the end.
    """
    lengths = np.fromiter((min(sum(map(len, d)), sequence_length) for d in documents), np.int64, len(documents))
    tokens = chain.from_iterable(islice(chain.from_iterable(d), sequence_length) for d in documents)
    out = np.zeros((len(documents), sequence_length), dtype=np.int32)
    # Every id looked up in one pass (C loops), then put in place: row-major, as the tokens come.
    out[np.arange(sequence_length) < lengths[:, None]] = np.fromiter(
        map(vocabulary.index.get, tokens, repeat(1)), np.int32, int(lengths.sum())
    )
    return out


def suggest_lengths(documents, percentile=95):
    """Suggests padding sizes from length percentiles of (training) documents.

    Args:
        documents: Lists of sentences of token forms.
        percentile: Percentile of the lengths to cover.

    Returns:
        Dict with `max_sentences` (sentences per document), `max_words`
        (words per sentence) and `sequence_length` (words per document),
        each at least 1.
    """
    words = [len(s) for d in documents for s in d]
    return _lengths_from_stats(
        [len(d) for d in documents], words, [sum(len(s) for s in d) for d in documents], percentile
    )


def _lengths_from_stats(sentences, words, totals, percentile):
    def pick(values):
        return max(1, int(np.ceil(np.percentile(values, percentile)))) if len(values) else 1

    return {"max_sentences": pick(sentences), "max_words": pick(words), "sequence_length": pick(totals)}


def check_document_ids(**limits):
    """Refuses (`ValueError`, one line) a length limit, or `max_sentences` x `max_words`, past `MAX_DOCUMENT_IDS`.

    The bound a saved classifier's limits are checked against at load
    (`hierattn.runtime.checks`, `hierattn.models.loading`), so a classifier
    is refused such limits when it is made, not after it has trained.
    `limits`: `{name: whole number or None}`.
    """
    for name, value in limits.items():
        if value is not None and value > MAX_DOCUMENT_IDS:
            raise ValueError(f"{name} must be at most {MAX_DOCUMENT_IDS:,} ids a document, not {value:,}")
    sentences, words = limits.get("max_sentences"), limits.get("max_words")
    if sentences is not None and words is not None and sentences * words > MAX_DOCUMENT_IDS:
        raise ValueError(
            f"max_sentences x max_words must be at most {MAX_DOCUMENT_IDS:,} ids a document, "
            f"not {sentences:,} x {words:,} = {sentences * words:,}"
        )


def within_document_ids(sizes, given=None):
    """Padding sizes kept within `MAX_DOCUMENT_IDS` ids a document, cutting only those not `given`.

    A percentile of very long texts can pass the bound that loading a saved
    classifier checks (`hierattn.defaults.MAX_DOCUMENT_IDS`): each size is
    cut to it, then `max_sentences` (or, when it was given, `max_words`) so
    that `max_sentences` x `max_words` stays within it. Sizes given past the
    bound are refused (`check_document_ids`).
    """
    given = given or {}
    check_document_ids(**given)
    sizes = {k: v if k in given else min(v, MAX_DOCUMENT_IDS) for k, v in sizes.items()}
    cut = "max_words" if "max_sentences" in given else "max_sentences"
    other = "max_sentences" if cut == "max_words" else "max_words"
    if cut not in given and sizes["max_sentences"] * sizes["max_words"] > MAX_DOCUMENT_IDS:
        sizes[cut] = max(1, MAX_DOCUMENT_IDS // sizes[other])
    return sizes


def _empty(state, mode):
    if mode == "hierarchical":
        return np.zeros((0, state["max_sentences"], state["max_words"]), np.int32)
    return np.zeros((0, state["sequence_length"] if mode == "flat" else 1), np.int32)


def _concatenate(arrays):
    """Arrays of documents stacked, the narrower ones padded with 0 to the widest (`"whole"` parts differ)."""
    width = max(a.shape[-1] for a in arrays)
    return np.concatenate([np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])]) for a in arrays])


class TextEncoder:
    """Tokenizer + vocabulary + padding sizes: raw text in, id arrays out.

    The worker behind `TextPreprocessor`, which saves its settings and
    vocabulary inside the classifier's `.keras` file.

    Args:
        vocabulary: A `Vocabulary`.
        tokenizer: A `Tokenizer`.
        max_sentences: Sentences per document (hierarchical mode).
        max_words: Words per sentence (hierarchical mode).
        sequence_length: Words per document (flat mode).

    Example:

    >>> texts = ["A great film. I loved it.", "Dull and far too long."]
    >>> encoder = TextEncoder.fit(texts, min_count=1, progress=False)
    >>> len(encoder.vocabulary), encoder.max_sentences, encoder.max_words, encoder.sequence_length
    (13, 2, 5, 6)
    >>> encoder.encode(["A great film. Too long."])   # (texts, max_sentences, max_words)
    array([[[ 2,  7,  6,  0,  0],
            [12, 10,  0,  0,  0]]], dtype=int32)
    >>> encoder.encode(["A great film. Too long."], mode="flat")   # (texts, sequence_length)
    array([[ 2,  7,  6, 12, 10,  0]], dtype=int32)
    """

    def __init__(self, vocabulary, tokenizer=None, max_sentences=15, max_words=40, sequence_length=400):
        self.vocabulary = vocabulary
        self.tokenizer = tokenizer or Tokenizer()
        self.max_sentences = max_sentences
        self.max_words = max_words
        self.sequence_length = sequence_length

    @classmethod
    def fit(
        cls,
        texts,
        tokenizer=None,
        min_count=2,
        max_size=None,
        percentile=95,
        workers=None,
        progress=True,
        max_sentences=None,
        max_words=None,
        sequence_length=None,
    ):
        """Builds the vocabulary and padding sizes from training texts only.

        Sizes not given are the `percentile` of the training lengths (see
        `suggest_lengths`), kept within `MAX_DOCUMENT_IDS` ids a document
        (`within_document_ids`).

        Args:
            texts: The training documents.
            tokenizer: A `Tokenizer` (default settings if `None`).
            min_count: Vocabulary frequency cut-off.
            max_size: Vocabulary size cap.
            percentile: Length percentile for the suggested sizes.
            workers: Processes (default: all cores).
            progress: Show a progress bar.
            max_sentences: Fixed sentences per document.
            max_words: Fixed words per sentence.
            sequence_length: Fixed words per document (flat mode).

        Returns:
            A fitted `TextEncoder`.
        """
        tokenizer = tokenizer or Tokenizer()
        parts = map_chunks(
            _count_part, {"tokenizer": tokenizer.get_config()}, texts, workers, progress, "fitting vocabulary"
        )
        counts = collections.Counter()
        sentences, words, totals = [], [], []
        for part_counts, part_sentences, part_words, part_totals in parts:
            counts.update(part_counts)
            sentences += part_sentences
            words += part_words
            totals += part_totals
        vocabulary = Vocabulary.build(counts, min_count=min_count, max_size=max_size)
        sizes = _lengths_from_stats(sentences, words, totals, percentile)
        given = {"max_sentences": max_sentences, "max_words": max_words, "sequence_length": sequence_length}
        given = {k: v for k, v in given.items() if v is not None}
        return cls(vocabulary, tokenizer, **within_document_ids({**sizes, **given}, given))

    def encode(self, texts=None, mode="hierarchical", documents=None, workers=None, progress=False, whole_length=None):
        """Encodes raw `texts` (or already tokenized `documents`).

        Args:
            texts: Sequence of raw documents; tokenized and encoded in worker
                processes when there are many.
            mode: `"hierarchical"` → `(n, max_sentences, max_words)`;
                `"flat"` → `(n, sequence_length)`; `"whole"` → `(n, width)`,
                every token of each document up to `whole_length`, `width`
                the longest document's (capped); or a tuple of them, which
                returns a tuple of arrays from one tokenization.
            documents: Already tokenized documents (lists of sentences of
                token forms, as `tokenize_corpus` gives), instead of `texts`.
            workers: Processes (default: all cores).
            progress: Show a progress bar.
            whole_length: The most tokens of a document in `"whole"` mode.

        Returns:
            An int32 array, or a tuple of them when `mode` is a tuple.
        """
        modes = (mode,) if isinstance(mode, str) else tuple(mode)
        for m in modes:
            if m not in ("hierarchical", "flat", "whole"):
                raise ValueError(f"mode must be 'hierarchical', 'flat' or 'whole'. Received: {m!r}.")
        if "whole" in modes and not whole_length:
            raise ValueError(f"mode 'whole' needs a positive whole_length. Received: whole_length={whole_length!r}")
        state = {
            "tokenizer": self.tokenizer.get_config(),
            "vocabulary": self.vocabulary,
            "modes": modes,
            "max_sentences": self.max_sentences,
            "max_words": self.max_words,
            "sequence_length": self.sequence_length,
            "whole_length": whole_length,
        }
        if documents is not None:
            arrays = _encode_documents(documents, state)
        else:
            parts = map_chunks(_encode_part, state, texts, workers, progress, "encoding")
            arrays = [
                _concatenate([part[k] for part in parts]) if parts else _empty(state, m) for k, m in enumerate(modes)
            ]
        return arrays[0] if isinstance(mode, str) else tuple(arrays)
