"""Token embedding plus position information."""

import math

import keras
from keras import ops

from hierattn.layers._attention_utils import check_choice, check_positive_int
from hierattn.layers.positional_encoding import sinusoidal_table

POSITION_MODES = ("sinusoidal", "learned", "none")


@keras.saving.register_keras_serializable(package="hierattn")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Embeds token ids and adds a position embedding.

        sinusoidal: output = W(E[x_t] * scale) + PE[t]   (PE fixed, scale = sqrt(d))
        learned:    output = W(E[x_t]) + P[t]              (P trainable)
        none:       output = W(E[x_t] * scale)              (positions left to
                                                            the attention, e.g. ALiBi)

W is the identity unless `output_dim` differs from `embedding_dim`; then it
is a learned linear projection, so that wide (e.g. pretrained 200-d) word
vectors can feed a narrow model (the factorised embedding of Lan et al.,
"ALBERT", ICLR 2020, section 3.1).

    Token id 0 is padding: with `mask_zero=True` the layer emits a
    `(batch, T)` mask that downstream hierattn layers use.

    Args:
        vocab_size: Number of token ids (including padding 0 and OOV).
        embedding_dim: Size of the token embeddings.
        output_dim: Size of the outputs `d` (default `embedding_dim`); the
            token embeddings are projected to it when it differs.
        max_length: Longest sequence for `"learned"` positions (required
            then); ignored by `"sinusoidal"`, which handles any length.
        position: `"sinusoidal"` (fixed, Vaswani et al.), `"learned"`, or
            `"none"` (no position added: for attention that encodes
            distance itself, such as ALiBi).
        mask_zero: Whether id 0 is padding and produces a mask.
        scale: Multiplier of the token embeddings in `"sinusoidal"` and
            `"none"` modes.
            Defaults to sqrt(`embedding_dim`) (Vaswani et al.), which suits
            embeddings initialised at scale d^-1/2. A smaller multiplier with
            embeddings stored at scale 1/`scale` gives the same outputs but
            makes the optimiser move the embeddings more slowly (Adam's steps
            do not depend on the parameters' scale): useful to fine-tune
            pretrained vectors gently.
        embeddings_initializer: Initializer for the token embeddings. To start
            from pretrained vectors, build the layer and call
            `layer.token_embedding.set_weights([matrix])`.
        embeddings_regularizer: Optional regularizer for the token embeddings.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: Integer tensor of shape `(batch, T)`.
        mask: Unused; the mask is computed from the ids.
        training: Unused.
        return_attention_scores: Unused (no attention); accepted so every
            hierattn layer has the same call signature.

    Returns:
        Float tensor of shape `(batch, T, output_dim)`.

    Reference:
        Vaswani et al. "Attention Is All You Need." NeurIPS 2017, sections
        3.4-3.5. Lan et al. "ALBERT: A Lite BERT for Self-supervised Learning
        of Language Representations." ICLR 2020 (the projection).
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        max_length=None,
        position="sinusoidal",
        mask_zero=True,
        scale=None,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        output_dim=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int(vocab_size, "vocab_size")
        check_positive_int(embedding_dim, "embedding_dim")
        check_positive_int(max_length, "max_length", allow_none=True)
        check_positive_int(output_dim, "output_dim", allow_none=True)
        check_choice(position, POSITION_MODES, "position")
        if scale is not None and not scale > 0:
            raise ValueError(f"scale must be positive. Received: scale={scale!r}.")
        if position == "learned" and max_length is None:
            raise ValueError("position='learned' needs max_length.")
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.output_dim = output_dim
        self.max_length = max_length
        self.position = position
        self.mask_zero = mask_zero
        self.scale = scale
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.embeddings_regularizer = keras.regularizers.get(embeddings_regularizer)
        self.token_embedding = keras.layers.Embedding(
            vocab_size,
            embedding_dim,
            embeddings_initializer=self.embeddings_initializer,
            embeddings_regularizer=self.embeddings_regularizer,
            mask_zero=mask_zero,
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.projection = (
            keras.layers.Dense(output_dim, use_bias=False, dtype=self.dtype_policy, name="projection")
            if output_dim not in (None, embedding_dim)
            else None
        )
        self.position_embedding = (
            keras.layers.Embedding(max_length, self.model_dim, dtype=self.dtype_policy, name="position_embedding")
            if position == "learned"
            else None
        )
        self.supports_masking = mask_zero

    def build(self, input_shape):
        self.token_embedding.build(input_shape)
        if self.projection is not None:
            self.projection.build(tuple(input_shape) + (self.embedding_dim,))
        if self.position_embedding is not None:
            self.position_embedding.build((None,))

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        tokens = self.token_embedding(inputs)
        length = ops.shape(inputs)[1]
        if self.scales_tokens:
            tokens = tokens * ops.cast(self.token_scale, tokens.dtype)
        if self.projection is not None:
            tokens = self.projection(tokens)
        if self.position == "none":
            return tokens
        if self.position == "learned":
            return tokens + self.position_embedding(ops.arange(length))[None, :, :]
        return tokens + sinusoidal_table(length, self.model_dim, dtype=tokens.dtype)[None, :, :]

    @property
    def model_dim(self):
        """The width of the outputs (`output_dim`, or `embedding_dim`)."""
        return self.output_dim or self.embedding_dim

    @property
    def scales_tokens(self):
        """Whether the token embeddings are multiplied by `token_scale` (all modes but learned)."""
        return self.position != "learned"

    @property
    def token_scale(self):
        """The multiplier of the token embeddings (sinusoidal and none modes)."""
        return math.sqrt(self.embedding_dim) if self.scale is None else self.scale

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.model_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "output_dim": self.output_dim,
                "max_length": self.max_length,
                "position": self.position,
                "mask_zero": self.mask_zero,
                "scale": self.scale,
                "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
                "embeddings_regularizer": keras.regularizers.serialize(self.embeddings_regularizer),
            }
        )
        return config
