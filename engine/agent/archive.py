"""Session archives: `memory/YYYY-MM-DD-slug.md` from a transcript, as OpenClaw's session-memory hook writes them.

The file holds the session's metadata and its last messages as `User: …` / `Assistant: …`
lines (parsed and secret-redacted by sessions.py). The slug comes from the first user
message, with no model call: a few lowercase ASCII words, or the time (HHMM) when the
message has none (CJK-only text, say). An existing file is never replaced: a second
archive of the same day and slug gets `-2`, `-3`, …
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..files import memfile
from ..files.sessions import parse_transcript
from ..errors import ClawmemError
from ..text import printable

RECENT_MESSAGES = 15  # OpenClaw's default for the hook
SLUG_WORDS = 4
SLUG_MAX_CHARS = 40
# words that say nothing about a conversation: left out of slugs while others remain
FILLER = frozenset(
    "a an the and or but if of to in on at for with from by about into is are was were be been am do does did "
    "i me my we our you your it its this that these those can could would should will shall may might must "
    "please hi hello hey thanks thank ok okay so just let lets what how why when where which who".split()
)


class ArchiveError(ClawmemError, ValueError):
    """The transcript cannot be archived; the message says why, in one line."""


@dataclass
class Archive:
    path: str  # workspace-relative, "/" separators
    abspath: Path
    slug: str
    date: str
    messages: int  # conversation lines written

    def as_json(self) -> dict:
        return {"path": self.path, "abspath": str(self.abspath), "slug": self.slug, "date": self.date, "messages": self.messages}


def slugify(text: str, *, max_words: int = SLUG_WORDS, drop_filler: bool = True) -> str:
    """Lowercase ASCII words joined by `-` (accents folded: café → cafe); "" when there are none."""
    text = re.sub(r"['\u2019]", "", text)  # let's -> lets, not let + s
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)
    telling = [w for w in words if w not in FILLER] if drop_filler else words
    slug = "-".join((telling or words)[:max_words])
    return slug[:SLUG_MAX_CHARS].rstrip("-")


def _session_id(data: bytes) -> str | None:
    """The id in the transcript's header line (`{"type": "session", "id": …}`), if any."""
    for raw in data.split(b"\n", 5)[:5]:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("type") == "session" and isinstance(entry.get("id"), str):
            return entry["id"]
    return None


def _is_jsonl(data: bytes) -> bool:
    for raw in data.split(b"\n"):
        if raw.strip():
            try:
                if isinstance(json.loads(raw), dict):
                    return True
            except ValueError:
                pass
    return False


def archive_session(workspace: Path, transcript: Path, *, slug: str | None = None, now: dt.datetime | None = None) -> Archive:
    """Write the session summary file for `transcript` into `workspace/memory/`."""
    transcript = Path(transcript)
    try:
        data = transcript.read_bytes()
    except FileNotFoundError:
        raise ArchiveError(f"{transcript}: no such file; give the path of a session transcript (.jsonl)") from None
    except IsADirectoryError:
        raise ArchiveError(f"{transcript}: is a folder; give the path of a session transcript (.jsonl)") from None
    except OSError as exc:
        raise ArchiveError(f"{transcript}: cannot read it ({exc.strerror}); check the permissions") from None
    if not _is_jsonl(data):
        raise ArchiveError(f"{transcript}: not a JSONL session transcript (no line is a JSON object)")
    tr = parse_transcript(data)
    # slash commands (/new, /reset) are instructions to the gateway, not conversation
    kept = [(line, ts) for line, ts in zip(tr.lines, tr.timestamps_ms) if not line.split(": ", 1)[1].startswith("/")]
    if not kept:
        raise ArchiveError(f"{transcript}: no user or assistant messages to archive")
    if slug is not None:
        chosen = slugify(slug, max_words=12, drop_filler=False)  # the user's words, only made safe
        if not chosen:
            raise ArchiveError(f"--slug: {slug!r} has no ASCII letters or digits; use words like vendor-pitch")
    else:
        first_user = next((line.split(": ", 1)[1] for line, _ in kept if line.startswith("User: ")), "")
        chosen = slugify(first_user)
    last_ms = next((ts for _, ts in reversed(kept) if ts), 0.0)
    when = dt.datetime.fromtimestamp(last_ms / 1000).astimezone() if last_ms else (now or dt.datetime.now()).astimezone()
    chosen = chosen or when.strftime("%H%M")
    date = when.date().isoformat()

    ws = Path(workspace)
    if not ws.is_dir():
        raise ArchiveError(f"{ws}: workspace not found; create it (clawmem offers to) or pass --workspace")
    recent = [line for line, _ in kept[-RECENT_MESSAGES:]]
    session_id = _session_id(data)
    lines = [
        f"# Session: {when.strftime('%Y-%m-%d %H:%M:%S')} {when.tzname()}",
        "",
        f"- **Session file**: {transcript.resolve()}",
        f"- **Session ID**: {session_id or 'unknown'}",
        "- **Source**: clawmem archive",
        "",
        "## Conversation Summary",
        "",
        *recent,
        "",
    ]
    try:
        # what a transcript holds is copied as text: an escape, a bidi override, a bare CR shown visibly
        got = memfile.create_new(ws, "memory", f"{date}-{chosen}", printable("\n".join(lines)), writer="clawmem archive")
    except memfile.Refused as exc:
        raise ArchiveError(str(exc)) from None
    return Archive(got.rel, got.path, got.path.stem[len(date) + 1 :], date, len(recent))
