"""Transformer encoder backbone."""

import keras
import numpy as np

from hierattn.defaults import BACKBONES
from hierattn.layers import ContextAttention, TokenAndPositionEmbedding, TransformerEncoderBlock
from hierattn.models.backbone import Backbone, check_common, classifier_head

_TRANSFORMER = BACKBONES["transformer"]


@keras.saving.register_keras_serializable(package="hierattn")
class TransformerBackbone(Backbone):
    """A Transformer encoder classifier (Vaswani et al., NeurIPS 2017).

    token + position embedding → `num_layers` × `TransformerEncoderBlock` →
    pooling → softmax. With `pooling="attention"` (default) the pooling is a
    `ContextAttention`, which gives one weight per word to explain the
    prediction (`attention_model`: `attention_pooling` `(batch, length)`);
    `"mean"` averages the non-padded positions. Defaults are the tuned ones
    of `hierattn.defaults.BACKBONES["transformer"]`.

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
        activation: `"softmax"` (one class per document) or `"sigmoid"` (an
            independent probability per label: multi-label).
        name: Model name.
        dtype: Dtype policy of its layers (e.g. `"mixed_float16"`).
        **kwargs: Keras `Model` arguments such as `trainable`.

    Example:

    >>> import numpy as np
    >>> backbone = TransformerBackbone(vocabulary_size=100, num_classes=2, sequence_length=16,
    ...                                embedding_dim=16, num_heads=2, intermediate_dim=32)
    >>> backbone(np.ones((2, 10), "int32")).shape
    TensorShape([2, 2])
    """

    architecture = "transformer"

    def __init__(
        self,
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
        activation="softmax",
        name="transformer",
        dtype=None,
        **kwargs,
    ):
        check_common(vocabulary_size, num_classes, activation)
        type(self).check_arguments(
            embedding_dim=embedding_dim,
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            num_layers=num_layers,
            dropout=dropout,
            pooling=pooling,
            position=position,
            normalize_first=normalize_first,
        )
        tokens = keras.Input((None,), dtype="int32", name="tokens")
        embedding = TokenAndPositionEmbedding(
            vocabulary_size,
            embedding_dim,
            sequence_length=sequence_length,
            position=position,
            dtype=dtype,
            name="embedding",
        )
        x = embedding(tokens)
        if dropout:
            x = keras.layers.Dropout(dropout, dtype=dtype, name="embedding_dropout")(x)
        for i in range(num_layers):
            x = TransformerEncoderBlock(
                num_heads,
                intermediate_dim,
                dropout=dropout,
                normalize_first=normalize_first,
                dtype=dtype,
                name=f"encoder_{i + 1}",
            )(x)
        if normalize_first:  # pre-norm blocks leave the residual stream unnormalised
            x = keras.layers.LayerNormalization(epsilon=1e-6, dtype=dtype, name="final_norm")(x)
        pooling_layer = None
        if pooling == "attention":
            pooling_layer = ContextAttention(dtype=dtype, name="attention_pooling")
            x, _ = pooling_layer(x, return_attention_scores=True)
        else:
            x = keras.layers.GlobalAveragePooling1D(dtype=dtype, name="mean_pooling")(x)
        probabilities = classifier_head(x, num_classes, dropout, dtype, activation)
        super().__init__(tokens, probabilities, name=name, dtype=dtype, **kwargs)
        self.embedding = embedding
        self.token_embedding = embedding.token_embedding
        self.attention_layers = {} if pooling_layer is None else {"attention_pooling": pooling_layer}
        self.vocabulary_size = vocabulary_size
        self.activation = activation
        self.sequence_length = sequence_length
        self.embedding_dim = embedding_dim
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.num_layers = num_layers
        self.dropout = dropout
        self.pooling = pooling
        self.position = position
        self.normalize_first = normalize_first

    def set_token_vectors(self, matrix):
        if self.embedding.scales_tokens:
            # A sinusoidal embedding multiplies token vectors by `token_scale`
            # (sqrt(d)), assuming they start at scale 1/token_scale; word2vec
            # vectors are ~4x larger at d=128 and would drown the positions,
            # so they are rescaled (directions unchanged; BENCHMARKS.md).
            std = float(np.std(matrix[1:]))
            if std > 0:
                matrix = matrix / (self.embedding.token_scale * std)
        super().set_token_vectors(matrix)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_classes": self.num_classes,
                "activation": self.activation,
                "sequence_length": self.sequence_length,
                "embedding_dim": self.embedding_dim,
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "num_layers": self.num_layers,
                "dropout": self.dropout,
                "pooling": self.pooling,
                "position": self.position,
                "normalize_first": self.normalize_first,
            }
        )
        return config
