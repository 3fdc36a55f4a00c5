"""Transformer encoder classifier."""

import keras

from hierattn.defaults import BACKBONES, CHOICES
from hierattn.layers import ContextAttention, TokenAndPositionEmbedding, TransformerEncoderBlock
from hierattn.layers._attention_utils import check_choice
from hierattn.layers.token_and_position_embedding import POSITION_MODES
from hierattn.models._common import check_common, classifier_head

POOLINGS = CHOICES["pooling"]

_TRANSFORMER = BACKBONES["transformer"]


def build_transformer(
    vocabulary_size,
    num_classes,
    sequence_length=512,
    embedding_dim=_TRANSFORMER["embedding_dim"],
    num_heads=_TRANSFORMER["num_heads"],
    intermediate_dim=_TRANSFORMER["intermediate_dim"],
    num_layers=_TRANSFORMER["num_layers"],
    dropout=_TRANSFORMER["dropout"],
    pooling=_TRANSFORMER["pooling"],
    position=_TRANSFORMER["position"],
    normalize_first=_TRANSFORMER["normalize_first"],
    name="transformer",
):
    """Builds a Transformer encoder classifier.

    token + position embedding → `num_layers` × `TransformerEncoderBlock` →
    pooling → softmax. With `pooling="attention"` (default) the pooling is a
    `ContextAttention`, which gives one weight per word to explain the
    prediction; `"mean"` averages the non-padded positions. Defaults are the
    tuned ones of `hierattn.defaults.BACKBONES["transformer"]`.

    Args:
        vocabulary_size: Number of token ids (0 is padding).
        num_classes: Number of classes (>= 2).
        sequence_length: Longest input (needed for learned positions).
        embedding_dim: Size of the word embeddings and model width `d`.
        num_heads: Attention heads per block (must divide `d`).
        intermediate_dim: Feed-forward hidden size.
        num_layers: Number of encoder blocks.
        dropout: Dropout rate (embeddings, residuals, classifier).
        pooling: `"attention"` or `"mean"`.
        position: `"sinusoidal"` or `"learned"` position embeddings.
        normalize_first: Pre-norm encoder blocks if `True` (see
            `TransformerEncoderBlock`), post-norm if `False`.
        name: Model name.

    Returns:
        A functional `keras.Model` from int32 ids `(batch, length)` to class
        probabilities; the pooling layer is named `attention_pooling`.
    """
    check_common(vocabulary_size, num_classes, embedding_dim, dropout)
    check_choice(pooling, POOLINGS, "pooling")
    check_choice(position, POSITION_MODES, "position")
    if embedding_dim % num_heads:
        raise ValueError(f"embedding_dim ({embedding_dim}) must be divisible by num_heads ({num_heads}).")
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    x = TokenAndPositionEmbedding(vocabulary_size, embedding_dim, sequence_length=sequence_length, position=position,
                                  name="embedding")(tokens)
    if dropout:
        x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
    for i in range(num_layers):
        x = TransformerEncoderBlock(num_heads, intermediate_dim, dropout=dropout, normalize_first=normalize_first,
                                    name=f"encoder_{i + 1}")(x)
    if normalize_first:  # pre-norm blocks leave the residual stream unnormalised
        x = keras.layers.LayerNormalization(epsilon=1e-6, name="final_norm")(x)
    if pooling == "attention":
        x, _ = ContextAttention(name="attention_pooling")(x, return_attention_scores=True)
    else:
        x = keras.layers.GlobalAveragePooling1D(name="mean_pooling")(x)
    return keras.Model(tokens, classifier_head(x, num_classes, dropout), name=name)
