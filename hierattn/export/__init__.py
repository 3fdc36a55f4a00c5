"""Exporting a trained classifier as one bundle that `hierattn.runtime` runs without TensorFlow.

* `converter`: `export_bundle` converts the classifier to ONNX (Keras's
  exporter, with tf2onnx), writes its tokenizer's settings into the file's
  metadata and checks the file against the classifier before keeping it.
* `fused_rnn`: while exporting, Keras's GRU and LSTM layers trace as one
  fused op each, so that the graph has ONNX's own `GRU`/`LSTM` operators
  instead of a loop of small steps.
* `rnn_handler`: the tf2onnx handler that writes that op, registered with
  tf2onnx only while exporting.

Importing this package loads neither TensorFlow nor tf2onnx: each name
below loads on first use.

    from hierattn.export import export_bundle

    export_bundle(classifier, "model.onnx")  # the same as classifier.export("model.onnx")
"""

from hierattn.utils.lazy import lazy_names

_EXPORTS = {
    "check_bundle": "hierattn.export.converter",
    "export_bundle": "hierattn.export.converter",
    "fused_recurrent": "hierattn.export.fused_rnn",
    "input_signature": "hierattn.export.converter",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
