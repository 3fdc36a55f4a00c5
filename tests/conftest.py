"""Test configuration: quiet TensorFlow, fixed seeds, shared fixtures."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(1234)
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


IMDB_ARCHIVE = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets", "aclImdb_v1.tar.gz")


@pytest.fixture(scope="session")
def imdb_splits():
    """The real IMDB train/test splits from ../shared (skipped when absent)."""
    if not os.path.exists(IMDB_ARCHIVE):
        pytest.skip(f"real IMDB archive not found at {os.path.normpath(IMDB_ARCHIVE)}")
    from hierattn.data import load_imdb

    return load_imdb(IMDB_ARCHIVE, splits=("train", "test"), download=False, progress=False)


@pytest.fixture(scope="session")
def imdb_sample(imdb_splits):
    """300 real training reviews, both classes (a fixed, seeded sample)."""
    indices = np.random.default_rng(0).choice(len(imdb_splits["train"]), size=300, replace=False)
    return imdb_splits["train"].subset(np.sort(indices))
