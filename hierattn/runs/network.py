"""The network's part of a training run: its classifier made and adapted (or loaded, to resume), its epochs fitted.

Each step takes what `hierattn.runs.train` hands down: the data (`RunData`
and its `Split`), the settings (`TrainConfig`) and how this process runs it
(`RunContext`). The epochs are those `hierattn.models.budget.decide_budget`
decides, which `TextClassifier.fit` is then given.
"""

import csv
import dataclasses
import os
import time

import keras

from hierattn import __version__
from hierattn.callbacks import (
    RestoreBestWeights,
    ResumableEarlyStopping,
    SaveWeights,
    StopOnNaN,
    early_stopping_state,
)
from hierattn.distribute import describe
from hierattn.models import load_classifier
from hierattn.models.budget import decide_budget
from hierattn.models.task import default_optimizer
from hierattn.runs.config import CONFIG_FORMAT, make_classifier, read_config
from hierattn.runs.directory import WORD2VEC_CHECKPOINT, adapted, now, read_status, write_status
from hierattn.utils.atomic import atomic_path
from hierattn.utils.jsonfile import save_json


def _history(history_file):
    """The rows of a run's history.csv, one per finished epoch (none yet: [])."""
    if not history_file.exists():
        return []
    with open(history_file, newline="") as f:
        return list(csv.DictReader(f))


class RecordStop(keras.callbacks.Callback):
    """Writes why the network's training ended to run.json's `stopped_by` when it ends (not when it is interrupted).

    Keras calls `on_train_end` only when the epochs end normally, so a run
    interrupted after this point (while its n-gram part, test evaluation or
    baseline ran) is known, when resumed, to need no further epoch, even
    where its history cannot tell (the time budget).

    Args:
        output: The run directory.
        early_stopping: The training's `keras.callbacks.EarlyStopping`.
        budget: Its `hierattn.models.budget.Budget`.
        epochs_before: The epochs trained before this `fit` (a resumed run's).

    Example:

    ```python
    import pathlib

    pathlib.Path("run").mkdir()
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(8.0).reshape(-1, 1) / 8
    early_stopping = keras.callbacks.EarlyStopping(patience=2)
    record = RecordStop("run", early_stopping, decide_budget(2, len(x), 8, strategy=None))
    model.fit(x, x, validation_split=0.25, epochs=2, verbose=0, callbacks=[early_stopping, record])
    print(read_status("run")["stopped_by"])  # epochs setting
    ```
    """

    def __init__(self, output, early_stopping, budget, epochs_before=0):
        super().__init__()
        self.output = output
        self.early_stopping, self.budget = early_stopping, budget
        self.epochs_trained = epochs_before

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_trained = epoch + 1

    def on_train_end(self, logs=None):
        write_status(self.output, stopped_by=self.budget.stop_reason(self.early_stopping, self.epochs_trained))


def prepare_classifier(data, split, config, context):
    """The run's classifier, compiled: made, adapted and saved as the first checkpoint, or loaded from it to resume.

    A new run writes run.json and config.json (the settings as given, and
    the untrained classifier's config) first. word2vec saves its state after
    each epoch (`checkpoints/word2vec.npz`, removed once adapted.keras is
    written): a run stopped while it trained is made and adapted again when
    resumed, word2vec continuing from its last epoch saved, to the same
    vectors.

    Returns:
        `(classifier, record)`: the `TextClassifier`, and config.json's content.
    """
    output, adapted_file = context.output, context.checkpoints / "adapted.keras"
    word2vec_file = context.checkpoints / WORD2VEC_CHECKPOINT
    with context.strategy.scope():
        if context.resume and adapted(output):
            context.log(f"resuming {output}")
            classifier = load_classifier(adapted_file)
            record = read_config(output)
            word2vec_file.unlink(missing_ok=True)  # left by a stop just after adapted.keras was written
        else:
            classifier = make_classifier(config, data.train.label_map.names)
            if context.resume:  # stopped while word2vec trained: made and adapted again, word2vec resumed
                context.log(f"resuming {output}: word2vec from its last epoch saved")
                record = read_config(output)
            else:
                write_status(output, status="training", dataset=data.name, created=now(), hierattn_version=__version__)
                # The settings as given (a limit None is chosen by adapt, and kept in model.keras).
                record = {**dataclasses.asdict(config), "classifier": classifier.get_config()}
                save_json(output / "config.json", CONFIG_FORMAT, record, indent=2)
            fit_labels = data.train.label_map.names_of(split.fit_labels)
            context.checkpoints.mkdir(exist_ok=True)
            classifier.adapt(
                split.fit_texts, fit_labels, data.unlabeled, context.verbose, word2vec_checkpoint=word2vec_file
            )
            write_status(output, embeddings=classifier.embedding_source)
            with atomic_path(adapted_file) as partial:  # the first checkpoint: the run resumes from here on
                classifier.save(partial)
            word2vec_file.unlink(missing_ok=True)  # (up to hundreds of MB; word2vec is in adapted.keras now)
        classifier.compile(optimizer=default_optimizer(config.learning_rate))
    write_status(output, distribution=describe(context.strategy))
    preprocessor = classifier.preprocessor
    units = preprocessor.tokenizer.units
    if preprocessor.units_report:
        context.log(f"units: {preprocessor.units_report['reason']}")
        write_status(output, units=preprocessor.units_report)
    context.log(
        f"vocabulary {len(preprocessor.vocabulary):,} {units if units != 'words' else 'ids'}; limits: "
        + (
            f"{preprocessor.max_sentences} sentences x {preprocessor.max_words} {units}"
            if config.model == "han"
            else f"{preprocessor.sequence_length} {units}"
        )
    )
    return classifier, record


def fit_network(classifier, data, split, config, context):
    """Fits the classifier (`TextClassifier.fit`) within the run's budget, resumable; what it did, for metrics.json.

    Without `config.epochs`, the budget of `decide_budget`: the same epochs
    when resumed, and this process's time. A resumed run whose network had
    finished training (run.json's `stopped_by`, or early stopping that its
    history shows had triggered) trains no further epoch: `fit` goes on to
    the n-gram part.

    Returns:
        The training's entries of metrics.json: `training_seconds`,
        `epochs_trained`, `epoch_budget`, `time_budget_seconds`,
        `stopped_by`, `train_documents` and `embeddings`.
    """
    output, label_map = context.output, data.train.label_map
    history = _resumed_history(context)
    losses = [float(row["val_loss"]) for row in history if row.get("val_loss")]
    num_texts = len(split.fit_texts)
    budget = decide_budget(config.epochs, num_texts, config.batch_size, context.strategy)
    early_stopping = ResumableEarlyStopping(losses, monitor="val_loss", patience=config.patience)
    stopped_by = _stopped_before(output, losses, config.patience) if context.resume else None
    if stopped_by:
        context.log(f"the network finished training before the interruption ({stopped_by}): no further epoch")
    callbacks = _callbacks(context, budget, early_stopping, losses, None if stopped_by else len(history))
    context.log(
        f"training {config.model} on {num_texts:,} documents, validating on {len(split.val_texts):,}: "
        + budget.text(num_texts, config.batch_size)
    )
    started = time.perf_counter()
    classifier.fit(
        split.fit_texts,
        label_map.names_of(split.fit_labels),  # class names, which fit reads as they are (integer names included)
        validation_data=(split.val_texts, label_map.names_of(split.val_labels)),
        epochs=len(history) if stopped_by else budget.epochs,  # finished: no epoch, on to the n-gram part
        batch_size=config.batch_size,
        callbacks=callbacks,
        verbose=context.verbose,
        initial_epoch=len(history),
    )
    training_seconds = time.perf_counter() - started
    epochs_trained = len(_history(output / "history.csv"))  # every process's, when resumed
    return {
        "training_seconds": round(training_seconds, 1),
        "epochs_trained": epochs_trained,
        "epoch_budget": budget.epochs,
        "time_budget_seconds": budget.seconds,
        "stopped_by": stopped_by or budget.stop_reason(early_stopping, epochs_trained),
        "train_documents": num_texts,
        "embeddings": read_status(output).get("embeddings"),
    }


def _resumed_history(context):
    """The history of the epochs trained before (a new run: none), its latest weights where `fit` finds them."""
    if not context.resume:
        return []
    checkpoints = context.checkpoints
    legacy = checkpoints / "backup" / "latest.weights.h5"  # an unfinished run of hierattn 0.5.0 (BackupAndRestore)
    if legacy.exists() and not (checkpoints / "latest.weights.h5").exists():
        os.replace(legacy, checkpoints / "latest.weights.h5")
    return _history(context.output / "history.csv")


def _callbacks(context, budget, early_stopping, losses, epochs_before):
    """The callbacks of the run's `fit`: checkpoints, early stopping, the budget, logs; `RecordStop` unless finished.

    `epochs_before`: the epochs trained before (`None`: the network had
    finished training, nothing to record).
    """
    best_weights = context.checkpoints / "best.weights.h5"
    return [
        SaveWeights(context.checkpoints / "latest.weights.h5"),
        SaveWeights(best_weights, monitor="val_loss", best=min(losses, default=None)),
        early_stopping,
        *([budget.time_budget] if budget.time_budget else []),
        keras.callbacks.CSVLogger(str(context.output / "history.csv"), append=context.resume),
        keras.callbacks.TensorBoard(str(context.output / "logs")),
        StopOnNaN(context.output),
        RestoreBestWeights(best_weights),  # before fit fits the n-gram part
        # before the caller's: the reason is recorded even if one of theirs fails at the end
        *([] if epochs_before is None else [RecordStop(context.output, early_stopping, budget, epochs_before)]),
        *context.callbacks,
    ]


def _stopped_before(output, losses, patience):
    """Why the network of an unfinished run had finished training (run.json's `stopped_by`, or early stopping its history shows), or None."""
    recorded = read_status(output).get("stopped_by")
    if recorded:
        return recorded
    if early_stopping_state(losses, patience)[3]:
        return f"validation loss stopped improving (patience {patience})"
    return None
