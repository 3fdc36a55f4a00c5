"""How large a run's `model.keras` is, and which parts make it so (issue #29).

Two uses:

- The size of existing model files, by part: the word embedding, the n-gram
  part, the optimizer's state, the rest of the weights, and what is not a
  weight (config, vocabulary, file structure)::

      python -m benchmarks.model_size runs/a/model.keras [runs/b/model.keras ...]

- An estimate for IMDB's default run without training the network (file
  sizes do not depend on the trained values): a default `TextClassifier`
  (`TrainConfig()`'s settings, HAN) adapted to the training part of IMDB's
  `train/` split as a run splits it (vocabulary and length limits; the
  embeddings left random instead of word2vec), its n-gram part fitted on the
  same part (the fallback recipe, no validation texts: the file's size
  depends on the recipe a run chooses), compiled as a run compiles it, with the
  optimizer's state built (as after training). It is saved the way a run
  saves its `model.keras` and, for comparison, the way Keras saves a
  compiled model (`classifier.save`: the optimizer included)::

      python -m benchmarks.model_size --imdb ../shared/datasets/aclImdb_v1.tar.gz

Run it from the repository root (`-m`, so `hierattn` is this checkout's).
"""

import argparse
import io
import pathlib
import tempfile
import time
import zipfile

PARTS = ("embedding", "n-gram part", "optimizer", "other weights", "not weights")


def part_of(path):
    """Which part a dataset of `model.weights.h5` belongs to, from its path."""
    if path.startswith("optimizer"):
        return "optimizer"
    if "ngram_logits" in path:
        return "n-gram part"
    if "embedding" in path.split("/vars/")[0]:
        return "embedding"
    return "other weights"


def breakdown(model_file):
    """Bytes of each part of a `.keras` file (see `PARTS`); they sum to the file's size."""
    import h5py

    size = pathlib.Path(model_file).stat().st_size
    sizes = dict.fromkeys(PARTS, 0)
    with zipfile.ZipFile(model_file) as archive, h5py.File(io.BytesIO(archive.read("model.weights.h5"))) as weights:

        def visit(path, item):
            if isinstance(item, h5py.Dataset):
                sizes[part_of(path)] += item.id.get_storage_size()

        weights.visititems(visit)
    sizes["not weights"] = size - sum(sizes.values())
    return size, sizes


def show(name, model_file):
    size, sizes = breakdown(model_file)
    parts = ", ".join(f"{part} {value / 1e6:.2f}" for part, value in sizes.items())
    print(f"{name}: {size:,} bytes ({size / 1e6:.1f} MB); MB by part: {parts}")
    return size


def imdb_estimate(archive, folder):
    """Builds IMDB's default classifier (network untrained) and saves it both ways under `folder`."""
    from hierattn.data import load_imdb
    from hierattn.data.dataset import stratified_split
    from hierattn.models.task import default_optimizer
    from hierattn.runs import config as train_config
    from hierattn.runs import train as training

    config = train_config.TrainConfig.from_dict({"embeddings": "none"})  # sizes do not depend on the embeddings' values
    train = load_imdb(archive, splits=("train",), download=False, progress=False)["train"]
    names = train.label_map.names
    fit_idx, _ = stratified_split(train.labels, config.validation_split, config.seed, names)
    texts = [train.texts[i] for i in fit_idx]
    classifier = train_config.make_classifier(config, names)
    started = time.perf_counter()
    classifier.adapt(texts, [names[i] for i in train.labels[fit_idx]], verbose=0)
    classifier.fit_ngrams(classifier.preprocessor(texts), train.labels[fit_idx])
    classifier.compile(optimizer=default_optimizer(config.learning_rate))
    classifier.optimizer.build(classifier.trainable_variables)  # Adam's slots, as after training
    print(
        f"adapted and fitted on {len(texts):,} reviews in {time.perf_counter() - started:.0f} s: vocabulary "
        f"{len(classifier.preprocessor.vocabulary):,} ids, embedding "
        f"{classifier.backbone.get_layer('embedding').output_dim} dims, "
        f"{classifier.backbone.count_params():,} network parameters, n-gram features kept: "
        f"{getattr(classifier.ngram_logits, 'num_kept', 'all')}"
    )
    compiled, run_file = pathlib.Path(folder) / "compiled.keras", pathlib.Path(folder) / "model.keras"
    classifier.save(compiled)
    save = getattr(training, "save_without_optimizer", None)  # absent before issue #29: a run used `save`
    started = time.perf_counter()
    (save or type(classifier).save)(classifier, run_file)
    print(
        f"saved the run's way in {time.perf_counter() - started:.1f} s"
        + ("" if save else " (this hierattn has no save_without_optimizer: classifier.save)")
    )
    return compiled, run_file


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_files", nargs="*", help="`.keras` files to break down")
    parser.add_argument("--imdb", metavar="ARCHIVE", help="estimate IMDB's default run (the archive or folder)")
    args = parser.parse_args()
    if not args.model_files and not args.imdb:
        parser.error("give model files, --imdb ARCHIVE, or both")
    for model_file in args.model_files:
        show(model_file, model_file)
    if args.imdb:
        with tempfile.TemporaryDirectory() as folder:
            compiled, run_file = imdb_estimate(args.imdb, folder)
            show("IMDB default, classifier.save (optimizer included)", compiled)
            show("IMDB default, as a run saves model.keras", run_file)


if __name__ == "__main__":
    main()
