"""Serving a run's classifier over HTTP: predictions, explanations and a page (`hierattn serve`).

The application layer's server, on FastAPI and uvicorn (the `serve` extra:
`pip install -e ".[serve]"` from a clone). `create_app` builds the ASGI application
from a run; `serve` runs it, as `hierattn serve` does:

    from hierattn.serve import serve

    serve("runs/han-imdb-20261125-120000", port=8000)  # until SIGTERM or Ctrl-C

Predictions come from the run's exported bundle (`hierattn.runtime`),
gathered across requests into batches; explanations from its Keras
classifier in a worker process. See docs/serve.md.
"""

from hierattn.serve.app import create_app
from hierattn.serve.server import serve

__all__ = ["create_app", "serve"]
