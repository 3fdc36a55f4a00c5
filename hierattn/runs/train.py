"""Training a `TextClassifier` into a run directory: resumable, checkpointed, evaluated once.

What a run is given is a `hierattn.runs.config.TrainConfig`, checked when it was made;
`hierattn.runs.sources` finds and reads the data first. `train` hands the config down
as it is, with the data (`hierattn.runs.run_context.RunData`, cut into a `Split`) and
how this process runs it (`RunContext`): `hierattn.runs.network` makes and fits the
classifier, within the budget `hierattn.models.budget.decide_budget` decides; this
module evaluates and saves the run.
"""

import contextlib
import dataclasses
import pathlib
import shutil
import tempfile
import time

import keras

from hierattn.data.progress import busy
from hierattn.distribute import is_chief, make_strategy
from hierattn.errors import HierattnError, ResourceError
from hierattn.metrics import label_metrics
from hierattn.runs.baseline import NAME, run_baseline
from hierattn.runs.config import load_config, size_settings
from hierattn.runs.data_record import check_same_data
from hierattn.runs.directory import claim_run_dir, ensure_new_or_resumable, now, write_status
from hierattn.runs.evaluation_page import split_page_metrics, write_evaluation_html
from hierattn.runs.export import write_bundle
from hierattn.runs.network import fit_network, prepare_classifier
from hierattn.runs.run import METRICS_FORMAT, Run
from hierattn.runs.run_context import RunContext, RunData
from hierattn.tuning import choose_thresholds, decision_record, ngram_alone, outcomes
from hierattn.utils.atomic import atomic_path, is_temporary, is_write_failure, write_error
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
    bundle=True,
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
        resume: Continue an interrupted run in `output` (one stopped while
            word2vec trained needs the same texts and `unlabeled` again).
        dataset_name: Recorded in run.json.
        log: Function printing progress messages.
        verbose: Keras `fit` verbosity.
        callbacks: Extra Keras callbacks for `fit`.
        distribute: `"none"`/`None` (the strategy in effect), `"mirrored"`
            or `"multi-worker"` (`TF_CONFIG`); see `hierattn.distribute`.
        bundle: Write the bundle (model.onnx) when training ends; `False`
            skips it: predict then uses model.keras.

    Returns:
        The finished `Run`; its `metrics` attribute holds what metrics.json
        holds (on a non-chief worker: the validation metrics only).
    """
    strategy = make_strategy(distribute)  # first: MultiWorkerMirroredStrategy must precede any TensorFlow work
    data = RunData(train_data, test_data, unlabeled, dataset_name)
    context = RunContext(
        pathlib.Path(output),
        resume=resume,
        log=log,
        verbose=verbose,
        callbacks=tuple(callbacks or ()),
        strategy=strategy,
    )
    if is_chief(strategy):
        return _train(data, config, context, bundle)
    return _train_as_worker(data, config, context)


def _train_as_worker(data, config, context):
    """`train` on a worker of a cluster other than the chief: in a private copy of the run directory, deleted at the end."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="hierattn-worker-"))
    try:
        private = scratch / "run"
        if context.resume:
            ensure_new_or_resumable(context.output, True, check_lock=False)  # the chief holds it
            shutil.copytree(context.output, private, ignore=_being_written)  # the chief may be writing
        resolver = context.strategy.cluster_resolver
        context.log(
            f"{resolver.task_type} {resolver.task_id}: training in {private}; the chief writes {context.output}"
        )
        worker = dataclasses.replace(context, output=private, log=lambda message: None, verbose=0, chief=False)
        run = _train(data, config, worker)
        return Run(context.output, run.classifier, run.config, run.metrics, chief=False)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _being_written(folder, names):
    """`shutil.copytree`'s `ignore`: the temporary files `atomic_path` is writing (they may vanish while copied)."""
    return [name for name in names if is_temporary(name)]


def _train(data, config, context, bundle=True):
    """`train` in one process: everything checked first, then the run directory owned throughout (`claim_run_dir`).

    Resuming, the run's own settings (its config.json) replace `config`,
    whose `data`, if any, must be the data the run recorded. A worker that
    is not the chief (`context.chief` false) skips the test evaluation and
    the final model file.
    """
    if context.resume:
        ensure_new_or_resumable(context.output, True, check_lock=False)  # the claim below checks the lock
        recorded = load_config(context.output)
        if config.data:
            check_same_data(context.output, recorded.data, config.data)
        config = recorded
    if config.limit:  # the whole run small: training, test and unlabelled texts
        data = data.limited(config.limit, config.seed)
        context.log(f"limit {config.limit:,}: a seeded sample of {data.sizes()} texts")
    split = data.split(config.validation_split, config.seed)  # of whole groups when the texts have groups
    by = config.data.get("group")
    if split.groups:
        context.log(split.groups_text(by))
    with claim_run_dir(context.output, context.resume), resource_errors(config, context.output):
        if split.groups:  # run.json's record of the groups on each side
            write_status(context.output, validation_groups={"by": by, **split.groups})
        return _train_owned(data, split, config, context, bundle)


def _train_owned(data, split, config, context, bundle=True):
    """The run in its directory: the network fitted (`hierattn.runs.network`), then evaluated and saved."""
    keras.utils.set_random_seed(config.seed)
    classifier, record = prepare_classifier(data, split, config, context)
    metrics = fit_network(classifier, data, split, config, context)
    validation = _validation_outputs(classifier, split)
    metrics["validation"] = label_metrics(
        split.val_labels, classifier.policy.ids(validation.probabilities), data.train.label_map.names
    )
    if not context.chief:
        return Run(context.output, classifier, record, metrics)
    preprocessor = classifier.preprocessor
    metrics["units"] = preprocessor.units_report or {"units": preprocessor.tokenizer.units, "reason": "as set"}
    _evaluate(classifier, data, split, config, context, metrics, validation)
    with busy("saving model.keras" + (" and model.onnx" if bundle else ""), disable=not context.verbose):
        with atomic_path(context.output / "model.keras") as partial:
            save_without_optimizer(classifier, partial)
        written = {"bundle": write_bundle(classifier, context.output, context.log)} if bundle else {}
    save_json(context.output / "metrics.json", METRICS_FORMAT, metrics, indent=2)
    if "test" in metrics and "calibration" in metrics:  # the test split's page: its scores, calibration, cascade
        page = split_page_metrics(metrics, "test")
        write_evaluation_html(context.output / "report.html", page, f"{context.output.name}: test split", True)
    write_status(context.output, status="complete", finished=now(), **written)
    shutil.rmtree(context.checkpoints, ignore_errors=True)  # only once complete: the run is never without both
    return Run(context.output, classifier, record, metrics)


@dataclasses.dataclass(frozen=True)
class _SplitOutputs:
    """What the parts said of one split's documents, from one pass of the network, and what the policy makes of it."""

    labels: object
    network: object
    logits: object
    outcomes: dict

    @property
    def probabilities(self):
        return self.outcomes["probabilities"]


def _split_outputs(classifier, labels, network, logits):
    return _SplitOutputs(labels, network, logits, outcomes(classifier.policy, network, logits, labels))


def _validation_outputs(classifier, split):
    """The validation split's outputs: those `fit`'s tuning read (`TextClassifier.validation_scores`), else read now."""
    scores = classifier.validation_scores
    if scores is None or len(scores) != len(split.val_labels):  # e.g. a resumed run whose tuning read none
        scores = classifier.part_outputs(classifier.preprocessor(split.val_texts))
        return _split_outputs(classifier, split.val_labels, *scores)
    return _split_outputs(classifier, split.val_labels, scores.network, scores.ngram_logits)


def _evaluate(classifier, data, split, config, context, metrics, validation):
    """Adds to `metrics` the test evaluation (with `data.test`), each part alone (`parts`) and the baseline.

    The network reads the test split once: the classifier's answers, the whole combination's and each part's
    come from that pass (`hierattn.tuning.outcomes`).
    """
    names, test, policy = data.train.label_map.names, data.test, classifier.policy
    evaluate = {"validation": validation}
    if test is not None and len(test):
        x_test = classifier.preprocessor(test.texts, progress=True)
        started = time.perf_counter()
        outputs = _split_outputs(classifier, test.labels, *classifier.part_outputs(x_test, progress=True))
        seconds = time.perf_counter() - started
        metrics["test"] = label_metrics(test.labels, policy.ids(outputs.probabilities), names)
        metrics["test"]["prediction_reviews_per_second"] = round(len(test) / seconds, 1)
        evaluate["test"] = outputs
    decision = decision_record(policy, classifier.offset_report)
    if decision is not None:  # the decision rule for macro-F1, with the most probable class's test scores
        metrics["decision"] = decision
        if "test" in metrics:
            argmax = label_metrics(test.labels, policy.argmax_ids(evaluate["test"].probabilities), names)
            metrics["decision"]["test"] = {"argmax": {key: argmax[key] for key in ("accuracy", "macro_f1")}}
    if classifier.ngram_logits is not None:
        metrics["parts"] = _parts(classifier, evaluate)
        metrics["calibration"] = metrics["parts"].pop("calibration")
    if config.baseline:
        context.log(f"fitting the {NAME} baseline on the same {len(split.fit_texts):,} training documents")
        texts = {"validation": (split.val_texts, split.val_labels)}
        if "test" in metrics:
            texts["test"] = (test.texts, test.labels)
        with busy(f"{NAME} baseline", disable=not context.verbose):
            metrics["baseline"] = run_baseline(split.fit_texts, split.fit_labels, names, texts)


def _parts(classifier, evaluate):
    """Each part of a classifier with an n-gram part scored alone: `{part: {split: metrics}}`, and the weights.

    A multi-label classifier's parts each get their own thresholds, chosen on
    the validation texts as the classifier's are (`choose_thresholds`). Beside
    them: `whole` (the network reading every document), `network_read` (the
    share of each split's documents the network read) and `cascade` (the cut).
    """
    report, policy = classifier.ngram_report, classifier.policy
    parts = {key: report[key] for key in ("network_weight", "ngram_weight", "network_share")}
    parts["ngram_training_seconds"] = report["training_seconds"]
    parts["shares_tried"] = report.get("shares")  # validation log-loss and accuracy of each share
    parts["ngram_recipe"] = report.get("recipe")
    parts["recipes_tried"] = report.get("candidates")  # validation accuracy, macro-F1, log-loss of each
    parts["cascade"] = classifier.cascade_report  # the cut, and the validation share the network read
    for split, outputs in evaluate.items():
        found = outputs.outcomes
        parts.setdefault("calibration", {})[split] = found["calibration"]
        parts.setdefault("whole", {})[split] = label_metrics(
            outputs.labels, policy.ids(found["whole"]), classifier.label_names
        )
        parts.setdefault("network_read", {})[split] = 1.0 if found["share"] is None else found["share"]
    for part in ("network", "ngrams"):
        probabilities = {
            split: outputs.network if part == "network" else ngram_alone(outputs.logits, policy)
            for split, outputs in evaluate.items()
        }
        thresholds = None
        if classifier.multi_label:
            thresholds, _ = choose_thresholds(probabilities["validation"], evaluate["validation"].labels)
        parts[part] = {
            split: label_metrics(outputs.labels, policy.ids(probabilities[split], thresholds), classifier.label_names)
            for split, outputs in evaluate.items()
        }
        if thresholds is not None:
            parts[part]["thresholds"] = thresholds
    return parts


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
