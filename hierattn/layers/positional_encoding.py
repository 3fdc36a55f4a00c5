"""Fixed sinusoidal positional encoding."""

import keras
from keras import ops

from hierattn.layers._attention_utils import check_positive_int


def sinusoidal_table(length, dim, max_wavelength=10000, dtype="float32"):
    """Returns the `(length, dim)` sinusoidal position table of Vaswani et al.

    `PE[p, 2i] = sin(p / w^(2i/dim))` and `PE[p, 2i+1] = cos(p / w^(2i/dim))`
    with `w = max_wavelength`; an odd `dim` is allowed.
    """
    positions = ops.cast(ops.arange(length), "float32")[:, None]
    index = ops.arange(dim)
    exponent = ops.cast(2 * (index // 2), "float32") / float(dim)
    angles = positions / ops.power(float(max_wavelength), exponent)[None, :]
    table = ops.where(ops.equal(index % 2, 0)[None, :], ops.sin(angles), ops.cos(angles))
    return ops.cast(table, dtype)


@keras.saving.register_keras_serializable(package="hierattn")
class PositionalEncoding(keras.layers.Layer):
    """Adds the fixed sinusoidal position encoding to a sequence.

        PE[p, 2i]   = sin(p / max_wavelength^(2i / d))
        PE[p, 2i+1] = cos(p / max_wavelength^(2i / d))
        output = inputs + PE[:T]

    The layer has no weights and works for any sequence length. It passes the
    input's mask through unchanged.

    Args:
        max_wavelength: The longest wavelength of the sinusoids.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: Tensor of shape `(batch, T, d)`.
        mask: Optional `(batch, T)` mask; propagated unchanged.
        training: Unused; accepted for API consistency.
        return_attention_scores: Unused (the layer computes no attention);
            accepted so every hierattn layer has the same call signature.

    Returns:
        Tensor of shape `(batch, T, d)`: `inputs` plus the encoding.

    Example:

    >>> import numpy as np
    >>> layer = PositionalEncoding()
    >>> x = np.zeros((2, 5, 8), "float32")           # (batch, T, d)
    >>> y = layer(x)
    >>> print(y.shape)
    (2, 5, 8)
    >>> np.asarray(y)[0, 0]                           # position 0: sin 0 = 0, cos 0 = 1
    array([0., 1., 0., 1., 0., 1., 0., 1.], dtype=float32)

    Reference:
        Vaswani et al. "Attention Is All You Need." NeurIPS 2017, section 3.5.
    """

    def __init__(self, max_wavelength=10000, **kwargs):
        super().__init__(**kwargs)
        check_positive_int(max_wavelength, "max_wavelength")
        self.max_wavelength = max_wavelength
        self.supports_masking = True

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        shape = ops.shape(inputs)
        table = sinusoidal_table(shape[1], inputs.shape[-1], self.max_wavelength, inputs.dtype)
        return inputs + table[None, :, :]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"max_wavelength": self.max_wavelength})
        return config
