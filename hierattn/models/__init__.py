"""The classifier and its parts, after keras-hub's Task / Preprocessor / Backbone split.

* `TextClassifier` (the task): raw strings in, class probabilities out, one
  `.keras` file; `load_classifier` reads one back, checked. Its Keras verbs
  on raw texts come from its base `task.Task`, the named steps of its n-gram
  part (`fit_ngrams`) from `hierattn.ngrams.NgramPart`, and its decision policy from `tune`
  (`hierattn.policy`, `hierattn.tuning`).
* `TextPreprocessor`: tokenizer, vocabulary and length limits.
* `Backbone` and its subclasses `HANBackbone`, `TransformerBackbone`,
  `RNNBackbone`: the networks, from token ids to class probabilities.

Every Keras object of hierattn (layers, backbones, the preprocessor, the
classifier) is registered when `text_classifier` is imported, which `import
hierattn` arranges as soon as Keras loads (`hierattn.utils.keras_hook`), so
`keras.saving.load_model` reads hierattn's `.keras` files after `import
hierattn` (or `import hierattn.models`); the first use of any name below
registers them too.

Importing this package loads no Keras: each name below loads on first use,
so the settings' checks (`arguments`) serve the command line before
TensorFlow starts.
"""

from hierattn.utils.keras_hook import REGISTERS
from hierattn.utils.lazy import lazy_names

_EXPORTS = {
    "Backbone": "hierattn.models.backbone",
    "HANBackbone": "hierattn.models.han_backbone",
    "load_classifier": "hierattn.models.loading",
    "RNNBackbone": "hierattn.models.rnn_backbone",
    "TextClassifier": "hierattn.models.text_classifier",
    "TextPreprocessor": "hierattn.models.text_preprocessor",
    "TransformerBackbone": "hierattn.models.transformer_backbone",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, then=REGISTERS)
