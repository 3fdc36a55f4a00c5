"""hierattn: attention-based document classification with explanations.

The package is organised as:

* :mod:`hierattn.layers`: Keras 3 attention layers (mask-correct,
  serializable, returning their attention weights).
* :mod:`hierattn.models`: HAN, Transformer and recurrent classifiers.
* :mod:`hierattn.data`: IMDB and table datasets, tokenization, encoding.
* :mod:`hierattn.training`, :mod:`hierattn.runs`, :mod:`hierattn.explain`:
  training runs, loading them, explaining their predictions.

Importing hierattn changes no process-wide setting. The `hierattn` program
selects TensorFlow's BFC allocator for CPU tensors
(`TF_CPU_ALLOCATOR_USE_BFC=true`, see BENCHMARKS.md); a Python program gets
the same by setting that variable before TensorFlow is imported.
"""

__version__ = "0.1.0"
