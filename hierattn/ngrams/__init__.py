"""The n-gram part of every classifier, in one home.

A linear model of word n-grams (`NgramLogits`, a Keras layer whose recipe,
NB-weighted or TF-IDF logistic regression, is chosen on validation texts:
`recipes`) is combined with the network's log-probabilities by a log-linear
combination (`LogLinearCombination`, its weights chosen on validation:
`mixing`), as Mesnil et al. (2015) combined NB-SVM with a neural network.
`NgramPart` gives the classifier its fitting as a method (`fit_ngrams`);
the weights are tuned with the rest of the decision policy (`hierattn.tuning`).

* `logits`: `NgramLogits`, the layer (its tables are Keras weights).
* `combination`: `LogLinearCombination`, the layer combining the two parts.
* `recipes`: fitting the linear model's recipes (scikit-learn).
* `onevsrest`: a multi-label recipe's fits, one binary model per label.
* `mixing`: n-gram logits in NumPy, and choosing the combination's weights.
* `part`: `NgramPart`, the classifier's mixin.

Importing this package loads no Keras: `mixing` (NumPy only) is what an
explanation needs, and the Keras classes load on first use of their names.
"""

from hierattn.utils.keras_hook import REGISTERS
from hierattn.utils.lazy import lazy_names

_EXPORTS = {
    "LogLinearCombination": "hierattn.ngrams.combination",
    "NgramLogits": "hierattn.ngrams.logits",
    "NgramPart": "hierattn.ngrams.part",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, then=REGISTERS)
