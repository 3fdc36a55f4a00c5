"""Reading dataset archives and folders, and downloading them safely."""

import contextlib
import hashlib
import pathlib
import urllib.error
import urllib.request
import zlib

from hierattn.data.progress import tqdm
from hierattn.errors import DataError
from hierattn.utils.atomic import WriteError, atomic_open

_BLOCK = 512


def _octal(field):
    field = field.rstrip(b"\0 ").lstrip(b" ")
    return int(field, 8) if field else 0


def _pax_path(data):
    """The `path` record of a pax extended header, if any."""
    position = 0
    while position < len(data):
        space = data.index(b" ", position)
        length = int(data[position:space])
        key, _, value = data[space + 1 : position + length - 1].partition(b"=")
        if key == b"path":
            return value.decode("utf-8")
        position += length
    return None


def iter_tar_gz(path, chunk_size=1 << 22):
    """Yields `(name, data)` for the regular files of a `.tar.gz`, streaming.

    A small tar reader over one zlib stream: about 4x faster than `tarfile`
    on archives of many small files (IMDB: 1.0 s vs 4.4 s here), because it
    does no per-member bookkeeping. Handles ustar prefixes, GNU long names
    and pax `path` records.

    Args:
        path: Path of a gzip-compressed tar archive.
        chunk_size: Bytes read per step.

    Raises:
        DataError: The file is not a readable `.tar.gz`, is truncated (the
            gzip stream or the last member ends early), or names a member
            outside the archive (an absolute path or `..`).
    """
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    buffer = bytearray()
    long_name = None
    try:
        with open(path, "rb") as f:
            while True:
                raw = f.read(chunk_size)
                buffer += decompressor.decompress(raw) if raw else decompressor.flush()
                position = 0
                while len(buffer) - position >= _BLOCK:
                    header = bytes(buffer[position : position + _BLOCK])
                    if header.count(0) == _BLOCK:
                        position += _BLOCK
                        continue
                    size = _octal(header[124:136])
                    total = _BLOCK + -(-size // _BLOCK) * _BLOCK
                    if len(buffer) - position < total:
                        break
                    data = bytes(buffer[position + _BLOCK : position + _BLOCK + size])
                    position += total
                    kind = header[156:157]
                    if kind == b"L":
                        long_name = data.rstrip(b"\0").decode("utf-8")
                    elif kind == b"x":
                        long_name = _pax_path(data) or long_name
                    elif kind in (b"0", b"\0"):
                        name = header[0:100].rstrip(b"\0").decode("utf-8")
                        prefix = header[345:500].rstrip(b"\0").decode("utf-8") if header[257:262] == b"ustar" else ""
                        if prefix:
                            name = f"{prefix}/{name}"
                        yield _safe_name(path, long_name or name), data
                        long_name = None
                    else:
                        long_name = None
                del buffer[:position]
                if not raw:
                    break
    except (zlib.error, ValueError, UnicodeDecodeError) as error:
        raise DataError(f"{path} is not a readable .tar.gz archive ({error}).") from None
    if not decompressor.eof or buffer.count(0) != len(buffer):
        raise DataError(
            f"{path} is truncated: the archive ends before its last file does (an interrupted download "
            "or copy?); fetch it again."
        )


def _safe_name(path, name):
    """`name`, unless it points outside the archive (absolute, or with `..`)."""
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
        raise DataError(
            f"{path} holds a file named {name!r}, outside the archive's folder: refusing an unsafe archive."
        )
    return name


def iter_folder(root):
    """Yields `(relative name, data)` for the files below `root`, sorted."""
    root = pathlib.Path(root)
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        yield file.relative_to(root).as_posix(), file.read_bytes()


def _download_failed(url, error):
    return DataError(f"could not download {url}: {getattr(error, 'reason', error)}")


@contextlib.contextmanager
def _opened(opener, url, timeout):
    try:
        response = opener(url, timeout=timeout)
    except (OSError, TimeoutError) as error:  # urllib.error.URLError is an OSError
        raise _download_failed(url, error) from None
    with response:
        yield response


def _chunks(response, url):
    """The body of a download in blocks; a broken connection is a `DataError`, not a write error."""
    while True:
        try:
            chunk = response.read(1 << 16)
        except (OSError, TimeoutError) as error:
            raise _download_failed(url, error) from None
        if not chunk:
            return
        yield chunk


def download(url, destination, sha256=None, progress=True, timeout=60, opener=None):
    """Downloads `url` to `destination`, verifying its sha256.

    The data go to a temporary file of this process's own first
    (`hierattn.utils.atomic`) and are moved into place only when complete and
    verified, so an interrupted, corrupted or concurrent download never
    leaves a file that looks like a good one, nor a temporary file.

    Args:
        url: The address.
        destination: Final path.
        sha256: Expected hex digest; a mismatch raises and keeps nothing.
        progress: Show a progress bar.
        timeout: Socket timeout in seconds.
        opener: `urlopen`-like callable (for tests); defaults to
            `urllib.request.urlopen`.

    Raises:
        DataError: The download failed or the checksum did not match.
    """
    opener = opener or urllib.request.urlopen
    destination = pathlib.Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    try:
        # A temporary name of this process's own: two processes downloading at once never mix their bytes.
        with atomic_open(destination, "wb") as out, _opened(opener, url, timeout) as response:
            total = int(response.headers.get("Content-Length") or 0) or None
            with tqdm(total=total, unit="B", unit_scale=True, desc=destination.name, disable=not progress) as bar:
                for chunk in _chunks(response, url):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
            if sha256 and digest.hexdigest() != sha256:
                raise DataError(
                    f"checksum mismatch for {url}: expected sha256 {sha256}, got {digest.hexdigest()}; "
                    "nothing was saved."
                )
    except WriteError as error:
        raise DataError(f"could not download {url}: {error}") from None
    return destination
