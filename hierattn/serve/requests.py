"""The API's request and response bodies (pydantic, for validation and the OpenAPI description) and their checks.

pydantic checks types and shapes (strict: a number is not a text); `texts_of`
checks what depends on the model and the limits: empty or wordless texts,
texts too long, too many texts. Each failure is a 422 with one message that
names the field (`texts[3]`).
"""

import pydantic
from starlette.exceptions import HTTPException

from hierattn.defaults import SERVE


class PredictRequest(pydantic.BaseModel):
    """`{"texts": [...]}` or `{"text": "..."}`, with `"top_k": K` for each text's K most probable classes.

    With `"min_confidence": P`, a decision less sure than `P` is no answer
    (`label` null, `answered` false: left for a person).

    Example:

    >>> PredictRequest.model_validate_json('{"texts": ["A superb film."]}').texts
    ['A superb film.']
    >>> PredictRequest.model_validate_json('{"text": "A superb film.", "top_k": 2}').top_k
    2
    """

    model_config = pydantic.ConfigDict(extra="forbid")
    texts: list[pydantic.StrictStr] | None = pydantic.Field(None, description="Texts to classify, in order.")
    text: pydantic.StrictStr | None = pydantic.Field(None, description="One text to classify (instead of texts).")
    top_k: pydantic.StrictInt | None = pydantic.Field(
        None,
        ge=1,
        description="Also rank each text's K most probable classes (a multi-label model's labels, by their own "
        "probabilities): `top_k` in each prediction, at most as many as there are classes.",
    )
    min_confidence: pydantic.StrictFloat | None = pydantic.Field(
        None,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="Answer only where the decision is at least this sure (its probability of being right): "
        "each prediction then has `answered` and `confidence`, and an unsure one no label.",
    )


class ExplainRequest(pydantic.BaseModel):
    """`{"text": "...", "top_k": 10}`.

    Example:

    >>> ExplainRequest.model_validate_json('{"text": "A superb film."}').top_k
    10
    """

    model_config = pydantic.ConfigDict(extra="forbid")
    text: pydantic.StrictStr = pydantic.Field(description="The text to explain.")
    top_k: pydantic.StrictInt = pydantic.Field(
        SERVE["top_k"],
        ge=1,
        le=SERVE["max_top_k"],
        description="The n-grams listed (every word is listed with its evidence).",
    )


class Ranked(pydantic.BaseModel):
    """One class of a ranking (`top_k`): its name and probability.

    Example:

    >>> Ranked(label="pos", probability=0.9).probability
    0.9
    """

    label: str = pydantic.Field(description="A class.")
    probability: float = pydantic.Field(description="Its probability.")


class Prediction(pydantic.BaseModel):
    """One text's answer: `label` from a single-label model, `labels` from a multi-label one.

    Example:

    >>> Prediction(label="pos", probabilities={"neg": 0.1, "pos": 0.9}).label
    'pos'
    >>> Prediction(labels=["sport"], probabilities={"sport": 0.8, "food": 0.1}).labels
    ['sport']
    """

    label: str | None = pydantic.Field(None, description="The most probable class (a single-label model).")
    labels: list[str] | None = pydantic.Field(
        None,
        description="A multi-label model's labels over their thresholds, in the model's order (possibly none).",
    )
    probabilities: dict[str, float] = pydantic.Field(
        description="Each class's probability, in the model's order (a multi-label model's: each label's own)."
    )
    top_k: list[Ranked] | None = pydantic.Field(
        None, description="With top_k in the request: the most probable classes, most probable first."
    )
    answered: bool | None = pydantic.Field(
        None,
        description="With min_confidence in the request: whether the decision is at least that sure (false: no "
        "label, the text left for a person).",
    )
    confidence: float | None = pydantic.Field(
        None,
        description="With min_confidence: the probability that the decision is right (of the class; for a "
        "multi-label model, of its least sure label).",
    )


class PredictResponse(pydantic.BaseModel):
    """`/v1/predict`'s answer.

    Example:

    >>> len(PredictResponse(predictions=[{"label": "pos", "probabilities": {"pos": 1.0}}]).predictions)
    1
    """

    predictions: list[Prediction] = pydantic.Field(description="One per text, in input order.")
    left: int | None = pydantic.Field(
        None, description="With min_confidence in the request: how many texts got no answer (left for a person)."
    )


class Problem(pydantic.BaseModel):
    """Every error's body.

    Example:

    >>> Problem(error="the body is not valid JSON", status=400).status
    400
    """

    error: str = pydantic.Field(description="What went wrong, in one line.")
    status: int = pydantic.Field(description="The HTTP status, repeated.")


ERRORS = {
    code: {"model": Problem, "description": description}
    for code, description in (
        (400, "The body is not valid JSON"),
        (413, "The body is over the size limit"),
        (415, "The body is not JSON"),
        (422, "The body is JSON but not a valid request (a wrong type, an empty or wordless text, over a limit)"),
        (503, "The queue is full, or explanations are not ready (with Retry-After when worth retrying)"),
    )
}


# `/v1/explain`'s answer: `hierattn.explain.Explanation.to_dict`'s fields are described in docs/explanations.md.
EXPLANATION = {
    "description": "A list holding one explanation, as `hierattn explain` prints it in JSON",
    "content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}}},
}


# `POST /`, the page's form, described for what it is (the route reads the form itself, not a pydantic model): a
# form with one field, `text`, answered with the page (HTML) whatever happened; only the guard's 413 is JSON.
FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "The text to explain."}},
                    "required": ["text"],
                }
            }
        },
    }
}
_PAGE = {"text/html": {"schema": {"type": "string"}}}
FORM_ANSWERS = {
    200: {"description": "The page with the text's explanation", "content": _PAGE},
    400: {"description": "Not a form with one field, text", "content": _PAGE},
    413: {
        "description": "The body is over the size limit",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
    },
    415: {"description": "Not a form (application/x-www-form-urlencoded)", "content": _PAGE},
    422: {"description": "An empty or wordless text, or one over the limit", "content": _PAGE},
    503: {"description": "Explanations are not ready, or too many are waiting", "content": _PAGE},
}


def with_limits(spec, limits):
    """The OpenAPI description `spec` (changed in place) with this server's limits on texts, as `texts_of` checks them.

    A text has 1 to `max_text_chars` characters, `texts` 1 to `max_texts`
    of them: a client reads the limits there, and a generator of requests
    (Schemathesis) tries their edges. A text must also have a word, which
    no JSON schema can say.
    """
    schemas = spec["components"]["schemas"]
    text = {"minLength": 1, "maxLength": limits["max_text_chars"]}
    schemas["ExplainRequest"]["properties"]["text"].update(text)
    predict = schemas["PredictRequest"]["properties"]
    (one,) = [kind for kind in predict["text"]["anyOf"] if kind.get("type") == "string"]
    one.update(text)
    (many,) = [kind for kind in predict["texts"]["anyOf"] if kind.get("type") == "array"]
    many.update(minItems=1, maxItems=limits["max_texts"])
    many["items"].update(text)
    return spec


def texts_of(body, service):
    """The texts of a valid request body, checked against the model and the limits.

    Raises:
        HTTPException: 422, naming the field: neither or both of `text` and
            `texts`, no texts, too many, one too long, empty, or without a word.
    """
    texts = getattr(body, "texts", None)
    if texts is not None and body.text is not None:
        raise HTTPException(422, "give either text or texts, not both")
    if texts is None:
        if body.text is None:
            raise HTTPException(422, "give text (one string) or texts (a list of strings)")
        texts, names = [body.text], ["text"]
    else:
        names = [f"texts[{i}]" for i in range(len(texts))]
    limits = service.limits
    if not texts:
        raise HTTPException(422, "texts is empty: give at least one text")
    if len(texts) > limits["max_texts"]:
        raise HTTPException(422, f"{len(texts):,} texts; the limit is {limits['max_texts']:,} per request")
    for name, text in zip(names, texts):
        if len(text) > limits["max_text_chars"]:
            raise HTTPException(422, f"{name} has {len(text):,} characters; the limit is {limits['max_text_chars']:,}")
        if not text.strip():
            raise HTTPException(422, f"{name} is empty")
        if not service.has_words(text):
            raise HTTPException(422, f"{name} has no word to read (only markup, symbols or spaces)")
    return texts
