"""Tests for hierattn.utils.keras_compat, and pins of the Keras behaviour each of its work-arounds relies on.

Each `test_keras_...` test states what the installed Keras does that hierattn works around or relies on; one
failing after a Keras upgrade says which work-around to look at again (drop it if Keras fixed the issue, adapt it if
Keras moved the internals).
"""

import inspect
import pathlib
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras.src.backend.tensorflow.trainer import TensorFlowTrainer
from keras.src.utils.tracking import TrackedDict

from hierattn.layers import MultiHeadAttention
from hierattn.utils.keras_compat import BuildFromKnownShapes, drop_untracked_attribute, untracked_attribute

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent

# --- BuildFromKnownShapes: Keras's TensorFlow trainer builds from the first distributed batch (keras#20585) ---


class Recording(keras.Model):
    """A subclassed model that records the input shapes it is built with."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2, activation="softmax")
        self.shapes = []

    def build(self, shape):
        self.shapes.append(tuple(shape))
        self.dense.build(shape)

    def call(self, x):
        return self.dense(x)


class KnownShapes(BuildFromKnownShapes, Recording):
    def _build_batch(self):
        return np.zeros((1, 4), "float32"), np.zeros((1, 2), "float32")


class NoKnownShapes(BuildFromKnownShapes, Recording):
    pass  # `_build_batch` gives None: Keras's own build


def fit_and_evaluate(cls):
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
        model = cls()
        model.compile("sgd", "categorical_crossentropy")
    x, y = np.ones((8, 4), "float32"), np.eye(2, dtype="float32")[[0, 1] * 4]
    model.fit(x, y, batch_size=8, verbose=0)
    model.evaluate(x, y, batch_size=8, verbose=0)
    return model


def test_under_a_strategy_fit_and_evaluate_build_from_the_known_batch():
    assert fit_and_evaluate(KnownShapes).shapes == [(1, 4)]
    assert fit_and_evaluate(NoKnownShapes).shapes == [(8, 4)]  # Keras's own: the first batch


def test_without_a_strategy_the_mixin_changes_nothing():
    model = KnownShapes()
    model.compile("sgd", "categorical_crossentropy")
    model.fit(np.ones((8, 4), "float32"), np.eye(2, dtype="float32")[[0, 1] * 4], batch_size=8, verbose=0)
    assert model.shapes == [(8, 4)]  # built when the train function was traced


def test_keras_tensorflow_trainer_still_has_the_overridden_method_and_calls_it_from_fit_and_evaluate():
    method = TensorFlowTrainer._maybe_symbolic_build
    assert list(inspect.signature(method).parameters) == ["self", "iterator", "data_batch"]
    assert issubclass(keras.Model, TensorFlowTrainer)
    for verb in (TensorFlowTrainer.fit, TensorFlowTrainer.evaluate):
        assert "self._maybe_symbolic_build(iterator=" in inspect.getsource(verb)


def test_keras_still_fails_on_replica_batches_of_different_lengths_and_the_mixin_does_not():
    # keras-team/keras#20585: the first distributed batch is averaged over the replicas before the build, which
    # fails when the replicas' batches have different lengths. When this test fails, Keras builds without that
    # average: BuildFromKnownShapes (and Task._build_batch) can go. Two logical CPUs must be set before TensorFlow
    # starts, hence a fresh process.
    script = textwrap.dedent("""
        import traceback
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import keras, numpy as np
        from hierattn.utils.keras_compat import BuildFromKnownShapes
        keras.config.disable_traceback_filtering()  # the traceback names where it fails

        class Pooled(keras.Model):
            def __init__(self):
                super().__init__()
                self.embedding = keras.layers.Embedding(10, 4)
                self.dense = keras.layers.Dense(2, activation="softmax")
            def call(self, x):
                return self.dense(keras.ops.mean(self.embedding(x), axis=1))

        class Known(BuildFromKnownShapes, Pooled):
            def _build_batch(self):
                return np.ones((1, 1), "int32"), np.zeros((1, 2), "float32")

        def dataset(context):  # batches of 3 ids, then of 5: one to each replica
            y = np.eye(2, dtype="float32")
            short = tf.data.Dataset.from_tensors((np.ones((2, 3), "int32"), y))
            return short.concatenate(tf.data.Dataset.from_tensors((np.ones((2, 5), "int32"), y))).repeat()

        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        for cls in (Pooled, Known):
            with strategy.scope():
                model = cls()
                model.compile("sgd", "categorical_crossentropy")
            try:
                model.fit(strategy.distribute_datasets_from_function(dataset), steps_per_epoch=2, verbose=0)
                print(cls.__name__, "fits")
            except Exception:
                print(cls.__name__, "fails in", "_maybe_symbolic_build" if "_maybe_symbolic_build" in
                      traceback.format_exc() else "another place")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == ["Pooled fails in _maybe_symbolic_build", "Known fits"]


# --- untracked_attribute: Keras tracks what is assigned to a layer, append-only (keras#18601) ---


def functional():
    inputs = keras.Input((3,))
    return keras.Model(inputs, keras.layers.Dense(2)(inputs))


def test_keras_tracks_a_dict_assigned_to_a_model_and_refuses_a_model_assigned_to_a_built_one():
    model = functional()
    model.cache = {}
    assert isinstance(model.cache, TrackedDict) and "cache" in model._tracked  # a dependency TensorFlow saves
    built = KnownShapes()
    built(np.ones((1, 4), "float32"))
    with pytest.raises(ValueError, match="cannot add new elements of state"):
        built.attention_model = functional()


def test_untracked_attribute_is_made_once_and_kept_out_of_keras_tracking():
    model = KnownShapes()
    model(np.ones((1, 4), "float32"))  # built: Keras would refuse a model assigned to it
    weights, layers = len(model.weights), len(model._layers)
    other = functional()
    made = []
    assert untracked_attribute(model, "_hierattn_other", lambda: made.append(1) or other) is other
    assert untracked_attribute(model, "_hierattn_other", lambda: made.append(1) or functional()) is other
    assert made == [1] and model._hierattn_other is other
    assert (len(model.weights), len(model._layers)) == (weights, layers)
    cache = untracked_attribute(model, "_hierattn_cache", dict)
    assert type(cache) is dict and "_hierattn_cache" not in getattr(model, "_tracked", [])
    drop_untracked_attribute(model, "_hierattn_other")
    drop_untracked_attribute(model, "_hierattn_never_set")
    assert not hasattr(model, "_hierattn_other") and untracked_attribute(model, "_hierattn_cache", dict) is cache


def test_a_model_with_untracked_attributes_saves_and_loads_as_before(tmp_path):
    model = functional()
    untracked_attribute(model, "_hierattn_inference", dict)["eager", 2] = True
    untracked_attribute(model, "_hierattn_attention", functional)
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert "_hierattn_inference" not in loaded.__dict__ and len(loaded.weights) == len(model.weights)
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(loaded(x), model(x))


# --- MultiHeadAttention: `_compute_attention` is Keras's documented customisation point (no work-around) ---


def test_keras_documents_compute_attention_as_the_method_to_override_with_our_signature():
    method = keras.layers.MultiHeadAttention._compute_attention
    assert "override this function for customized attention" in " ".join(method.__doc__.split())
    assert inspect.signature(MultiHeadAttention._compute_attention) == inspect.signature(method)


def test_keras_calls_compute_attention_with_the_mask_and_only_its_explicit_path_zeros_rows_without_keys(rng):
    calls = []

    class Spy(keras.layers.MultiHeadAttention):
        def _compute_attention(self, *args, **kwargs):
            output, scores = super()._compute_attention(*args, **kwargs)
            calls.append((len(args), kwargs, scores is None))
            return output, scores

    x = rng.normal(size=(2, 3, 4)).astype("float32")
    mask = np.array([[True, True, False], [False, False, False]])  # the second text is all padding
    pairs = mask[:, None, :] & mask[:, :, None]
    layer = Spy(num_heads=2, key_dim=2)
    fused = np.asarray(layer(x, x, attention_mask=pairs, use_causal_mask=True))
    explicit, weights = layer(x, x, attention_mask=pairs, use_causal_mask=True, return_attention_scores=True)
    # query, key, value, attention_mask (the causal one merged in), training, return_attention_scores: the override
    # gets the mask; without scores asked for Keras runs its fused kernel (no scores), with them its explicit path.
    assert calls == [(6, {}, True), (6, {}, False)]
    # The explicit path gives a row with no key zero weights (keras-team/keras#21123), so a zero context: the output
    # is the output projection's bias. The fused kernel gives that row a context averaged over the padding.
    bias = layer._output_dense.bias.numpy()
    np.testing.assert_array_equal(np.asarray(weights)[1], np.zeros((2, 3, 3)))
    np.testing.assert_allclose(np.asarray(explicit)[1], np.broadcast_to(bias, (3, 4)), atol=1e-6)
    assert not np.allclose(fused[1], bias, atol=1e-3)
    np.testing.assert_allclose(np.asarray(explicit)[0, :2], fused[0, :2], atol=1e-6)  # rows with keys agree
