"""`create_app`'s routes, in process (Starlette's test client runs the application and its lifespan)."""

import numpy as np
import pytest
from fastapi.testclient import TestClient

from hierattn import __version__, runtime
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.serve import create_app
from hierattn.serve.page import POLICY

TEXTS = ["a good and great film, a joy", "a bad and awful plot", "great", "awful awful awful. bad."]


@pytest.fixture(scope="module")
def client(han_run_dir):
    with TestClient(create_app(han_run_dir, explain=False, max_batch=3)) as client:
        yield client


def test_predictions_are_the_runtimes_in_input_order(client, han_run_dir):
    answer = client.post("/v1/predict", json={"texts": TEXTS})
    assert answer.status_code == 200
    predictor = runtime.load(han_run_dir / BUNDLE_FILE)
    expected = predictor.predict(TEXTS)
    predictions = answer.json()["predictions"]
    assert [p["label"] for p in predictions] == predictor.predict_labels(TEXTS)
    got = np.array([[p["probabilities"][name] for name in predictor.label_names] for p in predictions])
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert list(predictions[0]["probabilities"]) == predictor.label_names


def test_a_top_k_beyond_the_classes_ranks_every_class_as_python_does(client, han_run_dir):
    predictor = runtime.load(han_run_dir / BUNDLE_FILE)
    (ranked,) = predictor.predict_top_k(TEXTS[:1], 10**9)  # the CLI's too: tests/cli/test_predict_top_k_command.py
    answer = client.post("/v1/predict", json={"text": TEXTS[0], "top_k": 10**9})
    assert answer.status_code == 200, answer.text
    got = [(r["label"], r["probability"]) for r in answer.json()["predictions"][0]["top_k"]]
    assert [name for name, _ in got] == [name for name, _ in ranked] and len(got) == len(predictor.label_names)
    np.testing.assert_allclose([p for _, p in got], [p for _, p in ranked], atol=1e-6)


def test_one_text_is_a_list_of_one(client):
    one = client.post("/v1/predict", json={"text": TEXTS[1]}).json()
    many = client.post("/v1/predict", json={"texts": TEXTS[1:2]}).json()
    assert one == many and len(one["predictions"]) == 1


def test_health_readiness_and_the_model(client, han_run_dir):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"predict": True, "explain": "off"}
    model = client.get("/v1/model").json()
    assert model["run"] == han_run_dir.name and model["backbone"] == "han"
    assert model["classes"] == runtime.load(han_run_dir / BUNDLE_FILE).label_names
    assert model["hierattn_version"] == __version__ and model["predictions_from"] == BUNDLE_FILE
    assert model["metrics"]["validation"]["accuracy"] >= 0 and model["limits"]["max_batch"] == 3
    cascade = runtime.load(han_run_dir / BUNDLE_FILE).cascade  # as the run chose it on its validation texts
    assert (model["network"], model["cut"], model["temperature"]) == ("auto", cascade.cut, cascade.temperature)
    assert str(han_run_dir) not in str(model)  # the server's files are not a client's business


def test_explanations_off_is_a_503_that_says_why(client):
    answer = client.post("/v1/explain", json={"text": "a good film"})
    assert answer.status_code == 503 and "started without them" in answer.json()["error"]
    assert "retry-after" not in answer.headers  # retrying will not help


def _request_body(spec, path):
    """The JSON schema of `path`'s request body in the OpenAPI description `spec`, its `$ref` followed."""
    body = spec["paths"][path]["post"]["requestBody"]
    assert body["required"] is True
    schema = body["content"]["application/json"]["schema"]
    if "$ref" in schema:
        *_, name = schema["$ref"].split("/")
        schema = spec["components"]["schemas"][name]
    return schema


def test_the_openapi_description_names_every_route_and_its_body(client):
    spec = client.get("/openapi.json").json()
    assert {"/v1/predict", "/v1/explain", "/", "/healthz", "/readyz", "/v1/model"} <= set(spec["paths"])
    body = _request_body(spec, "/v1/predict")
    assert {"texts", "text"} <= set(body["properties"])
    assert {"413", "415", "422", "503"} <= set(spec["paths"]["/v1/predict"]["post"]["responses"])
    assert client.get("/docs").status_code == 404  # no page that loads scripts from a CDN


def test_the_openapi_description_has_both_request_bodies_and_only_the_apis_errors(client):
    spec = client.get("/openapi.json").json()
    explain = _request_body(spec, "/v1/explain")
    assert explain["required"] == ["text"] and explain["additionalProperties"] is False
    assert explain["properties"]["top_k"]["type"] == "integer"
    assert _request_body(spec, "/v1/predict")["additionalProperties"] is False
    for path in ("/v1/predict", "/v1/explain"):
        invalid = spec["paths"][path]["post"]["responses"]["422"]["content"]["application/json"]["schema"]
        assert invalid == {"$ref": "#/components/schemas/Problem"}  # the API's error, not FastAPI's `detail` list
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def test_the_page_is_a_form_under_a_policy_that_allows_no_script(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == POLICY and "script-src" not in POLICY
    assert '<form method="post" action="/">' in page.text and "<script" not in page.text
    assert page.headers["x-content-type-options"] == "nosniff"


def test_the_page_says_what_is_wrong_with_a_bad_form(client):
    answer = client.post("/", data={"text": "<br/>"})
    assert answer.status_code == 422 and "no word" in answer.text and "&lt;br/&gt;" in answer.text
    assert client.post("/", content=b"x", headers={"content-type": "text/plain"}).status_code == 415
    assert client.post("/", data={"other": "a"}).status_code == 400
    blank = client.post("/", data={"text": "  "})
    assert blank.status_code == 422 and "text is empty" in blank.text


def test_no_cors_headers_unless_origins_are_given(client, han_run_dir):
    asked = {"origin": "https://example.com", "access-control-request-method": "POST"}
    assert "access-control-allow-origin" not in client.options("/v1/predict", headers=asked).headers
    assert (
        "access-control-allow-origin" not in client.get("/healthz", headers={"origin": "https://example.com"}).headers
    )
    app = create_app(han_run_dir, explain=False, cors_origins=["https://example.com"])
    with TestClient(app) as allowed:
        preflight = allowed.options("/v1/predict", headers=asked)
        assert preflight.headers["access-control-allow-origin"] == "https://example.com"
        other = allowed.options("/v1/predict", headers={**asked, "origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        too_big = allowed.post("/v1/predict", content=b"x" * (2**20 + 1), headers={"origin": "https://example.com"})
        assert too_big.status_code == 413 and too_big.headers["access-control-allow-origin"] == "https://example.com"
        assert too_big.headers["connection"] == "close"


def test_a_run_without_a_bundle_is_served_by_its_keras_classifier(han_run_dir, han_run, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(han_run_dir, run)
    (run / BUNDLE_FILE).unlink()
    with TestClient(create_app(run, explain=False)) as keras_client:
        model = keras_client.get("/v1/model").json()
        assert model["predictions_from"] == "model.keras" and model["limits"]["predict_threads"] == 1
        predictions = keras_client.post("/v1/predict", json={"texts": TEXTS}).json()["predictions"]
    got = np.array([[p["probabilities"][name] for name in han_run.label_names] for p in predictions])
    np.testing.assert_allclose(got, han_run.predict(TEXTS, verbose=0), atol=1e-5)


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(
    "body, headers, status, error",
    [
        (b'{"texts": "a good film"}', JSON, 422, "texts: Input should be a valid array"),  # JSON's words, not Python's
        (b"null", JSON, 422, "the body: Input should be an object"),
        (b"", JSON, 400, "the body is not valid JSON (Invalid JSON: EOF while parsing"),  # FastAPI's: no body, a 422
        (b'{"text": "good"', {"content-type": "application/merge-patch+json"}, 415, "not application/merge-patch+json"),
        (b'{"text": "good"}', {}, 415, "(Content-Type: application/json), not nothing"),  # FastAPI's: JSON
    ],
    ids=["JSON's words", "null", "empty", "+json is not JSON", "no content type"],
)
def test_a_typed_body_is_refused_in_the_apis_words(client, body, headers, status, error):
    answer = client.post("/v1/predict", content=body, headers=headers)
    assert answer.status_code == status and answer.json()["status"] == status
    assert error in answer.json()["error"], answer.json()


def test_a_minimum_confidence_leaves_unsure_texts_without_a_label(client, han_run_dir):
    predictor = runtime.load(han_run_dir / BUNDLE_FILE)
    sure = predictor.decision.confidence(predictor.predict(TEXTS))
    least = float(np.median(sure))
    body = client.post("/v1/predict", json={"texts": TEXTS, "min_confidence": least}).json()
    answered = sure >= least
    assert body["left"] == int((~answered).sum()) and [p["answered"] for p in body["predictions"]] == answered.tolist()
    labels = predictor.predict_labels(TEXTS)
    assert [p["label"] for p in body["predictions"]] == [label if a else None for label, a in zip(labels, answered)]
    np.testing.assert_allclose([p["confidence"] for p in body["predictions"]], sure, atol=1e-6)
    assert "left" not in client.post("/v1/predict", json={"texts": TEXTS}).json()  # only when asked for
    for bad in (1.5, "0.9", True):
        answer = client.post("/v1/predict", json={"texts": TEXTS, "min_confidence": bad})
        assert answer.status_code == 422 and answer.json()["error"].startswith("min_confidence: "), answer.json()


@pytest.mark.parametrize(
    "method, path, allowed",
    [("OPTIONS", "/", "GET, HEAD, POST"), ("DELETE", "/healthz", "GET, HEAD"), ("GET", "/v1/predict", "POST")],
)
def test_a_405_allows_every_method_of_its_path(client, method, path, allowed):
    # Found by Schemathesis (tests/serve/test_schema.py): `OPTIONS /` said `Allow: GET`, the first route's only.
    answer = client.request(method, path)
    assert answer.status_code == 405 and answer.headers["allow"] == allowed
    assert answer.json() == {"error": "Method Not Allowed", "status": 405}


def test_the_openapi_description_has_the_pages_form(client):
    # Found by Schemathesis: `POST /` answered but was not described, so a client could not know it was there.
    form = client.get("/openapi.json").json()["paths"]["/"]["post"]
    body = form["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
    assert body["required"] == ["text"] and body["properties"]["text"]["type"] == "string"
    assert set(form["responses"]) == {"200", "400", "413", "415", "422", "503"}
    assert form["responses"]["200"]["content"] == {"text/html": {"schema": {"type": "string"}}}


def test_the_openapi_description_says_the_servers_limits_on_texts(han_run_dir):
    # Schemathesis tries a description's edges: an empty list, a text one character over the limit.
    with TestClient(create_app(han_run_dir, explain=False, max_texts=5, max_text_chars=300)) as limited:
        spec = limited.get("/openapi.json").json()
    limits = {"type": "string", "minLength": 1, "maxLength": 300}
    explain = _request_body(spec, "/v1/explain")["properties"]["text"]
    assert {key: explain[key] for key in limits} == limits
    one, _ = _request_body(spec, "/v1/predict")["properties"]["text"]["anyOf"]
    texts, _ = _request_body(spec, "/v1/predict")["properties"]["texts"]["anyOf"]
    assert one == limits and (texts["minItems"], texts["maxItems"], texts["items"]) == (1, 5, limits)
