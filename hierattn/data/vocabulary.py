"""Word vocabulary built from training data only, saved as JSON."""

import collections

from hierattn.errors import DataError
from hierattn.utils.jsonfile import load_json, save_json

PAD, OOV = 0, 1
PAD_TOKEN, OOV_TOKEN = "<pad>", "<oov>"
FORMAT = "hierattn.vocabulary/1"


class Vocabulary:
    """Maps token forms to integer ids; 0 is padding and 1 out-of-vocabulary.

    Args:
        tokens: Token forms for ids 2, 3, ... (most frequent first).
        min_count: The frequency cut-off the vocabulary was built with
            (recorded for reproducibility).
        max_size: The size cap it was built with, if any.

    Example:

    >>> from hierattn.data import Tokenizer
    >>> tokenizer = Tokenizer()
    >>> documents = [tokenizer.sentences(text) for text in ["A great film.", "A dull film."]]
    >>> vocabulary = Vocabulary.build(documents, min_count=2)
    >>> vocabulary.tokens
    ['<pad>', '<oov>', 'a', 'film']
    >>> vocabulary.lookup("film"), vocabulary.lookup("great")   # an unknown word is OOV (1)
    (3, 1)
    """

    def __init__(self, tokens, min_count=1, max_size=None):
        self.tokens = [PAD_TOKEN, OOV_TOKEN] + [t for t in tokens if t not in (PAD_TOKEN, OOV_TOKEN)]
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.min_count = min_count
        self.max_size = max_size

    @classmethod
    def build(cls, documents, min_count=2, max_size=None):
        """Counts tokens and keeps those seen at least `min_count` times.

        Args:
            documents: Iterable of documents, each a list of sentences of token
                forms (as from `Tokenizer.sentences`), or a `collections.Counter`.
            min_count: Minimum frequency for a token to get its own id.
            max_size: Optional cap on the number of ids, including PAD and OOV.

        Returns:
            A `Vocabulary`, most frequent tokens first (ties alphabetical, so
            the result does not depend on document order).
        """
        if min_count < 1:
            raise ValueError(f"min_count must be >= 1. Received: {min_count}.")
        if max_size is not None and max_size < 3:
            raise ValueError(f"max_size must be >= 3 (PAD, OOV and one word). Received: {max_size}.")
        if isinstance(documents, collections.Counter):
            counts = documents
        else:
            counts = collections.Counter()
            for document in documents:
                for sentence in document:
                    counts.update(sentence)
        kept = sorted((t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[: max_size - 2]
        return cls(kept, min_count=min_count, max_size=max_size)

    def __len__(self):
        return len(self.tokens)

    def __contains__(self, token):
        return token in self.index

    def lookup(self, token):
        """The id of a token form (`OOV` if unknown)."""
        return self.index.get(token, OOV)

    def get_config(self):
        return {"tokens": self.tokens[2:], "min_count": self.min_count, "max_size": self.max_size}

    def save(self, path):
        """Writes the vocabulary as JSON (atomically)."""
        save_json(path, FORMAT, self.get_config())

    @classmethod
    def load(cls, path):
        """Reads a vocabulary written by `save`.

        Raises:
            DataError: The file is missing, or its tokens are not a list of
                distinct strings.
        """
        config = load_json(path, FORMAT)
        tokens = config.get("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise DataError(f"{path}: 'tokens' must be a list of strings")
        if len(set(tokens)) != len(tokens):
            raise DataError(f"{path}: 'tokens' lists a word twice")
        return cls(tokens, config.get("min_count", 1), config.get("max_size"))
