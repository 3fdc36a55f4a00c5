"""Tests for hierattn.data.archive: tar.gz streaming and safe downloads."""

import hashlib
import http.server
import io
import tarfile
import threading

import pytest

from hierattn.data.archive import download, iter_folder, iter_tar_gz
from hierattn.errors import DataError


def make_archive(path, files, pax=False):
    fmt = tarfile.PAX_FORMAT if pax else tarfile.GNU_FORMAT
    with tarfile.open(path, "w:gz", format=fmt) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        folder = tarfile.TarInfo("top/empty_dir")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)


FILES = {
    "top/a.txt": b"alpha",
    "top/" + "long_name_" * 15 + ".txt": b"x" * 1500,  # > 100 chars: GNU long name / pax path
    "top/sub/empty.txt": b"",
    "top/sub/b.txt": "h\u00e9llo".encode(),
}


@pytest.mark.parametrize("pax", [False, True])
def test_tar_reader_matches_tarfile(tmp_path, pax):
    path = tmp_path / "a.tar.gz"
    make_archive(path, FILES, pax=pax)
    assert dict(iter_tar_gz(path)) == FILES
    assert dict(iter_tar_gz(path, chunk_size=7)) == FILES  # tiny reads: headers split across chunks


def test_tar_reader_rejects_non_archives(tmp_path):
    path = tmp_path / "not.tar.gz"
    path.write_bytes(b"plain text, not gzip")
    with pytest.raises(DataError, match="not a readable .tar.gz"):
        list(iter_tar_gz(path))


def test_tar_reader_refuses_truncated_archives(tmp_path):
    path = tmp_path / "a.tar.gz"
    make_archive(path, {**FILES, "top/big.bin": bytes(range(256)) * 400})
    data = path.read_bytes()
    for cut in (0.5, 0.95, 0.999):
        (tmp_path / "cut.tar.gz").write_bytes(data[: int(len(data) * cut)])
        with pytest.raises(DataError, match="is truncated: the archive ends before its last file does"):
            list(iter_tar_gz(tmp_path / "cut.tar.gz"))


@pytest.mark.parametrize("name", ["../evil.txt", "top/../../evil.txt", "/etc/evil.txt", "C:/evil.txt"])
def test_tar_reader_refuses_members_outside_the_archive(tmp_path, name):
    path = tmp_path / "a.tar.gz"
    make_archive(path, {"top/a.txt": b"alpha", name: b"evil"})
    with pytest.raises(DataError, match="outside the archive's folder: refusing an unsafe archive"):
        list(iter_tar_gz(path))


def test_folder_reader(tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "f.txt").write_bytes(b"1")
    (tmp_path / "d" / "g.txt").write_bytes(b"2")
    assert list(iter_folder(tmp_path / "d")) == [("e/f.txt", b"1"), ("g.txt", b"2")]


@pytest.fixture
def server():
    """A local HTTP server on 127.0.0.1 serving one payload at /file."""
    payload = b"archive bytes " * 5000

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/file":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", payload
    httpd.shutdown()
    httpd.server_close()


def test_download_verifies_checksum(tmp_path, server):
    url, payload = server
    target = tmp_path / "cache" / "file.bin"
    download(f"{url}/file", target, sha256=hashlib.sha256(payload).hexdigest(), progress=False)
    assert target.read_bytes() == payload
    assert list(target.parent.iterdir()) == [target]


def test_checksum_mismatch_keeps_nothing_and_spares_an_existing_file(tmp_path, server):
    url, _ = server
    target = tmp_path / "file.bin"
    with pytest.raises(DataError, match="checksum mismatch"):
        download(f"{url}/file", target, sha256="0" * 64, progress=False)
    assert list(tmp_path.iterdir()) == []
    target.write_bytes(b"earlier good copy")
    with pytest.raises(DataError, match="checksum mismatch"):
        download(f"{url}/file", target, sha256="0" * 64, progress=False)
    assert target.read_bytes() == b"earlier good copy" and sorted(tmp_path.iterdir()) == [target]


def test_unreachable_and_missing_urls_raise_data_errors(tmp_path, server):
    url, _ = server
    with pytest.raises(DataError, match="could not download"):
        download(f"{url}/missing", tmp_path / "f", progress=False)
    with pytest.raises(DataError, match="could not download"):
        download("http://127.0.0.1:9/nothing", tmp_path / "f", progress=False, timeout=2)
    assert list(tmp_path.iterdir()) == []
