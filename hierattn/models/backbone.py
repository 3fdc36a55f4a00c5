"""`Backbone`: the network of a `TextClassifier`, from token ids to class probabilities."""

import contextvars

import keras

from hierattn.kinds import kind_of
from hierattn.layers._attention_utils import check_positive_int
from hierattn.models.arguments import check_backbone_arguments

# True while `Backbone.from_config` rebuilds a backbone (see `recurrent`).
_LOADING = contextvars.ContextVar("hierattn_backbone_loading", default=False)


@keras.saving.register_keras_serializable(package="hierattn")
class Backbone(keras.Model):
    """Base class of the networks a `TextClassifier` trains.

    A functional `keras.Model` from int32 token ids (0 for padding) to class
    probabilities, after keras-hub's `Backbone`: a subclass builds its graph
    in `__init__` from its arguments, calls `super().__init__(inputs,
    outputs)`, and then records what callers need instead of looking layers
    up by name:

    * `token_embedding`: the `keras.layers.Embedding` of the token ids (its
      table is what word2vec initialises and what gradients are read from);
    * `input_rank`: 3 for documents of sentences of words `(batch, sentences,
      words)`, 2 for flat documents `(batch, length)`;
    * `attention_layers`: the attention layers whose weights explain a
      prediction, by name (see `attention_model`).

    `get_config` returns the constructor's arguments (not the layer graph),
    so `from_config` rebuilds the same subclass.

    Args:
        *args: `inputs` and `outputs` of the functional model.
        **kwargs: Keras `Model` arguments (`name`, `trainable`, `dtype`).

    Example:

    >>> from hierattn.models import HANBackbone
    >>> backbone = HANBackbone(vocabulary_size=50, num_classes=2, embedding_dim=8)
    >>> backbone.input_rank, backbone.token_embedding.input_dim
    (3, 50)
    """

    input_rank = 2
    architecture = None  # the name of a built-in architecture (`hierattn.defaults.BACKBONES`), for its checks

    def __init__(self, *args, dtype=None, **kwargs):
        unknown = sorted(set(kwargs) - {"name", "trainable"})
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected keyword argument(s): {', '.join(unknown)}")
        super().__init__(*args, **kwargs)
        if dtype is not None:
            self.dtype_policy = keras.dtype_policies.get(dtype)
        self.token_embedding = None
        self.attention_layers = {}

    @classmethod
    def check_arguments(cls, **arguments):
        """Refuses bad values of the backbone's own arguments, building nothing.

        The constructor checks its arguments this way first; `TextClassifier`
        checks those of a backbone it will build when it is constructed,
        before any data is read. Arguments not given take their defaults
        where two are checked together. A subclass of a built-in
        architecture (`architecture`, e.g. `"han"`) is checked by
        `hierattn.models.arguments.check_backbone_arguments`; one without checks
        nothing here.

        Args:
            **arguments: Keyword arguments of the constructor, without
                `vocabulary_size`, `num_classes` and Keras's own.

        Raises:
            ValueError: An argument the backbone does not take, or a bad
                value, named in one line.

        Example:

        >>> HANBackbone.check_arguments(embedding_dim=0)
        Traceback (most recent call last):
        ValueError: embedding_dim must be a whole number of at least 1, not 0
        """
        if cls.architecture is not None:
            check_backbone_arguments(cls.architecture, arguments)

    @property
    def multi_label(self):
        """Whether the outputs are independent label probabilities (a sigmoid head) rather than a softmax."""
        return getattr(self, "activation", "softmax") == "sigmoid"

    @property
    def kind(self):
        """`MULTI` for a sigmoid head (independent label probabilities), else `SINGLE` (`hierattn.kinds`)."""
        return kind_of(self.multi_label)

    @property
    def num_classes(self):
        """The number of class probabilities the backbone outputs."""
        return self.output.shape[-1]

    def set_token_vectors(self, matrix):
        """Sets the token embedding table to `matrix` `(vocabulary_size, embedding_dim)` (e.g. word2vec vectors)."""
        self.token_embedding.set_weights([matrix])

    def attention_model(self):
        """A model from the same ids to `{"probabilities": ..., <attention name>: weights, ...}`.

        Shares this backbone's layers and weights. The weights of a layer
        pooling a sequence are `(batch, length)`; the HAN's word attention is
        `(batch, sentences, words)` and its sentence attention `(batch,
        sentences)`. A backbone without attention pooling (e.g. a Transformer
        with mean pooling) gives the probabilities only.
        """
        outputs = {"probabilities": self.output}
        for name, layer in self.attention_layers.items():
            outputs[name] = layer.output[1]
        return keras.Model(self.input, outputs, name=f"{self.name}_attention")

    def word_attention(self, outputs):
        """Each token's weight within its row of ids (shaped like the ids), from `attention_model` outputs.

        A row is the whole document for a flat backbone (its pooling
        weights), a sentence for the HAN (its word attention).
        """
        (name,) = self.attention_layers
        return outputs[name]

    def sentence_attention(self, outputs):
        """Each row's (sentence's) weight in the document, or `None` where the document is one row."""
        return None

    def token_attention(self, outputs):
        """Each token's weight in the pooled document (shaped like the ids): word weight x sentence weight."""
        words, sentences = self.word_attention(outputs), self.sentence_attention(outputs)
        return words if sentences is None else words * sentences[..., None]

    def get_config(self):
        # Not chained to `keras.Model.get_config`: a functional model's config
        # is its layer graph, which the subclass's constructor rebuilds.
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        token = _LOADING.set(True)
        try:
            return cls(**config)
        finally:
            _LOADING.reset(token)


# The output activations of a backbone: one class per document, or an independent probability per label.
ACTIVATIONS = ("softmax", "sigmoid")


def classifier_head(features, num_classes, dropout, dtype=None, activation="softmax"):
    """Dropout (with the dtype policy `dtype`) and a softmax (or sigmoid) layer named `probabilities`, in float32."""
    if dropout:
        features = keras.layers.Dropout(dropout, dtype=dtype, name="head_dropout")(features)
    return keras.layers.Dense(num_classes, activation=activation, dtype="float32", name="probabilities")(features)


def recurrent(cell, units, name, return_sequences=True, return_state=False, dtype=None):
    """A bidirectional GRU or LSTM, with the dtype policy `dtype`.

    While a backbone is rebuilt from its config (`Backbone.from_config`,
    inside `keras.saving.load_model`), the backward layer is made here
    rather than copied by `Bidirectional`: Keras copies it by serializing
    the forward layer a second time, and inside `load_model`'s
    object-sharing scope that second config carries the layer's `id()`,
    which can match an id recorded from the saved file and bring back
    another object (an intermittent "Forward layer and backward layer should
    have different `go_backwards` value"). Otherwise Keras copies it as
    usual, so a seeded backbone starts from the same weights as before.
    """
    layer = keras.layers.GRU if cell == "gru" else keras.layers.LSTM
    options = {"return_sequences": return_sequences, "return_state": return_state, "dtype": dtype}
    forward = layer(units, **options)
    backward = layer(units, go_backwards=True, name=f"backward_{forward.name}", **options) if _LOADING.get() else None
    return keras.layers.Bidirectional(forward, backward_layer=backward, dtype=dtype, name=name)


def check_common(vocabulary_size, num_classes, activation="softmax"):
    """Checks the sizes and the output activation every backbone is given (the rest: `Backbone.check_arguments`).

    A softmax needs two classes or more; a sigmoid (multi-label) one label or more.
    """
    check_positive_int(vocabulary_size, "vocabulary_size")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}. Received: activation={activation!r}.")
    least = 2 if activation == "softmax" else 1
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < least:
        raise ValueError(f"num_classes must be an integer >= {least}. Received: num_classes={num_classes!r}.")
