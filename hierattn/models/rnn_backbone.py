"""Recurrent backbone with attention."""

import keras

from hierattn.defaults import BACKBONES
from hierattn.layers import BahdanauAttention, ContextAttention, LuongAttention
from hierattn.models.backbone import Backbone, check_common, classifier_head, recurrent

_RNN = BACKBONES["rnn"]


@keras.saving.register_keras_serializable(package="hierattn")
class RNNBackbone(Backbone):
    """A bidirectional recurrent classifier with attention.

    embedding → BiGRU/BiLSTM → attention → softmax. With `"bahdanau"`
    (Bahdanau et al., ICLR 2015) and `"luong-*"` (Luong et al., EMNLP 2015)
    the query is the final states of both directions, attending over all
    steps (`window` makes Luong attention local); `"context"` uses
    `ContextAttention` pooling (Yang et al., 2016). The attended context is
    concatenated with the query before the classifier. Its attention
    (`attention_model`) is `attention` `(batch, length)`. Defaults are the
    tuned ones of `hierattn.defaults.BACKBONES["rnn"]`.

    Args:
        vocabulary_size: Number of token ids (0 is padding).
        num_classes: Number of classes (>= 2).
        embedding_dim: Word embedding size.
        units: RNN units per direction.
        cell: `"gru"` or `"lstm"`.
        attention: One of `hierattn.defaults.RNN_ATTENTIONS`.
        window: Half-width of a local Luong window (`None`: global).
        local_mode: `"local-m"` or `"local-p"` for a local window.
        dropout: Dropout on the embeddings and before the classifier.
        activation: `"softmax"` (one class per document) or `"sigmoid"` (an
            independent probability per label: multi-label).
        name: Model name.
        dtype: Dtype policy of its layers (e.g. `"mixed_float16"`).
        **kwargs: Keras `Model` arguments such as `trainable`.

    Example:

    >>> import numpy as np
    >>> backbone = RNNBackbone(vocabulary_size=100, num_classes=2, embedding_dim=16, units=8)
    >>> backbone(np.ones((2, 10), "int32")).shape
    TensorShape([2, 2])
    """

    architecture = "rnn"

    def __init__(
        self,
        vocabulary_size,
        num_classes,
        embedding_dim=_RNN["embedding_dim"],
        units=_RNN["units"],
        cell=_RNN["cell"],
        attention=_RNN["attention"],
        window=_RNN["window"],
        local_mode=_RNN["local_mode"],
        dropout=_RNN["dropout"],
        activation="softmax",
        name="rnn",
        dtype=None,
        **kwargs,
    ):
        check_common(vocabulary_size, num_classes, activation)
        type(self).check_arguments(
            embedding_dim=embedding_dim,
            units=units,
            cell=cell,
            attention=attention,
            window=window,
            local_mode=local_mode,
            dropout=dropout,
        )
        tokens = keras.Input((None,), dtype="int32", name="tokens")
        embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, mask_zero=True, dtype=dtype, name="embedding"
        )
        x = embedding(tokens)
        if dropout:
            x = keras.layers.Dropout(dropout, dtype=dtype, name="embedding_dropout")(x)
        if attention == "context":
            x = recurrent(cell, units, "encoder", dtype=dtype)(x)
            layer = ContextAttention(dtype=dtype, name="attention")
            features, _ = layer(x, return_attention_scores=True)
        else:
            outputs = recurrent(cell, units, "encoder", return_state=True, dtype=dtype)(x)
            sequence, states = outputs[0], outputs[1:]
            # Final hidden states of both directions (LSTM also returns cell states).
            hidden = states if cell == "gru" else [states[0], states[2]]
            query = keras.layers.Concatenate(dtype=dtype, name="query")(hidden)
            if attention == "bahdanau":
                layer = BahdanauAttention(units, dtype=dtype, name="attention")
            else:
                layer = LuongAttention(
                    attention.split("-")[1], window=window, local_mode=local_mode, dtype=dtype, name="attention"
                )
            context, _ = layer([query, sequence], return_attention_scores=True)
            features = keras.layers.Concatenate(dtype=dtype, name="context_and_query")([context, query])
        probabilities = classifier_head(features, num_classes, dropout, dtype, activation)
        super().__init__(tokens, probabilities, name=name, dtype=dtype, **kwargs)
        self.token_embedding = embedding
        self.attention_layers = {"attention": layer}
        self.vocabulary_size = vocabulary_size
        self.activation = activation
        self.embedding_dim = embedding_dim
        self.units = units
        self.cell = cell
        self.attention = attention
        self.window = window
        self.local_mode = local_mode
        self.dropout = dropout

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_classes": self.num_classes,
                "activation": self.activation,
                "embedding_dim": self.embedding_dim,
                "units": self.units,
                "cell": self.cell,
                "attention": self.attention,
                "window": self.window,
                "local_mode": self.local_mode,
                "dropout": self.dropout,
            }
        )
        return config
