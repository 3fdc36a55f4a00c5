"""Hierarchical Attention Network backbone."""

import keras

from hierattn.defaults import BACKBONES
from hierattn.layers import ContextAttention, SentenceWise
from hierattn.models.backbone import Backbone, check_common, classifier_head, recurrent

_HAN = BACKBONES["han"]


@keras.saving.register_keras_serializable(package="hierattn")
class HANBackbone(Backbone):
    """A Hierarchical Attention Network (Yang et al., NAACL 2016).

    embedding → bidirectional GRU over the words of each sentence →
    `ContextAttention` over words → bidirectional GRU over sentences →
    `ContextAttention` over sentences → softmax. Defaults are the tuned ones
    of `hierattn.defaults.BACKBONES["han"]`.

    Takes int32 ids `(batch, sentences, words)` (any number of sentences and
    words; 0 is padding) and gives class probabilities. Its attention
    (`attention_model`) is `word_attention` `(batch, sentences, words)` and
    `sentence_attention` `(batch, sentences)`.

    Args:
        vocabulary_size: Number of token ids (0 is padding).
        num_classes: Number of classes (>= 2).
        embedding_dim: Word embedding size.
        word_units: GRU units per direction in the word encoder.
        sentence_units: GRU units per direction in the sentence encoder.
        attention_units: Hidden size of the two attention layers.
        cell: `"gru"` (as in the paper) or `"lstm"`.
        dropout: Dropout on the embeddings and before the classifier.
        activation: `"softmax"` (one class per document) or `"sigmoid"` (an
            independent probability per label: multi-label).
        name: Model name.
        dtype: Dtype policy of its layers (e.g. `"mixed_float16"`; the
            probabilities stay float32).
        **kwargs: Keras `Model` arguments such as `trainable`.

    Example:

    >>> import numpy as np
    >>> backbone = HANBackbone(vocabulary_size=100, num_classes=3, embedding_dim=16)
    >>> backbone(np.ones((2, 4, 6), "int32")).shape
    TensorShape([2, 3])
    """

    input_rank = 3
    architecture = "han"

    def __init__(
        self,
        vocabulary_size,
        num_classes,
        embedding_dim=_HAN["embedding_dim"],
        word_units=_HAN["word_units"],
        sentence_units=_HAN["sentence_units"],
        attention_units=_HAN["attention_units"],
        cell=_HAN["cell"],
        dropout=_HAN["dropout"],
        activation="softmax",
        name="han",
        dtype=None,
        **kwargs,
    ):
        check_common(vocabulary_size, num_classes, activation)
        type(self).check_arguments(
            embedding_dim=embedding_dim,
            word_units=word_units,
            sentence_units=sentence_units,
            attention_units=attention_units,
            cell=cell,
            dropout=dropout,
        )
        tokens = keras.Input((None, None), dtype="int32", name="tokens")
        embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, mask_zero=True, dtype=dtype, name="embedding"
        )
        x = embedding(tokens)
        if dropout:
            x = keras.layers.Dropout(dropout, dtype=dtype, name="embedding_dropout")(x)
        x = SentenceWise(recurrent(cell, word_units, "word_rnn", dtype=dtype), dtype=dtype, name="word_encoder")(x)
        word_attention = ContextAttention(attention_units, dtype=dtype, name="word_attention")
        sentences, _ = word_attention(x, return_attention_scores=True)
        x = recurrent(cell, sentence_units, "sentence_encoder", dtype=dtype)(sentences)
        sentence_attention = ContextAttention(attention_units, dtype=dtype, name="sentence_attention")
        document, _ = sentence_attention(x, return_attention_scores=True)
        probabilities = classifier_head(document, num_classes, dropout, dtype, activation)
        super().__init__(tokens, probabilities, name=name, dtype=dtype, **kwargs)
        self.token_embedding = embedding
        self.attention_layers = {"word_attention": word_attention, "sentence_attention": sentence_attention}
        self.vocabulary_size = vocabulary_size
        self.activation = activation
        self.embedding_dim = embedding_dim
        self.word_units = word_units
        self.sentence_units = sentence_units
        self.attention_units = attention_units
        self.cell = cell
        self.dropout = dropout

    def word_attention(self, outputs):
        return outputs["word_attention"]

    def sentence_attention(self, outputs):
        return outputs["sentence_attention"]

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_classes": self.num_classes,
                "activation": self.activation,
                "embedding_dim": self.embedding_dim,
                "word_units": self.word_units,
                "sentence_units": self.sentence_units,
                "attention_units": self.attention_units,
                "cell": self.cell,
                "dropout": self.dropout,
            }
        )
        return config
