"""Loading a `TextClassifier` from a `.keras` file, checked."""

import pathlib
import zipfile

import keras

from hierattn.errors import RunError
from hierattn.models.text_classifier import TextClassifier


def load_classifier(model_file):
    """A `TextClassifier` from a `.keras` file (safe mode on), checked.

    Its parts are checked against each other: a vocabulary larger than the
    embedding, or a label list of another length than the outputs, is
    refused, not used.

    Args:
        model_file: Path of a `.keras` file written by `TextClassifier.save`
            (or a training run's `model.keras`).

    Returns:
        The `TextClassifier`.

    Raises:
        RunError: The file is missing, damaged, holds code or another kind of
            model, or its parts disagree; in one line.

    Example:

    ```python
    classifier = hierattn.load_classifier("runs/han-imdb/model.keras")
    classifier.predict(["A gripping film."])
    ```
    """
    model_file = pathlib.Path(model_file)
    if not model_file.is_file():
        raise RunError(f"{model_file.parent} has no {model_file.name}")
    if not zipfile.is_zipfile(model_file):
        raise RunError(
            f"{model_file} is not a Keras model file: it is not a zip archive (damaged, truncated, "
            "or another kind of file)"
        )
    try:
        classifier = keras.saving.load_model(model_file, safe_mode=True)
    except Exception as error:  # any failure to read the file is reported in one line
        message = " ".join(str(error).split()) or type(error).__name__
        message = message.rsplit("Exception encountered:", 1)[-1].strip()  # Keras's cause, without the whole config
        if "safe_mode" in message:
            raise RunError(
                f"{model_file} holds Python code (e.g. a Lambda layer) and Keras safe mode refuses to "
                "load it; hierattn does not run code from model files. Load it yourself with "
                "keras.saving.load_model(..., safe_mode=False) only if you trust its source."
            ) from None
        if len(message) > 400:
            message = message[:400].rsplit(" ", 1)[0] + " ..."
        raise RunError(f"{model_file} could not be loaded ({message})") from None
    if not isinstance(classifier, TextClassifier) or not classifier.adapted:
        raise RunError(
            f"{model_file} holds a {type(classifier).__name__}, not a trained hierattn TextClassifier "
            "(runs written before hierattn 0.5 must be trained again)"
        )
    outputs = classifier.backbone.num_classes
    if outputs != len(classifier.label_names):
        raise RunError(
            f"{model_file} names {len(classifier.label_names)} classes but its model has {outputs} "
            "outputs: the file was edited or mixed with another"
        )
    size = classifier.backbone.token_embedding.input_dim
    vocabulary = len(classifier.preprocessor.vocabulary)
    if vocabulary > size:
        raise RunError(
            f"{model_file}: its vocabulary has {vocabulary:,} ids but the embedding has {size:,} rows: "
            "the file was edited or mixed with another"
        )
    return classifier
