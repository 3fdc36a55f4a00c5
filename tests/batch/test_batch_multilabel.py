"""`BatchPredictor` with a multi-label run's bundle (label sets joined by the run's separator), and its top-k columns."""

import json
import pickle
import shutil

import numpy as np
import pandas as pd
import pytest

from hierattn import runtime
from hierattn.batch import BatchPredictor
from hierattn.errors import ArgumentError, DataError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runs.predict import predict_file

from conftest import make_topics

TEXTS = [*make_topics(8, seed=31)[0], "<br />"]


@pytest.fixture(scope="module")
def bundle(multilabel_run_dir):
    return runtime.load(multilabel_run_dir / BUNDLE_FILE)


@pytest.fixture(scope="module")
def predictor(multilabel_run_dir):
    return BatchPredictor(multilabel_run_dir)


def test_predicted_is_the_label_set_joined(predictor, bundle):
    output = predictor(pd.DataFrame({"id": range(len(TEXTS)), "text": TEXTS}))
    names = bundle.label_names
    assert list(output.columns) == ["id", "predicted", *(f"p_{n}" for n in names)]
    expected = bundle.predict_labels(TEXTS[:-1])
    assert any(len(labels) > 1 for labels in expected)
    assert output["predicted"].tolist()[:-1] == ["|".join(labels) for labels in expected]
    assert output["predicted"].isna().tolist() == [False] * len(expected) + [True]  # no words: no prediction
    got = output[[f"p_{n}" for n in names]].to_numpy()
    np.testing.assert_allclose(got[:-1], bundle.predict(TEXTS[:-1]), atol=1e-6)
    assert np.isnan(got[-1]).all() and predictor.multi_label and predictor.label_separator == "|"


def test_the_same_rows_as_predict_file(predictor, multilabel_run_dir, tmp_path):
    frame = pd.DataFrame({"id": [f"d{i}" for i in range(len(TEXTS))], "text": TEXTS})
    frame.to_csv(tmp_path / "in.csv", index=False)
    predict_file(tmp_path / "in.csv", tmp_path / "out.csv", multilabel_run_dir, progress=False, top_k=2)
    expected = pd.read_csv(tmp_path / "out.csv", dtype={"id": str, "predicted": str}, keep_default_na=False)
    output = BatchPredictor(multilabel_run_dir, top_k=2)(frame.assign(row=range(len(TEXTS))))
    assert list(output.columns) == list(expected.columns)  # row, id, predicted, p_..., top_1, p_top_1, ...
    assert output["predicted"].fillna("").tolist() == expected["predicted"].tolist()
    assert output["top_1"].fillna("").tolist() == expected["top_1"].tolist()
    for column in [c for c in output.columns if c.startswith("p_")]:
        found = pd.to_numeric(expected[column].replace("", np.nan))
        np.testing.assert_allclose(output[column], found, atol=1e-6)


def test_top_k_columns_are_sorted_and_match_the_probabilities(multilabel_run_dir):
    predictor = BatchPredictor(multilabel_run_dir, top_k=5)  # more than the 3 labels: 3 ranks
    output = predictor(pd.DataFrame({"text": TEXTS}))
    assert list(output.columns)[-6:] == ["top_1", "p_top_1", "top_2", "p_top_2", "top_3", "p_top_3"]
    assert output.columns.tolist() == predictor.output_columns(["text"])
    for _, row in output.iloc[:-1].iterrows():
        values = [row[f"p_top_{i}"] for i in (1, 2, 3)]
        assert values == sorted(values, reverse=True)
        assert all(row[f"p_top_{i}"] == row[f"p_{row[f'top_{i}']}"] for i in (1, 2, 3))
    last = output.iloc[-1]
    assert pd.isna(last["top_1"]) and np.isnan(last["p_top_1"]) and output["p_top_1"].dtype == np.float32
    copy = pickle.loads(pickle.dumps(predictor))
    pd.testing.assert_frame_equal(copy(pd.DataFrame({"text": TEXTS})), output)


def test_the_runs_separator_or_the_one_given(multilabel_run_dir, bundle, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(multilabel_run_dir, run)
    config = json.loads((run / "config.json").read_text())
    config["data"]["label_separator"] = ";"
    (run / "config.json").write_text(json.dumps(config))
    expected = bundle.predict_labels(TEXTS[:-1])
    frame = pd.DataFrame({"text": TEXTS[:-1]})
    assert BatchPredictor(run)(frame)["predicted"].tolist() == [";".join(labels) for labels in expected]
    given = BatchPredictor(run / BUNDLE_FILE, label_separator=" + ")(frame)  # a bundle alone: no run to ask
    assert given["predicted"].tolist() == [" + ".join(labels) for labels in expected]
    assert BatchPredictor(run / BUNDLE_FILE).label_separator == "|"


def test_a_single_label_bundle_ranks_its_classes(han_run_dir):
    predictor = BatchPredictor(han_run_dir, top_k=1)
    assert not predictor.multi_label and predictor.label_separator is None
    output = predictor(pd.DataFrame({"text": ["a good and great film", "an awful plot"]}))
    assert output["top_1"].tolist() == output["predicted"].tolist()
    with pytest.raises(DataError, match="cannot keep 'top_1'"):
        BatchPredictor(han_run_dir, keep="top_1", top_k=1)(pd.DataFrame({"text": ["a film"], "top_1": ["x"]}))
    with pytest.raises(ArgumentError, match="^top_k must be a whole number"):
        BatchPredictor(han_run_dir, top_k=0)


def test_the_spark_schema_has_a_string_label_set_and_ranked_columns(multilabel_run_dir):
    types = pytest.importorskip("pyspark.sql.types", reason="pyspark is not installed")
    schema = types.StructType(
        [types.StructField("id", types.LongType()), types.StructField("text", types.StringType())]
    )
    predictor = BatchPredictor(multilabel_run_dir, top_k=2)
    fields = {field.name: field.dataType for field in predictor.spark_schema(schema).fields}
    assert list(fields) == predictor.output_columns(["id", "text"])
    assert fields["predicted"] == types.StringType() and fields["top_2"] == types.StringType()
    assert fields["p_top_2"] == types.FloatType() and fields["id"] == types.LongType()


def test_a_multi_label_runs_bundle_without_its_thresholds_is_refused(multilabel_run_dir, tmp_path):
    import onnx

    from hierattn.runtime.bundle import METADATA_KEY

    run = tmp_path / "run"
    shutil.copytree(multilabel_run_dir, run)
    model = onnx.load(run / BUNDLE_FILE)
    props = {p.key: p.value for p in model.metadata_props}
    metadata = json.loads(props[METADATA_KEY])
    del metadata["multi_label"], metadata["thresholds"]  # as bundles were exported before they held them
    for key in ("temperature", "temperature_always"):  # (and before a label's temperature)
        metadata.get("cascade", {}).pop(key, None)
    onnx.helper.set_model_props(model, {**props, METADATA_KEY: json.dumps(metadata)})
    onnx.save(model, run / BUNDLE_FILE)
    with pytest.raises(DataError, match="bundle without its thresholds"):  # refused by the runtime itself, at load
        BatchPredictor(run)
