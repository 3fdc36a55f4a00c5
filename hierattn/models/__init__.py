"""The classifier and its parts, after keras-hub's Task / Preprocessor / Backbone split.

* `TextClassifier` (the task): raw strings in, class probabilities out, one
  `.keras` file; `load_classifier` reads one back, checked. Its Keras verbs
  on raw texts come from its base `task.Task`, the named steps of its n-gram
  part (`fit_ngrams`, `choose_weights`) from `ngram_part.NgramPart`.
* `TextPreprocessor`: tokenizer, vocabulary and length limits.
* `Backbone` and its subclasses `HANBackbone`, `TransformerBackbone`,
  `RNNBackbone`: the networks, from token ids to class probabilities.

Importing this package registers every Keras object of hierattn (layers,
backbones, the preprocessor, the classifier), so `keras.saving.load_model`
reads hierattn's `.keras` files after `import hierattn.models`, or after
`import hierattn`, which imports this package when Keras loads (see
`hierattn/__init__.py`).
"""

from hierattn.models.backbone import Backbone
from hierattn.models.han_backbone import HANBackbone
from hierattn.models.loading import load_classifier
from hierattn.models.rnn_backbone import RNNBackbone
from hierattn.models.text_classifier import TextClassifier
from hierattn.models.text_preprocessor import TextPreprocessor
from hierattn.models.transformer_backbone import TransformerBackbone

# The backbone of each architecture name (`TextClassifier("han")`, the CLI's models).
BACKBONES = {"han": HANBackbone, "transformer": TransformerBackbone, "rnn": RNNBackbone}

__all__ = [
    "BACKBONES",
    "Backbone",
    "HANBackbone",
    "RNNBackbone",
    "TextClassifier",
    "TextPreprocessor",
    "TransformerBackbone",
    "load_classifier",
]
