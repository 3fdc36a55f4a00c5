"""hierattn: attention-based document classification with explanations.

The package is organised as:

* :mod:`hierattn.layers`: Keras 3 attention layers (mask-correct,
  serializable, returning their attention weights).
"""

__version__ = "0.1.0"
