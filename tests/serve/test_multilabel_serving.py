"""Serving a multi-label run (label sets), and `top_k` in `/v1/predict` requests of either kind of run."""

import numpy as np
import pytest
from fastapi.testclient import TestClient

from hierattn import runtime
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.serve import create_app

from conftest import make_topics

pytestmark = pytest.mark.slow

TEXTS = make_topics(6, seed=21)[0]
REVIEWS = ["a good and great film, a joy", "a bad and awful plot"]


@pytest.fixture(scope="module")
def bundle(multilabel_run_dir):
    return runtime.load(multilabel_run_dir / BUNDLE_FILE)


@pytest.fixture(scope="module")
def client(multilabel_run_dir):
    with TestClient(create_app(multilabel_run_dir, explain=False, max_batch=4)) as client:
        yield client


@pytest.fixture(scope="module")
def single(han_run_dir):
    with TestClient(create_app(han_run_dir, explain=False)) as client:
        yield client


def test_predictions_are_label_sets_with_every_probability(client, bundle):
    answer = client.post("/v1/predict", json={"texts": TEXTS})
    assert answer.status_code == 200, answer.text
    predictions = answer.json()["predictions"]
    assert all(set(p) == {"labels", "probabilities"} for p in predictions)
    assert [p["labels"] for p in predictions] == bundle.predict_labels(TEXTS)
    got = np.array([[p["probabilities"][name] for name in bundle.label_names] for p in predictions])
    np.testing.assert_allclose(got, bundle.predict(TEXTS), atol=1e-6)
    assert list(predictions[0]["probabilities"]) == bundle.label_names


def test_top_k_ranks_the_labels_by_their_probabilities(client):
    for k in (1, 2, 9):
        predictions = client.post("/v1/predict", json={"texts": TEXTS, "top_k": k}).json()["predictions"]
        for prediction in predictions:
            ranked = prediction["top_k"]
            assert len(ranked) == min(k, 3) and all(set(r) == {"label", "probability"} for r in ranked)
            values = [r["probability"] for r in ranked]
            assert values == sorted(values, reverse=True)
            assert all(prediction["probabilities"][r["label"]] == r["probability"] for r in ranked)


def test_the_model_says_it_is_multi_label_with_its_thresholds(client, bundle, single):
    model = client.get("/v1/model").json()
    assert model["multi_label"] is True
    assert model["thresholds"] == dict(zip(bundle.label_names, bundle.thresholds))
    assert (single.get("/v1/model").json()["multi_label"], single.get("/v1/model").json()["thresholds"]) == (
        False,
        None,
    )


def test_a_single_label_answer_is_unchanged_and_takes_top_k(single, han_run_dir):
    predictor = runtime.load(han_run_dir / BUNDLE_FILE)
    plain = single.post("/v1/predict", json={"texts": REVIEWS}).json()["predictions"]
    assert all(set(p) == {"label", "probabilities"} for p in plain)
    assert [p["label"] for p in plain] == predictor.predict_labels(REVIEWS)
    ranked = single.post("/v1/predict", json={"texts": REVIEWS, "top_k": 1}).json()["predictions"]
    assert [{k: v for k, v in p.items() if k != "top_k"} for p in ranked] == plain
    assert [p["top_k"] for p in ranked] == [
        [{"label": p["label"], "probability": p["probabilities"][p["label"]]}] for p in plain
    ]


@pytest.mark.parametrize("k", [0, -1, "2", 1.5, True])
def test_a_bad_top_k_is_a_422_that_names_it(single, k):
    answer = single.post("/v1/predict", json={"text": REVIEWS[0], "top_k": k})
    assert answer.status_code == 422 and answer.json()["error"].startswith("top_k: ")


def test_the_openapi_description_has_top_k_and_label_sets(client):
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/v1/predict"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/PredictRequest"}  # FastAPI's, from the typed body
    assert "top_k" in spec["components"]["schemas"]["PredictRequest"]["properties"]
    assert {"label", "labels", "probabilities", "top_k"} <= set(
        spec["components"]["schemas"]["Prediction"]["properties"]
    )


def test_a_multi_label_run_without_a_bundle_is_served_by_its_keras_classifier(
    multilabel_run_dir, multilabel_run, tmp_path
):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(multilabel_run_dir, run)
    (run / BUNDLE_FILE).unlink()
    with TestClient(create_app(run, explain=False)) as keras_client:
        assert keras_client.get("/v1/model").json()["predictions_from"] == "model.keras"
        predictions = keras_client.post("/v1/predict", json={"texts": TEXTS, "top_k": 1}).json()["predictions"]
    assert [p["labels"] for p in predictions] == multilabel_run.predict_labels(TEXTS)
    assert all(p["top_k"][0]["probability"] == max(p["probabilities"].values()) for p in predictions)


def test_a_served_multi_label_run_predicts_and_explains_over_http(multilabel_run_dir, bundle, start_server):
    server = start_server(multilabel_run_dir)
    answer = server.client.post("/v1/predict", json={"texts": TEXTS, "top_k": 2})
    assert answer.status_code == 200, answer.text
    assert [p["labels"] for p in answer.json()["predictions"]] == bundle.predict_labels(TEXTS)
    server.wait_for_explanations()
    text = "They talked about bank at length. The bread was good."
    explained = server.client.post("/v1/explain", json={"text": text})
    assert explained.status_code == 200, explained.text
    (explanation,) = explained.json()
    assert sorted(explanation["probabilities"]) == sorted(bundle.label_names)  # hierattn.explain's JSON
    page = server.client.post("/", data={"text": text})
    assert page.status_code == 200 and "<form" in page.text
