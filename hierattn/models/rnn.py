"""Recurrent classifier with attention."""

import keras

from hierattn.defaults import BACKBONES, RNN_ATTENTIONS as ATTENTIONS
from hierattn.layers import BahdanauAttention, ContextAttention, LuongAttention
from hierattn.layers._attention_utils import check_choice
from hierattn.models._common import check_common, classifier_head, recurrent

_RNN = BACKBONES["rnn"]


def build_rnn(
    vocabulary_size,
    num_classes,
    embedding_dim=_RNN["embedding_dim"],
    units=_RNN["units"],
    cell=_RNN["cell"],
    attention=_RNN["attention"],
    window=_RNN["window"],
    local_mode=_RNN["local_mode"],
    dropout=_RNN["dropout"],
    name="rnn",
):
    """Builds a bidirectional RNN classifier with attention.

    embedding → BiGRU/BiLSTM → attention → softmax. With `"bahdanau"` and
    `"luong-*"` the query is the final states of both directions, attending
    over all steps (`window` makes Luong attention local); `"context"` uses
    `ContextAttention` pooling. The attended context is concatenated with the
    query before the classifier.

    Defaults are the tuned ones of `hierattn.defaults.BACKBONES["rnn"]`.

    Args:
        vocabulary_size: Number of token ids (0 is padding).
        num_classes: Number of classes (>= 2).
        embedding_dim: Word embedding size.
        units: RNN units per direction.
        cell: `"gru"` or `"lstm"`.
        attention: One of `ATTENTIONS`.
        window: Half-width of a local Luong window (`None`: global).
        local_mode: `"local-m"` or `"local-p"` for a local window.
        dropout: Dropout on the embeddings and before the classifier.
        name: Model name.

    Returns:
        A functional `keras.Model` from int32 ids `(batch, length)` to class
        probabilities; the attention layer is named `attention`.
    """
    check_common(vocabulary_size, num_classes, embedding_dim, dropout)
    check_choice(attention, ATTENTIONS, "attention")
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(vocabulary_size, embedding_dim, mask_zero=True, name="embedding")(tokens)
    if dropout:
        x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
    if attention == "context":
        x = recurrent(cell, units, "encoder")(x)
        features, _ = ContextAttention(name="attention")(x, return_attention_scores=True)
    else:
        outputs = recurrent(cell, units, "encoder", return_state=True)(x)
        sequence, states = outputs[0], outputs[1:]
        # Final hidden states of both directions (LSTM also returns cell states).
        hidden = states if cell == "gru" else [states[0], states[2]]
        query = keras.layers.Concatenate(name="query")(hidden)
        if attention == "bahdanau":
            layer = BahdanauAttention(units, name="attention")
        else:
            layer = LuongAttention(attention.split("-")[1], window=window, local_mode=local_mode, name="attention")
        context, _ = layer([query, sequence], return_attention_scores=True)
        features = keras.layers.Concatenate(name="context_and_query")([context, query])
    return keras.Model(tokens, classifier_head(features, num_classes, dropout), name=name)
