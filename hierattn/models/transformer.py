"""Transformer encoder classifier."""

import keras

from hierattn.layers import ContextAttention, TokenAndPositionEmbedding, TransformerEncoderBlock
from hierattn.layers._attention_utils import check_choice
from hierattn.models._common import check_common, classifier_head

POOLINGS = ("attention", "mean")

TRANSFORMER_POSITIONS = ("sinusoidal", "learned", "alibi")


def build_transformer(
    vocab_size,
    num_classes,
    max_len=512,
    embedding_dim=128,
    num_heads=4,
    ff_dim=256,
    num_layers=2,
    dropout=0.1,
    pooling="attention",
    position="sinusoidal",
    norm_first=False,
    embedding_scale=None,
    word_dropout=0.0,
    model_dim=None,
    name="transformer",
):
    """Builds a Transformer encoder classifier.

    token + position embedding → `num_layers` × `TransformerEncoderBlock` →
    pooling → softmax. With `pooling="attention"` (default) the pooling is a
    `ContextAttention`, which gives one weight per word to explain the
    prediction; `"mean"` averages the non-padded positions.

    Args:
        vocab_size: Number of token ids (0 is padding).
        num_classes: Number of classes (>= 2).
        max_len: Longest input (needed for learned positions).
        embedding_dim: Size of the word embeddings (and the model width `d`
            unless `model_dim` is given).
        num_heads: Attention heads per block (must divide `d`).
        ff_dim: Feed-forward hidden size.
        num_layers: Number of encoder blocks.
        dropout: Dropout rate (embeddings, residuals, classifier).
        pooling: `"attention"` or `"mean"`.
        position: `"sinusoidal"` or `"learned"` position embeddings, or
            `"alibi"`: no position embedding, and each block's
            self-attention penalises distance linearly (Press et al. 2022,
            "Train Short, Test Long"), a bias towards nearby words.
        norm_first: Pre-norm encoder blocks if `True` (see
            `TransformerEncoderBlock`), post-norm if `False`.
        embedding_scale: Multiplier of the token embeddings with sinusoidal
            positions (see `TokenAndPositionEmbedding`); defaults to
            sqrt(`embedding_dim`). Smaller values fine-tune pretrained
            vectors more gently.
        word_dropout: Rate at which whole words (their embedding vectors)
            are dropped in training, a regulariser against memorising rare
            words (Gal & Ghahramani 2016, "A Theoretically Grounded
            Application of Dropout in Recurrent Neural Networks", sec. 4.2).
        model_dim: Model width `d`, if different from `embedding_dim`: the
            word embeddings are then projected to `d` (a factorised embedding,
            see `TokenAndPositionEmbedding`), so wide pretrained vectors can
            feed a narrow, fast encoder.
        name: Model name.

    Returns:
        A functional `keras.Model` from int32 ids `(batch, length)` to class
        probabilities; the pooling layer is named `attention_pooling`.
    """
    check_common(vocab_size, num_classes, embedding_dim, dropout)
    check_choice(pooling, POOLINGS, "pooling")
    width = model_dim or embedding_dim
    if width % num_heads:
        raise ValueError(f"the model width ({width}) must be divisible by num_heads ({num_heads}).")
    check_choice(position, TRANSFORMER_POSITIONS, "position")
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    alibi = position == "alibi"
    x = TokenAndPositionEmbedding(vocab_size, embedding_dim, max_length=max_len, position="none" if alibi else position,
                                  scale=embedding_scale, output_dim=model_dim, name="embedding")(tokens)
    if word_dropout:
        x = keras.layers.Dropout(word_dropout, noise_shape=(None, None, 1), name="word_dropout")(x)
    if dropout:
        x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
    for i in range(num_layers):
        x = TransformerEncoderBlock(
            num_heads, ff_dim, dropout=dropout, norm_first=norm_first, position_bias="alibi" if alibi else None,
            name=f"encoder_{i + 1}",
        )(x)
    if norm_first:  # pre-norm blocks leave the residual stream unnormalised
        x = keras.layers.LayerNormalization(epsilon=1e-6, name="final_norm")(x)
    if pooling == "attention":
        x, _ = ContextAttention(name="attention_pooling")(x, return_attention_scores=True)
    else:
        x = keras.layers.GlobalAveragePooling1D(name="mean_pooling")(x)
    return keras.Model(tokens, classifier_head(x, num_classes, dropout), name=name)
