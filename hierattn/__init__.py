"""hierattn: attention-based document classification with explanations.

    import hierattn
    clf = hierattn.TextClassifier("han")
    clf.fit(texts, labels, validation_split=0.1)
    clf.save("model.keras")   # keras.saving.load_model("model.keras") after `import hierattn`

The package is organised as:

* :mod:`hierattn.classifier`: `TextClassifier` (raw strings in, one `.keras`
  file out), with :mod:`hierattn.preprocessor` and the backbones of
  :mod:`hierattn.models` (HAN, Transformer, recurrent).
* :mod:`hierattn.layers`: Keras 3 attention layers (mask-correct,
  serializable, returning their attention weights).
* :mod:`hierattn.data`: IMDB and table datasets, tokenization, encoding.
* :mod:`hierattn.training`, :mod:`hierattn.runs`, :mod:`hierattn.explain`:
  training runs, loading them, explaining predictions.
* :mod:`hierattn.defaults`: the tuned defaults, in one place.

`import hierattn` imports Keras and registers every layer and the
classifier for `keras.saving.load_model`. It changes no process-wide
setting. The `hierattn` program selects TensorFlow's BFC allocator for CPU
tensors (`TF_CPU_ALLOCATOR_USE_BFC=true`, see BENCHMARKS.md); a Python
program gets the same by setting that variable before TensorFlow is imported.
"""

import importlib
import sys

__version__ = "0.5.0"

# Public name -> module. Loaded at import (registering the Keras objects),
# except when the command-line program starts: it imports Keras only once a
# command needs it, so it can refuse bad input in under a second and set
# TensorFlow's logging first (see `hierattn.cli`).
_EXPORTS = {
    "TextClassifier": "hierattn.models",
    "TextPreprocessor": "hierattn.models",
    "Explainer": "hierattn.explain",
    "load_run": "hierattn.runs",
    "load_classifier": "hierattn.models",
    "Backbone": "hierattn.models",
    "HANBackbone": "hierattn.models",
    "TransformerBackbone": "hierattn.models",
    "RNNBackbone": "hierattn.models",
    "BahdanauAttention": "hierattn.layers",
    "ContextAttention": "hierattn.layers",
    "LuongAttention": "hierattn.layers",
    "MultiHeadAttention": "hierattn.layers",
    "PositionalEncoding": "hierattn.layers",
    "SentenceWise": "hierattn.layers",
    "TokenAndPositionEmbedding": "hierattn.layers",
    "TransformerEncoderBlock": "hierattn.layers",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hierattn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


if not getattr(sys.modules.get("__main__"), "HIERATTN_PROGRAM", False):
    for _name in _EXPORTS:
        __getattr__(_name)
    del _name
