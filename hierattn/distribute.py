"""Training on several devices or machines with TensorFlow's `tf.distribute`.

hierattn writes no distribution of its own: `make_strategy` returns
TensorFlow's `MirroredStrategy` (several GPUs of one machine) or
`MultiWorkerMirroredStrategy` (several machines, described by the standard
`TF_CONFIG` environment variable), and `TextClassifier.fit` feeds it through
`Strategy.distribute_datasets_from_function` (see
`hierattn.data.pipeline`), so that every training example is seen once per
epoch across all replicas.
"""

import json
import os
import socket

from hierattn.defaults import DISTRIBUTE
from hierattn.errors import HierattnError


def make_strategy(distribute):
    """The `tf.distribute.Strategy` for a choice of distribution (`hierattn.defaults.DISTRIBUTE`).

    Args:
        distribute: `"none"` (or `None`): the strategy in effect (TensorFlow's
            default, one device, unless the caller entered a scope);
            `"mirrored"`: `MirroredStrategy` over this machine's GPUs (its CPU
            when it has none); `"multi-worker"`: `MultiWorkerMirroredStrategy`
            over the cluster in `TF_CONFIG`. Create it before TensorFlow runs
            anything else in the process.

    Raises:
        HierattnError: An unknown choice, or a missing or malformed `TF_CONFIG`.
    """
    import tensorflow as tf  # loaded when used: this module is on the program's path before TensorFlow

    if distribute in (None, "none"):
        return tf.distribute.get_strategy()
    if distribute not in DISTRIBUTE:
        raise HierattnError(f"unknown distribution {distribute!r}: choose one of {', '.join(DISTRIBUTE)}")
    if distribute == "mirrored":
        return tf.distribute.MirroredStrategy()
    check_tf_config()
    try:
        return tf.distribute.MultiWorkerMirroredStrategy()
    except (RuntimeError, ValueError) as error:
        raise HierattnError(f"cannot start multi-worker training: {error}") from None


def check_tf_config():
    """The parsed `TF_CONFIG` of a multi-worker run, or a one-line error saying what is wrong with it."""
    text = os.environ.get("TF_CONFIG")
    if not text:
        raise HierattnError(
            "multi-worker training reads the cluster from TF_CONFIG, which is not set (e.g. "
            'TF_CONFIG=\'{"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
            '"task": {"type": "worker", "index": 0}}\')'
        )
    try:
        config = json.loads(text)
        cluster, task = config["cluster"], config["task"]
        members = cluster[task["type"]]
        members[int(task["index"])]
    except (ValueError, KeyError, TypeError, IndexError):
        raise HierattnError(
            'TF_CONFIG must be JSON with a cluster ({"worker": ["host:port", ...]}) and this '
            'process\'s task ({"type": "worker", "index": i}) in it'
        ) from None
    return config


def local_cluster(num_workers):
    """`TF_CONFIG` values for a cluster of `num_workers` processes on this machine (127.0.0.1, free ports).

    For trying multi-worker training on one machine: start worker `i` with
    `TF_CONFIG=local_cluster(n)[i]`. A port is free when chosen; start the
    workers right away.
    """
    sockets = [socket.socket() for _ in range(num_workers)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    workers = [f"127.0.0.1:{s.getsockname()[1]}" for s in sockets]
    for s in sockets:
        s.close()
    return [
        json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}}) for i in range(num_workers)
    ]


def in_multi_worker_mode(strategy):
    """Whether `strategy` spans several processes (a `MultiWorkerMirroredStrategy` over a real cluster)."""
    import tensorflow as tf  # loaded when used: this module is on the program's path before TensorFlow

    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return False
    cluster = strategy.cluster_resolver.cluster_spec().as_dict()
    return sum(len(members) for job, members in cluster.items() if job in ("chief", "worker")) > 1


def _is_chief_task(task_type, task_id, jobs):
    # TensorFlow's convention: the `chief` task, or worker 0 when there is none.
    return task_type == "chief" or (task_type == "worker" and int(task_id) == 0 and "chief" not in jobs)


def is_chief(strategy):
    """Whether this process writes the run directory: always, except on the non-chief workers of a cluster."""
    if not in_multi_worker_mode(strategy):
        return True
    resolver = strategy.cluster_resolver
    return _is_chief_task(resolver.task_type, resolver.task_id, resolver.cluster_spec().jobs)


def is_chief_in_tf_config():
    """Whether `TF_CONFIG` makes this process the chief (before any strategy exists); see `check_tf_config`."""
    config = check_tf_config()
    return _is_chief_task(config["task"]["type"], config["task"]["index"], config["cluster"])


def describe(strategy):
    """A short line: how many replicas, and which worker this is."""
    import tensorflow as tf  # loaded when used: this module is on the program's path before TensorFlow

    replicas = strategy.num_replicas_in_sync
    kinds = {
        "MultiWorkerMirroredStrategy": tf.distribute.MultiWorkerMirroredStrategy,
        "MirroredStrategy": tf.distribute.MirroredStrategy,
    }  # public names (the first's class is named otherwise)
    name = next(
        (name for name, kind in kinds.items() if isinstance(strategy, kind)), type(strategy).__name__.strip("_")
    )
    text = f"{name}, {replicas} replica{'s' if replicas != 1 else ''} in sync"
    if in_multi_worker_mode(strategy):
        resolver = strategy.cluster_resolver
        text += f"; this is {resolver.task_type} {resolver.task_id}" + (" (chief)" if is_chief(strategy) else "")
    return text


def step_logs_for(strategy, logs):
    """Step results in the shape Keras can reduce across the workers of a cluster.

    Keras 3 averages each step's results across workers with
    `strategy.reduce("MEAN", value, axis=0)`, which fails on the scalar loss
    and metrics (keras-team/keras#20585); as one-element vectors they reduce
    to the same scalars. The epoch's logs are then read from the metrics'
    variables, summed over every replica. Anywhere else `logs` is returned
    unchanged.
    """
    if not in_multi_worker_mode(strategy):
        return logs
    from keras import ops  # as above

    return {name: ops.reshape(value, (1,)) for name, value in logs.items()}
