"""Tests for hierattn.models.text_preprocessor.TextPreprocessor."""

import keras
import numpy as np
import pytest

from hierattn.errors import DataError
from hierattn.models import TextPreprocessor
from hierattn.models.inputs import as_texts

TEXTS = ["A fine film. I loved it!", "A dull film. The acting was poor and the plot was thin.", "Fine."]


def test_adapt_sets_the_vocabulary_and_the_missing_limits():
    preprocessor = TextPreprocessor("hierarchical", min_count=1, max_words=4)
    assert not preprocessor.adapted
    with pytest.raises(ValueError, match="call adapt"):
        preprocessor(TEXTS)
    preprocessor.adapt(TEXTS, progress=False)
    assert preprocessor.adapted and preprocessor.max_words == 4 and preprocessor.max_sentences == 2
    ids = preprocessor(TEXTS)
    assert ids.shape == (3, 2, 4) and ids.dtype == np.int32
    assert ids[0, 0, 1] == preprocessor.vocabulary.lookup("fine")


def test_flat_mode_and_the_config_round_trip(tmp_path):
    preprocessor = TextPreprocessor("flat", min_count=1, sequence_length=5)
    preprocessor.adapt(TEXTS, progress=False)
    assert preprocessor(TEXTS).shape == (3, 5)
    clone = TextPreprocessor.from_config(preprocessor.get_config())
    assert clone.get_config() == preprocessor.get_config() and not clone.adapted
    preprocessor.save_assets(str(tmp_path))
    clone.load_assets(str(tmp_path))
    np.testing.assert_array_equal(clone(TEXTS), preprocessor(TEXTS))
    assert keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(preprocessor)).mode == "flat"


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match="mode must be one of"):
        TextPreprocessor("words")
    with pytest.raises(ValueError, match="max_words must be a whole number of at least 1, or None, not 0"):
        TextPreprocessor(max_words=0)
    with pytest.raises(ValueError, match="min_count must be a whole number of at least 1, not 'two'"):
        TextPreprocessor(min_count="two")
    with pytest.raises(ValueError, match="max_vocab must be a whole number of at least 3, or None, not 2"):
        TextPreprocessor(max_vocab=2)
    assert TextPreprocessor(max_vocab=None).max_vocab is None  # no cap
    with pytest.raises(DataError, match="not a single string"):
        as_texts("a text")
    with pytest.raises(DataError, match=r"text 2 is 3 \(int\)"):
        as_texts(["a text", 3])
    assert TextPreprocessor().has_words("a film") and not TextPreprocessor().has_words("<br /> ")
