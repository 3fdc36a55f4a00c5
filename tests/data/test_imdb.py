"""Tests for hierattn.data.imdb: locating, downloading and reading IMDB."""

import hashlib
import io
import tarfile
import urllib.error

import numpy as np
import pytest

from hierattn.data import imdb
from hierattn.errors import DataError

REVIEWS = {
    "aclImdb/train/pos/10_9.txt": b"Great film.<br /><br />Loved it!",
    "aclImdb/train/pos/2_7.txt": b"Good enough.",
    "aclImdb/train/neg/5_1.txt": b"Awful. Just awful.",
    "aclImdb/train/neg/1_4.txt": b"Not good.",
    "aclImdb/train/unsup/0_0.txt": b"No label here.",
    "aclImdb/test/pos/3_8.txt": b"Fine \xe9 film.",
    "aclImdb/test/neg/4_2.txt": b"Boring.",
    "aclImdb/README": b"not a review",
}


@pytest.fixture
def mini_archive(tmp_path):
    path = tmp_path / "mini" / imdb.ARCHIVE_NAME
    path.parent.mkdir()
    with tarfile.open(path, "w:gz") as archive:
        for name, data in REVIEWS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def mini_folder(tmp_path):
    for name, data in REVIEWS.items():
        file = tmp_path / "extracted" / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
    return tmp_path / "extracted"


def test_reads_labels_ratings_and_splits(mini_archive):
    data = imdb.load_imdb(mini_archive, splits=("train", "test", "unsup"), download=False, progress=False)
    train = data["train"]
    assert train.ids == ["train/neg/1_4.txt", "train/neg/5_1.txt", "train/pos/10_9.txt", "train/pos/2_7.txt"]
    np.testing.assert_array_equal(train.labels, [0, 0, 1, 1])
    np.testing.assert_array_equal(train.ratings, [4, 1, 9, 7])
    assert train.label_map.names == ["neg", "pos"]
    assert data["unsup"].labels.tolist() == [-1] and data["unsup"].texts == ["No label here."]
    assert data["test"].texts[1] == "Fine \ufffd film."  # non-UTF-8 byte replaced, not fatal


def test_archive_and_folder_give_the_same_data(mini_archive, mini_folder):
    from_archive = imdb.load_imdb(mini_archive, download=False, progress=False)
    for path in (mini_folder, mini_folder / "aclImdb"):
        from_folder = imdb.load_imdb(path, download=False, progress=False)
        for split in ("train", "test"):
            assert from_folder[split].texts == from_archive[split].texts
            assert from_folder[split].ids == from_archive[split].ids


URLS = {  # line i: the film page of review i_*.txt (1 and 2 of pos, 0 of unsup have none: 10_9.txt needs line 11)
    "aclImdb/train/urls_pos.txt": "".join(f"http://www.imdb.com/title/tt{i % 3:07d}/usercomments\n" for i in range(11)),
    "aclImdb/train/urls_neg.txt": "".join(f"http://www.imdb.com/title/tt10{i:05d}/usercomments\n" for i in range(6)),
    "aclImdb/train/urls_unsup.txt": "http://www.imdb.com/title/tt0453418/usercomments\n",
}


def write_archive(path, files):
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            data = data if isinstance(data, bytes) else data.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_the_urls_files_give_each_review_its_film(tmp_path):
    archive = write_archive(tmp_path / imdb.ARCHIVE_NAME, {**URLS, **REVIEWS})  # the urls files before the reviews
    data = imdb.load_imdb(archive, splits=("train", "test", "unsup"), download=False, progress=False)
    train = data["train"]  # neg/1_4, neg/5_1, pos/10_9, pos/2_7
    assert train.groups.tolist() == ["tt1000001", "tt1000005", "tt0000001", "tt0000002"]
    assert data["unsup"].groups.tolist() == ["tt0453418"]
    assert data["test"].groups is None  # no test/urls_*.txt
    folder = tmp_path / "extracted"
    for name, content in {**REVIEWS, **URLS}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    from_folder = imdb.load_imdb(folder, download=False, progress=False)["train"]
    assert from_folder.groups.tolist() == train.groups.tolist()


def test_reviews_without_their_films_have_no_groups_or_are_refused(tmp_path, mini_archive):
    assert imdb.load_imdb(mini_archive, download=False, progress=False)["train"].groups is None
    one_file = {name: urls for name, urls in URLS.items() if "neg" not in name}  # urls_neg.txt missing
    archive = write_archive(tmp_path / "one.tar.gz", {**REVIEWS, **one_file})
    assert imdb.load_imdb(archive, download=False, progress=False)["train"].groups is None
    short = {**URLS, "aclImdb/train/urls_pos.txt": "http://www.imdb.com/title/tt0000001/usercomments\n" * 3}
    archive = write_archive(tmp_path / "short.tar.gz", {**REVIEWS, **short})
    with pytest.raises(
        DataError,
        match=r"train/urls_pos.txt has 3 lines, and none for the review train/pos/10_9.txt \(line 11\): is it the "
        "urls file of these reviews",
    ):
        imdb.load_imdb(archive, download=False, progress=False)


def test_source_order_explicit_path_then_cache_then_download(tmp_path, mini_archive, monkeypatch):
    cache = tmp_path / "cache"
    assert imdb.locate_imdb(mini_archive, cache_dir=cache) == mini_archive
    with pytest.raises(DataError, match="no IMDB data at"):
        imdb.locate_imdb(tmp_path / "nowhere", cache_dir=cache)

    payload = mini_archive.read_bytes()
    calls = []

    def fake_opener(url, timeout):
        calls.append(url)
        response = io.BytesIO(payload)
        response.headers = {"Content-Length": str(len(payload))}
        return response

    monkeypatch.setattr(imdb, "IMDB_SHA256", hashlib.sha256(payload).hexdigest())
    located = imdb.locate_imdb(cache_dir=cache, progress=False, opener=fake_opener)
    assert located == cache / imdb.ARCHIVE_NAME and calls == [imdb.IMDB_URL]
    assert located.read_bytes() == payload
    # Second time: found in the cache, no download.
    assert imdb.locate_imdb(cache_dir=cache, opener=fake_opener) == located and len(calls) == 1


def test_checksum_mismatch_is_refused_and_leaves_no_partial_file(tmp_path, mini_archive):
    payload = mini_archive.read_bytes()

    def tampered(url, timeout):
        response = io.BytesIO(payload[:-10] + b"0123456789")
        response.headers = {}
        return response

    cache = tmp_path / "cache"
    with pytest.raises(DataError, match="checksum mismatch"):
        imdb.locate_imdb(cache_dir=cache, progress=False, opener=tampered)
    assert not any(cache.iterdir())


def test_offline_error_says_where_to_put_the_file(tmp_path):
    def offline(url, timeout):
        raise urllib.error.URLError("Name or service not known")

    with pytest.raises(DataError, match=r"Put aclImdb_v1.tar.gz .* in .*cache/ or pass its path"):
        imdb.locate_imdb(cache_dir=tmp_path / "cache", progress=False, opener=offline)
    with pytest.raises(DataError, match="IMDB not found: put aclImdb_v1.tar.gz"):
        imdb.locate_imdb(cache_dir=tmp_path / "cache", download=False)


def test_bad_split_names_and_wrong_archives(tmp_path, mini_archive):
    with pytest.raises(DataError, match="unknown IMDB split"):
        imdb.load_imdb(mini_archive, splits=("validation",), download=False)
    other = tmp_path / "other.tar.gz"
    with tarfile.open(other, "w:gz") as archive:
        info = tarfile.TarInfo("x.txt")
        archive.addfile(info, io.BytesIO(b""))
    with pytest.raises(DataError, match="holds no IMDB train reviews"):
        imdb.load_imdb(other, download=False, progress=False)


def test_real_imdb_archive(imdb_splits):
    train, test = imdb_splits["train"], imdb_splits["test"]
    assert len(train) == len(test) == 25000
    assert np.bincount(train.labels).tolist() == [12500, 12500]
    pos = train.labels == 1
    assert train.ratings[pos].min() >= 7 and train.ratings[~pos].max() <= 4
    assert any("<br />" in t for t in train.texts[:200])  # raw text kept; cleaning is the tokenizer's job
