"""Batch prediction: scoring large tables with a run's bundle, on Ray Data or Spark (`hierattn predict --engine ray`).

The application layer's batch jobs. `BatchPredictor` is the bundle as a
function from a pandas DataFrame of texts to one of predictions (loaded
once per worker, without TensorFlow): what Ray Data's `map_batches` and
Spark's `mapInPandas` call. `predict_dataset` adds predictions to a user's
`ray.data.Dataset`; `predict_files` scores files into a folder of parts,
as `hierattn predict --file ... --engine ray --output DIR` does (Ray is the
`ray` extra: `pip install -e ".[ray]"` from a clone):

    from hierattn.batch import predict_files

    predict_files("reviews/*.parquet", "predictions/", "runs/han-imdb-20261125-120000")

See docs/batch.md.
"""

from hierattn.batch.on_ray import predict_dataset, predict_files
from hierattn.batch.predictor import BatchPredictor

__all__ = ["BatchPredictor", "predict_dataset", "predict_files"]
