"""`TextClassifier.export` (`hierattn.export.converter`): a bundle that is checked before it is kept; Keras's own formats."""

import os

import numpy as np
import onnx
import onnxruntime
import pytest

from hierattn.errors import ArgumentError, ExportError
from hierattn.export import converter as export
from hierattn.runtime.bundle import METADATA_KEY

from conftest import make_reviews

pytestmark = pytest.mark.slow


def test_an_untrained_classifier_is_refused(tmp_path):
    import hierattn

    with pytest.raises(ArgumentError, match="not trained"):
        hierattn.TextClassifier("han").export(tmp_path / "model.onnx")
    assert not list(tmp_path.iterdir())


def test_the_bundle_is_a_checked_onnx_model_with_its_metadata(han_run, tmp_path):
    path = han_run.export(tmp_path / "model.onnx", verbose=False)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    props = {p.key: p.value for p in model.metadata_props}
    assert METADATA_KEY in props and "tokenizer" in model.doc_string
    assert "(neg, pos): token ids in, class probabilities out;" in model.doc_string
    assert sorted(os.listdir(tmp_path)) == ["model.onnx"]  # no temporary file left


def test_a_bundle_that_differs_from_the_classifier_is_not_written(han_run, tmp_path, monkeypatch):
    earlier = tmp_path / "model.onnx"
    earlier.write_bytes(b"my earlier bundle")
    monkeypatch.setattr(export, "TOLERANCE", -1.0)  # no graph can pass: the check refuses it
    with pytest.raises(ExportError, match="does not give the classifier's answers"):
        han_run.export(earlier, verbose=False)
    assert earlier.read_bytes() == b"my earlier bundle"
    assert sorted(os.listdir(tmp_path)) == ["model.onnx"]


def test_keras_formats_export_the_graph_from_ids(han_run, tmp_path):
    """Keras's own ONNX export, its input signature filled in from the preprocessor: ids in, the same probabilities."""
    path = tmp_path / "ids.onnx"
    han_run.export(path, format="onnx", verbose=False)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    texts = make_reviews(5, seed=3)[0]
    x = han_run.preprocessor(texts)
    names = {i.name.rsplit("_ids", 1)[0].rsplit("_", 1)[-1] + "_ids": i.name for i in session.get_inputs()}
    (found,) = session.run(None, {names[key]: value.astype(np.int32) for key, value in x.items()})
    np.testing.assert_allclose(found, han_run.predict(texts, verbose=0), atol=1e-5)
    with pytest.raises(ValueError, match="give no input_signature"):
        han_run.export(tmp_path / "b.onnx", input_signature=[])


def test_a_backbone_of_its_own_with_more_embedding_rows_than_words_exports_and_loads(tmp_path):
    import hierattn
    from hierattn import runtime
    from hierattn.models import HANBackbone

    texts, labels = ["a fine film", "dull and slow", "great acting", "bad plot"] * 10, ["pos", "neg", "pos", "neg"] * 10
    backbone = HANBackbone(vocabulary_size=500, num_classes=2, embedding_dim=8, word_units=4, sentence_units=4)
    classifier = hierattn.TextClassifier(backbone, embeddings="none", ngrams=False)
    classifier.fit(texts, labels, epochs=1, verbose=0)
    assert len(classifier.preprocessor.vocabulary) < 500  # a Keras model loads so too (`models.loading`)
    path = classifier.export(tmp_path / "own.onnx", verbose=False)
    predictor = runtime.load(path)
    assert predictor.metadata["embedding"] == {"ids": len(classifier.preprocessor.vocabulary), "rows": 500}
    np.testing.assert_allclose(predictor.predict(texts[:4]), classifier.predict(texts[:4], verbose=0), atol=1e-5)
