"""Where hierattn steps outside Keras's public API: each place behind one name, with the Keras issue it works around.

Everything else in hierattn is plain Keras. The two things here rely on how the installed Keras works inside;
`tests/utils/test_keras_compat.py` pins each behaviour relied on, so a Keras release that changes it fails a
test rather than a user's run:

* `BuildFromKnownShapes`: overrides `_maybe_symbolic_build`, a method only Keras's TensorFlow trainer has, so that
  `fit` and `evaluate` under a `tf.distribute` strategy build the model from shapes it knows
  (keras-team/keras#20585).
* `untracked_attribute` / `drop_untracked_attribute`: a cache held on a layer or model that Keras's attribute
  tracking does not see (keras-team/keras#18601).

Not here, because Keras has a public way: `hierattn.layers.MultiHeadAttention` overrides only
`MultiHeadAttention._compute_attention`, which Keras documents as the method to override for a custom attention
("Users can override this function for customized attention implementation"), and the backbones pass `dtype=` to
each layer they make, as Keras and keras-hub do, rather than switching the global dtype policy.

A leaf of the package, usable from any layer of it; it imports nothing, not even Keras (the program imports
`hierattn.explain` before it loads Keras).
"""


class BuildFromKnownShapes:
    """Mixin for a `keras.Model`: `fit` and `evaluate` under a strategy build it from `_build_batch()` when it gives one.

    Works around keras-team/keras#20585 ("Does Keras 3 work with
    `tf.distribute.MultiWorkerMirroredStrategy`?", open;
    https://github.com/keras-team/keras/issues/20585). Under a `tf.distribute`
    strategy, Keras's TensorFlow trainer builds the model before the first
    step from the first distributed batch, which it first averages over the
    replicas (`strategy.reduce("MEAN", ...)`, in
    `TensorFlowTrainer._maybe_symbolic_build`). That fails when replicas hold
    batches of different lengths (batches padded per replica) and under
    `MultiWorkerMirroredStrategy`. There is no public way to give Keras the
    shapes instead: building the model first does not help, as the batch is
    read and reduced before Keras checks what is built. A model that knows its
    input and target shapes returns a batch of them from `_build_batch` (e.g.
    `(np.ones((1, 1), "int32"), np.zeros((1, num_classes), "float32"))`), and
    is built from that; `None` leaves Keras's own behaviour.

    Without a strategy Keras builds nothing here (the model is built when its
    train function is traced) and the mixin changes nothing. It must come
    before `keras.Model` in the bases. Pinned by
    `tests/utils/test_keras_compat.py`: the method's name and arguments, that
    Keras calls it from `fit` and `evaluate`, and that plain Keras still fails
    on replicas' batches of different lengths where the mixin does not.

    Example:

    `hierattn.models.task.Task` is such a model; any model knowing its shapes can be:

    >>> import keras
    >>> import numpy as np
    >>> import tensorflow as tf
    >>> class Classifier(BuildFromKnownShapes, keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.dense = keras.layers.Dense(2, activation="softmax")
    ...     def build(self, input_shape):
    ...         print("built for", tuple(input_shape))
    ...         self.dense.build(input_shape)
    ...     def call(self, x):
    ...         return self.dense(x)
    ...     def _build_batch(self):  # one document of 4 features, one one-hot label of 2 classes
    ...         return np.zeros((1, 4), "float32"), np.zeros((1, 2), "float32")
    >>> with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
    ...     model = Classifier()
    ...     model.compile("sgd", "categorical_crossentropy")
    >>> _ = model.fit(np.ones((8, 4), "float32"), np.eye(2, dtype="float32")[[0, 1] * 4], batch_size=8, verbose=0)
    built for (1, 4)
    """

    def _build_batch(self):
        """A data batch `(x, y)` with the model's input and target shapes and dtypes, or `None` (Keras's own build)."""
        return None

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        if data_batch is None:
            known = self._build_batch()
            if known is not None:
                iterator, data_batch = None, known
        super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)


def untracked_attribute(layer, name, make):
    """The attribute `name` of a Keras layer or model, made by `make()` the first time, kept out of Keras's tracking.

    For what a model caches about itself: traced `tf.function`s, or a
    `keras.Model` sharing its layers (`Backbone.attention_model`). Assigned the
    usual way (`layer.name = value`), Keras's `Layer.__setattr__` would track
    it: a dict becomes a `TrackedDict` (and a dependency saved by TensorFlow's
    checkpointing), and a model or layer becomes a sub-layer, which a built
    model refuses ("You cannot add new elements of state ... to a layer that
    is already built") and an unbuilt one would save with its own weights.
    Keras tracks attributes append-only and has no public way to mark one
    untracked (keras-team/keras#18601, "Consider allowing sublayer
    reassignment", open; https://github.com/keras-team/keras/issues/18601),
    so the value is written to the instance's `__dict__`, which Python reads
    as an attribute and Keras never sees.

    Args:
        layer: A `keras.layers.Layer` (a `keras.Model` is one).
        name: The attribute's name (private to hierattn, e.g. `"_hierattn_inference"`).
        make: A function of no arguments making the value when there is none.

    Returns:
        The value: the one stored before, or `make()`'s, now stored.

    Example:

    >>> import keras
    >>> model = keras.Sequential([keras.layers.Dense(2)])
    >>> cache = untracked_attribute(model, "_hierattn_cache", dict)
    >>> type(cache).__name__, untracked_attribute(model, "_hierattn_cache", dict) is cache
    ('dict', True)
    """
    value = layer.__dict__.get(name)
    if value is None:
        value = layer.__dict__[name] = make()
    return value


def drop_untracked_attribute(layer, name):
    """Forgets the attribute `name` stored by `untracked_attribute` (nothing if there is none)."""
    layer.__dict__.pop(name, None)
