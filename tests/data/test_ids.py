"""Tests for hierattn.data.ids: a preprocessor's output, one id array or a dict of two."""

import numpy as np

from hierattn.data.ids import ngram_ids, take_documents, token_ids


def test_a_dict_gives_each_part_and_an_array_is_both():
    network, whole = np.arange(12).reshape(3, 2, 2), np.arange(15).reshape(3, 5)
    both = {"token_ids": network, "ngram_ids": whole}
    assert token_ids(both) is network and ngram_ids(both) is whole
    assert token_ids(network) is network and ngram_ids(network) is network  # a classifier saved before


def test_take_documents_takes_the_same_documents_of_every_part():
    both = {"token_ids": np.arange(12).reshape(3, 2, 2), "ngram_ids": np.arange(15).reshape(3, 5)}
    taken = take_documents(both, [2, 0])
    np.testing.assert_array_equal(taken["token_ids"], both["token_ids"][[2, 0]])
    np.testing.assert_array_equal(taken["ngram_ids"], both["ngram_ids"][[2, 0]])
    np.testing.assert_array_equal(take_documents(both["ngram_ids"], slice(1, None)), both["ngram_ids"][1:])
