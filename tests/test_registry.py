"""get_encoding: lookup order, hash checks, and the download path against a local server."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import streamcodec
from streamcodec.formats import write_tiktoken
from streamcodec.registry import SPECS, EncodingSpec, load_vocabulary_file

TOY = {bytes([b]): b for b in range(256)} | {b"ab": 256}


@pytest.fixture
def toy_file(tmp_path: Path) -> Path:
    path = tmp_path / "toy.tiktoken"
    write_tiktoken(TOY, path)
    return path


def _spec(path: Path, **changes: object) -> EncodingSpec:
    spec = EncodingSpec(
        name="toy",
        filename=path.name,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        pat_str=r"\S+|\s+",
        special_tokens={},
    )
    return spec._replace(**changes)  # type: ignore[arg-type]


@pytest.fixture
def server(toy_file: Path) -> Iterator[str]:
    folder = str(toy_file.parent)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            super().__init__(*args, directory=folder, **kwargs)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_list_and_get(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"cl100k_base", "o200k_base", "gpt2", "r50k_base", "p50k_base"} <= set(
        streamcodec.list_encoding_names()
    )
    assert streamcodec.get_encoding("cl100k_base") is streamcodec.get_encoding("cl100k_base")
    with pytest.raises(ValueError, match="unknown encoding 'nope'"):
        streamcodec.get_encoding("nope")


def test_cl100k_comes_from_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("STREAMCODEC_DATA_DIR", raising=False)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("STREAMCODEC_CACHE_DIR", str(tmp_path / "empty-cache"))
    data = load_vocabulary_file(SPECS["cl100k_base"])
    assert hashlib.sha256(data).hexdigest() == SPECS["cl100k_base"].sha256


def test_data_dir_comes_first_and_is_hash_checked(
    monkeypatch: pytest.MonkeyPatch, toy_file: Path
) -> None:
    monkeypatch.setenv("STREAMCODEC_DATA_DIR", str(toy_file.parent))
    assert load_vocabulary_file(_spec(toy_file)) == toy_file.read_bytes()
    wrong = pytest.raises(ValueError, match=r"sha256 is .* but 'toy' must have 0000")
    with wrong, pytest.warns(RuntimeWarning, match="skipped"):
        load_vocabulary_file(_spec(toy_file, sha256="0" * 64))


def test_tiktoken_cache_is_used(
    monkeypatch: pytest.MonkeyPatch, toy_file: Path, tmp_path: Path
) -> None:
    spec = _spec(toy_file, url="https://example.invalid/toy.tiktoken")
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    key = hashlib.sha1(spec.download_url.encode()).hexdigest()
    (cache / key).write_bytes(toy_file.read_bytes())
    monkeypatch.delenv("STREAMCODEC_DATA_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    assert load_vocabulary_file(spec) == toy_file.read_bytes()


@pytest.fixture
def download_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty download cache, and no local vocabulary folder: only a download can succeed."""
    monkeypatch.delenv("STREAMCODEC_DATA_DIR", raising=False)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("STREAMCODEC_CACHE_DIR", str(cache))
    return cache


def test_download_from_local_server_is_verified_and_cached(
    toy_file: Path, server: str, download_cache: Path
) -> None:
    spec = _spec(toy_file, url=server + toy_file.name)
    assert load_vocabulary_file(spec) == toy_file.read_bytes()
    assert (download_cache / toy_file.name).read_bytes() == toy_file.read_bytes()
    # Second time from the cache, even with the server gone.
    offline = _spec(toy_file, url="http://127.0.0.1:9/x")
    assert load_vocabulary_file(offline) == toy_file.read_bytes()


def test_download_with_wrong_hash_is_refused_and_not_cached(
    toy_file: Path, server: str, download_cache: Path
) -> None:
    with pytest.raises(ValueError, match="sha256"):
        load_vocabulary_file(_spec(toy_file, url=server + toy_file.name, sha256="f" * 64))
    assert not (download_cache / toy_file.name).exists()


def test_missing_everywhere_says_where_it_looked(
    monkeypatch: pytest.MonkeyPatch, toy_file: Path, tmp_path: Path
) -> None:
    monkeypatch.setenv("STREAMCODEC_DATA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("STREAMCODEC_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match=r"nowhere.*download from http://127\.0\.0\.1:9"):
        load_vocabulary_file(_spec(toy_file, url="http://127.0.0.1:9/toy.tiktoken"))


def test_importing_streamcodec_stays_cheap() -> None:
    import subprocess
    import sys

    heavy = ["numpy", "tqdm", "dask", "tokenizers", "urllib.request", "streamcodec.formats"]
    code = (
        "import sys, streamcodec\n"
        f"print([m for m in {heavy!r} if m in sys.modules])\n"
        "print(streamcodec.formats.load_vocabulary.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "load_vocabulary"]


def test_a_corrupt_tiktoken_cache_file_is_skipped_for_the_installed_copy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Regression (issue 23 §4): a corrupt file in TIKTOKEN_CACHE_DIR stopped an encoding from
    loading although a valid copy is installed; it is now skipped, with a warning naming it."""
    spec = SPECS["streamcodec_py4k"]  # a file inside the package, not a shipped vocabulary
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    corrupt = cache / hashlib.sha1(spec.download_url.encode()).hexdigest()
    corrupt.write_bytes(b"not a vocabulary\n")
    monkeypatch.delenv("STREAMCODEC_DATA_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("STREAMCODEC_CACHE_DIR", str(tmp_path / "empty-cache"))
    with pytest.warns(RuntimeWarning, match=f"skipped: {corrupt}: sha256 is"):
        data = load_vocabulary_file(spec)
    assert hashlib.sha256(data).hexdigest() == spec.sha256


def test_a_shipped_vocabulary_never_reads_the_caches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = SPECS["cl100k_base"]
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    (cache / hashlib.sha1(spec.download_url.encode()).hexdigest()).write_bytes(b"corrupt\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("STREAMCODEC_DATA_DIR", str(cache))
    data = load_vocabulary_file(spec)  # the original file, rebuilt from the package and checked
    assert hashlib.sha256(data).hexdigest() == spec.sha256
