"""Token embedding plus position information."""

import math

import keras
from keras import ops

from hierattn.defaults import CHOICES
from hierattn.layers._attention_utils import check_choice, check_positive_int
from hierattn.layers.positional_encoding import sinusoidal_table

POSITION_MODES = CHOICES["position"]


@keras.saving.register_keras_serializable(package="hierattn")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Embeds token ids and adds a position embedding.

        sinusoidal: output = E[x_t] * scale + PE[t]   (PE fixed, scale = sqrt(d))
        learned:    output = E[x_t] + P[t]            (P trainable)

    Token id 0 is padding: with `mask_zero=True` the layer emits a
    `(batch, T)` mask that downstream hierattn layers use.

    Args:
        vocabulary_size: Number of token ids (including padding 0 and OOV).
        embedding_dim: Size of the embeddings `d`.
        sequence_length: Longest sequence for `"learned"` positions (required
            then); ignored by `"sinusoidal"`, which handles any length.
        position: `"sinusoidal"` (fixed, Vaswani et al.) or `"learned"`.
        mask_zero: Whether id 0 is padding and produces a mask.
        scale: Multiplier of the token embeddings in `"sinusoidal"` mode.
            Defaults to sqrt(`embedding_dim`) (Vaswani et al.), which suits
            embeddings initialised at scale d^-1/2.
        embeddings_initializer: Initializer for the token embeddings. To start
            from pretrained vectors, build the layer and call
            `layer.token_embedding.set_weights([matrix])`.
        embeddings_regularizer: Optional regularizer for the token embeddings.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: Integer tensor of shape `(batch, T)`.
        mask: Unused; the mask is computed from the ids.
        training: Unused.

    Returns:
        Float tensor of shape `(batch, T, embedding_dim)`.

    Example:

    >>> import numpy as np
    >>> layer = TokenAndPositionEmbedding(vocabulary_size=100, embedding_dim=8)
    >>> ids = np.array([[5, 7, 0]])                 # 0 is padding
    >>> print(layer(ids).shape)
    (1, 3, 8)
    >>> np.asarray(layer.compute_mask(ids))         # passed on to the next layers
    array([[ True,  True, False]])

    Reference:
        Vaswani et al. "Attention Is All You Need." NeurIPS 2017, sections
        3.4-3.5.
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        sequence_length=None,
        position="sinusoidal",
        mask_zero=True,
        scale=None,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int(vocabulary_size, "vocabulary_size")
        check_positive_int(embedding_dim, "embedding_dim")
        check_positive_int(sequence_length, "sequence_length", allow_none=True)
        check_choice(position, POSITION_MODES, "position")
        if scale is not None and not scale > 0:
            raise ValueError(f"scale must be positive. Received: scale={scale!r}.")
        if position == "learned" and sequence_length is None:
            raise ValueError("position='learned' needs sequence_length.")
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.sequence_length = sequence_length
        self.position = position
        self.mask_zero = mask_zero
        self.scale = scale
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.embeddings_regularizer = keras.regularizers.get(embeddings_regularizer)
        self.token_embedding = keras.layers.Embedding(
            vocabulary_size,
            embedding_dim,
            embeddings_initializer=self.embeddings_initializer,
            embeddings_regularizer=self.embeddings_regularizer,
            mask_zero=mask_zero,
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.position_embedding = (
            keras.layers.Embedding(sequence_length, embedding_dim, dtype=self.dtype_policy, name="position_embedding")
            if position == "learned"
            else None
        )
        self.supports_masking = mask_zero

    def build(self, input_shape):
        self.token_embedding.build(input_shape)
        if self.position_embedding is not None:
            self.position_embedding.build((None,))

    def call(self, inputs, mask=None, training=None):
        tokens = self.token_embedding(inputs)
        length = ops.shape(inputs)[1]
        if self.position == "learned":
            return tokens + self.position_embedding(ops.arange(length))[None, :, :]
        tokens = tokens * ops.cast(self.token_scale, tokens.dtype)
        return tokens + sinusoidal_table(length, self.embedding_dim, dtype=tokens.dtype)[None, :, :]

    @property
    def scales_tokens(self):
        """Whether the token embeddings are multiplied by `token_scale` (sinusoidal mode)."""
        return self.position == "sinusoidal"

    @property
    def token_scale(self):
        """The multiplier of the token embeddings in sinusoidal mode."""
        return math.sqrt(self.embedding_dim) if self.scale is None else self.scale

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.embedding_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "embedding_dim": self.embedding_dim,
                "sequence_length": self.sequence_length,
                "position": self.position,
                "mask_zero": self.mask_zero,
                "scale": self.scale,
                "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
                "embeddings_regularizer": keras.regularizers.serialize(self.embeddings_regularizer),
            }
        )
        return config
