"""Data: IMDB and table datasets, tokenization with offsets, fast encoding."""

from hierattn.data.batching import bucket_batches, trim_padding
from hierattn.data.dataset import LabelMap, TextDataset, stratified_split
from hierattn.data.encoding import (
    TextEncoder,
    encode_flat,
    encode_hierarchical,
    suggest_lengths,
    tokenize_corpus,
)
from hierattn.data.imdb import load_imdb, locate_imdb
from hierattn.data.tables import load_table, read_table
from hierattn.data.text import Token, Tokenizer, clean, sentence_spans
from hierattn.data.vocabulary import Vocabulary

__all__ = [
    "LabelMap",
    "TextDataset",
    "stratified_split",
    "TextEncoder",
    "bucket_batches",
    "encode_flat",
    "encode_hierarchical",
    "suggest_lengths",
    "tokenize_corpus",
    "trim_padding",
    "load_imdb",
    "locate_imdb",
    "load_table",
    "read_table",
    "Token",
    "Tokenizer",
    "clean",
    "sentence_spans",
    "Vocabulary",
]
