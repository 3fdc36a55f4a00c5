"""Running an exported classifier without TensorFlow: onnxruntime and NumPy only.

`TextClassifier.export(path)` (or `hierattn export`) writes the whole
classifier as one bundle, an ONNX file that carries its tokenizer's
settings and vocabulary (`hierattn.runtime.bundle`). `load` reads it back
into a `Predictor` that gives the classifier's answers. Importing this
package loads neither TensorFlow nor Keras, so it runs where only
`pip install --no-deps /path/to/hierattn onnxruntime numpy` was done (a clone; docs/export.md):

    from hierattn import runtime

    predictor = runtime.load("model.onnx")
    predictor.predict(["A superb film."])         # probabilities, columns in predictor.label_names order
    predictor.predict_labels(["A superb film."])  # class names (a multi-label bundle: a list of labels per text)
    predictor.predict_top_k(["A superb film."], 2)  # the 2 most probable classes of each text, with probabilities

`load` checks the bundle before it answers (`hierattn.runtime.checks`): a
bundle whose metadata was edited, or does not agree with its graph, is a
`DataError` at load, not a wrong answer at the first prediction.

A `Predictor` and a Keras `TextClassifier` are both `TextPredictor`s: the
same names for the same things, so the application takes either.
"""

from hierattn.runtime.bundle import FORMAT
from hierattn.runtime.predictor import Predictor, load
from hierattn.runtime.protocol import TextPredictor

__all__ = ["FORMAT", "Predictor", "TextPredictor", "load"]
