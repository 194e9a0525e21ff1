"""Fetching `hf:owner/repo/file.gguf` models into the cache dir.

The file is streamed to `<file>.part` and renamed into place only when complete, so a
half-downloaded model is never loaded. An interrupted download resumes with an HTTP Range
request. The endpoint is `HF_ENDPOINT` when set (a mirror, or 127.0.0.1 in the tests).
Offline, the user gets one line saying what failed and what to do, never a hang: the
connect timeout is short and every read has a timeout.

The hub answers `resolve/main/<file>` of a large (LFS) file with a redirect whose
`X-Linked-Etag` is the file's sha256; when it does, the finished file must hash to it, or the
partial file is removed and the download fails (a corrupt model is never put in place).

Only `clawmem index` with an explicit local provider, and `clawmem model pull`, download; a
search never does.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from pathlib import Path
from typing import Callable
from urllib.parse import quote

from .. import paths
from ..errors import DownloadError  # noqa: F401 (raised here, caught as download.DownloadError too)

DEFAULT_ENDPOINT = "https://huggingface.co"
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 60.0


def parse_uri(uri: str) -> tuple[str, str, str]:
    """`hf:owner/repo/path/to/file.gguf` -> (owner, repo, path/to/file.gguf)."""
    rest = uri[3:] if uri.lower().startswith("hf:") else uri
    parts = [p for p in rest.strip().strip("/").split("/") if p]
    if len(parts) < 3 or any(p in (".", "..") for p in parts):
        raise DownloadError(f"local.modelPath: {uri!r} is not an hf: URI of the form hf:owner/repo/file.gguf")
    return parts[0], parts[1], "/".join(parts[2:])


def default_cache_dir() -> Path:
    return paths.cache_dir() / "models"


def cached_path(uri: str, cache_dir: Path | None = None) -> Path:
    """Where the model of an hf: URI lives once downloaded."""
    owner, repo, file = parse_uri(uri)
    return Path(cache_dir or default_cache_dir()) / "hf" / owner / repo / file


def url_for(uri: str) -> str:
    owner, repo, file = parse_uri(uri)
    base = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    return f"{base}/{quote(owner)}/{quote(repo)}/resolve/main/{quote(file)}"


Progress = Callable[[int, int | None], None]  # (bytes done, total bytes or None)


def download(uri: str, cache_dir: Path | None = None, on_progress: Progress | None = None) -> Path:
    """Fetch the model of `uri` unless it is already there; returns its path.

    Raises DownloadError with a one-line message on any failure; the partial file is kept
    so the next attempt resumes.
    """
    import httpx

    dest = cached_path(uri, cache_dir)
    if dest.is_file():
        return dest
    paths.private_dir(dest.parent)
    part = dest.with_name(dest.name + ".part")
    url = url_for(uri)
    headers = {"User-Agent": "clawmem"}
    token = os.environ.get("HF_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    timeout = httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
    with open(part, "ab") as fh:
        # two processes fetching the same model: the second waits, then finds the file
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            if dest.is_file():
                return dest
            try:
                with httpx.Client(timeout=timeout, follow_redirects=True, headers=headers) as client:
                    expected = _fetch(client, url, uri, fh, part, on_progress)
            except httpx.TimeoutException as exc:
                raise DownloadError(_offline(uri, f"timed out ({type(exc).__name__})")) from None
            except httpx.TransportError as exc:
                kept = part.stat().st_size
                if kept:  # cut off part-way: what arrived is kept for the next attempt
                    raise DownloadError(f"cannot download {uri}: {_reason(exc)}; {kept} bytes kept, run the command again to resume") from None
                raise DownloadError(_offline(uri, _reason(exc))) from None
            if expected:
                got = _sha256(part)
                if got != expected:
                    part.unlink()  # resuming would only extend the bad bytes
                    raise DownloadError(f"cannot download {uri}: checksum mismatch (got sha256 {got[:12]}…, the hub says {expected[:12]}…); "
                                        "the partial file was removed, run the command again")
            os.replace(part, dest)
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
    return dest


def _fetch(client, url: str, uri: str, fh, part: Path, on_progress: Progress | None) -> str | None:
    """Stream the file into `fh`; returns the sha256 the hub names for it (None if it names none)."""
    have = part.stat().st_size
    req_headers = {"Range": f"bytes={have}-"} if have else {}
    with client.stream("GET", url, headers=req_headers) as resp:
        if resp.status_code == 416 and have:
            # the partial file is already whole (or the server disagrees): start over
            fh.truncate(0)
            fh.seek(0)
            have = 0
            resp.close()
            return _fetch(client, url, uri, fh, part, on_progress)
        if resp.status_code in (401, 403):
            raise DownloadError(f"cannot download {uri}: {resp.status_code} access denied at {url}; "
                                "the model may be gated (set HF_TOKEN) or use local.modelPath with a local file")
        if resp.status_code == 404:
            raise DownloadError(f"cannot download {uri}: 404 not found at {url}; check the hf: URI in local.modelPath")
        if resp.status_code >= 400:
            raise DownloadError(f"cannot download {uri}: HTTP {resp.status_code} from {url}; try again later or set local.modelPath to a local file")
        expected = _linked_sha256(resp)
        if resp.status_code == 206:
            total = _total_from_range(resp.headers.get("content-range"))
        else:
            # the server ignored the range: the body is the whole file
            fh.truncate(0)
            fh.seek(0)
            have = 0
            total = _int(resp.headers.get("content-length"))
        fh.seek(0, os.SEEK_END)
        done = have
        if on_progress:
            on_progress(done, total)
        for block in resp.iter_bytes():  # as the bytes arrive, so a cut connection keeps them
            fh.write(block)
            done += len(block)
            if on_progress:
                on_progress(done, total)
        fh.flush()
        os.fsync(fh.fileno())
        if total is not None and done != total:
            raise DownloadError(f"cannot download {uri}: the connection ended at {done} of {total} bytes; run the command again to resume")
    return expected


def _linked_sha256(resp) -> str | None:
    """The sha256 the hub gives an LFS file (X-Linked-Etag, on the redirect or the answer)."""
    for r in [*resp.history, resp]:
        tag = (r.headers.get("x-linked-etag") or "").strip().removeprefix("W/").strip('"').lower()
        if re.fullmatch(r"[0-9a-f]{64}", tag):
            return tag
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cached_models(cache_dir: Path | None = None) -> list[dict]:
    """Models in the cache: {uri, path, bytes, complete} (a `.part` is an unfinished download)."""
    root = Path(cache_dir or default_cache_dir()) / "hf"
    out = []
    for f in sorted(root.rglob("*")) if root.is_dir() else []:
        if not f.is_file():
            continue
        rel = f.relative_to(root).as_posix()
        complete = not rel.endswith(".part")
        out.append({"uri": "hf:" + rel.removesuffix(".part"), "path": str(f), "bytes": f.stat().st_size, "complete": complete})
    return out


def _total_from_range(value: str | None) -> int | None:
    # "bytes 100-199/200"
    if value and "/" in value:
        return _int(value.rsplit("/", 1)[1])
    return None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text


def _offline(uri: str, reason: str) -> str:
    return f"cannot download {uri}: {reason}; check the network or set local.modelPath to a local file"
