"""Use hierattn layers in your own Keras model, then read the attention.

A toy task on generated data: each sequence of random word ids is positive
when it contains the "signal" word 7. A bag-of-embeddings model with
ContextAttention pooling learns the task, and its attention weights point at
the signal word. Padding (id 0) is masked and gets zero weight. The model is
saved as .keras and reloaded without custom_objects.

Run: python examples/custom_model.py   (about 20 s on 2 CPU cores)
"""

import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from hierattn.layers import ContextAttention  # noqa: E402

SIGNAL, VOCAB, LENGTH = 7, 50, 20


def make_data(n, rng):
    """Random sequences of varied length; label 1 iff SIGNAL occurs."""
    ids = rng.integers(8, VOCAB, size=(n, LENGTH))
    lengths = rng.integers(5, LENGTH + 1, size=n)
    labels = rng.integers(0, 2, size=n)
    for i in range(n):
        ids[i, lengths[i] :] = 0
        if labels[i]:
            ids[i, rng.integers(0, lengths[i])] = SIGNAL
    return ids, labels


def build_model():
    tokens = keras.Input((LENGTH,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(VOCAB, 32, mask_zero=True)(tokens)
    x = keras.layers.Bidirectional(keras.layers.GRU(16, return_sequences=True))(x)
    pooled, weights = ContextAttention(units=32, name="attention")(x, return_attention_scores=True)
    probs = keras.layers.Dense(1, activation="sigmoid", name="label")(pooled)
    # Train the classifier; read the weights through a second model that
    # shares its layers.
    return keras.Model(tokens, probs), keras.Model(tokens, {"label": probs, "attention": weights})


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x_train, y_train = make_data(4000, rng)
    x_test, y_test = make_data(500, rng)
    classifier, model = build_model()
    classifier.compile("adam", loss="binary_crossentropy", metrics=["accuracy"])
    classifier.fit(x_train, y_train, epochs=4, batch_size=64, verbose=2)
    out = model.predict(x_test, verbose=0)
    accuracy = float(np.mean((out["label"][:, 0] > 0.5) == y_test))
    print(f"test accuracy: {accuracy:.3f}")

    # Where does the model look? For positive examples, the argmax of the
    # attention should be the signal word.
    positives = np.where(y_test == 1)[0]
    top = out["attention"][positives].argmax(axis=1)
    hits = float(np.mean(x_test[positives, top] == SIGNAL))
    print(f"positives whose most-attended word is the signal word: {hits:.1%}")
    i = positives[0]
    print("example:", " ".join(f"{t}:{w:.2f}" for t, w in zip(x_test[i], out["attention"][i]) if t))
    assert np.all(out["attention"][x_test == 0] == 0), "padding got attention"

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        reloaded = keras.saving.load_model(path)  # no custom_objects needed
        again = reloaded.predict(x_test, verbose=0)
        print("reloaded model gives identical output:", bool(np.allclose(again["label"], out["label"], atol=1e-6)))
    return accuracy, hits


if __name__ == "__main__":
    main()
