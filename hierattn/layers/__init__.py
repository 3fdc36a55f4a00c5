"""Keras 3 attention layers: mask-correct, serializable, explainable.

Every layer is registered under the `hierattn` package for Keras
serialization, so a `.keras` file that uses them loads with
`keras.saving.load_model(path)` once `hierattn.layers` is imported.
"""

from hierattn.layers.bahdanau_attention import BahdanauAttention
from hierattn.layers.context_attention import ContextAttention
from hierattn.layers.luong_attention import LuongAttention
from hierattn.layers.multi_head_attention import MultiHeadAttention
from hierattn.layers.positional_encoding import PositionalEncoding
from hierattn.layers.sentence_wise import SentenceWise
from hierattn.layers.token_and_position_embedding import TokenAndPositionEmbedding
from hierattn.layers.transformer_encoder_block import TransformerEncoderBlock

__all__ = [
    "BahdanauAttention",
    "ContextAttention",
    "LuongAttention",
    "MultiHeadAttention",
    "PositionalEncoding",
    "SentenceWise",
    "TokenAndPositionEmbedding",
    "TransformerEncoderBlock",
]
