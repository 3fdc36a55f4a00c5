"""Adversarial training on the embeddings (hierattn.adversarial)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from hierattn.adversarial import AdversarialTrainer, _add_gradients
from hierattn.models import build_han, build_rnn, build_transformer


def tiny_transformer():
    return build_transformer(50, 2, max_len=12, embedding_dim=16, num_heads=2, ff_dim=16, num_layers=1,
                             norm_first=True, dropout=0.0)


def batch(rng, n=8, length=12):
    x = rng.integers(1, 50, (n, length)).astype("int32")
    x[: n // 2, length // 2:] = 0  # half the documents padded
    y = keras.utils.to_categorical(rng.integers(0, 2, n), 2)
    return x, y


def compiled(model, epsilon=1.0):
    trainer = AdversarialTrainer(model, epsilon)
    trainer.compile(optimizer=keras.optimizers.Adam(1e-3), loss="categorical_crossentropy", metrics=["accuracy"])
    return trainer


def test_perturbation_is_relative_to_each_document_and_raises_the_loss_most(rng):
    model = tiny_transformer()
    trainer = compiled(model, epsilon=0.1)
    x, y = batch(rng)
    _, loss, _, r_adv = trainer.perturbation(x, y)
    r_adv = np.asarray(r_adv)
    assert r_adv.shape == (8, 12, 16)
    embedded = np.asarray(keras.Model(model.input, model.get_layer("embedding").output)(x)) * (x != 0)[..., None]
    np.testing.assert_allclose(np.sqrt((r_adv ** 2).sum(axis=(1, 2))),
                               0.1 * np.sqrt((embedded ** 2).sum(axis=(1, 2))), rtol=1e-4)
    assert not r_adv[x == 0].any()  # padding is neither counted nor perturbed
    adversarial = float(trainer.adversarial_loss(x, y, r_adv))
    random = np.asarray(rng.normal(size=r_adv.shape), dtype="float32") * (x != 0)[..., None]
    random *= np.sqrt((r_adv ** 2).sum(axis=(1, 2), keepdims=True) / (random ** 2).sum(axis=(1, 2), keepdims=True))
    assert adversarial > float(trainer.adversarial_loss(x, y, random)) and adversarial > float(loss)


def test_training_step_adds_the_clean_and_adversarial_gradients(rng):
    model = tiny_transformer()
    trainer = AdversarialTrainer(model, 1.0)
    trainer.compile(optimizer=keras.optimizers.SGD(0.1), loss="categorical_crossentropy")
    x, y = batch(rng)
    _, _, clean, r_adv = trainer.perturbation(x, y)
    with tf.GradientTape() as tape:
        adversarial_loss = trainer.adversarial_loss(x, y, r_adv)
    adversarial = tape.gradient(adversarial_loss, trainer.trainable_weights)
    expected = [np.asarray(w) - 0.1 * np.asarray(tf.convert_to_tensor(_add_gradients(g, a)))
                for w, g, a in zip(trainer.trainable_weights, clean, adversarial)]
    trainer.train_on_batch(x, y)
    for weight, value in zip(trainer.trainable_weights, expected):
        np.testing.assert_allclose(np.asarray(weight), value, rtol=1e-4, atol=1e-5)


def test_the_trained_model_is_unchanged_outside_training(rng):
    model = tiny_transformer()
    trainer = compiled(model)
    x, y = batch(rng)
    trainer.fit(x, y, epochs=2, batch_size=4, verbose=0)
    layer = model.get_layer("embedding")
    assert "call" not in vars(layer)  # the perturbation hook is gone
    np.testing.assert_allclose(trainer.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


@pytest.mark.parametrize("build", [
    lambda: build_rnn(50, 2, embedding_dim=8, units=4),
    lambda: build_han(50, 3, embedding_dim=8, word_units=4, sentence_units=4, attention_units=4),
])
def test_other_models_train_adversarially(rng, build):
    model = build()
    trainer = compiled(model)
    classes = model.output_shape[-1]
    x = rng.integers(1, 50, (8, 3, 5) if classes == 3 else (8, 12)).astype("int32")
    y = keras.utils.to_categorical(rng.integers(0, classes, 8), classes)
    before = [np.asarray(w).copy() for w in model.trainable_weights]
    history = trainer.fit(x, y, epochs=1, batch_size=4, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert all(not np.allclose(b, np.asarray(w)) for b, w in zip(before, model.trainable_weights))


def test_indexed_slices_are_added_like_dense_gradients():
    a = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([0, 2]), tf.constant([3, 2]))
    b = tf.constant([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    total = tf.convert_to_tensor(_add_gradients(a, b))
    np.testing.assert_allclose(total, [[2, 3], [1, 1], [4, 5]])
    np.testing.assert_allclose(_add_gradients(b, b), 2 * b)


def test_bad_epsilon_is_refused():
    with pytest.raises(ValueError, match="epsilon must be positive"):
        AdversarialTrainer(tiny_transformer(), 0.0)
