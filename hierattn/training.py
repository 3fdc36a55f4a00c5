"""Training a classifier end to end and writing a run directory."""

import csv
import dataclasses
import inspect
import json
import math
import os
import pathlib
import shutil
import sys
import time

import numpy as np

from hierattn import __version__
from hierattn.data.dataset import sample, stratified_split
from hierattn.teacher import TEACHERS
from hierattn.data.encoding import (
    TRUNCATING,
    TextEncoder,
    bucket_batches,
    document_lengths,
    sort_batches_by_length,
    tokenize_corpus,
    trim_padding,
)
from hierattn.errors import HierattnError
from hierattn.evaluation import classification_metrics
from hierattn.jsonfile import load_json, save_json
from hierattn.runs import Run, ensure_new_or_resumable, now, predict_batches, read_status, write_status

CONFIG_FORMAT = "hierattn.train-config/1"
LR_SCHEDULES = ("constant", "cosine")
MODELS = ("han", "transformer", "rnn")

# Per-model defaults (chosen for speed on 2 CPU cores and validation accuracy;
# see BENCHMARKS.md). `options` go to the model builder.
COMMON_DEFAULTS = {"epochs": 8, "lr_schedule": "constant", "truncating": "post", "embedding_dim": 200, "dropout": 0.3}
MODEL_DEFAULTS = {
    "han": {"embedding_dim": 200, "dropout": 0.3, "options": {}},
    "transformer": {"embedding_dim": 128, "dropout": 0.1,
                    "options": {"num_layers": 1, "num_heads": 4, "ff_dim": 256, "norm_first": True}},
    "rnn": {"embedding_dim": 200, "dropout": 0.3, "options": {"units": 64}},
}


@dataclasses.dataclass
class TrainConfig:
    """Everything that determines a training run (saved as config.json).

    The defaults are the settings chosen on IMDB validation data (see
    BENCHMARKS.md); `None` sizes are suggested from the training data.
    """

    model: str = "han"
    attention: str = "bahdanau"
    epochs: int = None
    batch_size: int = 64
    learning_rate: float = 1e-3
    lr_schedule: str = None
    patience: int = 2
    max_sentences: int = None
    max_words: int = None
    max_len: int = None
    truncating: str = None
    embedding_dim: int = None
    dropout: float = None
    label_smoothing: float = 0.0
    seed: int = 0
    validation_fraction: float = 0.1
    min_count: int = 2
    max_vocab: int = 60000
    pretrain: str = "word2vec"
    pretrain_epochs: int = 5
    vectors: str = None
    freeze_embeddings: bool = False
    teacher: str = "none"
    teacher_weight: float = 0.5
    distill_unlabeled: bool = False
    adversarial: float = 0.0
    limit: int = None
    model_options: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        defaults = {**COMMON_DEFAULTS, **MODEL_DEFAULTS.get(self.model, {})}
        for name, value in defaults.items():
            if name != "options" and getattr(self, name) is None:
                setattr(self, name, value)
        self.model_options = {**defaults.get("options", {}), **(self.model_options or {})}

    def validate(self):
        """Checks the settings without building anything (see `check_model_options` for the model's own)."""
        if self.model not in MODELS:
            raise HierattnError(f"unknown model {self.model!r}: choose one of {', '.join(MODELS)}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise HierattnError(f"unknown learning-rate schedule {self.lr_schedule!r}: choose {' or '.join(LR_SCHEDULES)}")
        if self.truncating not in TRUNCATING:
            raise HierattnError(f"unknown truncation {self.truncating!r}: choose one of {', '.join(TRUNCATING)}")
        if self.teacher not in TEACHERS + ("none",):
            raise HierattnError(f"unknown teacher {self.teacher!r}: choose one of {', '.join(TEACHERS)} or none")
        if self.distill_unlabeled and self.teacher == "none":
            raise HierattnError("training on unlabelled texts needs a teacher to label them (--teacher)")
        if not 0.0 <= self.teacher_weight <= 1.0:
            raise HierattnError("teacher weight must be in [0, 1]")
        if self.pretrain not in ("word2vec", "none"):
            raise HierattnError(f"unknown pretraining {self.pretrain!r}: choose word2vec or none")
        for name in ("epochs", "batch_size", "embedding_dim", "patience", "min_count", "max_vocab"):
            if getattr(self, name) < 1:
                raise HierattnError(f"{name} must be at least 1")
        if not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise HierattnError(f"the learning rate must be a finite number above 0; got {self.learning_rate}")
        if not (math.isfinite(self.adversarial) and self.adversarial >= 0.0):
            raise HierattnError("the adversarial perturbation size must be 0 (off) or positive")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise HierattnError("label smoothing must be in [0, 1)")
        if self.limit is not None and self.limit < 4:
            raise HierattnError("--limit must be at least 4 documents")
        return self

    @property
    def mode(self):
        return "hierarchical" if self.model == "han" else "flat"

    @property
    def uses_unlabeled(self):
        """Whether unlabelled texts would be used: by word2vec (not with `vectors`) or for distillation."""
        return self.distill_unlabeled or (self.pretrain == "word2vec" and not self.vectors)


def parse_options(pairs):
    """Parses `KEY=VALUE` strings into a dict; values are JSON when they parse
    (numbers, true/false, null), else kept as strings."""
    options = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise HierattnError(f"a model option must look like KEY=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def _builder(model):
    from hierattn.models import build_han, build_rnn, build_transformer

    return {"han": build_han, "transformer": build_transformer, "rnn": build_rnn}[model]


def check_model_options(config):
    """Refuses model options the builder does not take, or values it rejects,
    before any data is read (by building the model once at a tiny size)."""
    builder = _builder(config.model)
    own_settings = {"vocab_size", "num_classes", "embedding_dim", "dropout", "attention", "max_len"}  # TrainConfig's
    taken = set(inspect.signature(builder).parameters) - own_settings
    unknown = sorted(set(config.model_options) - taken)
    if unknown:
        raise HierattnError(f"unknown {config.model} model option(s) {', '.join(unknown)}: choose from "
                            f"{', '.join(sorted(taken))}")
    try:
        build_model(dataclasses.replace(config, max_len=config.max_len or 8), vocab_size=8, num_classes=2)
    except (ValueError, TypeError) as error:
        raise HierattnError(f"bad {config.model} model settings: {error}") from None


def build_model(config, vocab_size, num_classes):
    """Builds the model a config names."""
    options = dict(config.model_options)
    common = {"embedding_dim": config.embedding_dim, "dropout": config.dropout}
    if config.model == "transformer":
        options.setdefault("max_len", config.max_len)
    if config.model == "rnn":
        options["attention"] = config.attention
    return _builder(config.model)(vocab_size, num_classes, **common, **options)


def learning_rate(config, train_documents):
    """The optimizer's learning rate: a constant, or a schedule over all epochs.

    `"cosine"`: linear warm-up over the first 10% of the steps of
    `config.epochs` epochs, then cosine decay to 0 at the last step (Loshchilov
    & Hutter, ICLR 2017; warm-up as for Transformers, Vaswani et al. 2017).
    """
    if config.lr_schedule == "constant":
        return config.learning_rate
    import keras

    steps = -(-train_documents // config.batch_size) * config.epochs
    warmup = max(1, steps // 10)
    return keras.optimizers.schedules.CosineDecay(
        0.0, decay_steps=max(1, steps - warmup), warmup_target=config.learning_rate, warmup_steps=warmup
    )


def make_train_dataset(x, y, batch_size, seed, num_classes, first_epoch=0):
    """A `tf.data.Dataset` of length-bucketed, padding-trimmed batches.

    A new shuffle every epoch (seeded by `seed` and the epoch number, counted
    from `first_epoch`, so a resumed run sees the batches it would have seen
    without the interruption). `y` is integer labels `(n,)` or target
    distributions `(n, num_classes)`.
    """
    lengths = document_lengths(x)
    steps = -(-len(x) // batch_size)
    targets = np.asarray(y, np.float32) if np.ndim(y) == 2 else np.eye(num_classes, dtype=np.float32)[y]
    epoch = [first_epoch]

    def batches():
        for index in bucket_batches(lengths, batch_size, seed=seed + epoch[0]):
            yield trim_padding(x[index]), targets[index]
        epoch[0] += 1

    return _from_batches(batches, x.ndim, num_classes, steps)


def _from_batches(batches, rank, num_classes, steps):
    """A dataset of known length (Keras then shows real progress bars)."""
    import tensorflow as tf

    signature = (tf.TensorSpec((None,) * rank, tf.int32), tf.TensorSpec((None, num_classes), tf.float32))
    dataset = tf.data.Dataset.from_generator(batches, output_signature=signature)
    return dataset.apply(tf.data.experimental.assert_cardinality(steps)).prefetch(2)


def make_eval_dataset(x, y, batch_size, num_classes):
    """Validation batches: sorted by length (fixed order), padding trimmed."""
    batches_index = sort_batches_by_length(x, batch_size)
    targets = np.eye(num_classes, dtype=np.float32)[y]

    def batches():
        for index in batches_index:
            yield trim_padding(x[index]), targets[index]

    return _from_batches(batches, x.ndim, num_classes, len(batches_index))


def pretrained_matrix(config, encoder, texts, unlabeled, log):
    """The embedding initialisation the config asks for, or None."""
    from hierattn.embeddings import embedding_matrix, load_vectors, train_word2vec

    if config.vectors:
        vectors = load_vectors(config.vectors, encoder.vocabulary)
        source = config.vectors
    elif config.pretrain == "word2vec":
        corpus = list(texts) + list(unlabeled or [])
        documents = tokenize_corpus(corpus, encoder.tokenizer, desc="tokenizing for word2vec")
        sentences = [s for d in documents for s in d]
        log(f"training word2vec ({config.embedding_dim}d, {config.pretrain_epochs} epochs) on {len(corpus):,} texts")
        vectors = train_word2vec(
            sentences, dim=config.embedding_dim, epochs=config.pretrain_epochs, min_count=config.min_count,
            seed=config.seed,
        )
        source = "word2vec on the training texts" + (" and unlabelled texts" if unlabeled else "")
    else:
        return None, None
    matrix, coverage = embedding_matrix(encoder.vocabulary, vectors, config.embedding_dim, seed=config.seed)
    log(f"embeddings from {source}: {coverage:.1%} of the vocabulary covered")
    return matrix, {"source": source, "coverage": coverage}


def set_embeddings(model, matrix):
    """Loads pretrained vectors into the model's embedding layer.

    A sinusoidal (or position-free) `TokenAndPositionEmbedding` multiplies token vectors by
    its `scale` (sqrt(d) by default, Vaswani et al.), which assumes they start
    at scale 1/scale. Word2vec vectors are about 4x larger than d^-1/2 at
    d=128, so the scaled tokens would drown the positions and make the first
    attention softmax nearly one-hot; they are rescaled to standard deviation
    1/scale first (directions unchanged).
    """
    layer = model.get_layer("embedding")
    if getattr(layer, "scales_tokens", False):
        std = float(np.std(matrix[1:]))
        if std > 0:
            matrix = matrix / (layer.token_scale * std)
    target = getattr(layer, "token_embedding", layer)  # TokenAndPositionEmbedding wraps one
    target.set_weights([matrix.astype(np.float32)])


def _history(history_file):
    """The rows of a run's history.csv, one per finished epoch (none yet: [])."""
    if not history_file.exists():
        return []
    with open(history_file, newline="") as f:
        return list(csv.DictReader(f))


TEACHER_NAMES = {"tfidf": "TF-IDF + LR", "nblr": "NB-LR 1-3 grams"}


def teacher_targets(config, encoder, texts, labels, x, unlabeled, num_classes, log):
    """The training inputs and targets, with the n-gram teacher's share (`hierattn.teacher`).

    Without a teacher: `x` and the integer `labels`. With one: soft targets
    `(1 - w) * label + w * out-of-fold teacher probabilities` (w =
    `config.teacher_weight`; skipped when 0), and with
    `config.distill_unlabeled` the `unlabeled` texts are appended to `x` with
    the probabilities of a teacher fitted on all of `texts` as targets.

    Returns:
        `(x, targets)`.
    """
    if config.teacher == "none":
        return x, labels
    from hierattn.teacher import soft_targets, teacher_probabilities, unlabeled_probabilities

    name = TEACHER_NAMES[config.teacher]
    if config.teacher_weight > 0:
        log(f"soft targets: {1 - config.teacher_weight:g} x label + {config.teacher_weight:g} x {name} teacher "
            "(out-of-fold, training part only)")
        probabilities = teacher_probabilities(texts, labels, num_classes, config.teacher, seed=config.seed,
                                              progress=log)
        targets = soft_targets(labels, probabilities, config.teacher_weight)
    else:
        targets = soft_targets(labels, np.zeros((len(labels), num_classes), np.float32), 0.0)
    if config.distill_unlabeled:
        if unlabeled is None or len(unlabeled) == 0:
            log("no unlabelled texts: training on the labelled ones only")
            return x, targets
        log(f"labelling {len(unlabeled):,} unlabelled texts with the {name} teacher (fitted on the training part)")
        extra = unlabeled_probabilities(texts, labels, unlabeled, num_classes, config.teacher)
        x = np.concatenate([x, encoder.encode(list(unlabeled), mode=config.mode, progress=True)])
        targets = np.concatenate([targets, extra])
    return x, targets


def load_config(output):
    """The `TrainConfig` saved in a run directory (for resuming), or a one-line `RunError`."""
    from hierattn.runs import RunError

    values = load_json(pathlib.Path(output) / "config.json", CONFIG_FORMAT)
    try:
        return TrainConfig(**values)
    except TypeError as error:
        raise RunError(f"{output}/config.json does not describe a training run ({error})") from None


def train(train_data, test_data, config, output, unlabeled=None, resume=False, dataset_name="data", log=print,
          verbose="auto", callbacks=None):
    """Trains `config.model` and writes a complete run directory.

    Holds out a stratified validation part of `train_data`, early-stops on
    its loss and restores the best weights, evaluates once on `test_data`
    (if given), and saves everything (see `hierattn.runs`). Resumable: with
    `resume=True` an interrupted run continues from its last finished epoch.
    Works inside a `tf.distribute` strategy scope (the model is built and
    compiled under the current strategy).

    Args:
        train_data: `TextDataset` for training (validation is carved from it).
        test_data: `TextDataset` for the final evaluation, or `None`.
        config: A `TrainConfig`.
        output: The run directory (must not exist unless resuming).
        unlabeled: Extra unlabelled texts (e.g. IMDB unsup) for word2vec, and,
            with `config.distill_unlabeled`, for training on the teacher's
            probabilities (they then join the vocabulary too).
        resume: Continue an interrupted run in `output`.
        dataset_name: Recorded in run.json.
        log: Function printing progress messages.
        verbose: Keras `fit` verbosity.
        callbacks: Extra Keras callbacks for `fit`.

    Returns:
        The finished `Run` (model in memory); its `metrics` attribute holds
        what metrics.json holds.
    """
    output = pathlib.Path(output)
    resuming = ensure_new_or_resumable(output, resume)
    if resuming:
        config = load_config(output)
    config.validate()
    if config.limit:  # the whole run small: training, test and unlabelled texts
        train_data, test_data, unlabeled = (
            sample(data, config.limit, config.seed) for data in (train_data, test_data, unlabeled)
        )
    # Everything that can be refused is checked before TensorFlow is imported and anything is written.
    fit_idx, val_idx = stratified_split(train_data.labels, config.validation_fraction, config.seed,
                                        train_data.label_map.names)
    check_model_options(config)

    import keras
    import tensorflow as tf

    from hierattn.adversarial import AdversarialTrainer
    from hierattn.callbacks import StopOnNaN

    output.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(config.seed)
    fit_texts = [train_data.texts[i] for i in fit_idx]
    label_map = train_data.label_map
    num_classes = len(label_map)

    if resuming:
        encoder = TextEncoder.load(output / "encoder")
        log(f"resuming {output}")
    else:
        write_status(output, status="training", dataset=dataset_name, created=now(), hierattn_version=__version__)
        vocabulary_texts = fit_texts + list(unlabeled) if config.distill_unlabeled and unlabeled is not None else fit_texts
        encoder = TextEncoder.fit(
            vocabulary_texts, min_count=config.min_count, max_size=config.max_vocab, max_sentences=config.max_sentences,
            max_words=config.max_words, max_len=config.max_len, truncating=config.truncating,
        )
        config.max_sentences, config.max_words, config.max_len = encoder.max_sentences, encoder.max_words, encoder.max_len
        encoder.save(output / "encoder")
        label_map.save(output / "labels.json")
        save_json(output / "config.json", CONFIG_FORMAT, dataclasses.asdict(config), indent=2)
    log(f"vocabulary {len(encoder.vocabulary):,} ids; sizes: {encoder.max_sentences} sentences x "
        f"{encoder.max_words} words (HAN), {encoder.max_len} words (flat)")

    x_all = encoder.encode(train_data.texts, mode=config.mode, progress=True)
    x_fit, x_val = x_all[fit_idx], x_all[val_idx]
    y_fit, y_val = train_data.labels[fit_idx], train_data.labels[val_idx]
    x_fit, targets = teacher_targets(config, encoder, fit_texts, y_fit, x_fit, unlabeled, num_classes, log)

    started = time.perf_counter()
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
        model = build_model(config, len(encoder.vocabulary), num_classes)
        if not resuming:
            matrix, embeddings = pretrained_matrix(config, encoder, fit_texts, unlabeled, log)
            if matrix is not None:
                set_embeddings(model, matrix)
            write_status(output, embeddings=embeddings)
        if config.freeze_embeddings:  # keep the pretrained vectors as they are
            layer = model.get_layer("embedding")
            getattr(layer, "token_embedding", layer).trainable = False  # (a projection still trains)
        trainer = AdversarialTrainer(model, config.adversarial) if config.adversarial else model
        trainer.compile(
            optimizer=keras.optimizers.Adam(learning_rate(config, len(x_fit)), clipnorm=1.0),
            loss=keras.losses.CategoricalCrossentropy(label_smoothing=config.label_smoothing),
            metrics=[keras.metrics.CategoricalAccuracy(name="accuracy")],
        )
    checkpoints = output / "checkpoints"
    checkpoints.mkdir(exist_ok=True)
    best_weights = checkpoints / "best.weights.h5"
    history = _history(output / "history.csv") if resuming else []
    best_so_far = min((float(row["val_loss"]) for row in history if row.get("val_loss")), default=None)
    callbacks = list(callbacks or [])
    callbacks[:0] = [
        keras.callbacks.BackupAndRestore(str(checkpoints / "backup")),
        keras.callbacks.ModelCheckpoint(
            str(best_weights), monitor="val_loss", save_best_only=True, save_weights_only=True,
            initial_value_threshold=best_so_far,
        ),
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=config.patience),
        keras.callbacks.CSVLogger(str(output / "history.csv"), append=resuming),
        keras.callbacks.TensorBoard(str(output / "logs")),
        StopOnNaN(output),
    ]
    log(f"training {config.model} on {len(x_fit):,} documents, validating on {len(x_val):,}")
    trainer.fit(
        make_train_dataset(x_fit, targets, config.batch_size, config.seed, num_classes, first_epoch=len(history)),
        validation_data=make_eval_dataset(x_val, y_val, config.batch_size * 4, num_classes),
        epochs=config.epochs,
        callbacks=callbacks,
        shuffle=False,  # the batches are shuffled by bucket_batches
        verbose=(1 if sys.stdout.isatty() else 2) if verbose == "auto" else verbose,  # a file gets a line per epoch
    )
    training_seconds = time.perf_counter() - started
    if best_weights.exists():
        trainer.load_weights(str(best_weights))

    metrics = {"training_seconds": round(training_seconds, 1), "train_documents": len(x_fit),
               "embeddings": read_status(output).get("embeddings")}
    metrics["validation"] = classification_metrics(y_val, predict_batches(model, x_val).argmax(1), label_map.names)
    if test_data is not None and len(test_data):
        started = time.perf_counter()
        x_test = encoder.encode(test_data.texts, mode=config.mode, progress=True)
        probabilities = predict_batches(model, x_test, progress=True)
        seconds = time.perf_counter() - started
        metrics["test"] = classification_metrics(test_data.labels, probabilities.argmax(1), label_map.names)
        metrics["test"]["prediction_reviews_per_second"] = round(len(x_test) / seconds, 1)

    partial = output / ".model.partial.keras"
    model.save(partial)
    os.replace(partial, output / "model.keras")
    save_json(output / "metrics.json", "hierattn.metrics/1", metrics, indent=2)
    shutil.rmtree(checkpoints, ignore_errors=True)
    write_status(output, status="complete", finished=now())
    run = Run(output, model, encoder, label_map, dataclasses.asdict(config))
    run.metrics = metrics
    return run
