"""An encoder-decoder with attention that learns to reverse sequences.

Trains two small GRU encoder-decoders on generated data, one with
BahdanauAttention and one with LuongAttention ("general" score), and prints
each one's alignment matrix for a test sequence. Reversal needs the decoder
to look at the source from the end backwards, so a working attention shows up
as an anti-diagonal.

Run: python examples/seq2seq_alignment.py   (about 40 s on 2 CPU cores)
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from hierattn.layers import BahdanauAttention, LuongAttention  # noqa: E402

VOCAB, LENGTH, START = 12, 8, 1  # ids: 0 pad, 1 start, 2..11 symbols
SHADES = " .:-=+*#%@"


def make_data(n, rng):
    source = rng.integers(2, VOCAB, size=(n, LENGTH))
    target = source[:, ::-1]
    decoder_in = np.concatenate([np.full((n, 1), START), target[:, :-1]], axis=1)
    return source, decoder_in, target


def build_model(attention):
    source = keras.Input((LENGTH,), dtype="int32", name="source")
    decoder_in = keras.Input((LENGTH,), dtype="int32", name="decoder_in")
    embed = keras.layers.Embedding(VOCAB, 32, mask_zero=True)
    encoded, state = keras.layers.GRU(64, return_sequences=True, return_state=True)(embed(source))
    decoded = keras.layers.GRU(64, return_sequences=True)(embed(decoder_in), initial_state=state)
    context, weights = attention([decoded, encoded], return_attention_scores=True)
    hidden = keras.layers.Concatenate()([context, decoded])
    logits = keras.layers.Dense(VOCAB, name="symbols")(keras.layers.Dense(64, activation="tanh")(hidden))
    return keras.Model([source, decoder_in], {"symbols": logits, "alignment": weights})


def greedy_decode(model, source):
    """Feeds the model's own predictions back in, one step at a time."""
    decoder_in = np.zeros_like(source)
    decoder_in[:, 0] = START
    for t in range(LENGTH):
        out = model.predict([source, decoder_in], verbose=0)
        step = out["symbols"][:, t].argmax(-1)
        if t + 1 < LENGTH:
            decoder_in[:, t + 1] = step
    return out["symbols"].argmax(-1), out["alignment"]


def show(alignment, source, target):
    print("      source: " + " ".join(f"{s:2d}" for s in source))
    for row, t in zip(alignment, target):
        cells = " ".join(" " + SHADES[min(int(w * len(SHADES)), len(SHADES) - 1)] for w in row)
        print(f"  output {t:2d}: {cells}")


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    source, decoder_in, target = make_data(6000, rng)
    test_source, _, test_target = make_data(300, rng)
    results = {}
    for name, attention in [
        ("Bahdanau", BahdanauAttention(units=32, name="attention")),
        ("Luong (general)", LuongAttention("general", name="attention")),
    ]:
        model = build_model(attention)
        model.compile(
            keras.optimizers.Adam(3e-3),
            loss={"symbols": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
        )
        model.fit([source, decoder_in], {"symbols": target}, epochs=8, batch_size=64, verbose=0)
        predicted, alignment = greedy_decode(model, test_source)
        accuracy = float(np.mean(predicted == test_target))
        anti_diagonal = float(np.mean(alignment.argmax(-1) == np.arange(LENGTH)[::-1][None, :]))
        results[name] = (accuracy, anti_diagonal)
        print(
            f"\n{name}: symbol accuracy {accuracy:.3f}; "
            f"steps whose strongest alignment is the mirrored source position {anti_diagonal:.1%}"
        )
        show(alignment[0], test_source[0], predicted[0])
    return results


if __name__ == "__main__":
    main()
