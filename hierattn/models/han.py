"""Hierarchical Attention Network."""

import keras

from hierattn.defaults import BACKBONES
from hierattn.layers import ContextAttention, SentenceWise
from hierattn.models._common import check_common, classifier_head, recurrent


_HAN = BACKBONES["han"]


def build_han(
    vocabulary_size,
    num_classes,
    embedding_dim=_HAN["embedding_dim"],
    word_units=_HAN["word_units"],
    sentence_units=_HAN["sentence_units"],
    attention_units=_HAN["attention_units"],
    cell=_HAN["cell"],
    dropout=_HAN["dropout"],
    name="han",
):
    """Builds a Hierarchical Attention Network (Yang et al., NAACL 2016).

    embedding → bidirectional GRU over the words of each sentence →
    `ContextAttention` over words → bidirectional GRU over sentences →
    `ContextAttention` over sentences → softmax.

    Defaults are the tuned ones of `hierattn.defaults.BACKBONES["han"]`.

    Args:
        vocabulary_size: Number of token ids (0 is padding).
        num_classes: Number of classes (>= 2).
        embedding_dim: Word embedding size.
        word_units: GRU units per direction in the word encoder.
        sentence_units: GRU units per direction in the sentence encoder.
        attention_units: Hidden size of the two attention layers.
        cell: `"gru"` (as in the paper) or `"lstm"`.
        dropout: Dropout on the embeddings and before the classifier.
        name: Model name.

    Returns:
        A functional `keras.Model` from int32 ids `(batch, sentences, words)`
        (any number of sentences and words) to class probabilities. Its layers
        `word_attention` and `sentence_attention` give the attention weights
        (see `hierattn.models.attention_outputs`).
    """
    check_common(vocabulary_size, num_classes, embedding_dim, dropout)
    tokens = keras.Input((None, None), dtype="int32", name="tokens")
    x = keras.layers.Embedding(vocabulary_size, embedding_dim, mask_zero=True, name="embedding")(tokens)
    if dropout:
        x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
    x = SentenceWise(recurrent(cell, word_units, "word_rnn"), name="word_encoder")(x)
    sentences, _ = ContextAttention(attention_units, name="word_attention")(x, return_attention_scores=True)
    x = recurrent(cell, sentence_units, "sentence_encoder")(sentences)
    document, _ = ContextAttention(attention_units, name="sentence_attention")(x, return_attention_scores=True)
    return keras.Model(tokens, classifier_head(document, num_classes, dropout), name=name)
