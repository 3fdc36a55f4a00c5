"""The Spark recipe of docs/batch.md: `mapInPandas` with a `BatchPredictor`, in local mode (needs pyspark and Java)."""

import os
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

from hierattn.batch import BatchPredictor

from conftest import make_reviews

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install pyspark)")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Spark needs a Java runtime (17 or newer), and none is on PATH", allow_module_level=True)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    previous = {name: os.environ.get(name) for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable  # workers run this Python
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hierattn-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def test_map_in_pandas_gives_the_batch_predictors_rows(spark, han_run_dir):
    texts, labels = make_reviews(300, seed=5)
    reviews = pd.DataFrame({"id": range(len(texts)), "text": texts, "label": labels})
    predictor = BatchPredictor(han_run_dir)
    frame = spark.createDataFrame(reviews).repartition(3)
    scored = frame.mapInPandas(predictor.map_in_pandas, schema=predictor.spark_schema(frame.schema)).toPandas()
    assert list(scored.columns) == predictor.output_columns(reviews.columns)
    scored = scored.sort_values("id").reset_index(drop=True)
    expected = predictor(reviews)
    assert scored["id"].tolist() == list(range(len(texts)))  # every row once, ids kept (as integers)
    assert scored["predicted"].tolist() == expected["predicted"].tolist()
    np.testing.assert_allclose(scored["p_pos"], expected["p_pos"], atol=1e-6)
