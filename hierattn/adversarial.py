"""Adversarial training on the word embeddings (Miyato et al. 2017).

Each training step adds to the loss on the batch the loss on the same batch
with its embedded inputs e moved a distance `epsilon * ||e||` (L2, per
document, padding excluded) in the direction that raises the loss most, to
first order:

    r_adv = epsilon * ||e||_2 * g / ||g||_2,   g = d loss / d e
    loss  = L(x) + L(e + r_adv)

which makes the classifier flat around every training document in embedding
space, so it cannot fit a document by one rare word's vector. The size is
relative to the document's own norm: with a fixed size the model escapes the
perturbation by growing its embeddings (Miyato et al. normalise the
embeddings for the same reason, section 2). Only training
changes: the trained model is the plain model, saved and loaded as usual.

Reference:
    Miyato, Dai & Goodfellow. "Adversarial Training Methods for
    Semi-Supervised Text Classification." ICLR 2017, sections 3-4.
"""

import contextlib

import keras


@contextlib.contextmanager
def _patched_call(layer, after):
    """Temporarily passes `layer`'s outputs through `after(outputs)`."""
    original = layer.call

    def call(*args, **kwargs):
        return after(original(*args, **kwargs))

    layer.call = call
    try:
        yield
    finally:
        del layer.call  # back to the class's method


def _add_gradients(a, b):
    """a + b for dense gradients and for the IndexedSlices of embedding tables."""
    import tensorflow as tf

    if isinstance(a, tf.IndexedSlices) or isinstance(b, tf.IndexedSlices):
        a, b = (g if isinstance(g, tf.IndexedSlices) else tf.IndexedSlices(g, tf.range(tf.shape(g)[0]), tf.shape(g))
                for g in (a, b))
        return tf.IndexedSlices(tf.concat([a.values, b.values], 0), tf.concat([a.indices, b.indices], 0),
                                a.dense_shape)
    return a + b


@keras.saving.register_keras_serializable(package="hierattn")
class AdversarialTrainer(keras.Model):
    """Trains `model` with adversarial perturbations of one layer's outputs.

    A training wrapper: `fit` it instead of `model` (it shares `model`'s
    variables, so checkpoints and early stopping work as usual), then save
    `model`. Inference (`predict`, `evaluate`) is `model`'s, unperturbed.

    Args:
        model: The classifier to train.
        epsilon: Size of the perturbation, as a fraction of the L2 norm of
            each document's (unpadded) embedded words.
        layer: Name of the layer whose outputs are perturbed (the embedding).
        **kwargs: Base `keras.Model` keyword arguments.

    Call arguments:
        inputs: The model's inputs.
        training: Passed to the model.

    Returns:
        The model's outputs.
    """

    def __init__(self, model, epsilon=0.05, layer="embedding", **kwargs):
        super().__init__(**kwargs)
        if not epsilon > 0:
            raise ValueError(f"epsilon must be positive. Received: epsilon={epsilon!r}.")
        self.model = model
        self.epsilon = float(epsilon)
        self.layer = layer
        self.perturbed = model.get_layer(layer)
        self.built = model.built  # nothing of its own to build (callbacks such as BackupAndRestore check)

    def call(self, inputs, training=None):
        return self.model(inputs, training=training)

    def _loss(self, x, y, sample_weight, after):
        with _patched_call(self.perturbed, after):
            y_pred = self(x, training=True)
        return y_pred, self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=True)

    def perturbation(self, x, y, sample_weight=None):
        """The clean forward pass and the adversarial perturbation for a batch.

        Returns:
            `(y_pred, loss, gradients, r_adv)`: the predictions and loss
            without perturbation, the loss's gradients for
            `trainable_weights`, and `r_adv`, shaped like the perturbed
            layer's outputs, of L2 norm `epsilon` times the outputs' norm per
            document (zero at padding).
        """
        import tensorflow as tf

        seen = []

        def record(outputs):
            seen.append(outputs)
            return outputs

        with tf.GradientTape() as tape:
            y_pred, loss = self._loss(x, y, sample_weight, record)
            scaled = self.optimizer.scale_loss(loss) if self.optimizer is not None else loss
        gradients, direction = tape.gradient(scaled, [self.trainable_weights, seen[0]])
        outputs = seen[0]
        mask = self.perturbed.compute_mask(x)
        if mask is not None:  # padded positions neither count in the norm nor get perturbed
            mask = tf.cast(mask, outputs.dtype)[..., None]
            outputs, direction = outputs * mask, direction * mask
        axes = list(range(1, len(direction.shape)))
        norm = lambda t: tf.sqrt(tf.reduce_sum(tf.square(t), axis=axes, keepdims=True))  # noqa: E731
        r_adv = self.epsilon * norm(outputs) * direction / (norm(direction) + 1e-12)
        return y_pred, loss, gradients, tf.stop_gradient(r_adv)

    def adversarial_loss(self, x, y, r_adv, sample_weight=None):
        """The loss with `r_adv` added to the perturbed layer's outputs."""
        return self._loss(x, y, sample_weight, lambda outputs: outputs + r_adv)[1]

    def train_step(self, data):
        import tensorflow as tf

        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        weights = self.trainable_weights
        y_pred, loss, gradients, r_adv = self.perturbation(x, y, sample_weight)
        with tf.GradientTape() as tape:
            scaled = self.optimizer.scale_loss(self.adversarial_loss(x, y, r_adv, sample_weight))
        adversarial_gradients = tape.gradient(scaled, weights)
        self.optimizer.apply_gradients(
            (_add_gradients(g, a), w) for g, a, w in zip(gradients, adversarial_gradients, weights)
        )
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(
            {"model": keras.saving.serialize_keras_object(self.model), "epsilon": self.epsilon, "layer": self.layer}
        )
        return config

    @classmethod
    def from_config(cls, config):
        config["model"] = keras.saving.deserialize_keras_object(config["model"])
        return cls(**config)
