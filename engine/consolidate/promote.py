"""Consolidation: the daily-log passages the agent keeps recalling, ranked and promoted into
MEMORY.md (`clawmem promote`, the app's Promote screen, the MCP tool `memory_promote`).

Recalls come from clawmem's own store (recall.py) and, read-only, from OpenClaw's
`memory/.dreams/short-term-recall.json` when the workspace has one, so a user switching from
OpenClaw keeps the history it gathered. Hits whose lines overlap in one file are one
passage (clawmem cites the lines around the match, which differ a little per query).

Each passage is scored as OpenClaw scores it, six signals with its weights: relevance (mean
search score), frequency (recalls), query diversity (distinct queries), recency (half-life 14
days since the last recall), consolidation (recalled on several days, and how far apart) and
conceptual richness (distinct content words). A passage must pass three gates: score, recall
count and distinct queries. Near-duplicates (Jaccard >= 0.9 of their words) are offered once.

Before anything is written the passage is read again from the live daily file: one that was
edited or deleted since it was recalled is skipped, never promoted from a stale copy. Each
promotion is its own write of MEMORY.md (under today's "## Promoted From Short-Term Memory"
heading, with OpenClaw's promotion marker) and its own journal version, so `clawmem history`
shows it and `clawmem restore` undoes it; a dated summary of the run goes to DREAMS.md.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..files import conflicts as files, journal
from . import recall
from .. import text as textmod
from ..errors import ClawmemError

WEIGHTS = {"relevance": 0.30, "frequency": 0.24, "diversity": 0.15, "recency": 0.15, "consolidation": 0.10,
           "conceptual": 0.06}
HALF_LIFE_DAYS = 14.0
SIMILAR = 0.9  # Jaccard of two passages' words at or above which they are one candidate
PROMOTED_CHARS = 700  # a promoted bullet's text, at most (the source lines stay cited)
SECTION = "Promoted From Short-Term Memory"  # OpenClaw's heading, so both tools share one section
MARKER_RE = re.compile(r"<!--\s*openclaw-memory-promotion:([^\n]*?)\s*-->")
OPENCLAW_STORE = "memory/.dreams/short-term-recall.json"
WRITER = "clawmem promote"


@dataclass(frozen=True)
class Gates:
    min_score: float = 0.75
    min_recall_count: int = 3
    min_unique_queries: int = 2


COMMAND = Gates()  # `openclaw memory promote`'s defaults, ours too
SWEEP = Gates(0.8, 3, 3)  # what OpenClaw's scheduled sweep requires before it writes unreviewed


class PromoteError(ClawmemError):
    """A write could not be made; the message names the file and what to do."""


@dataclass
class Candidate:
    path: str
    start: int
    end: int
    score: float
    signals: dict[str, float]
    recalls: int
    queries: list[str]  # the distinct query texts clawmem saw, newest first (OpenClaw keeps hashes only)
    unique_queries: int
    days: list[str]
    avg_score: float
    last_recalled: str  # ISO date-time
    snippet: str  # what the newest search showed
    origin: str  # clawmem, openclaw or both
    promoted: bool = False
    status: str = "ok"  # ok | changed (edited since recalled) | deleted
    lines: list[str] = field(default_factory=list)  # the live lines start..end
    match: int | None = None  # the line the queries matched best, when known

    @property
    def key(self) -> str:
        return f"memory:{self.path}:{self.start}:{self.end}"  # OpenClaw's entry key

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start}" if self.start == self.end else f"{self.path}#L{self.start}-L{self.end}"

    def entry_span(self) -> tuple[int, int]:
        """The cited lines of the log entry (between two headings) holding the matched line:
        searches cite context lines around a match, which in a daily log reach neighbouring entries."""
        if self.match is None or not self.start <= self.match <= self.end or not self.lines:
            return self.start, self.end
        at = self.match - self.start
        top = next((i for i in range(at, -1, -1) if self.lines[i].lstrip().startswith("#")), -1)
        if top == at:
            return self.start, self.end
        bottom = next((i for i in range(at + 1, len(self.lines)) if self.lines[i].lstrip().startswith("#")), len(self.lines))
        while bottom - 1 > at and not self.lines[bottom - 1].strip():
            bottom -= 1
        return self.start + top + 1, self.start + bottom - 1

    def entry(self) -> list[str]:
        s, e = self.entry_span()
        return self.lines[s - self.start : e - self.start + 1]

    @property
    def entry_citation(self) -> str:
        s, e = self.entry_span()
        return f"{self.path}#L{s}" if s == e else f"{self.path}#L{s}-L{e}"

    def text(self) -> str:
        """The bullet's default text: the entry's lines as one paragraph, headings left out."""
        parts = [re.sub(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)", "", ln).strip() for ln in self.entry() if not ln.lstrip().startswith("#")]
        joined = " ".join(p for p in parts if p)
        if len(joined) <= PROMOTED_CHARS:
            return joined
        cut = joined[:PROMOTED_CHARS]
        return cut[: cut.rfind(" ")].rstrip() + "…" if " " in cut else cut + "…"

    def as_json(self) -> dict:
        out = asdict(self)
        out.update(key=self.key, citation=self.citation, text=self.text(), entryCitation=self.entry_citation,
                   startLine=self.start, endLine=self.end)
        del out["start"], out["end"]
        return out


# ---------------------------------------------------------------------------- gathering


@dataclass
class _Bundle:
    """Recalls of one passage: one clawmem recall, one OpenClaw entry, or several merged."""

    path: str
    start: int
    end: int
    count: int
    total: float
    hashes: set[str]
    queries: dict[str, float]  # text -> newest time
    days: set[str]
    last: float
    snippet: str
    snippet_ts: float
    origin: set[str]
    promoted: bool = False
    match: int | None = None
    # (start, end) -> [recalls, newest time, snippet, matched line]
    spans: dict[tuple[int, int], list] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.spans:
            self.spans = {(self.start, self.end): [self.count, self.snippet_ts, self.snippet, self.match]}

    def best_span(self) -> tuple[int, int, str, int | None]:
        """The lines most recalls cited (the newest on a tie): the passage, without every
        neighbouring line some other query's citation reached."""
        (start, end), (_, _, snippet, match) = max(self.spans.items(), key=lambda kv: (kv[1][0], kv[1][1]))
        return start, end, snippet, match

    def merge(self, other: "_Bundle") -> None:
        self.start, self.end = min(self.start, other.start), max(self.end, other.end)
        self.count += other.count
        self.total += other.total
        self.hashes |= other.hashes
        for q, t in other.queries.items():
            self.queries[q] = max(t, self.queries.get(q, 0.0))
        self.days |= other.days
        self.last = max(self.last, other.last)
        if other.snippet_ts >= self.snippet_ts and other.snippet:
            self.snippet, self.snippet_ts = other.snippet, other.snippet_ts
        self.origin |= other.origin
        self.promoted = self.promoted or other.promoted
        for span, (n, ts, snippet, match) in other.spans.items():
            mine = self.spans.setdefault(span, [0, 0.0, snippet, match])
            mine[0] += n
            if ts >= mine[1]:
                mine[1], mine[2], mine[3] = ts, snippet, match


def _iso_ts(value) -> float | None:
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def read_openclaw(workspace: Path) -> tuple[list[_Bundle], str | None]:
    """OpenClaw's recall entries for daily logs (read-only), and a note when the file is unreadable."""
    file = workspace / OPENCLAW_STORE
    if not file.is_file():
        return [], None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        entries = data.get("entries") or {}
        if not isinstance(entries, dict):
            raise ValueError("entries is not an object")
    except (OSError, ValueError, AttributeError) as exc:
        return [], f"{OPENCLAW_STORE}: not read ({exc}); clawmem's own recalls are used"
    out = []
    for e in entries.values():
        if not isinstance(e, dict) or e.get("source") != "memory":
            continue
        path = str(e.get("path") or "").replace("\\", "/").removeprefix("./")
        try:
            start, end, count = int(e["startLine"]), int(e["endLine"]), max(0, int(e.get("recallCount") or 0))
            total = max(0.0, float(e.get("totalScore") or 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        if not recall.is_daily(path) or count == 0:
            continue
        last = _iso_ts(e.get("lastRecalledAt")) or 0.0
        days = {d[:10] for d in e.get("recallDays") or [] if isinstance(d, str) and re.match(r"\d{4}-\d{2}-\d{2}", d)}
        hashes = {h for h in e.get("queryHashes") or [] if isinstance(h, str) and h}
        out.append(_Bundle(path, start, end, count, total, hashes, {}, days, last, str(e.get("snippet") or ""), last,
                           {"openclaw"}, promoted=bool(e.get("promotedAt"))))
    return out, None


def _clusters(bundles: list[_Bundle]) -> list[_Bundle]:
    """Bundles of one file whose lines overlap, merged into one passage each."""
    out: list[_Bundle] = []
    by_path: dict[str, list[_Bundle]] = {}
    for b in bundles:
        by_path.setdefault(b.path, []).append(b)
    for group in by_path.values():
        group.sort(key=lambda b: (b.start, b.end))
        current = None
        for b in group:
            if current is not None and b.start <= current.end:
                current.merge(b)
            else:
                current = _Bundle(**{**b.__dict__, "hashes": set(b.hashes), "queries": dict(b.queries), "days": set(b.days),
                                     "origin": set(b.origin), "spans": {k: list(v) for k, v in b.spans.items()}})
                out.append(current)
    return out


# ---------------------------------------------------------------------------- scoring


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x)) if math.isfinite(x) else 0.0


def consolidation(days: list[str]) -> float:
    """Recalled on several days, and how far apart (spaced repetition), as OpenClaw weighs it."""
    if not days:
        return 0.0
    parsed = sorted(dt.date.fromisoformat(d) for d in days)
    if len(parsed) == 1:
        return 0.2
    spacing = _clamp(math.log1p(len(parsed) - 1) / math.log1p(4))
    span = _clamp((parsed[-1] - parsed[0]).days / 7)
    return _clamp(0.55 * spacing + 0.45 * span)


def concept_tags(text: str, limit: int = 8) -> list[str]:
    """The passage's distinct content words (longer than three letters, or CJK), at most `limit`."""
    return [t for t in textmod.relaxed_terms(text) if len(t) > 3 or textmod.is_cjk(t[0])][:limit]


def signals(b: _Bundle, now: float) -> dict[str, float]:
    age_days = max(0.0, (now - b.last) / 86400)
    return {
        "relevance": _clamp(b.total / max(1, b.count)),
        "frequency": _clamp(math.log1p(b.count) / math.log1p(10)),
        "diversity": _clamp(len(b.hashes) / 5),
        "recency": _clamp(math.exp(-math.log(2) * age_days / HALF_LIFE_DAYS)),
        "consolidation": consolidation(sorted(b.days)),
        "conceptual": _clamp(len(concept_tags(b.snippet)) / 6),
    }


def similarity(a: str, b: str) -> float:
    ta, tb = textmod.mmr_tokens(a), textmod.mmr_tokens(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def _normal(s: str) -> str:
    return " ".join(s.split())


def live_check(workspace: Path, c: Candidate) -> None:
    """Read the passage's lines from the daily file as it is now; mark it changed or deleted
    when the recalled snippet is no longer there."""
    try:
        data = (workspace / c.path).read_bytes()
    except FileNotFoundError:
        c.status, c.lines = "deleted", []
        return
    lines = data.decode("utf-8", "replace").splitlines()
    c.lines = lines[c.start - 1 : c.end]
    if not c.lines or (c.snippet and _normal(c.snippet) not in _normal("\n".join(c.lines))):
        c.status = "changed"
    else:
        c.status = "ok"


def promoted_keys(text: str) -> set[str]:
    return {m.strip() for m in MARKER_RE.findall(text)}


def _overlaps(c_path: str, s: int, e: int, spans: list[tuple[str, int, int]]) -> bool:
    return any(p == c_path and s <= pe and ps <= e for p, ps, pe in spans)


def preview(engine, gates: Gates = COMMAND, *, limit: int | None = None, include_promoted: bool = False,
            now: float | None = None) -> tuple[list[Candidate], list[str]]:
    """The passages that pass the gates, best first, each read again from its live file;
    and notes (an unreadable OpenClaw store). Rejected passages are never offered again."""
    cfg, ws = engine.cfg, engine.workspace
    now = time.time() if now is None else now
    bundles = [_Bundle(r.path, r.start, r.end, 1, r.score, {r.query_hash}, {r.query: r.ts}, {r.day}, r.ts, r.snippet,
                       r.ts, {"clawmem"}, match=r.match_line) for r in recall.recalls(cfg)]
    theirs, note = read_openclaw(ws)
    notes = [note] if note else []
    decided = recall.decisions(cfg)
    rejected = [(p, s, e) for p, s, e, d in decided if d == "rejected"]
    promoted = [(p, s, e) for p, s, e, d in decided if d == "promoted"]
    memory_text = files.read_file(memory_path(ws)).text
    marked = promoted_keys(memory_text)
    out: list[Candidate] = []
    for b in _clusters(bundles + theirs):
        if b.count < gates.min_recall_count or len(b.hashes) < gates.min_unique_queries:
            continue
        if _overlaps(b.path, b.start, b.end, rejected):
            continue
        sig = signals(b, now)
        score = _clamp(sum(WEIGHTS[k] * v for k, v in sig.items()))
        if score < gates.min_score:
            continue
        start, end, snippet, match = b.best_span()
        keys = {f"memory:{b.path}:{s}:{e}" for s, e in b.spans}
        done = b.promoted or bool(keys & marked) or _overlaps(b.path, b.start, b.end, promoted)
        if done and not include_promoted:
            continue
        queries = [q for q, _ in sorted(b.queries.items(), key=lambda kv: -kv[1])]
        out.append(Candidate(b.path, start, end, round(score, 4), {k: round(v, 4) for k, v in sig.items()},
                             b.count, queries, len(b.hashes), sorted(b.days), round(b.total / b.count, 4),
                             dt.datetime.fromtimestamp(b.last).astimezone().isoformat(timespec="seconds"),
                             snippet, "both" if len(b.origin) > 1 else next(iter(b.origin)), promoted=done, match=match))
    out.sort(key=lambda c: (-c.score, -c.recalls, c.path, c.start))
    kept: list[Candidate] = []
    for c in out:
        if any(similarity(c.snippet, k.snippet) >= SIMILAR for k in kept):
            continue
        kept.append(c)
    for c in kept:
        live_check(ws, c)
    return (kept if limit is None else kept[:limit]), notes


# ---------------------------------------------------------------------------- writing


def memory_path(workspace: Path) -> Path:
    return files.memory_file(workspace)


def _write_memory(engine, target: Path, transform) -> None:
    """The one place this feature writes MEMORY.md or DREAMS.md: `transform(current text) ->
    new text` through the memory-file writer (under the file's lock, redone if anyone wrote
    meanwhile), credited to clawmem promote in the journal."""
    from ..files import memfile

    try:
        memfile.rewrite(engine.workspace, target.relative_to(engine.workspace).as_posix(), transform, writer=WRITER)
    except (memfile.Refused, memfile.Conflict) as exc:
        raise PromoteError(str(exc) or f"{target.name}: kept changing while we wrote; nothing was written, try again") from None
    except OSError as exc:
        raise PromoteError(f"{target.name}: cannot write ({exc.strerror or exc})") from None


def _section(day: dt.date) -> str:
    return f"{SECTION} ({day.isoformat()})"


@dataclass
class Outcome:
    key: str
    citation: str
    promoted: bool
    reason: str = ""  # why not
    text: str = ""
    version: int | None = None  # MEMORY.md's journal version after this promotion

    def as_json(self) -> dict:
        return asdict(self)


def apply(engine, candidates: list[Candidate], *, edits: dict[str, str] | None = None,
          today: dt.date | None = None) -> list[Outcome]:
    """Promote each candidate into MEMORY.md, one write and one journal version each, after
    reading its lines again from the live file; then a dated summary in DREAMS.md.
    `edits` maps a candidate's key to the text a person wrote for it. Raises PromoteError
    when a file cannot be written (the outcomes so far are kept in DREAMS.md first)."""
    cfg, ws = engine.cfg, engine.workspace
    today = today or dt.date.today()
    target = memory_path(ws)
    rel = target.name
    outcomes: list[Outcome] = []
    jr = journal.Journal(cfg) if cfg["journal.enabled"] else None
    error = None
    try:
        for c in candidates:
            live_check(ws, c)  # again: the file may have changed since the preview
            if c.status != "ok":
                why = "deleted since it was recalled" if c.status == "deleted" else "edited since it was recalled"
                outcomes.append(Outcome(c.key, c.citation, False, why))
                continue
            if c.key in promoted_keys(files.read_file(target).text):
                outcomes.append(Outcome(c.key, c.citation, False, f"already in {rel}"))
                continue
            body = _normal((edits or {}).get(c.key) or c.text())
            if not body:
                outcomes.append(Outcome(c.key, c.citation, False, "empty text"))
                continue
            fact = f"{body} ({c.entry_citation})\n<!-- openclaw-memory-promotion:{c.key} -->"
            if jr is not None:
                jr.observe_file(rel, target)  # what is there now, so the promotion is its own version
            try:
                _write_memory(engine, target, lambda cur, fact=fact: files.add_bullet(cur, _section(today), fact)[0])
            except PromoteError as exc:
                error = exc
                break
            version = jr.observe_file(rel, target, WRITER) if jr is not None else None
            recall.decide(cfg, c.path, c.start, c.end, "promoted", body)
            outcomes.append(Outcome(c.key, c.citation, True, text=body, version=version.id if version else None))
        if outcomes:
            _write_memory(engine, ws / "DREAMS.md", lambda cur: _dreams_summary(cur, outcomes, candidates, rel))
    finally:
        if jr is not None:
            jr.close()
    if error is not None:
        raise error
    return outcomes


def _dreams_summary(current: str, outcomes: list[Outcome], candidates: list[Candidate], rel: str) -> str:
    by_key = {c.key: c for c in candidates}
    stamp = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
    done = sum(o.promoted for o in outcomes)
    lines = [f"## Promotion {stamp}", "", f"{done} of {len(outcomes)} promoted to {rel} by clawmem promote."]
    for o in outcomes:
        c = by_key.get(o.key)
        how = f" (score {c.score:.3f}, {c.recalls} recalls, {c.unique_queries} queries)" if c else ""
        lines.append(f"- {'promoted' if o.promoted else 'skipped, ' + o.reason}: {o.citation}{how}")
    head = current.rstrip("\n")
    return (head + "\n\n" if head else "# Dreams\n\n") + "\n".join(lines) + "\n"


def reject(engine, c: Candidate) -> None:
    """Remember that a person does not want this passage promoted: it is not offered again."""
    recall.decide(engine.cfg, c.path, c.start, c.end, "rejected")


# ---------------------------------------------------------------------------- the daily sweep


def sweep_state_file(cfg) -> Path:
    return recall.store_dir(cfg) / "sweep.json"


def daily_sweep(engine, today: dt.date | None = None) -> dict | None:
    """`clawmem watch`'s sweep, once a day (promote.sweep): count the candidates the app's
    Promote screen would offer; with `apply`, also promote those passing OpenClaw's stricter
    scheduled gates. Returns what it did, or None when off or already run today."""
    mode = engine.cfg["promote.sweep"]
    if mode == "off":
        return None
    today = today or dt.date.today()
    state_file = sweep_state_file(engine.cfg)
    try:
        if json.loads(state_file.read_text(encoding="utf-8")).get("day") == today.isoformat():
            return None
    except (OSError, ValueError, AttributeError):
        pass
    found, _ = preview(engine, COMMAND)
    state = {"day": today.isoformat(), "mode": mode, "candidates": sum(c.status == "ok" for c in found), "applied": 0}
    if mode == "apply":
        strict = [c for c in preview(engine, SWEEP)[0] if c.status == "ok"]
        if strict:
            state["applied"] = sum(o.promoted for o in apply(engine, strict, today=today))
    from ..files.fsutil import atomic_write

    paths_ok = recall.store_dir(engine.cfg)
    paths_ok.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(state_file, json.dumps(state), mode=0o600)
    return state
