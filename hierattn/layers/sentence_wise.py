"""Apply a layer to every sentence of a document at once."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="hierattn")
class SentenceWise(keras.layers.Wrapper):
    """Applies a layer to each sentence by folding sentences into the batch.

    Input `(batch, sentences, words, ...)` is reshaped to
    `(batch * sentences, words, ...)`, passed through the wrapped layer, and
    the result reshaped back to `(batch, sentences, ...)`. It does what
    `TimeDistributed` does for the HAN word encoder, but as one call over a
    larger batch instead of a Python loop over sentences, so it is much faster
    on CPU, and the number of sentences may vary from batch to batch. The
    `(batch, sentences, words)` mask is folded and unfolded the same way.

    Args:
        layer: The layer to apply per sentence (e.g.
            `Bidirectional(GRU(50, return_sequences=True))`).
        **kwargs: Base layer keyword arguments, such as `name`.

    Call arguments:
        inputs: Tensor of shape `(batch, sentences, words, ...)`.
        mask: Optional `(batch, sentences, words)` boolean mask.
        training: Passed to the wrapped layer.
        return_attention_scores: Unused (this layer computes no attention
            itself); accepted so every hierattn layer has the same call
            signature.

    Returns:
        The wrapped layer's output with the sentence axis restored,
        `(batch, sentences, ...)`. The output mask is the input mask when the
        wrapped layer keeps the word axis (RNNs with `return_sequences=True`,
        `Dense`, ...), and `(batch, sentences)` "has any word" when it
        consumes it.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> encoder = SentenceWise(keras.layers.Bidirectional(keras.layers.GRU(4, return_sequences=True)))
    >>> x = np.random.rand(2, 3, 5, 8).astype("float32")   # (batch, sentences, words, dim)
    >>> mask = np.ones((2, 3, 5), bool)
    >>> mask[1, :, 2:] = False                             # the second text's sentences have 2 words
    >>> print(encoder(x, mask=mask).shape)
    (2, 3, 5, 8)
    >>> print(SentenceWise(keras.layers.GRU(4))(x).shape)  # a layer that consumes the words
    (2, 3, 4)

    Reference:
        Yang et al. "Hierarchical Attention Networks for Document
        Classification." NAACL 2016 (the word encoder applied per sentence).
    """

    def __init__(self, layer, **kwargs):
        super().__init__(layer, **kwargs)
        self.supports_masking = True

    @staticmethod
    def _fold_shape(input_shape):
        if len(input_shape) < 3:
            raise ValueError(
                f"SentenceWise expects (batch, sentences, words, ...); received shape {tuple(input_shape)}."
            )
        batch, sentences = input_shape[0], input_shape[1]
        folded = None if batch is None or sentences is None else batch * sentences
        return (folded,) + tuple(input_shape[2:])

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build(self._fold_shape(input_shape))

    @staticmethod
    def _reshape(x, dims):
        # Static sizes stay Python ints; if any size is only known at run time,
        # the new shape becomes one int32 tensor. Symbolic inputs (functional
        # model construction) only need the resulting shape.
        if isinstance(x, keras.KerasTensor):
            shape = tuple(d if isinstance(d, int) and d >= 0 else None for d in dims)
            return keras.KerasTensor(shape, dtype=x.dtype)
        if not all(isinstance(d, int) for d in dims):
            dims = ops.stack([ops.cast(d, "int32") for d in dims])
        return ops.reshape(x, dims)

    def _fold(self, x):
        return self._reshape(x, [-1] + list(ops.shape(x)[2:]))

    def _unfold(self, x, reference):
        shape = ops.shape(reference)
        return self._reshape(x, [shape[0], shape[1]] + list(ops.shape(x)[1:]))

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        kwargs = {}
        if self.layer._call_has_mask_arg and mask is not None:
            kwargs["mask"] = self._fold(mask)
        if self.layer._call_has_training_arg:
            kwargs["training"] = training
        return self._unfold(self.layer(self._fold(inputs), **kwargs), inputs)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        output_rank = len(self.compute_output_shape(inputs.shape))
        if output_rank < len(inputs.shape):
            # The wrapped layer consumed the word axis (e.g. an RNN without
            # return_sequences): a sentence is real if it has a real word.
            return ops.any(ops.cast(mask, "bool"), axis=-1)
        return mask

    def compute_output_shape(self, input_shape):
        inner = self.layer.compute_output_shape(self._fold_shape(input_shape))
        return (input_shape[0], input_shape[1]) + tuple(inner[1:])
