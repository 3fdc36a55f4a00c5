"""What a training run is handed besides its settings (a `TrainConfig`): its data, and how this process carries it out.

`hierattn.runs.sources` reads a run's data (`RunData`); `hierattn.runs.train.train`
adds where and how this process runs it (`RunContext`), cuts the training texts
into the part fitted and the part validated on (`Split`), and hands these and
the config down, each as one object, to every step of the run. Class ids stay
ids from the data to the metrics. Nothing here imports Keras.
"""

import dataclasses
import pathlib
from collections.abc import Callable

import numpy as np

from hierattn.data.dataset import grouped_split, random_split, sample, stratified_split


@dataclasses.dataclass(frozen=True)
class Split:
    """A run's training texts cut into the part fitted and the part validated on, with their class ids.

    `groups`, for a split of whole groups (`RunData.split`), counts the
    texts and the groups on each side: `{"fit": {"texts": 1800, "groups":
    250}, "validation": {...}}` (run.json's `validation_groups`, with what
    the groups are); `None` for a split by class alone.

    Example:

    >>> split = Split(["a", "b"], np.array([0, 1]), ["c"], np.array([1]))
    >>> len(split.fit_texts), split.val_labels.tolist(), split.groups
    (2, [1], None)
    """

    fit_texts: list
    fit_labels: object  # class ids (a NumPy array; multi-hot rows for multi-label data)
    val_texts: list
    val_labels: object
    groups: dict = None

    def groups_text(self, by=None):
        """The grouped split in words, for the log: what is held out, of how many groups (`by`: what they are).

        >>> sides = {"fit": {"texts": 1800, "groups": 250}, "validation": {"texts": 200, "groups": 31}}
        >>> Split([], None, [], None, sides).groups_text("author")
        'validation: 200 texts (10.0%) of 31 groups by author, fitted: 1,800 of 250; no author on both sides'
        """
        fit, validation = self.groups["fit"], self.groups["validation"]
        share = validation["texts"] / (validation["texts"] + fit["texts"])
        return (
            f"validation: {validation['texts']:,} texts ({share:.1%}) of {validation['groups']:,} groups by "
            f"{by or 'group'}, fitted: {fit['texts']:,} of {fit['groups']:,}; no {by or 'group'} on both sides"
        )


@dataclasses.dataclass(frozen=True)
class RunData:
    """The texts a run trains on, and the name of their dataset.

    Args:
        train: The `TextDataset` to train on (a validation part is held
            out of it: `split`).
        test: The `TextDataset` evaluated once at the end, or `None`.
        unlabeled: More texts for word2vec (a list of strings), or `None`.
        name: The dataset's name, recorded in run.json (`"imdb"`, `"agnews"`).

    Example:

    >>> from hierattn.data.dataset import LabelMap, TextDataset
    >>> texts = ["good", "bad", "fine", "awful", "great", "dull"]
    >>> train = TextDataset(texts, np.array([1, 0, 1, 0, 1, 0]), LabelMap(["neg", "pos"]), list(range(6)))
    >>> data = RunData(train, name="reviews")
    >>> len(data.limited(4, seed=0).train), data.sizes()
    (4, '6 training')
    >>> split = data.split(0.3, seed=0)
    >>> len(split.fit_texts), len(split.val_texts)
    (4, 2)
    """

    train: object
    test: object = None
    unlabeled: list = None
    name: str = "data"

    def limited(self, limit, seed):
        """The data cut to a seeded sample of at most `limit` texts in each part (`hierattn.data.dataset.sample`)."""
        train, test, unlabeled = (sample(part, limit, seed) for part in (self.train, self.test, self.unlabeled))
        return dataclasses.replace(self, train=train, test=test, unlabeled=unlabeled)

    def sizes(self):
        """The texts of each part, in words: "20 training, 20 test, 20 unlabelled"."""
        parts = [("training", self.train), ("test", self.test), ("unlabelled", self.unlabeled)]
        return ", ".join(f"{len(texts):,} {name}" for name, texts in parts if name == "training" or texts)

    def split(self, share, seed):
        """The training texts cut into a fitted part and a validation part of `share` (`Split`).

        Stratified by class; multi-label data (label sets), which no one class
        stratifies, is split at random (`hierattn.data.dataset.random_split`).
        Training texts with groups (`TextDataset.groups`: IMDB's films, a
        table's group column) are split into whole groups, stratified as
        whole groups allow (`hierattn.data.dataset.grouped_split`), and the
        `Split` counts the groups on each side.
        """
        train, groups = self.train, None
        if train.groups is not None:
            keys = np.asarray(train.groups).astype(str)
            fit, validation = grouped_split(train.labels, keys, share, seed, train.label_map.names)
            groups = {
                side: {"texts": len(indices), "groups": len(np.unique(keys[indices]))}
                for side, indices in (("fit", fit), ("validation", validation))
            }
        elif train.multi_label:
            fit, validation = random_split(len(train), share, seed)
        else:
            fit, validation = stratified_split(train.labels, share, seed, train.label_map.names)
        return Split(
            [train.texts[i] for i in fit],
            train.labels[fit],
            [train.texts[i] for i in validation],
            train.labels[validation],
            groups,
        )


@dataclasses.dataclass(frozen=True)
class RunContext:
    """How this process carries out a run: where it writes, whether it resumes, what it reports, under which strategy.

    Args:
        output: The run directory (a `pathlib.Path`).
        resume: Whether the run continues an interrupted one in `output`.
        log: Function printing progress messages.
        verbose: Keras `fit` verbosity.
        callbacks: Extra Keras callbacks for `fit` (a tuple).
        strategy: The `tf.distribute` strategy the run trains under.
        chief: Whether this process writes the run's results (every other
            worker of a cluster trains in a private copy).

    Example:

    >>> context = RunContext(pathlib.Path("runs/han-imdb"), log=lambda message: None)
    >>> context.checkpoints.as_posix(), context.resume, context.chief
    ('runs/han-imdb/checkpoints', False, True)
    """

    output: pathlib.Path
    resume: bool = False
    log: Callable = print
    verbose: object = "auto"
    callbacks: tuple = ()
    strategy: object = None
    chief: bool = True

    @property
    def checkpoints(self):
        """The folder of the run's checkpoints, while it can be resumed."""
        return self.output / "checkpoints"
