"""The preprocessor of a `TextClassifier`: raw strings to token ids."""

import os

import keras

from hierattn.data.encoding import TextEncoder
from hierattn.data.text import Tokenizer
from hierattn.data.vocabulary import Vocabulary
from hierattn.defaults import LENGTH_PERCENTILE, PREPROCESSING, UNITS
from hierattn.errors import DataError
from hierattn.layers._attention_utils import check_choice
from hierattn.models.arguments import check_preprocessor_arguments
from hierattn.models.inputs import as_texts

MODES = ("hierarchical", "flat")
VOCABULARY_FILE = "vocabulary.json"


@keras.saving.register_keras_serializable(package="hierattn")
class TextPreprocessor(keras.layers.Layer):
    """Tokenizer, vocabulary and length limits: raw strings in, int ids out (one array, or two in a dict).

    The Preprocessor of keras-hub's Task / Preprocessor / Backbone split.
    `adapt` builds the vocabulary and the length limits from training texts
    only; they then travel inside the classifier's `.keras` file (the
    settings in its config, the vocabulary as an asset, as Keras's own
    `StringLookup` stores its vocabulary). Tokenizing is a Python regular
    expression with character offsets kept (for explanations), so the layer
    runs outside the TensorFlow graph, on Python strings, and returns a NumPy
    array. Many texts are tokenized in worker processes.

    With `ngram_length` set (a `TextClassifier` with an n-gram part sets
    it), the output is a dict of two arrays from one tokenization, as
    keras-hub's preprocessors give dicts: `"token_ids"`, what the backbone
    reads (cut at the length limits), and `"ngram_ids"`, the whole text for
    the n-gram part, `(n, width)` with every token of each text up to
    `ngram_length`, `width` the longest text's.

    Args:
        mode: `"hierarchical"` (HAN: `(n, max_sentences, max_words)`) or
            `"flat"` (`(n, sequence_length)`).
        max_sentences: Sentences per document (hierarchical).
        max_words: Words per sentence (hierarchical).
        sequence_length: Words per document (flat); later words are cut.
            Each limit left `None` is set by `adapt` to the 95th percentile
            of the training texts, kept within `MAX_DOCUMENT_IDS` ids a
            document (`hierattn.defaults`; a limit given past it is
            refused).
        min_count: Words seen fewer times in training are out of vocabulary.
        max_vocab: The most frequent words kept.
        tokenizer: A `hierattn.data.Tokenizer` or its config (if `None`,
            default settings and the units of `hierattn.defaults.UNITS`:
            `"auto"`, chosen by `adapt` from the training texts and recorded
            in `units_report`).
        ngram_length: The most tokens of a text in `"ngram_ids"`; `None`
            for no second output.
        **kwargs: Base layer keyword arguments, such as `name`.

    Example:

    >>> preprocessor = TextPreprocessor("flat", min_count=1)
    >>> preprocessor.adapt(["A fine film.", "A dull film."], progress=False)
    >>> preprocessor(["A fine film."]).shape
    (1, 3)
    >>> whole = TextPreprocessor("flat", sequence_length=2, min_count=1, ngram_length=100)
    >>> whole.adapt(["A fine film.", "A dull film."], progress=False)
    >>> ids = whole(["A fine film."])
    >>> ids["token_ids"].shape, ids["ngram_ids"].shape
    ((1, 2), (1, 3))
    """

    def __init__(
        self,
        mode="hierarchical",
        max_sentences=PREPROCESSING["max_sentences"],
        max_words=PREPROCESSING["max_words"],
        sequence_length=PREPROCESSING["sequence_length"],
        min_count=PREPROCESSING["min_count"],
        max_vocab=PREPROCESSING["max_vocab"],
        tokenizer=None,
        ngram_length=None,
        units_report=None,
        **kwargs,
    ):
        kwargs.setdefault("trainable", False)
        super().__init__(**kwargs)
        check_choice(mode, MODES, "mode")
        check_preprocessor_arguments(max_sentences, max_words, sequence_length, min_count, max_vocab, ngram_length)
        self.mode = mode
        self.max_sentences = max_sentences
        self.max_words = max_words
        self.sequence_length = sequence_length
        self.min_count = min_count
        self.max_vocab = max_vocab
        self.ngram_length = ngram_length
        if tokenizer is None:
            tokenizer = {"units": UNITS["units"]}
        self.tokenizer = tokenizer if isinstance(tokenizer, Tokenizer) else Tokenizer.from_config(tokenizer)
        self.units_report = units_report  # how `adapt` chose the units ("auto")
        self.vocabulary = None
        self._asset_error = None
        self.built = True

    @staticmethod
    def mode_for_rank(input_rank):
        """The mode giving ids of a backbone's `input_rank`: 3 `"hierarchical"`, 2 `"flat"`."""
        return "hierarchical" if input_rank == 3 else "flat"

    @property
    def input_rank(self):
        """The rank of the id arrays it gives: 3 (documents, sentences, words) or 2 (documents, words)."""
        return 3 if self.mode == "hierarchical" else 2

    @property
    def adapted(self):
        """Whether the vocabulary and length limits are set (by `adapt` or loading)."""
        return self.vocabulary is not None

    def adapt(self, texts, labels=None, progress=True):
        """Builds the vocabulary and fills the length limits left `None` from `texts`.

        With `units="auto"`, the units are chosen first from `texts` (and
        their `labels`, where given: `hierattn.data.units.choose_units`).
        """
        if self.tokenizer.units == "auto":
            from hierattn.data.units import choose_units

            self.tokenizer, self.units_report = choose_units(list(texts), labels, self.tokenizer, progress=progress)
        elif self.tokenizer.units == "subwords" and self.tokenizer.subwords is None:
            self.tokenizer = self.tokenizer.with_units("subwords", learn_from=list(texts))
        encoder = TextEncoder.fit(
            texts,
            self.tokenizer,
            min_count=self.min_count,
            max_size=self.max_vocab,
            percentile=LENGTH_PERCENTILE,
            progress=progress,
            max_sentences=self.max_sentences,
            max_words=self.max_words,
            sequence_length=self.sequence_length,
        )
        self.vocabulary = encoder.vocabulary
        self.max_sentences, self.max_words, self.sequence_length = (
            encoder.max_sentences,
            encoder.max_words,
            encoder.sequence_length,
        )

    @property
    def encoder(self):
        """The `TextEncoder` doing the work (requires `adapt` first)."""
        if not self.adapted:
            raise ValueError("the preprocessor has no vocabulary yet: call adapt(texts) (or fit the classifier) first")
        return TextEncoder(
            self.vocabulary,
            self.tokenizer,
            max_sentences=self.max_sentences or 1,
            max_words=self.max_words or 1,
            sequence_length=self.sequence_length or 1,
        )

    def __call__(self, inputs, progress=False, workers=None):
        # Python strings in, a NumPy array out: Keras's tensor machinery is skipped.
        return self.call(inputs, progress=progress, workers=workers)

    def call(self, inputs, progress=False, workers=None):
        """Token ids of raw texts: `(n, max_sentences, max_words)` or `(n, sequence_length)` int32.

        With `ngram_length` set: `{"token_ids": those, "ngram_ids": (n, width)}`.
        Many texts are tokenized in `workers` processes (default: one per
        core; 1 keeps the work in this process).
        """
        return self._encode(texts=as_texts(inputs), progress=progress, workers=workers)

    def encode_tokens(self, documents):
        """Ids of documents already tokenized: lists of sentences of token forms (as `tokenize` gives them)."""
        return self._encode(documents=documents)

    def _encode(self, **inputs):
        if self.ngram_length is None:
            return self.encoder.encode(mode=self.mode, **inputs)
        ids, whole = self.encoder.encode(mode=(self.mode, "whole"), whole_length=self.ngram_length, **inputs)
        return {"token_ids": ids, "ngram_ids": whole}

    def shown_limits(self, factor):
        """`Tokenizer.tokenize` limits reading `factor` times what the model reads (e.g. for explanations)."""
        if self.mode == "hierarchical":
            return {"max_sentences": factor * self.max_sentences, "max_words": factor * self.max_words}
        return {"max_tokens": factor * self.sequence_length}

    def slots(self, sentences):
        """Where each token of a tokenized text sits in its id array: an index tuple, or `None` if not read.

        Args:
            sentences: Sentences of `Token`s, as `tokenizer.tokenize` gives
                them.

        Returns:
            One entry per token, in reading order: `(sentence, word)` for
            hierarchical ids, `(position,)` for flat ones.
        """
        if self.mode == "hierarchical":
            return [
                (s, t.index) if s < self.max_sentences and t.index < self.max_words else None
                for s, sentence in enumerate(sentences)
                for t in sentence
            ]
        count = sum(len(sentence) for sentence in sentences)
        return [(p,) if p < self.sequence_length else None for p in range(count)]

    def has_words(self, text):
        """Whether the tokenizer keeps any word of `text` (markup, spaces and nothing are wordless)."""
        return self.tokenizer.has_words(text)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "mode": self.mode,
                "max_sentences": self.max_sentences,
                "max_words": self.max_words,
                "sequence_length": self.sequence_length,
                "min_count": self.min_count,
                "max_vocab": self.max_vocab,
                "tokenizer": self.tokenizer.get_config(),
                "ngram_length": self.ngram_length,
                "units_report": self.units_report,
            }
        )
        return config

    def save_assets(self, dir_path):
        if self.adapted:
            self.vocabulary.save(os.path.join(dir_path, VOCABULARY_FILE))

    def load_assets(self, dir_path):
        if dir_path is None:  # Keras retries a layer that failed to load at its other paths, which hold no assets
            if self._asset_error is not None:
                raise self._asset_error
            return
        path = os.path.join(dir_path, VOCABULARY_FILE)
        if os.path.exists(path):
            try:
                self.vocabulary = Vocabulary.load(path)
            except DataError as error:
                self._asset_error = DataError(f"its vocabulary is damaged ({str(error).split(': ', 1)[-1]})")
                raise self._asset_error from None
