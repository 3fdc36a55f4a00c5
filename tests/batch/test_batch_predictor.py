"""Tests for hierattn.batch.predictor: the bundle as a function from a DataFrame of texts to one of predictions."""

import pickle
import shutil

import numpy as np
import pandas as pd
import pytest

from hierattn import runtime
from hierattn.batch import BatchPredictor
from hierattn.batch.predictor import bundle_path
from hierattn.errors import ArgumentError, DataError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runs.predict import predict_file

TEXTS = ["a good and great film, a joy", "<br />", "a bad and awful plot", "great"]


@pytest.fixture(scope="module")
def predictor(han_run_dir):
    return BatchPredictor(han_run_dir)


def test_columns_and_probabilities_are_the_runtimes(predictor, han_run_dir):
    frame = pd.DataFrame({"doc_id": [10, 11, 12, 13], "review": TEXTS, "sentiment": ["pos", "pos", "neg", "pos"]})
    output = predictor(frame)
    names = predictor.label_names
    assert list(output.columns) == ["doc_id", "sentiment", "predicted", *(f"p_{n}" for n in names)]  # named as given
    assert output["doc_id"].tolist() == [10, 11, 12, 13] and output["sentiment"].tolist() == frame["sentiment"].tolist()
    expected = runtime.load(han_run_dir / BUNDLE_FILE).predict([TEXTS[i] for i in (0, 2, 3)])
    got = output[[f"p_{n}" for n in names]].to_numpy()
    np.testing.assert_allclose(got[[0, 2, 3]], expected, atol=1e-6)
    assert output["predicted"].tolist()[0] == names[int(expected[0].argmax())]
    # a text without words keeps its row, with no prediction
    assert output["predicted"].isna().tolist() == [False, True, False, False] and np.isnan(got[1]).all()
    assert output[f"p_{names[0]}"].dtype == np.float32


def test_the_same_rows_as_predict_file(predictor, han_run_dir, tmp_path):
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "text": TEXTS, "label": ["pos", "", "neg", "pos"]})
    frame.to_csv(tmp_path / "in.csv", index=False)
    predict_file(tmp_path / "in.csv", tmp_path / "out.csv", han_run_dir, progress=False)
    expected = pd.read_csv(tmp_path / "out.csv", dtype={"id": str})
    output = predictor(frame.assign(row=range(4)))
    assert list(output.columns) == list(expected.columns)  # row, id, label, predicted, p_...
    assert output["predicted"].fillna("").tolist() == expected["predicted"].fillna("").tolist()
    for name in predictor.label_names:
        np.testing.assert_allclose(output[f"p_{name}"], expected[f"p_{name}"], atol=1e-6)


def test_positions_and_kept_columns_are_carried(predictor):
    frame = pd.DataFrame({"file": ["x.csv"] * 2, "row": [5, 6], "text": TEXTS[:2], "shop": ["s1", "s2"]})
    output = BatchPredictor(predictor.bundle, keep="shop")(frame)
    assert list(output.columns)[:3] == ["file", "row", "shop"]
    assert output["row"].tolist() == [5, 6] and output["shop"].tolist() == ["s1", "s2"]
    with pytest.raises(DataError, match=r"no column 'price' to keep"):
        BatchPredictor(predictor.bundle, keep=["price"])(frame)


def test_columns_not_named_by_strings_and_keep_clashes(predictor):
    frame = pd.DataFrame({0: ["a1", "a2"], 1: TEXTS[:2]})  # read_csv(header=None) names columns 0, 1, ...
    output = BatchPredictor(predictor.bundle, text_column="1", keep=[0])(frame)
    assert output["0"].tolist() == ["a1", "a2"] and output["predicted"].isna().tolist() == [False, True]
    with pytest.raises(DataError, match="cannot keep 'predicted': the output has a column of that name"):
        BatchPredictor(predictor.bundle, keep=["predicted"])(frame.assign(text=TEXTS[:2], predicted=["x", "y"]))


def test_copies_in_one_process_share_the_loaded_bundle(predictor):
    first, second = (pickle.loads(pickle.dumps(predictor)) for _ in range(2))
    assert first.predictor is second.predictor  # Spark unpickles a predictor per task: the bundle loads once


def test_a_missing_text_column_is_named(predictor):
    with pytest.raises(DataError, match=r"no text column found \(tried text, review"):
        predictor(pd.DataFrame({"id": [1], "words": ["a film"]}))
    with pytest.raises(DataError, match=r"no text column 'body'"):
        BatchPredictor(predictor.bundle, text_column="body").output_columns(["id", "text"])


def test_an_empty_frame_gives_the_columns(predictor):
    output = predictor(pd.DataFrame({"id": [], "text": []}))
    assert len(output) == 0 and list(output.columns) == predictor.output_columns(["id", "text"])


def test_pickled_it_carries_settings_and_loads_the_bundle_again(predictor):
    copy = pickle.loads(pickle.dumps(BatchPredictor(predictor.bundle, keep=["shop"], threads=2)))
    assert copy._predictor is None and copy.keep == ["shop"] and copy.threads == 2
    frame = pd.DataFrame({"text": TEXTS, "shop": list("abcd")})
    pd.testing.assert_frame_equal(copy(frame), BatchPredictor(predictor.bundle, keep=["shop"])(frame))


def test_map_in_pandas_gives_one_frame_per_frame(predictor):
    frames = [pd.DataFrame({"text": TEXTS[:2]}), pd.DataFrame({"text": TEXTS[2:]})]
    outputs = list(predictor.map_in_pandas(iter(frames)))
    assert [len(o) for o in outputs] == [2, 2]
    pd.testing.assert_frame_equal(outputs[1].reset_index(drop=True), predictor(frames[1]))


def test_the_bundle_of_a_run_or_a_file(han_run_dir, tmp_path):
    assert bundle_path(han_run_dir) == str(han_run_dir / BUNDLE_FILE)
    assert bundle_path(han_run_dir / BUNDLE_FILE) == str(han_run_dir / BUNDLE_FILE)
    with pytest.raises(DataError, match=r"has no model.onnx: export the run first \(the export command"):
        bundle_path(tmp_path)
    with pytest.raises(DataError, match=r"^no bundle at"):
        BatchPredictor(tmp_path / "absent.onnx")
    with pytest.raises(ArgumentError, match="bundle must be a path"):
        bundle_path(42)
    (tmp_path / "not.onnx").write_bytes(b"not onnx")
    with pytest.raises(DataError, match="is not an ONNX model"):
        BatchPredictor(tmp_path / "not.onnx")


def test_another_runs_bundle_in_a_run_is_refused(han_run_dir, multilabel_run_dir, tmp_path):
    run = shutil.copytree(han_run_dir, tmp_path / "run")
    shutil.copyfile(multilabel_run_dir / BUNDLE_FILE, run / BUNDLE_FILE)
    with pytest.raises(DataError, match=r"is not the bundle this run wrote \(its sha256 is not run.json's record\)$"):
        BatchPredictor(run)


def test_a_minimum_confidence_adds_a_confidence_column_and_leaves_unsure_rows(han_run_dir):
    frame = pd.DataFrame({"text": TEXTS})
    plain = BatchPredictor(han_run_dir)(frame)
    sure = plain[[c for c in plain.columns if c.startswith("p_")]].max(axis=1).to_numpy()
    least = float(np.nanmedian(sure))
    predictor = BatchPredictor(han_run_dir, min_confidence=least)
    output = predictor(frame)
    assert list(output.columns) == predictor.output_columns(frame.columns)
    assert list(output.columns)[:2] == ["predicted", "confidence"]
    np.testing.assert_allclose(output["confidence"].to_numpy(), sure, atol=1e-6)  # NaN for the text without words
    unsure = (sure < least) | np.isnan(sure)
    assert output["predicted"].isna().tolist() == unsure.tolist()
    assert output["predicted"][~unsure].tolist() == plain["predicted"][~unsure].tolist()
    assert pickle.loads(pickle.dumps(predictor)).min_confidence == least
    with pytest.raises(ArgumentError, match="min_confidence must be a probability"):
        BatchPredictor(han_run_dir, min_confidence=-1)


def test_its_numbers_are_whole_numbers_of_at_least_one(han_run_dir):
    """threads=-1 was taken as it came (issue #54); batch_size=0 failed only when the first frame was scored."""
    for name in ("threads", "batch_size", "top_k"):
        for bad in (0, -1, 1.5, float("nan"), "8", True):
            with pytest.raises(ArgumentError, match=f"^{name} must be a whole number of at least 1"):
                BatchPredictor(han_run_dir, **{name: bad})
