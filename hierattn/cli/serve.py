"""`hierattn serve`: options onto `hierattn.serve.serve`."""

import click

from hierattn.cli.options import FiniteFloat, echo_err, friendly_errors, network_option, run_option
from hierattn.defaults import SERVE
from hierattn.utils.shell import pip_install_extra

MOST = SERVE["most"]  # the largest value of each number (`hierattn.serve.limits`, which checks them again)


def _range(name, least=1):
    """A whole number from `least` to the most `name` may be."""
    return click.IntRange(least, MOST[name])


def _limit(name, kind, help):
    return click.option(
        "--" + name.replace("_", "-"), name, type=kind, default=SERVE[name], show_default=True, help=help
    )


@click.command()
@run_option
@click.option(
    "--host", default=SERVE["host"], show_default=True, help="The address to listen on (loopback: this machine only)."
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=SERVE["port"],
    show_default=True,
    help="The port (0: any free one).",
)
@click.option(
    "--explain/--no-explain",
    default=True,
    show_default=True,
    help="Serve explanations (/v1/explain and the page) from the run's Keras classifier, loaded in a worker "
    "process in the background; --no-explain serves predictions only, without TensorFlow.",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    help="An origin a browser page may call the API from (repeatable; none by default).",
)
@click.option("--access-log", is_flag=True, help="Log every request.")
@_limit("max_batch", _range("max_batch"), "The most texts predicted together, across requests.")
@_limit(
    "batch_wait_ms",
    FiniteFloat(0, MOST["batch_wait_ms"], min_open=False),
    "How long a batch waits for more texts after its first.",
)
@_limit("batch_size", _range("batch_size"), "Texts per call of the model, in length-sorted groups of a batch.")
@click.option(
    "--predict-threads",
    type=_range("predict_threads"),
    default=SERVE["predict_threads"],
    show_default="one per core, plus one",
    help="Batches predicted side by side, each on one core.",
)
@_limit("max_queue", _range("max_queue"), "The most texts waiting to be predicted; beyond it, 503 with Retry-After.")
@_limit("max_explain_queue", _range("max_explain_queue"), "The most texts waiting to be explained; beyond it, 503.")
@_limit("max_body_bytes", _range("max_body_bytes"), "The largest request body; beyond it, 413.")
@_limit("max_texts", _range("max_texts"), "The most texts in one request.")
@_limit("max_text_chars", _range("max_text_chars"), "The longest text, in characters.")
@network_option
@friendly_errors
def serve(run_dir, host, port, explain, cors_origins, access_log, network, **limits):
    """Serve a run's classifier over HTTP: predictions, explanations and a page to try texts on.

    POST /v1/predict {"texts": [...]}, POST /v1/explain {"text": "..."},
    GET / (the page), /healthz, /readyz, /v1/model, /openapi.json.
    Predictions come from the run's model.onnx (without TensorFlow) and are
    ready at once; explanations load in the background. Stops on Ctrl-C or
    SIGTERM, letting requests in flight finish. See docs/serve.md.
    """
    try:  # the serve extra: checked before the run loads
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as error:
        raise click.ClickException(
            f"hierattn serve needs FastAPI and uvicorn ({error}): {pip_install_extra('serve')}"
        ) from None
    from hierattn.serve import serve as run_server

    run_server(run_dir, host, port, explain, cors_origins, access_log, log=echo_err, network=network, **limits)
