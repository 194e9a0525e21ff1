"""The agent tools as plain functions over an Engine: the MCP server's
tools, usable from Python too.

    memory_search(engine, query, maxResults=None, minScore=None)   -> OpenClaw's payload
    memory_get(engine, path, from_=None, lines=None)                -> {path, text}
    memory_append(engine, text, heading=None)  -> {path, startLine, endLine, citation}
    memory_remember(engine, text, section=None) -> {path, startLine, endLine, citation}

Payloads are OpenClaw's, key for key (keys it leaves undefined are left out: `citation` with
citations off, `fallback` when no fallback served), plus ours: `mode`, `hidden`, `dateRange`,
`stale`. Failures come back as data, never raised, so an agent can say what happened:
memory_search `{results: [], disabled, unavailable, error, warning, action}`, memory_get
`{path, text: "", disabled, error}`, the writes `{error, disabled?}`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from typing import Any

from ..files import conflicts as files, memfile
from ..files.conflicts import add_bullet, find_bullet, memory_file
from ..config import ConfigError
from ..errors import AccessDenied, BadValue, IndexUnavailable, SearchDisabled
from ..index.lock import LockBusy
from ..search.options import SearchRequest
from ..search.searcher import citation, disabled_reason
from ..index.store import DatabaseError
from ..redaction import redact_counted
from ..text import character_name, refused_character

QUOTA_WARNING = "Memory search is unavailable because the embedding provider quota is exhausted."
QUOTA_ACTION = "Top up or switch embedding provider, then retry memory_search."
ERROR_WARNING = "Memory search is unavailable due to an embedding/provider error."
ERROR_ACTION = "Check embedding provider configuration and retry memory_search."
DEGRADED_WARNING = "Vector search is unavailable, so these are keyword-only results"
INDEX_WARNING = "Memory search is unavailable because the memory index is missing or unreadable."
INDEX_ACTION = "Run `clawmem index` (or keep `clawmem watch` or `clawmem mcp` running), then retry memory_search."
DISABLED_WARNING = "Memory search is disabled."
DISABLED_ACTION = "Tell the user memory search is turned off; they can set enabled = true (memorySearch.enabled in openclaw.json) to turn it on."
FLEET_WARNING = ("Fleet search is unavailable: the fleet is not set up, or its database refused or did not answer; "
                 "this agent's own memory is not affected.")
FLEET_ACTION = ("Retry memory_search without corpus \"fleet\" to search this agent's own memory, and tell the user the "
                "fleet did not answer if it was expected; the error says why (a revoked role needs a new grant from the fleet's owner).")
DEFAULT_SECTION = "Notes"
WRITE_OFF = "memory writes are turned off (mcp.write = false in the clawmem config)"


def _is_quota(message: str) -> bool:
    # OpenClaw's test, except that 429 must be a status, not digits of a port (":42983") in a URL
    # or of a path (/tmp/pytest-429/) a message names
    return bool(re.search(r"insufficient_quota|quota|(?<![\w:./-])429(?![\w/-])", message.lower()))


def _number(name: str, value: Any, integer: bool = False) -> float | int | None:
    """A tool number: a JSON number or a numeric string (as OpenClaw's parseFloat); None when absent."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise BadValue(f"{name}: expected a number, got {value!r}")
    try:
        num = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise BadValue(f"{name}: expected a number, got {value!r}") from None
    if math.isnan(num) or math.isinf(num):
        raise BadValue(f"{name}: expected a finite number, got {value!r}")
    return int(num) if integer else num


def _line_number(name: str, value: Any, least: int) -> int | None:
    """A line number or count: a whole number from `least` (as the CLI's --from/--lines), never
    a fraction silently cut nor a 0 or -1 read as something else."""
    num = _number(name, value)
    if num is None:
        return None
    if num != int(num) or num < least:
        want = "a whole number from 1 (the first line is 1)" if least else "a whole number of lines (0: to the end)"
        raise BadValue(f"{name}: expected {want}, got {value!r}; nothing was read")
    return int(num)


def _unavailable(error: str) -> dict:
    # OpenClaw knows two causes (quota, provider); a missing or unreadable index is a third, said as such
    # a message that says to run `clawmem index` is about the index, whatever its path holds
    index = "clawmem index" in error
    quota = not index and _is_quota(error)
    warning = QUOTA_WARNING if quota else INDEX_WARNING if index else ERROR_WARNING
    action = QUOTA_ACTION if quota else INDEX_ACTION if index else ERROR_ACTION
    return {"results": [], "disabled": True, "unavailable": True, "error": error, "warning": warning, "action": action,
            "debug": {"warning": warning, "action": action, "error": error}}


def _fleet_unavailable(error: str) -> dict:
    """A fleet search that failed: the fleet named as the cause, never the embedding provider."""
    return {"results": [], "unavailable": True, "corpus": "fleet", "error": error, "warning": FLEET_WARNING,
            "action": FLEET_ACTION, "debug": {"warning": FLEET_WARNING, "action": FLEET_ACTION, "error": error}}


def disabled_payload(error: str) -> dict:
    """memory_search's answer while `enabled = false`: the unavailable shape, saying disabled."""
    return {"results": [], "disabled": True, "unavailable": True, "error": error, "warning": DISABLED_WARNING,
            "action": DISABLED_ACTION, "debug": {"warning": DISABLED_WARNING, "action": DISABLED_ACTION, "error": error}}


def memory_search(engine, query: Any, maxResults: Any = None, minScore: Any = None, *,
                  max_results: Any = None, min_score: Any = None, corpus: Any = None, private: Any = None,
                  agents: Any = None, **options: Any) -> dict:
    """memory_search: OpenClaw's payload plus ours; never raises.

    `options` go to Engine.search (after, before, now, explain, show_hidden, date_filter).
    Citations (`citations` = on/off/auto; auto is on: an agent's own session is direct)
    set `citation` (`Source: path#L3-L9`) and end each snippet with it. `private` (true or "true")
    keeps this search out of the recall history `clawmem promote` ranks. `agents` (a list of
    agent ids, with `corpus: "fleet"`) searches only those agents of the fleet.
    """
    started = time.perf_counter()
    why_off = disabled_reason(engine.cfg)
    if why_off:
        return disabled_payload(why_off)
    text = query.strip() if isinstance(query, str) else ""
    if not text:
        return {"results": [], "error": "query required: give the words to search the memory files for"}
    try:
        mr = _number("maxResults", maxResults if maxResults is not None else max_results, integer=True)
        ms = _number("minScore", minScore if minScore is not None else min_score)
        if mr is not None and not 1 <= mr <= 200:
            raise BadValue(f"maxResults: expected an integer from 1 to 200, got {mr}")
        if ms is not None and not 0 <= ms <= 1:
            raise BadValue(f"minScore: expected a number from 0 to 1, got {ms}")
    except ValueError as exc:
        return {"results": [], "error": str(exc)}
    # OpenClaw's wiki and all corpora add a compiled wiki, which clawmem has not: its memory is all there is
    if corpus not in (None, "memory", "wiki", "all"):
        if corpus != "fleet":
            return {"results": [], "error": f"corpus: expected \"memory\" or \"fleet\", got {corpus!r}"}
        if agents is not None and (not isinstance(agents, list) or not all(isinstance(a, str) and a for a in agents)):
            return {"results": [], "error": f"agents: expected a list of agent ids, got {agents!r}"}
        dates = {k: options[k] for k in ("after", "before") if options.get(k)}
        return _fleet_search(engine, text, SearchRequest(max_results=mr, min_score=ms, agents=agents, **dates), started)
    if agents is not None:
        return {"results": [], "error": "agents: picks agents of the fleet: add corpus \"fleet\""}
    try:
        store = engine.reader()
        if store is None or not store.has_schema():
            return _unavailable(f"no index yet at {engine.index_path}: run `clawmem index` (a running `clawmem mcp` or `clawmem watch` builds it)")
        res = engine.search(text, SearchRequest(max_results=mr, min_score=ms, private=private is True or str(private).lower() == "true", **options))
    except SearchDisabled as exc:
        return disabled_payload(str(exc))
    except IndexUnavailable as exc:
        return _unavailable(str(exc))
    except DatabaseError as exc:
        return _unavailable(f"{engine.index_path}: the index cannot be read ({exc}); run `clawmem index` to rebuild it")
    except ValueError as exc:
        return {"results": [], "error": str(exc)}
    except Exception as exc:  # an agent gets data, never a traceback
        return _unavailable(f"{type(exc).__name__}: {exc}")
    mode = engine.cfg["citations"]
    decorate = mode != "off"
    results = []
    for r in res["results"]:
        item = {"path": r["path"], "startLine": r["startLine"], "endLine": r["endLine"], "score": r["score"],
                "band": r["band"], "snippet": r["snippet"], "source": r["source"]}
        if decorate:
            item["citation"] = citation(r["path"], r["startLine"], r["endLine"])
            item["snippet"] = r["snippet"].strip() + "\n\n" + item["citation"]
        item["corpus"] = "memory"
        if "explain" in r:
            item["explain"] = r["explain"]
        results.append(item)
    # the engine's order is kept: the order MMR chose for variety (OpenClaw re-sorts by score)
    out: dict[str, Any] = {"results": results, "provider": res["provider"], "model": res["model"]}
    if res.get("fallback"):
        out["fallback"] = res["fallback"]
    out["citations"] = mode
    out["mode"] = res["mode"]
    out["hidden"] = res["hidden"]
    out["absent"] = res.get("absent")  # the answer is probably not in this memory (results shown flagged, or none)
    out["dateRange"] = res["dateRange"]
    out["stale"] = res["stale"]
    if res["mode"] == "keyword" and engine.plan().usable():
        # a provider that fails still leaves keyword results, and the payload says why
        why = (res.get("fallback") or {}).get("reason") or res.get("reason") or "no vectors"
        out["warning"] = f"{DEGRADED_WARNING}: {why}"
        out["action"] = INDEX_ACTION if "clawmem index" in why else QUOTA_ACTION if _is_quota(why) else ERROR_ACTION
    elif res["mode"] == "keyword" and res.get("reason"):
        out["reason"] = res["reason"]
    out["debug"] = {"backend": "clawmem", "effectiveMode": "n/a", "searchMs": round((time.perf_counter() - started) * 1000),
                    "hits": len(res["results"])}
    return out


def _team_remember(engine, text: str, section: Any, replaces: Any) -> dict:
    from ..fleet.connection import FleetError
    from ..fleet.notes import team_remember

    try:
        rid = _number("replaces", replaces, integer=True)
        return team_remember(engine, text, section if isinstance(section, str) else None, rid)
    except (ValueError, FleetError) as exc:
        return {"error": str(exc)}
    except Exception as exc:  # an agent gets data, never a traceback (psycopg missing, a driver error)
        return {"error": f"team notes need the fleet ([fleet] url, and clawmem[fleet] installed): {type(exc).__name__}: {exc}"}


def _fleet_search(engine, text: str, request: SearchRequest, started: float) -> dict:
    """memory_search over the fleet: every agent this one may read, each hit naming its agent and host."""
    from ..fleet.connection import FleetError
    from ..fleet.search import search

    try:
        res = search(engine, text, request)
    except (FleetError, ConfigError) as exc:  # no fleet, or it is down: not the embedding provider's fault
        return _fleet_unavailable(str(exc))
    except Exception as exc:  # an agent gets data, never a traceback
        return _fleet_unavailable(f"{type(exc).__name__}: {exc}")
    decorate = engine.cfg["citations"] != "off"
    results = []
    for r in res["results"]:
        item = {"path": r["ref"], "startLine": r["startLine"], "endLine": r["endLine"], "score": r["score"],
                "snippet": r["snippet"], "source": r["source"], "agent": r["agent"], "host": r["host"], "file": r["path"]}
        if decorate:
            item["citation"] = r["citation"] if r["source"] == "team" else citation(r["ref"], r["startLine"], r["endLine"])
            item["snippet"] = r["snippet"].strip() + "\n\n" + item["citation"]
        item["corpus"] = "fleet"
        results.append(item)
    out = {"results": results, "provider": res["provider"], "model": res["model"], "mode": res["mode"],
           "hidden": res["hidden"], "absent": res.get("absent"), "agents": res["agents"], "corpus": "fleet"}
    if res["notes"]:
        out["notes"] = res["notes"]
    if res.get("warning"):  # the fleet timed out: this agent's own results, said so
        out["warning"], out["fallback"] = res["warning"], res.get("fallback")
    out["debug"] = {"backend": "clawmem-fleet", "searchMs": round((time.perf_counter() - started) * 1000), "hits": len(results)}
    return out


def memory_get(engine, path: Any, from_: Any = None, lines: Any = None) -> dict:
    """memory_get: `{path, text}`; `from` a whole number from 1, `lines` a whole count (0: to the end);
    a missing allowed file is `{path, text: ""}`; refusals and failures come back as
    `{path, text: "", disabled: true, error}`."""
    raw = path if isinstance(path, str) else ""
    try:
        start = _line_number("from", from_, least=1)
        count = _line_number("lines", lines, least=0)  # 0: to the end, as OpenClaw reads it
        if raw.startswith("fleet:"):  # a fleet hit: its stored text (the file is on another host)
            from ..files.reading import check_window
            from ..fleet.connection import FleetError
            from ..fleet.search import get_stored

            try:
                check_window(start, count)
                return get_stored(engine.cfg, raw, start, count)
            except (FleetError, ConfigError) as exc:
                return {"path": raw, "text": "", "disabled": True, "error": str(exc)}
        return engine.get(raw, start, count)
    except (AccessDenied, ValueError) as exc:
        return {"path": raw, "text": "", "disabled": True, "error": str(exc)}
    except OSError as exc:
        return {"path": raw, "text": "", "disabled": True, "error": f"{raw}: cannot read ({exc.strerror or exc})"}


# ---------------------------------------------------------------------------- writes


def _write_refused(engine, text: Any, label: Any = None, need_workspace: bool = True) -> dict | None:
    if not engine.cfg["mcp.write"]:
        return {"error": WRITE_OFF, "disabled": True}
    if not isinstance(text, str) or not text.strip():
        return {"error": "text required: give the note to write"}
    for name, value in (("text", text), ("heading", label)):
        bad = refused_character(value) if isinstance(value, str) else None
        if bad:
            # a NUL, an escape, a bidi override would reach the file, the index and the user's terminal
            return {"error": f"{name}: holds control character U+{ord(bad.group()):04X} ({character_name(bad.group())}) "
                             f"at position {bad.start()}; memory files take text only (tabs and newlines are fine), nothing was written"}
    if need_workspace and not engine.workspace.is_dir():
        return {"error": f"no workspace at {engine.workspace}: create it (or set workspace in the clawmem config)"}
    return None


def index_now(engine, paths: list | None = None) -> dict:
    """Index what was just written, so the next memory_search finds it. `paths`: the files
    written (absolute); only they are indexed, with no listing of every source."""
    try:
        engine.run_index(reason="write", backfill_sessions=False, lock_timeout=10.0, paths=paths)
        return {"indexed": True}
    except LockBusy as exc:
        engine.ask_for_sync("write")
        return {"indexed": False, "warning": f"written, not yet indexed: {exc}"}
    except Exception as exc:
        return {"indexed": False, "warning": f"written, not yet indexed: {type(exc).__name__}: {exc}"}


AGENT = "agent (MCP)"  # the journal's name for writes made through these tools
# a line an append's text would carry as an entry heading of its own (`## 23:59`, `# 2026-03-04`):
# only clawmem writes those, one per append, with the time it was written
ENTRY_HEADING = re.compile(r"(?m)^ {0,3}#{1,6}[ \t]+(?:\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2})\b[^\n]*")


def _mask_secrets(*texts: Any) -> tuple[list[Any], dict]:
    """The texts of a write with their secrets masked, as transcripts are before they are
    indexed (one policy, engine/redaction.py): what an agent writes is indexed, searched and
    pushed to the fleet, so a key in it would be too. The reply says what was masked, so the
    change is never silent; the rest is written as given."""
    kinds: list[str] = []
    out = []
    for text in texts:
        if isinstance(text, str):
            text, found = redact_counted(text)
            kinds += found
        out.append(text)
    if not kinds:
        return out, {}
    names = ", ".join(dict.fromkeys(kinds))
    n = len(kinds)
    return out, {"redacted": kinds, "notice": f"masked {n} secret{'s' * (n != 1)} ({names}) before writing: memory is "
                                              "indexed and can be shared with the fleet; keep secrets in a secret store"}


def memory_append(engine, text: Any, heading: Any = None, *, now: dt.datetime | None = None) -> dict:
    """Append a timestamped entry to today's daily log (`memory/YYYY-MM-DD.md`, local date),
    creating it if needed, without rewriting a byte already there."""
    refused = _write_refused(engine, text, heading)
    if refused:
        return refused
    (text, heading), masked = _mask_secrets(text, heading)
    head = heading.strip().replace("\n", " ") if isinstance(heading, str) else None
    forged = ENTRY_HEADING.search(text)
    if forged:
        line = text[:forged.start()].count("\n") + 1
        return {"error": f"text: line {line} ({forged.group().strip()!r}) would read as the heading of another entry of the "
                         "daily log, which clawmem writes itself with the time of each append; nothing was written: put "
                         "a title in `heading`, or start that line with something other than #"}
    try:
        path, start, end = files.add_log_entry(engine.workspace, text.strip(), now or dt.datetime.now(), head,
                                               writer=AGENT, cap=engine.cfg["mcp.maxWriteBytes"], blank_line=True)
    except memfile.Refused as exc:
        return {"error": str(exc)}
    except OSError as exc:
        return {"error": f"{getattr(exc, 'filename', '') or 'memory/'}: cannot append ({exc.strerror or exc})"}
    rel = path.relative_to(engine.workspace).as_posix()
    return {"path": rel, "startLine": start, "endLine": end, "citation": citation(rel, start, end), **masked, **index_now(engine, [path])}


def memory_remember(engine, text: Any, section: Any = None, scope: Any = None, replaces: Any = None) -> dict:
    """Add a durable fact to MEMORY.md as a `- ` bullet under `## <section>` (default "Notes");
    with `scope: "team"`, to the fleet's team notebook instead (every agent of the fleet reads
    it; `replaces` names the note it replaces).

    Inserting mid-file means rewriting it: memfile.rewrite reads, inserts and renames under the
    file's lock, and redoes the insert if anyone wrote meanwhile, so no concurrent byte is lost.
    """
    refused = _write_refused(engine, text, section, need_workspace=scope != "team")  # the notebook is in the fleet
    if refused:
        return refused
    if scope not in (None, "memory", "team"):
        return {"error": f"scope: expected \"memory\" (MEMORY.md) or \"team\" (the fleet's team notebook), got {scope!r}"}
    (text, section), masked = _mask_secrets(text, section)
    if scope == "team":
        res = _team_remember(engine, text, section, replaces)
        return res if "error" in res else {**res, **masked}
    name = section.strip().replace("\n", " ") if isinstance(section, str) and section.strip() else DEFAULT_SECTION
    cap = engine.cfg["mcp.maxWriteBytes"]
    if len(text.encode("utf-8")) > cap:
        return {"error": f"text is {len(text.encode('utf-8'))} bytes, over the {cap}-byte limit for one write "
                         "(mcp.maxWriteBytes in the clawmem config); split it"}
    target = memory_file(engine.workspace)
    rel = target.name
    lines: dict[str, int] = {}

    def insert(current: str) -> str | None:
        lines.pop("written", None)  # memfile.rewrite calls this again when the file changed meanwhile
        try:
            current.encode("utf-8")
        except UnicodeEncodeError:
            raise memfile.Refused(f"{rel}: not valid UTF-8; fix the file by hand first (clawmem never rewrites bytes it cannot read)") from None
        there = find_bullet(current, name, text)
        if there:  # an agent that says a fact again (a retry, a second session) gets the bullet it wrote, not a copy
            lines["start"], lines["end"] = there
            return None
        new, lines["start"], lines["end"] = add_bullet(current, name, text)
        lines["written"] = 1
        return new

    try:
        memfile.rewrite(engine.workspace, rel, insert, writer=AGENT)
    except memfile.Refused as exc:
        return {"error": str(exc)}
    except memfile.ChangedOnDisk:
        return {"error": f"{rel}: kept changing while we wrote; nothing was written, try again"}
    except OSError as exc:
        return {"error": f"{rel}: cannot write ({exc.strerror or exc})"}
    start, end = lines["start"], lines["end"]
    if "written" not in lines:
        return {"path": rel, "startLine": start, "endLine": end, "citation": citation(rel, start, end), "unchanged": True,
                "note": f"already in {rel} under ## {name}: nothing written", **masked}
    return {"path": rel, "startLine": start, "endLine": end, "citation": citation(rel, start, end), **masked, **index_now(engine, [target])}


# ---------------------------------------------------------------------------- promotion


def promote_preview(engine) -> dict:
    """The memory://promote resource: the passages `clawmem promote` would offer, best first."""
    from ..consolidate import promote

    found, notes = promote.preview(engine, promote.COMMAND)
    g = promote.COMMAND
    out = {"candidates": [c.as_json() for c in found],
           "gates": {"minScore": g.min_score, "minRecallCount": g.min_recall_count, "minUniqueQueries": g.min_unique_queries}}
    if notes:
        out["notes"] = notes
    return out


def memory_promote(engine, keys: Any = None, limit: Any = None) -> dict:
    """Promote candidates (those named by `keys`, from memory://promote, else all, best first,
    up to `limit`) into MEMORY.md; each is read again from its daily log first and skipped
    when it was edited or deleted. Returns what was promoted and what was skipped, and why."""
    from ..consolidate import promote

    refused = _write_refused(engine, "promote")
    if refused:
        return refused
    try:
        n = _number("limit", limit, integer=True)
        if n is not None and n < 1:
            raise BadValue(f"limit: expected an integer >= 1, got {n}")
        if keys is not None and (not isinstance(keys, list) or not all(isinstance(k, str) for k in keys)):
            raise BadValue("keys: expected a list of candidate keys (the `key` of each in memory://promote)")
    except ValueError as exc:
        return {"error": str(exc)}
    found, _ = promote.preview(engine, promote.COMMAND)
    if keys is not None:
        # a key names a fact (path and hash of its words): lines moved since the read still match
        unknown = sorted(k for k in set(keys) if not any(promote.same_fact(k, c.key) for c in found))
        if unknown:
            return {"error": f"not a current candidate: {', '.join(unknown)} (read memory://promote for the keys)"}
        found = [c for c in found if any(promote.same_fact(k, c.key) for k in keys)]
    found = found[:n] if n is not None else found
    try:
        outcomes = promote.apply(engine, found)
    except promote.PromoteError as exc:
        return {"error": str(exc)}
    done = [o.as_json() for o in outcomes if o.promoted]
    out = {"promoted": done, "skipped": [o.as_json() for o in outcomes if not o.promoted]}
    return {**out, **index_now(engine)} if done else out
