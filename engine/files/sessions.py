"""Session transcripts: JSONL in, `User: …` / `Assistant: …` lines out.

Only `type == "message"` lines with role user or assistant count; their text blocks are
kept (thinking, tool calls, results and images dropped), whitespace-collapsed and redacted
(engine/redaction.py).
Each rendered line remembers its JSONL line number (citations point there) and its
message timestamp (temporal decay uses it).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
from pathlib import Path

from ..redaction import redact
from .workspace import SourceFile

ARCHIVE_RE = re.compile(r"\.jsonl\.(reset|deleted)\.\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{3})?Z$")


def list_session_files(sessions_dir: Path, include_archives: bool = False) -> list[SourceFile]:
    out: list[SourceFile] = []
    try:
        entries = sorted(os.scandir(sessions_dir), key=lambda e: e.name)
    except OSError:
        return out
    for e in entries:
        try:
            if not stat.S_ISREG(e.stat(follow_symlinks=False).st_mode):
                continue
        except OSError:
            continue
        name = e.name
        live = name.endswith(".jsonl")
        archive = bool(ARCHIVE_RE.search(name))
        if live or (include_archives and archive):
            out.append(SourceFile(f"sessions/{name}", e.path, "sessions"))
    return out


# --------------------------------------------------------------------------- parsing


def _text_of(content) -> str:
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    else:
        return ""
    cleaned = [" ".join(p.split()) for p in parts]
    return " ".join(p for p in cleaned if p)


def _timestamp_ms(*values) -> float:
    for v in values:
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)) and v == v and v > 0:
            return float(v) * 1000.0 if v < 1e11 else float(v)
        if isinstance(v, str) and v.strip():
            try:
                parsed = dt.datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=dt.timezone.utc)
            return parsed.timestamp() * 1000.0
    return 0.0


class Transcript:
    def __init__(self, lines: list[str], line_map: list[int], timestamps_ms: list[float], messages: int):
        self.lines = lines  # rendered "User: …" / "Assistant: …"
        self.line_map = line_map  # 1-based JSONL line of each rendered line
        self.timestamps_ms = timestamps_ms
        self.messages = messages  # JSONL lines seen (for delta tracking)

    @property
    def content(self) -> str:
        return "\n".join(self.lines)


def parse_transcript(data: bytes) -> Transcript:
    lines: list[str] = []
    line_map: list[int] = []
    stamps: list[float] = []
    raw_lines = data.split(b"\n")
    for lineno, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") != "message":
            continue
        msg = entry.get("message")
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            continue
        text = _text_of(msg.get("content"))
        if not text:
            continue
        text = redact(text)
        lines.append(("User: " if msg["role"] == "user" else "Assistant: ") + text)
        line_map.append(lineno)
        stamps.append(_timestamp_ms(msg.get("timestamp"), entry.get("timestamp")))
    return Transcript(lines, line_map, stamps, data.count(b"\n"))


def render_range(tr: Transcript, start: int | None, count: int | None) -> str:
    """Rendered lines whose JSONL line numbers fall in [start, start+count-1] (memory_get on a session hit)."""
    lo = start or 1
    hi = lo + count - 1 if count else None
    return "\n".join(text for text, ln in zip(tr.lines, tr.line_map) if ln >= lo and (hi is None or ln <= hi))
