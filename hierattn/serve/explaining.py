"""The explanation worker: a process of its own that loads a run's Keras classifier and explains texts.

Explanations need the Keras classifier (TensorFlow, integrated gradients),
which takes seconds to load and tens of milliseconds per text. They run in
one worker process, apart from the server's predictions: a slow
explanation, TensorFlow's memory or a crash of the worker cannot hold up or
take down the predictions. The functions here run in that process; the
server reaches them through a `concurrent.futures.ProcessPoolExecutor`
(`start_worker`).
"""

import concurrent.futures
import multiprocessing
import os
import signal

# Texts explained once when the worker starts, so that TensorFlow traces its functions before the first request.
# Each is explained alone, as requests are: a short text, one of two sentences, a longer one.
WARM_UP = (
    "A short warm-up text.",
    "A warm-up text. It has two sentences.",
    "Another, longer text to explain once before the first request, so that the work of tracing is done. " * 4,
)

_classifier = None  # the worker's classifier, set by `load`


def start_worker():
    """A one-process executor (started on the `spawn` method) to submit `begin`, `load`, then `explain` to.

    `spawn`, not `fork`: the server's threads and onnxruntime are not
    copied into the child, and TensorFlow starts fresh there. Loading is a
    task, not the pool's initializer, so that an error while loading comes
    back to the server as that error.
    """
    return concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))


def begin():
    """The worker's process id; from now on the worker ignores Ctrl-C (the server ends it when it stops)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return os.getpid()


def load(model_file, network=None):
    """Loads the run's classifier (its model.keras: the server found the run) in the worker; explains `WARM_UP` once.

    `network`: the classifier's `network` setting, as the server predicts (None: as saved).
    """
    global _classifier
    from hierattn.models.loading import load_classifier

    _classifier = load_classifier(model_file)
    if network is not None:
        _classifier.network = network
    for text in WARM_UP:
        _classifier.explain([text])


def explain(items):
    """Explanations of `items`, `(text, top_k, format)` each: `explain --format json`'s JSON, or the HTML fragment."""
    from hierattn.explain.picture import to_html
    from hierattn.explain.report import to_json

    results = []
    for text, top_k, fmt in items:
        explanations = _classifier.explain([text])
        results.append(
            to_json(explanations, top_k) + "\n" if fmt == "json" else to_html(explanations, page=False, top_k=top_k)
        )
    return results
