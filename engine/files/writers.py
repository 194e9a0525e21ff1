"""Who wrote a memory file: clawmem's own writes leave a note (the file's hash after the write
and this process's writer name) in `data_dir()/journal/writers/`; the journal credits a version
whose hash matches its file's note to that writer, any other to "outside"."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .. import paths
from .fsutil import atomic_write, sha256_hex

OUTSIDE = "outside"
# Who this process is when it writes a memory file; the app and the MCP server set it.
WRITER = "clawmem"


def name_this_process(name: str) -> None:
    """What the journal credits this process's writes to ("app", "agent (MCP)")."""
    global WRITER
    WRITER = name


def _note_file(abspath: Path, notes: Path | None = None, real: str | None = None) -> Path:
    key = sha256_hex(os.fsencode(real or os.path.realpath(abspath)))[:24]
    return (notes or paths.data_dir() / "journal" / "writers") / f"{key}.json"


def note_write(abspath: Path, writer: str | None = None) -> None:
    """Leave a note that `writer` (default: this process) just wrote `abspath`: the file's
    hash as it is now. Never raises: a missing note only makes the journal say "outside"."""
    try:
        data = Path(abspath).read_bytes()
        note = _note_file(Path(abspath))
        paths.private_dir(note.parent)
        atomic_write(note, json.dumps({"hash": sha256_hex(data), "writer": writer or WRITER, "ts": time.time()}), mode=0o600)
    except OSError:
        pass


def writer_of(abspath: Path, digest: str | None, notes: Path | None = None, real: str | None = None) -> str:
    try:
        note = json.loads(_note_file(abspath, notes, real).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return OUTSIDE
    return (note.get("writer") or OUTSIDE) if note.get("hash") == digest else OUTSIDE
