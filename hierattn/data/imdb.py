"""The Large Movie Review Dataset (IMDB), Maas et al. 2011."""

import os
import pathlib
import re

import numpy as np

from hierattn.data.archive import download as download_file
from hierattn.data.archive import iter_folder, iter_tar_gz
from hierattn.data.dataset import LabelMap, TextDataset
from hierattn.data.progress import tqdm
from hierattn.errors import DataError

IMDB_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
IMDB_SHA256 = "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe"
ARCHIVE_NAME = "aclImdb_v1.tar.gz"
LABELS = LabelMap(["neg", "pos"])
_MEMBER = re.compile(r"(?:^|/)(train|test)/(pos|neg|unsup)/(\d+)_(\d+)\.txt$")
_URLS = re.compile(r"(?:^|/)(train|test)/urls_(pos|neg|unsup)\.txt$")  # line i: the film page of review i_*.txt
_FILM = re.compile(r"/title/(tt\d+)")


def default_cache_dir():
    """`$HIERATTN_DATA` if set, else `data/` under the current directory."""
    return pathlib.Path(os.environ.get("HIERATTN_DATA", "data"))


def locate_imdb(path=None, cache_dir=None, download=True, progress=True, opener=None):
    """Finds the IMDB archive or folder: explicit path, cache, then download.

    Args:
        path: An `aclImdb_v1.tar.gz` archive, an extracted `aclImdb/` folder
            or a folder holding either.
        cache_dir: Cache folder (default `default_cache_dir()`).
        download: Download the official archive when nothing is found.
        progress: Progress bar for the download.
        opener: `urlopen`-like callable for the download (tests).

    Returns:
        The path of an archive or of an `aclImdb` folder.

    Raises:
        DataError: Nothing found and no download possible; says where to put
            the file.
    """
    if path is not None:
        found = _resolve(pathlib.Path(path))
        if found is None:
            raise DataError(f"no IMDB data at {path}: expected {ARCHIVE_NAME} or an extracted aclImdb/ folder.")
        return found
    cache = pathlib.Path(cache_dir) if cache_dir is not None else default_cache_dir()
    found = _resolve(cache)
    if found is not None:
        return found
    target = cache / ARCHIVE_NAME
    if not download:
        raise DataError(f"IMDB not found: put {ARCHIVE_NAME} (or aclImdb/) in {cache}/ or pass its path.")
    try:
        return download_file(IMDB_URL, target, sha256=IMDB_SHA256, progress=progress, opener=opener)
    except DataError as error:
        raise DataError(
            f"IMDB not found locally and the download failed ({error}). "
            f"Put {ARCHIVE_NAME} (from {IMDB_URL}) in {cache}/ or pass its path."
        ) from None


def _resolve(path):
    if path.is_file():
        return path
    if not path.is_dir():
        return None
    if (path / "train").is_dir() and (path / "test").is_dir():
        return path
    for candidate in (path / "aclImdb", path / ARCHIVE_NAME):
        if candidate.exists():
            return _resolve(candidate)
    return None


def load_imdb(path=None, splits=("train", "test"), cache_dir=None, download=True, progress=True, opener=None):
    """Loads IMDB reviews with labels from the pos/neg folders.

    Reads the `.tar.gz` directly (no extraction) or an extracted folder. The
    official 25k/25k train/test split is kept; `unsup` holds the 50k unlabelled
    training reviews (label -1).

    Args:
        path: Archive or folder (see `locate_imdb`).
        splits: Any of `"train"`, `"test"`, `"unsup"`.
        cache_dir: Cache folder for `locate_imdb`.
        download: Allow downloading.
        progress: Show progress bars.
        opener: For tests of the download path.

    Returns:
        Dict from split name to `TextDataset`, documents sorted by file name
        (so the order is the same from the archive and from a folder).
        `ratings` holds the star rating from the file name (0 for unsup).
        `groups` holds each review's film (its IMDb id, `tt0453418`), read
        from the split's `urls_pos.txt`, `urls_neg.txt` (and
        `urls_unsup.txt`), whose line i is the film page of the review
        `i_*.txt`; `None` where the archive or folder has no such files
        (the official archive has them; copies may leave them out).

    Raises:
        DataError: Nothing found; an unknown split; a split without
            reviews; a urls file without a line for one of its reviews.
    """
    unknown = set(splits) - {"train", "test", "unsup"}
    if unknown:
        raise DataError(f"unknown IMDB split(s) {sorted(unknown)}: use train, test or unsup.")
    source = locate_imdb(path, cache_dir, download, progress, opener)
    files = iter_tar_gz(source) if source.is_file() else iter_folder(source)
    wanted = set(splits)
    rows = {split: [] for split in splits}
    urls = {}  # (split, folder): the lines of its urls file
    for name, data in tqdm(files, desc="reading IMDB", unit="file", disable=not progress, mininterval=0.5):
        match = _MEMBER.search(name)
        if match is None:
            listed = _URLS.search(name)
            if listed is not None:
                urls[listed.groups()] = data.decode("utf-8", errors="replace").splitlines()
            continue
        split, folder, number, rating = match.groups()
        key = "unsup" if folder == "unsup" else split
        if key not in wanted:
            continue
        label = -1 if folder == "unsup" else LABELS.names.index(folder)
        rows[key].append(
            (f"{split}/{folder}/{number}_{rating}.txt", data.decode("utf-8", errors="replace"), label, int(rating))
        )
    result = {}
    for split in splits:
        if not rows[split]:
            raise DataError(f"{source} holds no IMDB {split} reviews (is it the aclImdb_v1 archive?).")
        rows[split].sort(key=lambda r: r[0])
        ids, texts, labels, ratings = zip(*rows[split])
        result[split] = TextDataset(
            list(texts),
            np.asarray(labels, np.int32),
            LABELS,
            list(ids),
            np.asarray(ratings, np.int16),
            _films(source, ids, urls),
        )
    return result


def _films(source, ids, urls):
    """The film (IMDb id) of each review of `ids` from its folder's urls file; None when one is missing."""
    films = []
    for review in ids:
        split, folder, file = review.split("/")
        lines = urls.get((split, folder))
        if lines is None:
            return None
        number = int(file.split("_")[0])
        if number >= len(lines):
            raise DataError(
                f"{source}: {split}/urls_{folder}.txt has {len(lines):,} lines, and none for the review {review} "
                f"(line {number + 1:,}): is it the urls file of these reviews?"
            )
        found = _FILM.search(lines[number])
        films.append(found.group(1) if found else lines[number].strip())
    return np.asarray(films, dtype=str)
