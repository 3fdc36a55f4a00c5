"""hierattn: attention-based document classification with explanations.

    import hierattn
    clf = hierattn.TextClassifier("han")
    clf.fit(texts, labels, validation_split=0.1)
    clf.save("model.keras")
    clf = hierattn.load_classifier("model.keras")   # or keras.saving.load_model("model.keras")

The package is organised as:

* :mod:`hierattn.models`: `TextClassifier` (raw strings in, one `.keras`
  file out), its `TextPreprocessor`, the backbones (`HANBackbone`,
  `TransformerBackbone`, `RNNBackbone`) and `load_classifier`.
* :mod:`hierattn.layers`: Keras 3 attention layers (mask-correct,
  serializable, returning their attention weights).
* :mod:`hierattn.data`: IMDB and table datasets, tokenization, encoding.
* :mod:`hierattn.runtime`: an exported classifier (`TextClassifier.export`)
  run by onnxruntime and NumPy, without TensorFlow.
* :mod:`hierattn.export`: what `TextClassifier.export` runs to write that
  bundle (the ONNX converter, fused recurrent layers, the check).
* :mod:`hierattn.runs.train`, :mod:`hierattn.runs.directory`, :mod:`hierattn.explain`:
  training runs, loading them, explaining predictions.
* :mod:`hierattn.defaults`: the tuned defaults, in one place.
* :mod:`hierattn.cli`: the `hierattn` program (`python -m hierattn`).

`import hierattn` imports nothing heavy: each public name below is loaded
on first use (PEP 562), so the `hierattn` program, which imports Keras only
once a command needs it, refuses bad input in under a second.

`import hierattn` is enough for `keras.saving.load_model` to read
hierattn's `.keras` files (safe mode on), whichever of Keras and hierattn is
imported first: Keras learns hierattn's classes (every layer, backbone and
the classifier) when `hierattn.models.text_classifier` is imported, which
happens at once if Keras is already loaded, otherwise right after Keras (or
TensorFlow) is first imported (`hierattn.utils.keras_hook`), and whenever a
name of `hierattn.models` or `hierattn.ngrams` is first used. `hierattn.load_classifier(path)`
also checks what it loads.

Importing hierattn changes no process-wide setting: it only adds that
one-shot import hook, which registers hierattn's own classes with Keras
and removes itself. The `hierattn` program selects TensorFlow's BFC
allocator for CPU tensors (`TF_CPU_ALLOCATOR_USE_BFC=true`, see
BENCHMARKS.md); a Python program gets the same by setting that variable
before TensorFlow is imported.
"""

from hierattn.utils import keras_hook
from hierattn.utils.lazy import lazy_names

__version__ = "0.5.0"

# Public name -> module, imported on first use of the name: `import hierattn` loads
# no Keras, so the command line (`hierattn.cli`) can refuse bad input in under a
# second and set TensorFlow's logging before TensorFlow starts.
_EXPORTS = {
    "TextClassifier": "hierattn.models",
    "TextPreprocessor": "hierattn.models",
    "Explainer": "hierattn.explain",
    "load_run": "hierattn.runs.run",
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
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)

keras_hook.install()
