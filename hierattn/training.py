"""Training a `TextClassifier` into a run directory: resumable, checkpointed, evaluated once."""

import contextlib
import csv
import dataclasses
import math
import os
import pathlib
import shutil
import tempfile
import time

from hierattn import __version__
from hierattn.atomic import atomic_path, is_write_failure, write_error
from hierattn.data.dataset import sample, stratified_split
from hierattn.defaults import BACKBONES, CHOICES, MODELS, PREPROCESSING, TRAINING
from hierattn.errors import ArgumentError, HierattnError, ResourceError
from hierattn.evaluation import classification_metrics
from hierattn.jsonfile import load_json, save_json
from hierattn.runs import (
    CONFIG_FORMAT,
    Run,
    RunError,
    check_same_data,
    claim_run_dir,
    ensure_new_or_resumable,
    now,
    read_status,
    write_status,
)

LENGTH_LIMITS = {"max_sentences": ("han",), "max_words": ("han",), "sequence_length": ("transformer", "rnn")}


def length_settings(model, max_length):
    """The length limits a `max_length` value sets: `"SxW"` for han, `"N"` for the flat models.

    Args:
        model: One of `MODELS`.
        max_length: Sentences x words per sentence for han (`"30x40"`),
            words for transformer and rnn (`"400"`).

    Returns:
        `{"max_sentences": S, "max_words": W}` for han, `{"sequence_length": N}` otherwise.

    Raises:
        ArgumentError: A value of the wrong form for `model`, in one line.
    """
    parts = str(max_length).lower().replace(" ", "").split("x")
    try:
        numbers = [int(part) for part in parts]
    except ValueError:
        numbers = []
    hierarchical = model == "han"
    if len(numbers) != (2 if hierarchical else 1) or min(numbers) < 1:
        form = "SENTENCESxWORDS, e.g. 30x40" if hierarchical else "a number of words, e.g. 400"
        raise ArgumentError("max_length", f"{{argument}} for the {model} model is {form}; got {max_length!r}")
    if hierarchical:
        return {"max_sentences": numbers[0], "max_words": numbers[1]}
    return {"sequence_length": numbers[0]}


@dataclasses.dataclass
class TrainConfig:
    """Everything that determines a training run (saved as config.json).

    Defaults come from `hierattn.defaults`; a length limit left `None` is
    set from the training texts. `backbone` holds builder arguments
    (`embedding_dim`, `num_layers`, `attention`, ...; see
    `hierattn.defaults.BACKBONES`), `data` where the texts came from.
    """

    model: str = "han"
    epochs: int = TRAINING["epochs"]
    batch_size: int = TRAINING["batch_size"]
    learning_rate: float = TRAINING["learning_rate"]
    patience: int = TRAINING["patience"]
    validation_split: float = TRAINING["validation_split"]
    seed: int = TRAINING["seed"]
    embeddings: str = TRAINING["embeddings"]
    pretrain_epochs: int = TRAINING["pretrain_epochs"]
    max_sentences: int = PREPROCESSING["max_sentences"]
    max_words: int = PREPROCESSING["max_words"]
    sequence_length: int = PREPROCESSING["sequence_length"]
    min_count: int = PREPROCESSING["min_count"]
    max_vocab: int = PREPROCESSING["max_vocab"]
    limit: int = None
    mixed_precision: bool = False
    baseline: bool = True
    ngrams: bool = TRAINING["ngrams"]
    backbone: dict = dataclasses.field(default_factory=dict)
    data: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, values):
        """A config from flat settings: `TrainConfig` fields, and builder arguments of the model.

        Raises:
            HierattnError: A key that is neither, in one line with the choices.
        """
        values = dict(values)
        model = values.get("model", "han")
        if model not in MODELS:
            raise HierattnError(f"unknown model {model!r}: choose one of {', '.join(MODELS)}")
        fields = {f.name for f in dataclasses.fields(cls)} - {"backbone", "data"}
        backbone = dict(values.pop("backbone", None) or {})
        for key in list(values):
            if key not in fields:
                if key not in BACKBONES[model]:
                    raise HierattnError(
                        f"unknown setting {key!r} for the {model} model: choose from training settings "
                        f"{', '.join(sorted(fields))} or {model} settings {', '.join(sorted(BACKBONES[model]))}"
                    )
                backbone[key] = values.pop(key)
        return cls(**values, backbone=backbone)

    def validate(self):
        """Checks the settings without building anything (see `check_backbone` for the builder's own checks)."""
        if self.model not in MODELS:
            raise HierattnError(f"unknown model {self.model!r}: choose one of {', '.join(MODELS)}")
        for name in (
            "epochs",
            "batch_size",
            "patience",
            "pretrain_epochs",
            "min_count",
            "max_vocab",
            "max_sentences",
            "max_words",
            "sequence_length",
            "limit",
        ):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise HierattnError(f"{name} must be a whole number of at least 1, not {value!r}")
        for name, models in LENGTH_LIMITS.items():
            if getattr(self, name) is not None and self.model not in models:
                raise HierattnError(f"{name} applies to the {' and '.join(models)} model(s), not to {self.model}")
        unknown = sorted(set(self.backbone) - set(BACKBONES[self.model]))
        if unknown:
            raise HierattnError(
                f"unknown {self.model} setting(s) {', '.join(unknown)}: choose from "
                f"{', '.join(sorted(BACKBONES[self.model]))}"
            )
        for name, value in self.backbone.items():
            _check_backbone_value(self.model, name, value)
        options = {**BACKBONES[self.model], **self.backbone}
        if "num_heads" in options and options["embedding_dim"] % options["num_heads"]:
            raise HierattnError(
                f"embedding_dim ({options['embedding_dim']}) must be divisible by num_heads ({options['num_heads']})"
            )
        if not (
            isinstance(self.learning_rate, (int, float))
            and math.isfinite(self.learning_rate)
            and self.learning_rate > 0
        ):
            raise HierattnError(f"the learning rate must be a finite number above 0; got {self.learning_rate}")
        if not (isinstance(self.validation_split, float) and 0 < self.validation_split < 1):
            raise HierattnError(f"validation_split must be a fraction between 0 and 1, not {self.validation_split!r}")
        if self.embeddings not in ("word2vec", "none"):
            if not os.path.isfile(str(self.embeddings)):
                raise HierattnError(
                    f"embeddings must be word2vec, none or a word-vector file; {self.embeddings} is none of these"
                )
            from hierattn.embeddings import check_vectors_file

            check_vectors_file(self.embeddings)
        for name in ("mixed_precision", "baseline", "ngrams"):
            if not isinstance(getattr(self, name), bool):
                raise HierattnError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if self.limit is not None and self.limit < 4:
            raise HierattnError("limit must be at least 4 documents")
        return self

    @property
    def uses_unlabeled(self):
        """Whether unlabelled texts would be used (by word2vec)."""
        return self.embeddings == "word2vec"


def _check_backbone_value(model, name, value):
    """Refuses a builder setting of the wrong kind, judged by its default (`hierattn.defaults`), in one line."""
    default = BACKBONES[model][name]
    whole = isinstance(value, int) and not isinstance(value, bool)
    if name in CHOICES:
        ok, expected = value in CHOICES[name], "one of " + ", ".join(CHOICES[name])
    elif isinstance(default, bool):
        ok, expected = isinstance(value, bool), "true or false"
    elif name == "dropout":
        ok, expected = (
            isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1,
            "a fraction from 0 up to (not including) 1",
        )
    elif name == "window":
        ok, expected = value is None or (whole and value >= 0), "null (global attention) or a whole number >= 0"
    else:
        ok, expected = whole and value >= 1, "a whole number of at least 1"
    if not ok:
        raise HierattnError(f"the {model} setting {name} must be {expected}, not {value!r}")


def check_backbone(config):
    """Refuses builder values the builder rejects, by building the model once at a tiny size."""
    from hierattn.models.text_classifier import BACKBONE_CLASSES

    options = dict(config.backbone)
    if config.model == "transformer":
        options["sequence_length"] = config.sequence_length or 8
    try:
        BACKBONE_CLASSES[config.model](8, 2, **options)
    except (ValueError, TypeError) as error:
        raise HierattnError(f"bad {config.model} model settings: {error}") from None


def make_classifier(config, label_names=None):
    """The untrained `TextClassifier` a config describes."""
    from hierattn.models import TextClassifier

    return TextClassifier(
        config.model,
        label_names=label_names,
        embeddings=config.embeddings,
        pretrain_epochs=config.pretrain_epochs,
        ngrams=config.ngrams,
        seed=config.seed,
        max_sentences=config.max_sentences,
        max_words=config.max_words,
        sequence_length=config.sequence_length,
        min_count=config.min_count,
        max_vocab=config.max_vocab,
        dtype="mixed_float16" if config.mixed_precision else None,
        **config.backbone,
    )


def size_settings(config):
    """The settings that set a run's memory, in words: "embedding_dim 200, max_vocab 60000, batch_size 64, ..."."""
    options = {**BACKBONES[config.model], **config.backbone}
    sizes = {"embedding_dim": options["embedding_dim"], "max_vocab": config.max_vocab, "batch_size": config.batch_size}
    for name, models in LENGTH_LIMITS.items():
        if config.model in models:
            sizes[name] = getattr(config, name) or "from the data"
    return ", ".join(f"{name} {value}" for name, value in sizes.items())


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


def load_config(output):
    """The `TrainConfig` saved in a run directory (for resuming), or a one-line `RunError`."""
    values = load_json(pathlib.Path(output) / "config.json", CONFIG_FORMAT)
    try:
        return TrainConfig(**values)
    except TypeError as error:
        raise RunError(f"{output}/config.json does not describe a training run ({error})") from None


def config_for_run(config, data, resume=None):
    """The config to train with, recording where the data comes from.

    Args:
        config: The `TrainConfig` of a new run; None when resuming.
        data: Descriptions of the data files (`hierattn.runs.describe_source`
            by name: `train`, `test`, `unlabeled` or `imdb`), stored as
            `config.data`.
        resume: The run directory of an unfinished run to continue: its own
            saved config is used, checked before any data is read.

    Returns:
        A `TrainConfig` whose `data` is `data`.

    Raises:
        RunError: Resuming on other data than the run recorded, or from a
            config.json that does not describe a run.
    """
    if resume is not None:
        config = load_config(resume).validate()
        check_same_data(resume, config.data, data)
    config.data = data
    return config


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

    Holds out a stratified validation part of `train_data`, fits the
    classifier (`TextClassifier.fit`), early-stops on the validation loss and
    keeps the best epoch, then (`config.ngrams`, the default) fits the n-gram
    part and chooses its share on the validation part, evaluates once on
    `test_data` (if given; the whole classifier, and each part alone under
    `metrics["parts"]`), fits the
    TF-IDF + logistic regression baseline on the same training part and
    scores it on the same validation and test texts (`hierattn.baseline`;
    `config.baseline=False` skips it), and saves everything (see
    `hierattn.runs`). Resumable: with `resume=True` an interrupted run
    continues from its last finished epoch.

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
    from hierattn.distribute import is_chief, make_strategy

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
    split = stratified_split(train_data.labels, config.validation_split, config.seed, train_data.label_map.names)
    with resource_errors(config, output):
        check_backbone(config)
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


def save_without_optimizer(classifier, path):
    """Saves `classifier` as a `.keras` file without its optimizer: a run's `model.keras`, for use, not to resume.

    A compiled model's `.keras` file holds its optimizer's state (Adam's two
    slots per trained weight: twice the network), and Keras has no option to
    leave it out. So the model is saved, read back uncompiled
    (`keras.saving.load_model(..., compile=False)`) and that copy saved over
    it; the classifier itself is not changed. `checkpoints/` keeps the
    optimizer while a run can be resumed.
    """
    import keras

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
    import keras

    from hierattn.callbacks import RestoreBestWeights, SaveWeights, StopOnNaN
    from hierattn.distribute import describe
    from hierattn.models import load_classifier
    from hierattn.models.text_classifier import default_optimizer

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
        else:
            write_status(output, status="training", dataset=dataset_name, created=now(), hierattn_version=__version__)
            classifier = make_classifier(config, names)
            classifier.adapt(fit_texts, fit_labels, unlabeled=unlabeled, verbose=verbose)
            for name, models in LENGTH_LIMITS.items():  # the limits adapt chose, for the record
                if config.model in models:
                    setattr(config, name, getattr(classifier.preprocessor, name))
            save_json(output / "config.json", CONFIG_FORMAT, dataclasses.asdict(config), indent=2)
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
    best_so_far = min((float(row["val_loss"]) for row in history if row.get("val_loss")), default=None)
    callbacks = [
        SaveWeights(checkpoints / "latest.weights.h5"),
        SaveWeights(best_weights, monitor="val_loss", best=best_so_far),
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=config.patience),
        keras.callbacks.CSVLogger(str(output / "history.csv"), append=resuming),
        keras.callbacks.TensorBoard(str(output / "logs")),
        StopOnNaN(output),
        RestoreBestWeights(best_weights),  # before fit fits the n-gram part
        *(callbacks or []),
    ]
    log(f"training {config.model} on {len(fit_texts):,} documents, validating on {len(validation[0]):,}")
    started = time.perf_counter()
    classifier.fit(
        fit_texts,
        fit_labels,
        validation_data=validation,
        epochs=config.epochs,
        batch_size=config.batch_size,
        callbacks=callbacks,
        verbose=verbose,
        initial_epoch=len(history),
    )
    training_seconds = time.perf_counter() - started

    metrics = {
        "training_seconds": round(training_seconds, 1),
        "train_documents": len(fit_texts),
        "embeddings": read_status(output).get("embeddings"),
    }
    x_val = preprocessor(validation[0])
    metrics["validation"] = classification_metrics(
        train_data.labels[val_idx], classifier.predict_ids(x_val).argmax(1), names
    )
    if not chief:
        return Run(output, classifier, dataclasses.asdict(config), metrics)
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
        from hierattn.baseline import NAME, run_baseline

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
    return Run(output, classifier, dataclasses.asdict(config), metrics)
