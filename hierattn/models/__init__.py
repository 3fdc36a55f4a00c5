"""Document classifiers built from hierattn.layers."""

import keras

from hierattn.models.han import build_han
from hierattn.models.rnn import ATTENTIONS, build_rnn
from hierattn.models.transformer import build_transformer

BUILDERS = {"han": build_han, "transformer": build_transformer, "rnn": build_rnn}

# The attention layers whose weights explain each kind of model.
ATTENTION_LAYERS = {
    "han": ("word_attention", "sentence_attention"),
    "transformer": ("attention_pooling",),
    "rnn": ("attention",),
}


def attention_outputs(model):
    """A model giving the probabilities and the explaining attention weights.

    Works on a freshly built or a reloaded model.

    Args:
        model: A model from `build_han`, `build_transformer` or `build_rnn`.

    Returns:
        A `keras.Model` with outputs `{"probabilities": ..., <layer name>:
        weights, ...}`: for HAN `word_attention` `(batch, sentences, words)`
        and `sentence_attention` `(batch, sentences)`; for the others one
        `(batch, length)` array. Models without attention pooling (e.g. a
        Transformer with mean pooling) give the probabilities only.
    """
    outputs = {"probabilities": model.output}
    for names in ATTENTION_LAYERS.values():
        for name in names:
            try:
                layer = model.get_layer(name)
            except ValueError:
                continue
            if isinstance(layer.output, (list, tuple)):
                outputs[name] = layer.output[1]
    inputs = model.inputs[0] if len(model.inputs) == 1 else model.inputs
    return keras.Model(inputs, outputs, name=f"{model.name}_explainer")


__all__ = ["ATTENTIONS", "ATTENTION_LAYERS", "BUILDERS", "attention_outputs", "build_han", "build_rnn", "build_transformer"]
