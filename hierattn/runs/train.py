"""Training a `TextClassifier` into a run directory: resumable, checkpointed, evaluated once.

What a run is given is a `hierattn.runs.config.TrainConfig`; `hierattn.runs.sources` finds and reads the data first.
"""

import contextlib
import csv
import dataclasses
import os
import pathlib
import shutil
import tempfile
import time

import keras

from hierattn import __version__
from hierattn.callbacks import (
    RestoreBestWeights,
    ResumableEarlyStopping,
    SaveWeights,
    StopOnNaN,
    TimeBudget,
    early_stopping_state,
)
from hierattn.data.dataset import sample, stratified_split
from hierattn.defaults import EPOCH_BUDGET
from hierattn.distribute import describe, is_chief, make_strategy
from hierattn.errors import HierattnError, ResourceError
from hierattn.metrics import classification_metrics
from hierattn.models import load_classifier
from hierattn.models.budget import budget_text, epoch_budget, stop_reason, timed
from hierattn.models.task import default_optimizer
from hierattn.runs.baseline import NAME, run_baseline
from hierattn.runs.config import CONFIG_FORMAT, load_config, make_classifier, read_config, size_settings
from hierattn.runs.data_record import check_same_data
from hierattn.runs.directory import (
    Run,
    claim_run_dir,
    ensure_new_or_resumable,
    now,
    read_status,
    write_status,
)
from hierattn.utils.atomic import atomic_path, is_write_failure, write_error
from hierattn.utils.jsonfile import save_json


@contextlib.contextmanager
def resource_errors(config, output):
    """Turns running out of memory or disk during a run into one line that says what to do.

    Out of memory (`MemoryError`, TensorFlow's `ResourceExhaustedError`): a
    `ResourceError` naming the settings that set the size, with their values,
    to lower. An `OSError` that names no file (Keras's log writers on a full
    disk): a `WriteError` naming the run directory.
    """
    try:
        yield
    except HierattnError:
        raise
    except OSError as error:
        if error.filename is not None or not is_write_failure(error):
            raise
        raise write_error(error, f"{output}/") from None
    except Exception as error:
        if not isinstance(error, MemoryError) and type(error).__name__ != "ResourceExhaustedError":
            raise
        raise ResourceError(
            f"out of memory: the {config.model} model does not fit in this machine's memory with "
            f"{size_settings(config)}; lower one of these settings"
        ) from None


def _history(history_file):
    """The rows of a run's history.csv, one per finished epoch (none yet: [])."""
    if not history_file.exists():
        return []
    with open(history_file, newline="") as f:
        return list(csv.DictReader(f))


def train(
    train_data,
    test_data,
    config,
    output,
    unlabeled=None,
    resume=False,
    dataset_name="data",
    log=print,
    verbose="auto",
    callbacks=None,
    distribute=None,
):
    """Trains a `TextClassifier` and writes a complete run directory.

    Makes the untrained classifier of `config.classifier`
    (`TextClassifier.from_config`, recorded in config.json with the run's
    own settings), holds out a stratified validation part of `train_data`,
    fits the classifier (`TextClassifier.fit`) for at most `config.epochs`
    epochs (`None`: the epoch budget of the training part, within the time
    budget; `hierattn.models.budget`), early-stops on the
    validation loss and keeps the best epoch, then (with the classifier's
    `ngrams`, the default) fits the n-gram part and chooses its share on
    the validation part, evaluates once on
    `test_data` (if given; the whole classifier, and each part alone under
    `metrics["parts"]`), fits the
    TF-IDF + logistic regression baseline on the same training part and
    scores it on the same validation and test texts (`hierattn.runs.baseline`;
    `config.baseline=False` skips it), and saves everything (see
    `hierattn.runs.directory`). Resumable: with `resume=True` an interrupted run
    continues from its last finished epoch, early stopping where it stood;
    a run whose network had finished training (run.json's `stopped_by`,
    written when it did, or early stopping that its history.csv shows had
    triggered) trains no further epoch and goes on to what remained.

    Distributed (`distribute`, or inside a `tf.distribute` strategy scope),
    each batch is shared between the replicas, each document is seen once
    per epoch across all of them, and history.csv's `examples` column counts
    them. Only the chief writes `output`; every other worker of a
    multi-worker cluster trains in a private temporary copy of the run
    directory, deleted at the end (resuming, it starts from a copy of the
    chief's `output`, which it must be able to read).

    Args:
        train_data: `TextDataset` for training (validation is carved from it).
        test_data: `TextDataset` for the final evaluation, or `None`.
        config: A `TrainConfig` (its `data` says where the texts came from).
        output: The run directory (must not exist unless resuming).
        unlabeled: Extra unlabelled texts (e.g. IMDB unsup) for word2vec.
        resume: Continue an interrupted run in `output`.
        dataset_name: Recorded in run.json.
        log: Function printing progress messages.
        verbose: Keras `fit` verbosity.
        callbacks: Extra Keras callbacks for `fit`.
        distribute: `"none"`/`None` (the strategy in effect), `"mirrored"`
            or `"multi-worker"` (`TF_CONFIG`); see `hierattn.distribute`.

    Returns:
        The finished `Run`; its `metrics` attribute holds what metrics.json
        holds (on a non-chief worker: the validation metrics only).
    """
    strategy = make_strategy(distribute)  # first: MultiWorkerMirroredStrategy must precede any TensorFlow work
    if is_chief(strategy):
        return _train(
            train_data, test_data, config, output, unlabeled, resume, dataset_name, log, verbose, callbacks, strategy
        )
    output = pathlib.Path(output)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="hierattn-worker-"))
    try:
        private = scratch / "run"
        if resume:
            ensure_new_or_resumable(output, True, check_lock=False)  # the chief holds it
            shutil.copytree(output, private)
        log(
            f"{strategy.cluster_resolver.task_type} {strategy.cluster_resolver.task_id}: training in {private}; "
            f"the chief writes {output}"
        )
        run = _train(
            train_data,
            test_data,
            config,
            private,
            unlabeled,
            resume,
            dataset_name,
            lambda message: None,
            0,
            callbacks,
            strategy,
            chief=False,
        )
        return Run(output, run.classifier, run.config, run.metrics, chief=False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _parts(classifier, evaluate):
    """Each part of a classifier with an n-gram part scored alone: `{part: {split: metrics}}`, and the weights."""
    report = classifier.ngram_report
    parts = {key: report[key] for key in ("network_weight", "ngram_weight", "network_share")}
    parts["ngram_training_seconds"] = report["training_seconds"]
    parts["shares_tried"] = report.get("shares")  # validation log-loss and accuracy of each share
    parts["ngram_recipe"] = report.get("recipe")
    parts["recipes_tried"] = report.get("candidates")  # validation accuracy, macro-F1, log-loss of each
    for part in ("network", "ngrams"):
        parts[part] = {
            split: classification_metrics(
                labels, classifier.predict_ids(x, part=part).argmax(1), classifier.label_names
            )
            for split, (x, labels) in evaluate.items()
        }
    return parts


def _train(
    train_data,
    test_data,
    config,
    output,
    unlabeled,
    resume,
    dataset_name,
    log,
    verbose,
    callbacks,
    strategy,
    chief=True,
):
    """`train` in one process: everything checked first, then `output` owned throughout (`claim_run_dir`).

    `chief=False`: skip the test evaluation and the final model file.
    """
    output = pathlib.Path(output)
    if resume:
        ensure_new_or_resumable(output, True, check_lock=False)  # the claim below checks the lock
        recorded = load_config(output)
        if config.data:
            check_same_data(output, recorded.data, config.data)
        config = recorded
    config.validate()
    if config.limit:  # the whole run small: training, test and unlabelled texts
        train_data, test_data, unlabeled = (
            sample(data, config.limit, config.seed) for data in (train_data, test_data, unlabeled)
        )
        sizes = [f"{len(train_data):,} training"] + [
            f"{len(data):,} {name}" for name, data in (("test", test_data), ("unlabelled", unlabeled)) if data
        ]
        log(f"limit {config.limit:,}: a seeded sample of {', '.join(sizes)} texts")
    split = stratified_split(train_data.labels, config.validation_split, config.seed, train_data.label_map.names)
    with claim_run_dir(output, resume), resource_errors(config, output):
        return _train_owned(
            train_data,
            test_data,
            config,
            output,
            unlabeled,
            resume,
            split,
            dataset_name,
            log,
            verbose,
            callbacks,
            strategy,
            chief,
        )


class RecordStop(keras.callbacks.Callback):
    """Writes why the network's training ended to run.json's `stopped_by` when it ends (not when it is interrupted).

    Keras calls `on_train_end` only when the epochs end normally, so a run
    interrupted after this point (while its n-gram part, test evaluation or
    baseline ran) is known, when resumed, to need no further epoch, even
    where its history cannot tell (the time budget).

    Args:
        output: The run directory.
        early_stopping, time_budget, epochs, budgeted: What
            `hierattn.models.budget.stop_reason` takes.
        epochs_before: The epochs trained before this `fit` (a resumed run's).

    Example:

    ```python
    import pathlib

    pathlib.Path("run").mkdir()
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(8.0).reshape(-1, 1) / 8
    early_stopping = keras.callbacks.EarlyStopping(patience=2)
    record = RecordStop("run", early_stopping, None, epochs=2, budgeted=False)
    model.fit(x, x, validation_split=0.25, epochs=2, verbose=0, callbacks=[early_stopping, record])
    print(read_status("run")["stopped_by"])  # epochs setting
    ```
    """

    def __init__(self, output, early_stopping, time_budget, epochs, budgeted, epochs_before=0):
        super().__init__()
        self.output = output
        self.early_stopping, self.time_budget, self.epochs, self.budgeted = (
            early_stopping,
            time_budget,
            epochs,
            budgeted,
        )
        self.epochs_trained = epochs_before

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_trained = epoch + 1

    def on_train_end(self, logs=None):
        reason = stop_reason(self.early_stopping, self.time_budget, self.epochs_trained, self.epochs, self.budgeted)
        write_status(self.output, stopped_by=reason)


def _stopped_before(output, losses, patience):
    """Why the network of an unfinished run had finished training (run.json's `stopped_by`, or early stopping its history shows), or None."""
    recorded = read_status(output).get("stopped_by")
    if recorded:
        return recorded
    if early_stopping_state(losses, patience)[3]:
        return f"validation loss stopped improving (patience {patience})"
    return None


def save_without_optimizer(classifier, path):
    """Saves `classifier` as a `.keras` file without its optimizer: a run's `model.keras`, for use, not to resume.

    A compiled model's `.keras` file holds its optimizer's state (Adam's two
    slots per trained weight: twice the network), and Keras has no option to
    leave it out. So the model is saved, read back uncompiled
    (`keras.saving.load_model(..., compile=False)`) and that copy saved over
    it; the classifier itself is not changed. `checkpoints/` keeps the
    optimizer while a run can be resumed.
    """
    classifier.save(path)
    if classifier.compiled:
        keras.saving.load_model(path, compile=False).save(path)


def _train_owned(
    train_data,
    test_data,
    config,
    output,
    unlabeled,
    resuming,
    split,
    dataset_name,
    log,
    verbose,
    callbacks,
    strategy,
    chief,
):
    fit_idx, val_idx = split
    names = train_data.label_map.names
    fit_texts = [train_data.texts[i] for i in fit_idx]
    fit_labels = [names[train_data.labels[i]] for i in fit_idx]
    validation = ([train_data.texts[i] for i in val_idx], [names[train_data.labels[i]] for i in val_idx])
    checkpoints = output / "checkpoints"
    adapted_file = checkpoints / "adapted.keras"
    keras.utils.set_random_seed(config.seed)
    with strategy.scope():
        if resuming:
            log(f"resuming {output}")
            classifier = load_classifier(adapted_file)
            record = read_config(output)
        else:
            write_status(output, status="training", dataset=dataset_name, created=now(), hierattn_version=__version__)
            classifier = make_classifier(config, names)
            # The settings as given (a limit None is chosen by adapt, and kept in model.keras).
            record = {**dataclasses.asdict(config), "classifier": classifier.get_config()}
            save_json(output / "config.json", CONFIG_FORMAT, record, indent=2)
            classifier.adapt(fit_texts, fit_labels, unlabeled=unlabeled, verbose=verbose)
            write_status(output, embeddings=classifier.embedding_source)
            checkpoints.mkdir(exist_ok=True)
            with atomic_path(adapted_file) as partial:  # the first checkpoint: from here on the run is resumable
                classifier.save(partial)
        classifier.compile(optimizer=default_optimizer(config.learning_rate))
    write_status(output, distribution=describe(strategy))
    preprocessor = classifier.preprocessor
    log(
        f"vocabulary {len(preprocessor.vocabulary):,} ids; limits: "
        + (
            f"{preprocessor.max_sentences} sentences x {preprocessor.max_words} words"
            if config.model == "han"
            else f"{preprocessor.sequence_length} words"
        )
    )

    best_weights = checkpoints / "best.weights.h5"
    legacy = checkpoints / "backup" / "latest.weights.h5"  # an unfinished run of hierattn 0.5.0 (BackupAndRestore)
    if resuming and legacy.exists() and not (checkpoints / "latest.weights.h5").exists():
        os.replace(legacy, checkpoints / "latest.weights.h5")
    history = _history(output / "history.csv") if resuming else []
    losses = [float(row["val_loss"]) for row in history if row.get("val_loss")]
    # Without `epochs`, the budget (`hierattn.models.budget`): the same epochs when resumed, and this process's time.
    epochs = config.epochs or epoch_budget(len(fit_texts), config.batch_size)
    time_budget = TimeBudget(EPOCH_BUDGET["seconds"]) if config.epochs is None and timed(strategy) else None
    early_stopping = ResumableEarlyStopping(losses, monitor="val_loss", patience=config.patience)
    stopped_by = _stopped_before(output, losses, config.patience) if resuming else None
    if stopped_by:
        log(f"the network finished training before the interruption ({stopped_by}): no further epoch")
    callbacks = [
        SaveWeights(checkpoints / "latest.weights.h5"),
        SaveWeights(best_weights, monitor="val_loss", best=min(losses, default=None)),
        early_stopping,
        *([time_budget] if time_budget else []),
        keras.callbacks.CSVLogger(str(output / "history.csv"), append=resuming),
        keras.callbacks.TensorBoard(str(output / "logs")),
        StopOnNaN(output),
        RestoreBestWeights(best_weights),  # before fit fits the n-gram part
        # before the caller's: the reason is recorded even if one of theirs fails at the end
        *(
            []
            if stopped_by
            else [RecordStop(output, early_stopping, time_budget, epochs, config.epochs is None, len(history))]
        ),
        *(callbacks or []),
    ]
    budget = budget_text(config.epochs, len(fit_texts), config.batch_size, time_budget.seconds if time_budget else None)
    log(f"training {config.model} on {len(fit_texts):,} documents, validating on {len(validation[0]):,}: {budget}")
    started = time.perf_counter()
    classifier.fit(
        fit_texts,
        fit_labels,
        validation_data=validation,
        epochs=len(history) if stopped_by else epochs,  # finished: no epoch, on to the n-gram part
        batch_size=config.batch_size,
        callbacks=callbacks,
        verbose=verbose,
        initial_epoch=len(history),
    )
    training_seconds = time.perf_counter() - started
    epochs_trained = len(_history(output / "history.csv"))  # every process's, when resumed

    metrics = {
        "training_seconds": round(training_seconds, 1),
        "epochs_trained": epochs_trained,
        "epoch_budget": epochs,
        "time_budget_seconds": time_budget.seconds if time_budget else None,
        "stopped_by": stopped_by
        or stop_reason(early_stopping, time_budget, epochs_trained, epochs, config.epochs is None),
        "train_documents": len(fit_texts),
        "embeddings": read_status(output).get("embeddings"),
    }
    x_val = preprocessor(validation[0])
    metrics["validation"] = classification_metrics(
        train_data.labels[val_idx], classifier.predict_ids(x_val).argmax(1), names
    )
    if not chief:
        return Run(output, classifier, record, metrics)
    evaluate = {"validation": (x_val, train_data.labels[val_idx])}
    if test_data is not None and len(test_data):
        x_test = preprocessor(test_data.texts, progress=True)
        started = time.perf_counter()
        probabilities = classifier.predict_ids(x_test, progress=True)
        seconds = time.perf_counter() - started
        metrics["test"] = classification_metrics(test_data.labels, probabilities.argmax(1), names)
        metrics["test"]["prediction_reviews_per_second"] = round(len(test_data) / seconds, 1)
        evaluate["test"] = (x_test, test_data.labels)
    if classifier.ngram_logits is not None:
        metrics["parts"] = _parts(classifier, evaluate)
    if config.baseline:
        log(f"fitting the {NAME} baseline on the same {len(fit_texts):,} training documents")
        evaluate = {"validation": (validation[0], train_data.labels[val_idx])}
        if "test" in metrics:
            evaluate["test"] = (test_data.texts, test_data.labels)
        metrics["baseline"] = run_baseline(fit_texts, train_data.labels[fit_idx], names, evaluate)

    with atomic_path(output / "model.keras") as partial:
        save_without_optimizer(classifier, partial)
    save_json(output / "metrics.json", "hierattn.metrics/1", metrics, indent=2)
    write_status(output, status="complete", finished=now())
    shutil.rmtree(checkpoints, ignore_errors=True)  # only once complete: the run is never without both
    return Run(output, classifier, record, metrics)
