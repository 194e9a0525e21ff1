"""What an agent loads at session start (OpenClaw's bootstrap): MEMORY.md (else memory.md;
main/private sessions only), today's and yesterday's daily logs, each within OpenClaw's
per-file cap and all of them within its total cap.

OpenClaw cuts a file over its cap without a word, so agents lose context silently; here
every cut keeps the head and the tail with a visible marker in the text, and the JSON says
what was cut, in characters and lines.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from ..files import memfile
from ..files.conflicts import daily_log_path, memory_file
from ..errors import BadValue

FILE_CAP = 20000  # agents.defaults.bootstrapMaxChars
TOTAL_CAP = 60000  # agents.defaults.bootstrapTotalMaxChars
HEAD_SHARE, TAIL_SHARE = 0.7, 0.2  # of a file's cap: the start matters most, the end is the latest


def caps(cfg) -> tuple[int, int, str]:
    """(per-file cap, total cap, where they came from): OpenClaw's config when it sets them."""
    per_file, total, source = FILE_CAP, TOTAL_CAP, "OpenClaw defaults"
    if cfg.openclaw_file:
        import json5

        try:
            data = json5.loads(Path(cfg.openclaw_file).read_text(encoding="utf-8"))
            defaults = data["agents"]["defaults"]
        except Exception:  # not readable or no agents.defaults: config.py already warns about the file
            return per_file, total, source
        for key in ("bootstrapMaxChars", "bootstrapTotalMaxChars"):
            value = defaults.get(key) if isinstance(defaults, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                if key == "bootstrapMaxChars":
                    per_file = value
                else:
                    total = value
                source = f"{cfg.openclaw_file}"
    return per_file, total, source


def cut(text: str, cap: int) -> tuple[str, str]:
    """(head, tail) of `text` within `cap` characters, cut at line ends where possible, else
    between words (a cut word reads as a different word), else where the cap falls."""
    at = int(cap * HEAD_SHARE)
    nl = text.rfind("\n", 0, at)
    if nl < 0:
        nl = text.rfind(" ", 0, at)
    head_end = nl + 1 if nl >= 0 else at
    tail_start = len(text) - int(cap * TAIL_SHARE)
    for sep in ("\n", " "):
        nl = text.find(sep, tail_start - 1)
        if 0 <= nl < len(text) - 1:
            tail_start = nl + 1
            break
    return text[:head_end], text[max(tail_start, head_end):]


def session_context(engine, *, max_chars: int | None = None, session: str = "main", today: dt.date | None = None) -> dict:
    """The session-start context as JSON: `files` (one entry per candidate file) and `text`
    (Markdown ready for a system prompt)."""
    if session not in ("main", "group"):
        raise BadValue(f"session: expected main or group, got {session!r}")
    per_file, total, source = caps(engine.cfg)
    if max_chars is not None:
        if max_chars < 1:
            raise BadValue(f"max-chars: expected an integer >= 1, got {max_chars!r}")
        per_file, source = max_chars, "--max-chars"
    ws = engine.workspace
    day = today or dt.date.today()
    wanted: list[tuple[Path, str]] = []
    if session == "main":
        wanted.append((memory_file(ws), "long-term memory"))
    wanted.append((daily_log_path(ws, day), "today"))
    wanted.append((daily_log_path(ws, day - dt.timedelta(days=1)), "yesterday"))

    budget = total
    entries: list[dict[str, Any]] = []
    parts: list[str] = []
    for path, role in wanted:
        rel = path.relative_to(ws).as_posix()
        try:
            snap = memfile.read(ws, path)
        except (memfile.Refused, OSError) as exc:
            why = str(exc) if isinstance(exc, memfile.Refused) else f"cannot read ({exc.strerror or exc})"
            entries.append({"path": rel, "role": role, "exists": False, "chars": 0, "lines": 0, "includedChars": 0,
                            "truncated": False, "error": why})
            continue
        if not snap.exists:
            entries.append({"path": rel, "role": role, "exists": False, "chars": 0, "lines": 0, "includedChars": 0, "truncated": False})
            continue
        text = snap.text.replace("\r\n", "\n").replace("\r", "\n")  # as a text file reads it
        struck = 0
        if role == "long-term memory":  # a fact superseded or retired is no longer one to act on
            from ..consolidate.promote import standing_text

            text, struck = standing_text(text)
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        cap = min(per_file, budget)
        entry: dict[str, Any] = {"path": rel, "role": role, "exists": True, "chars": len(text), "lines": lines}
        if struck:
            entry["supersededLeftOut"] = struck
        if len(text) <= cap:
            body = text
            entry.update(includedChars=len(text), truncated=False)
        elif cap <= 0:
            body = ""
            entry.update(includedChars=0, truncated=True, cutChars=len(text), cutLines=lines,
                         reason=f"the total cap ({total} chars) was used up by the files before it")
            parts.append(f"## {rel} ({role})\n\n[omitted: {len(text)} chars, {lines} lines; the total cap of {total} chars "
                         f"is used up. Read it with memory_get(\"{rel}\").]\n")
            entries.append(entry)
            continue
        else:
            head, tail = cut(text, cap)
            kept_lines = head.count("\n") + tail.count("\n") + (0 if tail.endswith("\n") or not tail else 1)
            cut_chars, cut_lines = len(text) - len(head) - len(tail), lines - kept_lines
            why = "per-file" if cap == per_file else "remaining total"
            marker = (f"\n[… {cut_chars} of {len(text)} chars ({cut_lines} of {lines} lines) cut here: {rel} is over the "
                      f"{why} cap of {cap} chars. Read the rest with memory_get(\"{rel}\"). …]\n\n")
            body = head + ("" if head.endswith("\n") or not head else "\n") + marker + tail
            entry.update(includedChars=len(head) + len(tail), truncated=True, cutChars=cut_chars, cutLines=cut_lines,
                         reason=f"over the {why} cap of {cap} chars")
        budget -= entry["includedChars"]
        entries.append(entry)
        parts.append(f"## {rel} ({role})\n\n{body.rstrip()}\n")
    team = _team_notes(engine, budget)
    if team is not None and team.get("text"):
        parts.append(f"## Team notes (the fleet's notebook, newest first)\n\n{team['text']}\n")
    head = f"# Memory context ({session} session, {day.isoformat()})\n"
    cut_files = [e for e in entries if e.get("truncated")]
    if cut_files:
        head += "\n" + "\n".join(f"> Truncated: {e['path']}: {e['cutChars']} chars ({e['cutLines']} lines) left out." for e in cut_files) + "\n"
    struck = [e for e in entries if e.get("supersededLeftOut")]
    if struck:  # said, so nobody takes the missing lines for lost ones
        head += "\n" + "\n".join(f"> Left out: {e['path']}: {e['supersededLeftOut']} superseded or retired fact(s), "
                                  "kept struck in the file (clawmem promote --reinstate KEY restores one)." for e in struck) + "\n"
    refused = [e for e in entries if e.get("error")]
    if refused:  # said in the text too, not only in --json: "no memory files yet" would be false
        head += "\n" + "\n".join(f"> Not read: {e['path']}: {e['error']}" for e in refused) + "\n"
    if team is not None and team.get("truncated"):
        head += (f"\n> Truncated: team notes: {team['notes'] - team['included']} of {team['notes']} notes (the oldest) left out; "
                 "`clawmem fleet notes` lists them all.\n")
    if team is not None and team.get("error"):
        head += f"\n> Not read: team notes: {team['error']}\n"
    if not any(e["exists"] for e in entries) and not refused:
        parts.append("_No memory files yet._\n")
    return {
        "session": session,
        "date": day.isoformat(),
        "maxChars": per_file,
        "totalMaxChars": total,
        "capsFrom": source,
        "files": entries,
        "includedChars": sum(e["includedChars"] for e in entries) + (team or {}).get("includedChars", 0),
        **({"team": {k: v for k, v in team.items() if k != "text"}} if team is not None else {}),
        "text": "\n".join([head, *parts]),
    }


def _team_notes(engine, budget: int) -> dict | None:
    """The fleet's team notes within their cap and what is left of the total (None: no fleet
    set); a fleet that cannot be read is said, never fatal to the context."""
    if not engine.cfg["fleet.url"]:
        return None
    from ..fleet import notes as fleet

    try:
        return fleet.team_for_context(engine, max(0, min(fleet.TEAM_CONTEXT_CAP, budget)))
    except Exception as exc:  # the fleet down, psycopg missing: the files' context still stands
        return {"error": " ".join(str(exc).split()) or type(exc).__name__, "includedChars": 0}
