"""What a preprocessor gives: one array of token ids, or a dict of two (`"token_ids"` and `"ngram_ids"`).

A `TextPreprocessor` with `ngram_length` gives the backbone's ids and the
whole text's for the n-gram part, as keras-hub's preprocessors give dicts;
these helpers take either form.
"""


def token_ids(x):
    """The backbone's ids of a preprocessor's output: `x["token_ids"]` of a dict, else `x` itself."""
    return x["token_ids"] if isinstance(x, dict) else x


def ngram_ids(x):
    """The n-gram part's ids of a preprocessor's output: `x["ngram_ids"]` of a dict, else `x` itself.

    A plain array is what a preprocessor without `ngram_length` gives (a
    classifier saved before the n-gram part read the whole text): its
    n-gram part reads the backbone's ids.
    """
    return x["ngram_ids"] if isinstance(x, dict) else x


def take_documents(x, index):
    """The documents `index` of a preprocessor's output (an array, or a dict of arrays)."""
    return {key: value[index] for key, value in x.items()} if isinstance(x, dict) else x[index]
