"""Pieces shared by the model builders."""

import keras

from hierattn.defaults import CHOICES
from hierattn.layers._attention_utils import check_dropout, check_positive_int


def check_common(vocabulary_size, num_classes, embedding_dim, dropout):
    check_positive_int(vocabulary_size, "vocabulary_size")
    check_positive_int(embedding_dim, "embedding_dim")
    check_dropout(dropout)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2. Received: num_classes={num_classes!r}.")


def classifier_head(features, num_classes, dropout):
    """Dropout and a softmax layer named `probabilities`, computed in float32 also under mixed precision."""
    if dropout:
        features = keras.layers.Dropout(dropout, name="head_dropout")(features)
    return keras.layers.Dense(num_classes, activation="softmax", dtype="float32", name="probabilities")(features)


def recurrent(cell, units, name, return_sequences=True, return_state=False):
    """A bidirectional GRU or LSTM."""
    if cell not in CHOICES["cell"]:
        raise ValueError(f"cell must be 'gru' or 'lstm'. Received: cell={cell!r}.")
    layer = keras.layers.GRU if cell == "gru" else keras.layers.LSTM
    return keras.layers.Bidirectional(
        layer(units, return_sequences=return_sequences, return_state=return_state), name=name
    )
