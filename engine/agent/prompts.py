"""The pre-compaction memory flush: the prompts an agent loop runs before it compacts.

Before OpenClaw compacts a long session it runs one silent agent turn that asks the model to
write what should outlast the compaction into today's daily log. `flush_plan()` builds that
turn's system and user prompts so any agent loop can run it: today's date in place of
YYYY-MM-DD, the safety rules (one target file, append only, the bootstrap files read-only,
no timestamped copies, NO_REPLY when there is nothing to keep) and a `Current time:` line.
Custom prompts from OpenClaw's `compaction.memoryFlush` are used as they are, with any
missing safety rule appended, as OpenClaw does. The wording here is ours.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ..config import openclaw_agent_entries, read_openclaw_json

SILENT_TOKEN = "NO_REPLY"

TARGET_HINT = "Write lasting memories to memory/YYYY-MM-DD.md and nowhere else (create the memory/ folder if it is missing)."
APPEND_HINT = "If memory/YYYY-MM-DD.md already exists, add to its end only: never rewrite or remove what is already in it."
READ_ONLY_HINT = ("MEMORY.md, DREAMS.md, SOUL.md, TOOLS.md and AGENTS.md are read-only during this turn: "
                  "do not edit, replace or rewrite them.")
NO_VARIANTS_HINT = "Do not create timestamped copies such as memory/YYYY-MM-DD-HHMM.md; the daily log is always memory/YYYY-MM-DD.md."
SAFETY_HINTS = (TARGET_HINT, APPEND_HINT, READ_ONLY_HINT, NO_VARIANTS_HINT)
SILENT_HINT = f"If there is nothing worth keeping, reply with {SILENT_TOKEN} and nothing else."

# How an agent reads a memory_search reply's `absent` (the search's verdict that this memory
# probably does not hold the answer: the results, if any, are shown, flagged)
SEARCH_ABSENT_RULE = (
    "When a memory_search reply has `absent`, your memory probably does not hold the answer (`absent.reason` "
    "says why): answer from a result only if it plainly says what was asked; otherwise say you do not remember, "
    "and never present a weak result as the answer."
)

DEFAULT_PROMPT = " ".join((
    "Memory flush before compaction: this session will soon be compacted and what exists only in the conversation will be lost.",
    "Save the facts, decisions, preferences and open tasks worth remembering now.",
    *SAFETY_HINTS,
    SILENT_HINT,
))
DEFAULT_SYSTEM_PROMPT = " ".join((
    "Memory flush turn before compaction.",
    "The session is close to automatic compaction; put lasting memories on disk now.",
    *SAFETY_HINTS,
    f"You may reply, but {SILENT_TOKEN} is usually the right answer.",
))


@dataclass
class FlushPlan:
    system_prompt: str
    prompt: str
    date: str  # YYYY-MM-DD, the user's local date
    target: str  # memory/<date>.md
    current_time: str
    source: str  # "default" or where the custom prompts came from
    enabled: bool = True  # OpenClaw's memoryFlush.enabled (the prompts are printed either way)
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"systemPrompt": self.system_prompt, "prompt": self.prompt, "date": self.date, "targetFile": self.target,
                "currentTime": self.current_time, "source": self.source, "enabled": self.enabled, "warnings": self.warnings}


def with_safety_hints(text: str) -> str:
    """`text` with every safety rule it does not already state appended (OpenClaw's rule: verbatim check)."""
    out = text.strip()
    for hint in SAFETY_HINTS:
        if hint not in out:
            out = f"{out}\n\n{hint}" if out else hint
    if SILENT_TOKEN not in out:
        out = f"{out}\n\n{SILENT_HINT}"
    return out


def _now_in_user_zone(data: dict, now: dt.datetime | None, warnings: list[str]) -> dt.datetime:
    """Now in `agents.defaults.userTimezone` when OpenClaw names a valid one, else the local zone."""
    now = (now or dt.datetime.now()).astimezone()
    defaults = (data.get("agents") or {}).get("defaults") if isinstance(data.get("agents"), dict) else None
    zone = defaults.get("userTimezone") if isinstance(defaults, dict) else None
    if not isinstance(zone, str) or not zone.strip():
        return now
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return now.astimezone(ZoneInfo(zone.strip()))
    except (ZoneInfoNotFoundError, ValueError):
        warnings.append(f"agents.defaults.userTimezone: unknown time zone {zone!r}; using the local one")
        return now


def _flush_settings(data: dict, agent_id: str) -> tuple[dict, str]:
    """The memoryFlush table that applies to `agent_id` (its own entry wins) and where it is."""
    for entry in openclaw_agent_entries(data):
        comp = entry.get("compaction")
        if entry["id"] == agent_id and isinstance(comp, dict) and isinstance(comp.get("memoryFlush"), dict):
            return comp["memoryFlush"], f"agents.list[{agent_id}].compaction.memoryFlush"
    agents = data.get("agents") if isinstance(data.get("agents"), dict) else {}
    defaults = agents.get("defaults") if isinstance(agents.get("defaults"), dict) else {}
    comp = defaults.get("compaction") if isinstance(defaults.get("compaction"), dict) else {}
    flush = comp.get("memoryFlush")
    return (flush, "agents.defaults.compaction.memoryFlush") if isinstance(flush, dict) else ({}, "")


def flush_plan(agent_id: str = "main", *, day: dt.date | None = None, now: dt.datetime | None = None) -> FlushPlan:
    data, path, problem = read_openclaw_json()
    warnings = [problem] if problem else []
    settings, where = _flush_settings(data, agent_id)
    local_now = _now_in_user_zone(data, now, warnings)
    date = (day or local_now.date()).isoformat()

    def custom(key: str) -> str | None:
        value = settings.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            warnings.append(f"{path}: {where}.{key}: expected a string; using clawmem's default prompt")
            return None
        return value.strip() or None

    prompt, system = custom("prompt"), custom("systemPrompt")
    used = [k for k, v in (("prompt", prompt), ("systemPrompt", system)) if v]
    source = f"{path}: {where}." + " and .".join(used) if used else "default"
    prompt = with_safety_hints(prompt or DEFAULT_PROMPT).replace("YYYY-MM-DD", date)
    system = with_safety_hints(system or DEFAULT_SYSTEM_PROMPT).replace("YYYY-MM-DD", date)
    time_line = f"Current time: {local_now.strftime('%A %Y-%m-%d %H:%M')} ({local_now.tzname()})"
    if "Current time:" not in prompt:
        prompt = f"{prompt}\n{time_line}"
    return FlushPlan(system, prompt, date, f"memory/{date}.md", time_line, source,
                     enabled=settings.get("enabled") is not False, warnings=warnings)
