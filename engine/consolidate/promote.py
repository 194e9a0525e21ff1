"""Consolidation: the facts in daily logs the agent keeps recalling, ranked and promoted into
MEMORY.md (`clawmem promote`, the app's Promote screen, the MCP tool `memory_promote`).

Recalls come from clawmem's own store (recall.py: only hits shown at or above the search's
score threshold) and, read-only, from OpenClaw's `memory/.dreams/short-term-recall.json` when
the workspace has one. Hits whose lines overlap in one file are one passage.

What is promoted is the recalled *fact*, not the passage: the line the queries matched and
the bullet or sentence holding it (a few lines at most, FACT_CHARS characters at most), read
from the live file. The same fact in several logs is one candidate citing each of them.

Each candidate is scored as OpenClaw scores it, six signals with its weights: relevance (mean
search score), frequency (recalls, plus OpenClaw's daily and grounded counts), diversity
(distinct queries or recall days, whichever is more), recency (half-life 14 days), consolidation
(recall days and their spread, or grounded recalls) and conceptual richness. Gates: score,
recall count, diversity, and optionally the age of the last recall (maxAgeDays). Snippets that
are only headings or list markers are never candidates.

Two facts contradict when they open with the same words and end differently (see
`contradicts`); a candidate contradicting another or a MEMORY.md line is shown with it and is
applied only when a person confirms it. A fact is "already promoted" when MEMORY.md (or the
archive of promoted bullets) holds its marker or its text now: restoring MEMORY.md to before
a promotion offers the fact again.

Before anything is written the fact is found again in the live daily file by its content (a
line inserted above it moves it, an edit of it skips it). Each promotion is its own write of
MEMORY.md and its own journal version; DREAMS.md (the run's summary, rejections) is journaled
too. MEMORY.md has a character budget (OpenClaw's memoryFileMaxChars, 10 000): over it, the
oldest promoted bullets are offered for the archive file, never dropped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..files import conflicts as files, journal
from . import recall
from .. import text as textmod
from ..errors import BadValue, ClawmemError

WEIGHTS = {"relevance": 0.30, "frequency": 0.24, "diversity": 0.15, "recency": 0.15, "consolidation": 0.10,
           "conceptual": 0.06}
HALF_LIFE_DAYS = 14.0
SIMILAR = 0.9  # Jaccard of two facts' words at or above which they are one candidate
FACT_CHARS = 160  # a promoted fact, at most (with its citation the bullet stays near 200)
CODE_CHARS = 1200  # a code block with its introducing sentence, at most: kept whole, or not offered
FACT_LINES = 3  # a bullet or sentence over more lines than this is narrowed to its best sentence
SECTION = "Promoted From Short-Term Memory"  # OpenClaw's heading, so both tools share one section
MARKER_RE = re.compile(r"<!--\s*openclaw-memory-promotion:([^\n]*?)\s*-->")
OPENCLAW_STORE = "memory/.dreams/short-term-recall.json"
ARCHIVE = "memory/promoted-archive.md"  # where the oldest promoted bullets go when MEMORY.md is over budget
WRITER = "clawmem promote"

LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
HEADING_RE = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
FENCE_RE = re.compile(r"^\s*(?:```|~~~)")
WORD_RE = re.compile(r"[^\W_]", re.UNICODE)
SENTENCE_END_RE = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class Gates:
    min_score: float = 0.75
    min_recall_count: int = 3
    min_unique_queries: int = 2  # OpenClaw counts distinct queries or recall days, whichever is more
    max_age_days: float | None = None  # OpenClaw's maxAgeDays: a last recall older than this is left out


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
    status: str = "ok"  # ok | changed (the fact was edited since recalled) | deleted
    lines: list[str] = field(default_factory=list)  # the live lines start..end (the context)
    match: int | None = None  # the line the queries matched best, when known
    fact: str = ""  # what goes to MEMORY.md: the matched bullet or sentence
    fact_start: int = 0
    fact_end: int = 0
    also: list[str] = field(default_factory=list)  # citations of the same fact in other logs
    conflicts: list[str] = field(default_factory=list)  # facts it contradicts (other candidates, MEMORY.md lines)
    replaces: list[str] = field(default_factory=list)  # keys of promoted bullets it contradicts: what "supersede" marks
    grounded: int = 0  # OpenClaw's grounded recalls (clawmem records none of its own)

    @property
    def key(self) -> str:
        """The promotion key names the fact, not the window it was cited through: its path,
        its lines and a hash of its normalised text (two facts of one window have two keys)."""
        s, e = (self.fact_start, self.fact_end) if self.fact else (self.start, self.end)
        return f"memory:{self.path}:{s}:{e}:{fact_hash(self.fact or self.snippet)}"

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start}" if self.start == self.end else f"{self.path}#L{self.start}-L{self.end}"

    @property
    def fact_citation(self) -> str:
        s, e = (self.fact_start, self.fact_end) if self.fact else (self.start, self.end)
        return f"{self.path}#L{s}" if s == e else f"{self.path}#L{s}-L{e}"

    @property
    def entry_citation(self) -> str:
        """Every place the fact is cited from: its own lines, then the other logs holding it."""
        return "; ".join([self.fact_citation, *self.also])

    def text(self) -> str:
        """The bullet's default text: the fact (a person may widen or edit it)."""
        return self.fact

    def as_json(self) -> dict:
        out = asdict(self)
        out.update(key=self.key, citation=self.citation, text=self.text(), entryCitation=self.entry_citation,
                   factCitation=self.fact_citation, startLine=self.start, endLine=self.end)
        for k in ("start", "end", "fact_start", "fact_end"):
            del out[k]
        return out


# ---------------------------------------------------------------------------- facts


def has_words(line: str) -> bool:
    return bool(WORD_RE.search(line))


def is_skeleton(text: str) -> bool:
    """Headings and list markers only (OpenClaw's skeleton filter): nothing to remember."""
    body = [ln for ln in text.split("\n") if ln.strip() and not HEADING_RE.match(ln.lstrip("-*+> "))]
    return not any(has_words(LIST_RE.sub("", ln)) for ln in body)


def _strip_marker(line: str) -> str:
    return LIST_RE.sub("", line, count=1).strip()


def _in_fence(lines: list[str], i: int) -> bool:
    return sum(1 for ln in lines[:i] if FENCE_RE.match(ln)) % 2 == 1


def fact_span(lines: list[str], m: int, terms: list[str]) -> tuple[int, int, str] | None:
    """The fact around line `m` (0-based) of a file: its bullet (with continuation lines) or
    its paragraph, narrowed to the sentence holding most query terms when longer than
    FACT_LINES lines or FACT_CHARS characters. Returns (first, last) 0-based lines and the
    text, or None when the matched lines hold no words (a heading alone, a blank)."""
    def plain(i: int) -> bool:
        ln = lines[i]
        return bool(ln.strip()) and not HEADING_RE.match(ln) and not FENCE_RE.match(ln)

    if not (0 <= m < len(lines)):
        return None
    if not plain(m) or not has_words(_strip_marker(lines[m])):
        # a heading or blank line matched: the first line of text below it, in its section
        m = next((i for i in range(m + 1, min(len(lines), m + 6)) if plain(i) and has_words(lines[i])
                  or HEADING_RE.match(lines[i])), -1)
        if m < 0 or HEADING_RE.match(lines[m]):
            return None
    if FENCE_RE.match(lines[m]) or _in_fence(lines, m):
        return _code_fact(lines, *_fence_around(lines, m))
    a = m
    while not LIST_RE.match(lines[a]) and a > 0 and plain(a - 1):
        a -= 1
        if LIST_RE.match(lines[a]):
            break
    b = m
    while b + 1 < len(lines) and plain(b + 1) and not LIST_RE.match(lines[b + 1]):
        b += 1
    parts = [_strip_marker(lines[i]) if i == a else lines[i].strip() for i in range(a, b + 1)]
    text = " ".join(p for p in parts if p)
    fence = _fence_after(lines, b, text)
    if fence is not None:  # the sentence introducing a code block: the block goes with it, whole
        return _code_fact(lines, *fence, intro=(a, b))
    if len(text) <= FACT_CHARS and b - a + 1 <= FACT_LINES:
        return a, b, text
    # narrow to one sentence: the one holding most of the queries' words, then the one on the matched line
    offsets, pos = [], 0
    for i, ptext in zip(range(a, b + 1), parts):
        offsets.append((pos, pos + len(ptext), i))
        pos += len(ptext) + (1 if ptext else 0)
    m_from, m_to = next(((s, e) for s, e, i in offsets if i == m), (0, len(text)))
    best, best_key = None, None
    at = 0
    for sentence in SENTENCE_END_RE.split(text):
        s0 = text.find(sentence, at)
        s1 = s0 + len(sentence)
        at = s1
        low = sentence.lower()
        key = (sum(1 for t in set(terms) if t and t in low), s0 < m_to and m_from < s1, -s0)
        if best_key is None or key > best_key:
            best, best_key = (s0, s1, sentence.strip()), key
    s0, s1, sentence = best
    first = next(i for s, e, i in offsets if e >= s0)
    last = next((i for s, e, i in offsets if e >= s1), b)
    if len(sentence) > FACT_CHARS:
        cut = sentence[:FACT_CHARS]
        sentence = (cut[: cut.rfind(" ")].rstrip() if " " in cut else cut) + "…"
    return first, last, sentence


def _fence_around(lines: list[str], m: int) -> tuple[int, int]:
    """The opening and closing fence lines (0-based) of the code block holding line m (the
    last line of the file when it is never closed)."""
    a = m if FENCE_RE.match(lines[m]) and not _in_fence(lines, m) else max(
        i for i in range(m) if FENCE_RE.match(lines[i]) and not _in_fence(lines, i))
    b = next((i for i in range(a + 1, len(lines)) if FENCE_RE.match(lines[i])), len(lines) - 1)
    return a, b


def _fence_after(lines: list[str], b: int, text: str) -> tuple[int, int] | None:
    """The code block a paragraph ending on line b introduces: one opening on the next line, or
    after one blank line when the paragraph ends with a colon ("… we use:")."""
    nxt = b + 1
    if nxt < len(lines) and not lines[nxt].strip() and text.rstrip().endswith(":"):
        nxt += 1
    if nxt < len(lines) and FENCE_RE.match(lines[nxt]) and not _in_fence(lines, nxt):
        return _fence_around(lines, nxt)
    return None


def _code_fact(lines: list[str], a: int, b: int, intro: tuple[int, int] | None = None) -> tuple[int, int, str] | None:
    """A code block as one fact, whole, with the sentence introducing it (the paragraph just
    above it, when there is one): never a dangling "we use:" and a bare command apart. A block
    over CODE_CHARS is no bullet for MEMORY.md (None: not offered)."""
    if intro is None:
        i = a - 1
        if i >= 0 and not lines[i].strip() and i - 1 >= 0 and lines[i - 1].rstrip().endswith(":"):
            i -= 1
        if i >= 0 and lines[i].strip() and not HEADING_RE.match(lines[i]) and not FENCE_RE.match(lines[i]) \
                and not _in_fence(lines, i) and has_words(lines[i]):
            first = i
            while first > 0 and lines[first - 1].strip() and not HEADING_RE.match(lines[first - 1]) \
                    and not LIST_RE.match(lines[first]) and not FENCE_RE.match(lines[first - 1]):
                first -= 1
            intro = (first, i)
    indent = len(lines[a]) - len(lines[a].lstrip())
    code = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines[a : b + 1]]
    if not FENCE_RE.match(code[-1]) or b == a:
        code.append(code[0].strip()[:3])  # never closed in the log: closed in the bullet
    head = ""
    if intro is not None:
        head = " ".join(p for p in ([_strip_marker(lines[intro[0]])] + [ln.strip() for ln in lines[intro[0] + 1 : intro[1] + 1]]) if p)
    text = "\n".join(([head] if head else []) + [ln.rstrip() for ln in code])
    if len(text) > CODE_CHARS or not has_words("\n".join(code[1:-1]) + head):
        return None
    return (intro[0] if intro else a), b, text


def _match_text(snippet: str, start: int, end: int, match: int | None, terms: list[str]) -> str | None:
    """The text of the line a search matched: its place in the snippet when the snippet is the
    cited lines as they stood, else the snippet line holding most query terms."""
    lines = snippet.split("\n")
    if match is not None and len(lines) == end - start + 1 and 0 <= match - start < len(lines) and lines[match - start].strip():
        return lines[match - start]
    if len(lines) == 1:
        return None  # OpenClaw's snippets are flattened to one line: found as a whole instead
    scored = [(sum(1 for t in set(terms) if t and t in ln.lower()), -i, ln) for i, ln in enumerate(lines) if ln.strip()]
    return max(scored)[2] if scored else None


def locate(lines: list[str], start: int, end: int, snippet: str, match: int | None, terms: list[str]) -> int | None:
    """The 0-based line of the file that the recalled match is on now, found by its content
    (the nearest line with the same text to where it was): a line inserted above moves it, an
    edit of it loses it (None)."""
    want = _match_text(snippet, start, end, match, terms)
    guess = (match if match is not None else start) - 1
    if want is not None:
        key = want.strip()
        hits = [i for i, ln in enumerate(lines) if ln.strip() == key]
        return min(hits, key=lambda i: abs(i - guess)) if hits else None
    norm = _normal(snippet)
    if not norm or norm not in _normal("\n".join(lines)):
        return None
    n = end - start + 1
    for delta in sorted(range(-(start - 1), len(lines) - start + 2), key=abs):
        s = start - 1 + delta
        if norm in _normal("\n".join(lines[max(0, s) : s + n])):
            window = range(max(0, s), min(len(lines), s + n))
            return next((i for i in window if has_words(_strip_marker(lines[i])) and not HEADING_RE.match(lines[i])), max(0, s))
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_](?:[\w'’-]*[^\W_])?", text.lower())


def contradicts(a: str, b: str) -> bool:
    """Same subject, different value: the two facts open with the same words (at least two,
    and at least half of the shorter one) and then both go on differently ("Elena's birthday
    is on May 27" / "... on March 21"). One that only adds to the other is no contradiction.
    The rule reads the sentences' shape, not a list of words, so it holds in any vocabulary;
    its price is a false alarm on facts that share an opening ("Sam likes tea" / "Sam likes
    hiking"), which only means a person looks at both."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb or wa == wb:
        return False
    k = 0
    while k < min(len(wa), len(wb)) and wa[k] == wb[k]:
        k += 1
    return k >= 2 and 2 * k >= min(len(wa), len(wb)) and k < len(wa) and k < len(wb)


def _fact_key(text: str) -> str:
    return " ".join(_words(text))


def fact_hash(text: str) -> str:
    """12 hex digits of sha1 over the fact's words, lower-cased: the same fact however it is
    spaced, punctuated or cited."""
    return hashlib.sha1(_fact_key(text).encode("utf-8")).hexdigest()[:12]


KEY_RE = re.compile(r"^memory:(.+):(\d+):(\d+)(?::([0-9a-f]{12}))?$")


def key_fact(key: str) -> tuple[str, str] | None:
    """(path, fact hash) of a promotion key; None for a key without a hash (OpenClaw's window
    key, or an older clawmem's), which does not name a fact."""
    m = KEY_RE.match(key.strip())
    return (m.group(1), m.group(4)) if m and m.group(4) else None


def same_fact(a: str, b: str) -> bool:
    """Two keys name one fact: the same path and fact hash (the lines may have moved since)."""
    fa = key_fact(a)
    return a.strip() == b.strip() if fa is None else fa == key_fact(b)


def _memory_facts(text: str, standing: bool = False) -> list[str]:
    """MEMORY.md's bullets and lines of text, without list markers, citations and markers;
    `standing`: without the superseded and retired ones."""
    out = []
    fenced = False
    for ln in text.split("\n"):
        if FENCE_RE.match(ln.lstrip("-*+ ")):
            fenced = not fenced
            continue
        if fenced or not ln.strip() or HEADING_RE.match(ln) or MARKER_RE.search(ln) or STATUS_RE.search(ln):
            continue
        body = _strip_marker(ln)
        if STRUCK_RE.match(body):  # superseded or retired: no longer stands
            if standing:
                continue
            body = body[2:-2]
        body = re.sub(r"\s*\((?:memory/[^()]*#L\d+[^()]*)\)\s*$", "", body)
        if has_words(body):
            out.append(body)
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
    grounded: int = 0  # OpenClaw's grounded and daily signals (its store's counts)
    daily: int = 0
    # (start, end) -> [recalls, newest time, snippet, matched line]
    spans: dict[tuple[int, int], list] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.spans:
            self.spans = {(self.start, self.end): [self.count, self.snippet_ts, self.snippet, self.match]}

    @property
    def signal_count(self) -> int:
        return self.count + self.daily + self.grounded  # OpenClaw's totalSignalCount

    def best_span(self) -> tuple[int, int, str, int | None]:
        """The lines most recalls cited (the newest on a tie): the passage, without every
        neighbouring line some other query's citation reached."""
        (start, end), (_, _, snippet, match) = max(self.spans.items(), key=lambda kv: (kv[1][0], kv[1][1]))
        return start, end, snippet, match

    def add_counts(self, other: "_Bundle") -> None:
        self.count += other.count
        self.daily += other.daily
        self.grounded += other.grounded
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

    def merge(self, other: "_Bundle") -> None:
        self.start, self.end = min(self.start, other.start), max(self.end, other.end)
        self.add_counts(other)
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
            raise BadValue("entries is not an object")
    except (OSError, ValueError, AttributeError) as exc:
        return [], f"{OPENCLAW_STORE}: not read ({exc}); clawmem's own recalls are used"
    out = []
    for e in entries.values():
        if not isinstance(e, dict) or e.get("source") != "memory":
            continue
        path = str(e.get("path") or "").replace("\\", "/").removeprefix("./")
        try:
            start, end, count = int(e["startLine"]), int(e["endLine"]), max(0, int(e.get("recallCount") or 0))
            daily, grounded = max(0, int(e.get("dailyCount") or 0)), max(0, int(e.get("groundedCount") or 0))
            total = max(0.0, float(e.get("totalScore") or 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        if not recall.is_daily(path) or count + daily + grounded == 0:
            continue
        last = _iso_ts(e.get("lastRecalledAt")) or 0.0
        days = {d[:10] for d in e.get("recallDays") or [] if isinstance(d, str) and re.match(r"\d{4}-\d{2}-\d{2}", d)}
        hashes = {h for h in e.get("queryHashes") or [] if isinstance(h, str) and h}
        out.append(_Bundle(path, start, end, count, total, hashes, {}, days, last, str(e.get("snippet") or ""), last,
                           {"openclaw"}, promoted=bool(e.get("promotedAt")), grounded=grounded, daily=daily))
    return out, None


def _copy(b: _Bundle) -> _Bundle:
    return _Bundle(**{**b.__dict__, "hashes": set(b.hashes), "queries": dict(b.queries), "days": set(b.days),
                      "origin": set(b.origin), "spans": {k: list(v) for k, v in b.spans.items()}})


def _clusters(bundles: list[_Bundle]) -> list[_Bundle]:
    """Bundles of one file whose lines overlap and that matched the same line, merged into one
    passage each: two questions answered by two bullets of one section cite overlapping lines
    but recall two facts. (Recalls that name no matched line, OpenClaw's, merge by overlap;
    the same fact reached through different lines is merged later, by its text.)"""
    out: list[_Bundle] = []
    by_path: dict[tuple, list[_Bundle]] = {}
    for b in bundles:
        by_path.setdefault((b.path, b.match), []).append(b)
    for group in by_path.values():
        group.sort(key=lambda b: (b.start, b.end))
        current = None
        for b in group:
            if current is not None and b.start <= current.end:
                current.merge(b)
            else:
                current = _copy(b)
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


def diversity_count(b: _Bundle) -> int:
    """OpenClaw's context diversity: distinct queries or distinct recall days, whichever is more
    (one question asked on four days is four contexts)."""
    return max(len(b.hashes), len(b.days))


def signals(b: _Bundle, now: float) -> dict[str, float]:
    age_days = max(0.0, (now - b.last) / 86400)
    n = b.signal_count
    return {
        "relevance": _clamp(b.total / max(1, n)),
        "frequency": _clamp(math.log1p(n) / math.log1p(10)),
        "diversity": _clamp(diversity_count(b) / 5),
        "recency": _clamp(math.exp(-math.log(2) * age_days / HALF_LIFE_DAYS)),
        "consolidation": max(consolidation(sorted(b.days)), _clamp(b.grounded / 3)),
        "conceptual": _clamp(len(concept_tags(b.snippet)) / 6),
    }


def similarity(a: str, b: str) -> float:
    ta, tb = textmod.mmr_tokens(a), textmod.mmr_tokens(b)
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def _normal(s: str) -> str:
    return " ".join(s.split())


def _terms(queries) -> list[str]:
    return sorted({t for q in queries for t in textmod.relaxed_terms(q)})


def _read_lines(workspace: Path, path: str) -> list[str] | None:
    try:
        return (workspace / path).read_bytes().decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return None


def _find(workspace: Path, b: _Bundle, cache: dict) -> tuple[str, int, int, int | None, list[str], tuple | None]:
    """Where the passage's recalled fact is now: (status, start, end, match, context lines,
    (fact first, fact last, fact text) 1-based or None)."""
    start, end, snippet, match = b.best_span()
    if b.path not in cache:
        cache[b.path] = _read_lines(workspace, b.path)
    lines = cache[b.path]
    if lines is None:
        return "deleted", start, end, match, [], None
    at = locate(lines, start, end, snippet, match, _terms(b.queries) or concept_tags(snippet))
    if at is None:
        return "changed", start, end, match, lines[start - 1 : end], None
    if match is not None:  # the passage moved with its matched line
        shift = at - (match - 1)
        s, e = start + shift, end + shift
    else:  # OpenClaw's entries name no matched line: the window found around the line
        s, e = (start, end) if start - 1 <= at <= end - 1 else (at + 1, at + 1 + end - start)
    s = max(1, s)  # lines removed above it: the passage's first lines went with them
    e = max(s, min(e, len(lines)))
    new_match = at + 1
    fact = fact_span(lines, at, _terms(b.queries))
    return "ok", s, e, new_match, lines[s - 1 : e], (fact[0] + 1, fact[1] + 1, fact[2]) if fact else None


def live_check(workspace: Path, c: Candidate) -> None:
    """Find the candidate's fact in its daily file as it is now (by content, so lines inserted
    above it move it); mark it changed or deleted when it is not there any more."""
    lines = _read_lines(workspace, c.path)
    if lines is None:
        c.status, c.lines = "deleted", []
        return
    want = c.fact.rstrip("…").strip()
    old = c.fact_start - 1
    spots = []
    terms = _terms(c.queries)
    for i in range(len(lines)):
        got = fact_span(lines, i, terms)
        if got and (got[2] == c.fact or (c.fact.endswith("…") and got[2].startswith(want))):
            spots.append((abs(got[0] - old), got))
    if not c.fact or not spots:
        c.status, c.lines = "changed", lines[c.start - 1 : c.end]
        return
    _, (a, b, _) = min(spots)
    shift = a + 1 - c.fact_start
    c.start, c.fact_start, c.fact_end = max(1, c.start + shift), a + 1, b + 1
    c.end = max(c.start, min(c.end + shift, len(lines)))
    if c.match is not None:
        c.match += shift
    c.lines, c.status = lines[c.start - 1 : c.end], "ok"


def promoted_keys(text: str) -> set[str]:
    return {m.strip() for m in MARKER_RE.findall(text)}


def _overlaps(c_path: str, s: int, e: int, spans: list[tuple[str, int, int]]) -> bool:
    return any(p == c_path and s <= pe and ps <= e for p, ps, pe in spans)


def _kept_text(ws: Path) -> str:
    """MEMORY.md and the archive of promoted bullets: a fact in either is already promoted."""
    out = files.read_file(memory_path(ws)).text
    archive = ws / ARCHIVE
    if archive.is_file():
        out += "\n" + archive.read_text(encoding="utf-8", errors="replace")
    return out


def preview(engine, gates: Gates = COMMAND, *, limit: int | None = None, include_promoted: bool = False,
            now: float | None = None) -> tuple[list[Candidate], list[str]]:
    """The facts that pass the gates, best first, each found again in its live file; and
    notes (an unreadable OpenClaw store). Rejected facts are never offered again."""
    cfg, ws = engine.cfg, engine.workspace
    now = time.time() if now is None else now
    bundles = [_Bundle(r.path, r.start, r.end, 1, r.score, {r.query_hash}, {r.query: r.ts}, {r.day}, r.ts, r.snippet,
                       r.ts, {"clawmem"}, match=r.match_line) for r in recall.recalls(cfg)]
    theirs, note = read_openclaw(ws)
    notes = [note] if note else []
    decided = recall.decisions_with_text(cfg)
    # a fact is rejected by its text (the other facts of its section stay); a rejection without
    # one (an older clawmem's, or a passage with no fact) by its lines
    rejected = [(p, s, e) for p, s, e, d, t in decided if d == "rejected" and not t]
    rejected_facts = {_fact_key(t) for _, _, _, d, t in decided if d == "rejected" and t}
    kept_text = _kept_text(ws)
    marked = promoted_keys(kept_text)
    marked_facts = {f[1] for f in map(key_fact, marked) if f}
    kept_facts = {_fact_key(f) for f in _memory_facts(kept_text)}
    cache: dict[str, list[str] | None] = {}

    # each passage's fact, found in its live file; the same fact in several logs is one candidate
    groups: dict[str, list[tuple[_Bundle, tuple]]] = {}
    for b in _clusters(bundles + theirs):
        if is_skeleton(b.best_span()[2]) or _overlaps(b.path, b.start, b.end, rejected):
            continue
        found = _find(ws, b, cache)
        fact = found[5]
        if fact is not None and _fact_key(fact[2]) in rejected_facts:
            continue
        key = f"fact:{_fact_key(fact[2])}" if fact else f"at:{b.path}:{b.start}"
        groups.setdefault(key, []).append((b, found))

    out: list[Candidate] = []
    for members in groups.values():
        members.sort(key=lambda m: (-m[0].signal_count, m[0].path))
        b = _copy(members[0][0])
        for other, _ in members[1:]:
            b.add_counts(other)
        status, start, end, match, lines, fact = members[0][1]
        if b.signal_count < gates.min_recall_count or diversity_count(b) < gates.min_unique_queries:
            continue
        if gates.max_age_days is not None and (now - b.last) / 86400 > gates.max_age_days:
            continue
        sig = signals(b, now)
        score = _clamp(sum(WEIGHTS[k] * v for k, v in sig.items()))
        if score < gates.min_score:
            continue
        if status == "ok" and fact is None:
            continue  # the matched lines hold no words: a heading alone
        if fact is not None:  # by the fact: its hash in a marker, or its text in MEMORY.md or the archive
            done = b.promoted or fact_hash(fact[2]) in marked_facts or _fact_key(fact[2]) in kept_facts
        else:  # no fact to name (edited or deleted since): the windows its recalls cited
            done = b.promoted or bool({f"memory:{m.path}:{s}:{e}" for m, _ in members for s, e in m.spans} & marked)
        if done and not include_promoted:
            continue
        queries = [q for q, _ in sorted(b.queries.items(), key=lambda kv: -kv[1])]
        also = []
        for m, f in members[1:]:
            if f[5] is not None:
                also.append(f"{m.path}#L{f[5][0]}" if f[5][0] == f[5][1] else f"{m.path}#L{f[5][0]}-L{f[5][1]}")
        cand = Candidate(b.path, start, end, round(score, 4), {k: round(v, 4) for k, v in sig.items()},
                         b.count, queries, len(b.hashes), sorted(b.days), round(b.total / max(1, b.signal_count), 4),
                         dt.datetime.fromtimestamp(b.last).astimezone().isoformat(timespec="seconds"),
                         members[0][0].best_span()[2], "both" if len(b.origin) > 1 else next(iter(b.origin)),
                         promoted=done, status=status, lines=lines, match=match, also=sorted(set(also)),
                         grounded=b.grounded)
        if fact is not None:
            cand.fact_start, cand.fact_end, cand.fact = fact
        cand.also = [a for a in cand.also if a != cand.fact_citation]  # one fact reached through two of its lines
        out.append(cand)
    out.sort(key=lambda c: (-c.score, -c.recalls, c.path, c.start))
    kept: list[Candidate] = []
    for c in out:
        twin = next((k for k in kept if similarity(c.fact or c.snippet, k.fact or k.snippet) >= SIMILAR), None)
        if twin is not None:
            twin.also = sorted((set(twin.also) | {c.fact_citation} | set(c.also)) - {twin.fact_citation})
            continue
        kept.append(c)
    # contradictions: with each other and with what MEMORY.md says now
    memory_text = files.read_file(memory_path(ws)).text
    memory_lines = _memory_facts(memory_text, standing=True)
    standing = [(k, f) for k, f, struck in promoted_facts(memory_text) if not struck]
    for c in kept:
        if not c.fact:
            continue
        c.conflicts = [f"{k.fact} ({k.fact_citation})" for k in kept if k is not c and k.fact and contradicts(c.fact, k.fact)]
        c.conflicts += [f"{ln} (MEMORY.md)" for ln in memory_lines if contradicts(c.fact, ln)]
        c.replaces = [k for k, f in standing if contradicts(c.fact, f)]
    return (kept if limit is None else kept[:limit]), notes


# ---------------------------------------------------------------------------- writing


def memory_path(workspace: Path) -> Path:
    return files.memory_file(workspace)


def _write_memory(engine, target: Path, transform) -> None:
    """The one place this feature writes MEMORY.md, DREAMS.md or the archive: `transform(current
    text) -> new text` through the memory-file writer (under the file's lock, redone if anyone
    wrote meanwhile), credited to clawmem promote in the journal."""
    from ..files import memfile

    try:
        memfile.rewrite(engine.workspace, target.relative_to(engine.workspace).as_posix(), transform, writer=WRITER)
    except (memfile.Refused, memfile.ChangedOnDisk) as exc:
        raise PromoteError(str(exc) or f"{target.name}: kept changing while we wrote; nothing was written, try again") from None
    except OSError as exc:
        raise PromoteError(f"{target.name}: cannot write ({exc.strerror or exc})") from None


def _journaled(engine, jr, target: Path, transform) -> int | None:
    """One journaled write: what is there now is recorded first, so the write is its own version."""
    rel = target.relative_to(engine.workspace).as_posix()
    if jr is not None:
        jr.observe_file(rel, target)
    _write_memory(engine, target, transform)
    version = jr.observe_file(rel, target, WRITER) if jr is not None else None
    return version.id if version else None


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
    archived: int = 0  # older promoted bullets moved to the archive first, to keep MEMORY.md within its budget
    superseded: list[str] = field(default_factory=list)  # keys of the promoted bullets this one superseded

    def as_json(self) -> dict:
        return asdict(self)


def _open_journal(cfg):
    return journal.Journal(cfg) if cfg["journal.enabled"] else None


def apply(engine, candidates: list[Candidate], *, edits: dict[str, str] | None = None,
          confirmed: set[str] | None = None, supersede: set[str] | None = None,
          today: dt.date | None = None) -> list[Outcome]:
    """Promote each candidate's fact into MEMORY.md, one write and one journal version each,
    after finding it again in the live file; then a dated summary in DREAMS.md (journaled).
    `edits` maps a candidate's key to the text a person wrote for it; a candidate that
    contradicts another fact is written only when its key is in `confirmed` or `edits` (a
    person looked at both). A candidate whose key is in `supersede` is written and the promoted
    bullets it contradicts are marked superseded by it (kept, struck, dated; `reinstate` undoes
    the mark alone), one more journaled write. Raises PromoteError when a file cannot be written (the outcomes so
    far are kept in DREAMS.md first)."""
    cfg, ws = engine.cfg, engine.workspace
    today = today or dt.date.today()
    target = memory_path(ws)
    rel = target.name
    edits = {k.strip(): v for k, v in (edits or {}).items()}
    supersede = set(supersede or ())
    confirmed = set(confirmed or ()) | set(edits) | supersede
    outcomes: list[Outcome] = []
    jr = _open_journal(cfg)
    error = None
    limit = int(cfg[BUDGET_KEY])
    written: set[str] = set()  # fact hashes promoted by this run: never archived to make room for the next
    try:
        for c in candidates:
            key, citation = c.key, c.fact_citation
            live_check(ws, c)  # again: the file may have changed since the preview
            if c.status != "ok":
                why = "deleted since it was recalled" if c.status == "deleted" else "edited since it was recalled"
                outcomes.append(Outcome(key, citation, False, why))
                continue
            current = _kept_text(ws)
            kept_hashes = {f[1] for f in map(key_fact, promoted_keys(current)) if f}
            if fact_hash(c.fact or c.snippet) in kept_hashes or _fact_key(c.fact) in {
                    _fact_key(f) for f in _memory_facts(current)}:
                outcomes.append(Outcome(key, citation, False, f"already in {rel}"))
                continue
            # what it contradicts now: the candidates it was shown with, and MEMORY.md as it is
            # now (a fact written earlier in this run or since the preview counts too)
            now_conflicts = list(c.conflicts) + [f"{ln} ({rel})" for ln in _memory_facts(files.read_file(target).text, standing=True)
                                                 if c.fact and contradicts(c.fact, ln) and f"{ln} ({rel})" not in c.conflicts]
            if now_conflicts and not any(same_fact(key, k) for k in confirmed):
                outcomes.append(Outcome(key, citation, False, "contradicts " + "; ".join(now_conflicts)
                                        + f": review both (the Promote screen, or clawmem promote --apply --confirm {key})"))
                continue
            body = _body(next((v for k, v in edits.items() if same_fact(key, k)), None) or c.text())
            if not body:
                outcomes.append(Outcome(key, citation, False, "empty text"))
                continue
            fact = _bullet(c, body)
            archived = 0
            superseding = any(same_fact(key, k) for k in supersede)

            def grown(cur: str, fact=fact, superseding=superseding, c=c, body=body) -> str:
                """MEMORY.md with this bullet and, superseding, the marks it adds: what the budget must hold."""
                new = files.add_bullet(cur, _section(today), fact)[0]
                return _mark_all(new, _contradicted(new, c), "superseded", today, body) if superseding else new

            def over(cur: str) -> int:
                return max(0, len(grown(cur)) - limit) if limit > 0 else 0

            try:
                # the budget is kept before writing: the oldest promoted bullets (never one of
                # this run's) go to the archive first, as OpenClaw compacts; what still does not fit waits
                need = over(files.read_file(target).text)
                if need > 0:
                    archived = _archive_blocks(engine, jr, _oldest_promoted(files.read_file(target).text, need, written), today)
                    need = over(files.read_file(target).text)
                if need > 0:
                    outcomes.append(Outcome(key, citation, False, _no_room(rel, need, limit), archived=archived))
                    continue

                def add(cur: str, fact=fact) -> str:
                    if over(cur):  # someone wrote meanwhile: never past the budget
                        raise _OverBudget(over(cur))
                    return files.add_bullet(cur, _section(today), fact)[0]

                version = _journaled(engine, jr, target, add)
            except _OverBudget as over:
                outcomes.append(Outcome(key, citation, False, _no_room(rel, over.args[0], limit), archived=archived))
                continue
            except PromoteError as exc:
                error = exc
                break
            written.add(fact_hash(c.fact or c.snippet))
            replaced: list[str] = []
            old = _contradicted(files.read_file(target).text, c) if superseding else []
            if old:
                try:  # its own journal version: reinstate, or restore of that version, undoes the mark alone
                    _journaled(engine, jr, target, lambda cur, old=old, body=body: _mark_all(cur, old, "superseded", today, body))
                    replaced = old
                except PromoteError as exc:
                    error = exc
            recall.decide(cfg, c.path, c.start, c.end, "promoted", body)
            outcomes.append(Outcome(c.key, c.fact_citation, True, text=body, version=version, archived=archived,
                                    superseded=replaced))
            if error is not None:
                break
        if outcomes:
            budget = budget_state(engine)
            _journaled(engine, jr, ws / "DREAMS.md", lambda cur: _dreams_summary(cur, outcomes, candidates, rel, budget))
    finally:
        if jr is not None:
            jr.close()
    if error is not None:
        raise error
    return outcomes


def _dreams_head(current: str) -> str:
    head = current.rstrip("\n")
    return head + "\n\n" if head else "# Dreams\n\n"


def _dreams_summary(current: str, outcomes: list[Outcome], candidates: list[Candidate], rel: str, budget: dict) -> str:
    stamp = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
    done = sum(o.promoted for o in outcomes)
    lines = [f"## Promotion {stamp}", "", f"{done} of {len(outcomes)} promoted to {rel} by clawmem promote."]
    for o in outcomes:
        c = next((c for c in candidates if same_fact(o.key, c.key)), None)  # its own candidate: keys name facts
        how = f" (score {c.score:.3f}, {c.recalls} recalls, {c.unique_queries} queries)" if c else ""
        what = f"{_normal(c.fact)} ({c.fact_citation})" if c and c.fact else o.citation
        lines.append(f"- {'promoted' if o.promoted else 'skipped, ' + o.reason}: {what}{how}")
        for k in o.superseded:
            lines.append(f"  - superseding {k} (kept, struck; clawmem promote --reinstate {k} undoes it)")
    moved = sum(o.archived for o in outcomes)
    if moved:
        lines.append(f"- {moved} oldest promoted bullet{'s' * (moved != 1)} moved to {ARCHIVE} first, to keep {rel} "
                     f"within its budget of {budget['limit']} characters")
    if budget["over"] > 0:
        lines.append(f"- {rel} is {budget['chars']} characters, over its budget of {budget['limit']}: "
                     f"clawmem promote --archive moves the {len(budget['archive'])} oldest promoted bullets to {ARCHIVE}")
    return _dreams_head(current) + "\n".join(lines) + "\n"


def reject(engine, c: Candidate) -> None:
    """Remember that a person does not want this fact promoted: it is not offered again, and
    DREAMS.md (journaled) says so."""
    recall.decide(engine.cfg, c.path, c.start, c.end, "rejected", c.fact or None)
    stamp = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
    entry = f"## Rejected {stamp}\n\n- {_normal(c.fact) or _normal(c.snippet)[:FACT_CHARS]} ({c.fact_citation})\n"
    jr = _open_journal(engine.cfg)
    try:
        _journaled(engine, jr, engine.workspace / "DREAMS.md", lambda cur: _dreams_head(cur) + entry)
    finally:
        if jr is not None:
            jr.close()


# ---------------------------------------------------------------------------- superseded and retired facts

# A promoted bullet that no longer holds stays in MEMORY.md, struck, with one status line under
# it saying when and why; `clawmem context` leaves it out. Reinstating removes exactly what
# marking added, so either is undone alone, whatever was promoted since.
STRUCK_RE = re.compile(r"^~~.*~~$")
STATUS_RE = re.compile(r"<!--\s*clawmem:(superseded|retired)\s*-->")


def promoted_facts(text: str) -> list[tuple[str, str, bool]]:
    """(key, fact text, struck) of every promoted bullet of MEMORY.md carrying a marker."""
    lines = text.split("\n")
    out = []
    for _, a, b in _promoted_bullets(text):
        block = lines[a : b + 1]
        keys = [m.strip() for ln in block for m in MARKER_RE.findall(ln)]
        first = _strip_marker(block[0])
        struck = bool(STRUCK_RE.match(first)) and any(STATUS_RE.search(ln) for ln in block)
        body = first[2:-2] if struck else first
        body = re.sub(r"\s*\((?:memory/[^()]*#L\d+[^()]*)\)\s*$", "", body)
        out.append((keys[0], body, struck))
    return out


def _block_of(text: str, key: str) -> tuple[int, int] | None:
    lines = text.split("\n")
    for _, a, b in _promoted_bullets(text):
        if any(same_fact(key, m.strip()) for ln in lines[a : b + 1] for m in MARKER_RE.findall(ln)):
            return a, b
    return None


def _mark(text: str, key: str, how: str, day: dt.date, by: str = "") -> str:
    """`text` with the promoted bullet of `key` struck and a status line under it."""
    at = _block_of(text, key)
    if at is None:
        raise PromoteError(f"MEMORY.md: no promoted fact with the key {key}; clawmem promote --json --include-promoted lists them")
    a, b = at
    lines = text.split("\n")
    first = lines[a]
    if STRUCK_RE.match(first[2:]) and any(STATUS_RE.search(ln) for ln in lines[a : b + 1]):
        raise PromoteError(f"MEMORY.md: the fact {key} is already superseded or retired; clawmem promote --reinstate {key} restores it")
    why = f"superseded {day.isoformat()} by: {_normal(by)}" if how == "superseded" else f"retired {day.isoformat()}, no longer true"
    lines[a] = f"- ~~{first[2:]}~~"
    lines.insert(b + 1, f"  _{why}_ <!-- clawmem:{how} -->")
    return "\n".join(lines)


def _contradicted(text: str, c: Candidate) -> list[str]:
    """Keys of the standing promoted bullets of `text` that candidate `c`'s fact contradicts."""
    return [k for k, f, struck in promoted_facts(text) if not struck and not same_fact(k, c.key) and contradicts(c.fact, f)]


def _mark_all(text: str, keys: list[str], how: str, day: dt.date, by: str = "") -> str:
    for k in keys:
        text = _mark(text, k, how, day, by)
    return text


def _unmark(text: str, key: str) -> str:
    at = _block_of(text, key)
    if at is None:
        raise PromoteError(f"MEMORY.md: no promoted fact with the key {key}; clawmem promote --json --include-promoted lists them")
    a, b = at
    lines = text.split("\n")
    status = [i for i in range(a, b + 1) if STATUS_RE.search(lines[i])]
    if not status or not STRUCK_RE.match(lines[a][2:]):
        raise PromoteError(f"MEMORY.md: the fact {key} is neither superseded nor retired; nothing to reinstate")
    for i in reversed(status):
        del lines[i]
    lines[a] = "- " + lines[a][4:-2]
    return "\n".join(lines)


def _note_dreams(engine, jr, entry: str) -> None:
    _journaled(engine, jr, engine.workspace / "DREAMS.md", lambda cur: _dreams_head(cur) + entry)


def retire(engine, key: str, today: dt.date | None = None) -> str:
    """Mark the promoted fact of `key` retired (no longer true): kept in MEMORY.md, struck and
    dated, left out of `clawmem context`; a journaled write, and DREAMS.md says so. Returns the fact."""
    return _set_mark(engine, key, "retired", today)


def reinstate(engine, key: str) -> str:
    """Undo a supersede or retire of one promoted fact, and only that: the bullet is as it was."""
    return _set_mark(engine, key, None, None)


def _set_mark(engine, key: str, how: str | None, today: dt.date | None) -> str:
    target = memory_path(engine.workspace)
    text = files.read_file(target).text
    fact = next((f for k, f, _ in promoted_facts(text) if same_fact(key, k)), None)
    if fact is None:
        raise PromoteError(f"MEMORY.md: no promoted fact with the key {key}; clawmem promote --json --include-promoted lists them")
    day = today or dt.date.today()
    transform = (lambda cur: _mark(cur, key, how, day)) if how else (lambda cur: _unmark(cur, key))
    transform(text)  # refused before anything is written (not promoted, already marked, not marked)
    stamp = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M")
    jr = _open_journal(engine.cfg)
    try:
        _journaled(engine, jr, target, transform)
        _note_dreams(engine, jr, f"## {'Retired' if how else 'Reinstated'} {stamp}\n\n- {fact} ({key})\n")
    finally:
        if jr is not None:
            jr.close()
    return fact


def standing_text(text: str) -> tuple[str, int]:
    """MEMORY.md without its superseded and retired bullets (what an agent should still
    believe), and how many were left out."""
    lines = text.split("\n")
    drop: set[int] = set()
    n = 0
    for _, a, b in _promoted_bullets(text):
        if STRUCK_RE.match(lines[a][2:]) and any(STATUS_RE.search(lines[i]) for i in range(a, b + 1)):
            drop.update(range(a, b + 1))
            n += 1
    return "\n".join(ln for i, ln in enumerate(lines) if i not in drop), n


# ---------------------------------------------------------------------------- the budget


BUDGET_KEY = "promote.memoryFileMaxChars"
PROMOTED_HEADING_RE = re.compile(r"^## " + re.escape(SECTION) + r" \((\d{4}-\d{2}-\d{2})\)\s*$")


def _promoted_bullets(text: str) -> list[tuple[str, int, int]]:
    """(section date, first line, last line) of every promoted bullet (one carrying its
    promotion marker) under a promoted section, oldest section first (in file order within
    one): a bullet is its line and the lines indented under it."""
    lines = text.split("\n")
    out = []
    day = None
    i = 0
    while i < len(lines):
        m = PROMOTED_HEADING_RE.match(lines[i])
        if m:
            day = m.group(1)
        elif HEADING_RE.match(lines[i]):
            day = None
        elif day and lines[i].startswith("- "):
            j = i
            while j + 1 < len(lines) and lines[j + 1].startswith("  ") and lines[j + 1].strip():
                j += 1
            if any(MARKER_RE.search(lines[k]) for k in range(i, j + 1)):  # a promotion's, not a line someone added there
                out.append((day, i, j))
            i = j
        i += 1
    return sorted(out, key=lambda b: (b[0], b[1]))


def budget_state(engine, adding: int = 0) -> dict:
    """MEMORY.md's size against its budget (OpenClaw's memoryFileMaxChars, 10 000 by default;
    0 turns it off) after `adding` more characters, and the oldest promoted bullets that would
    bring it back under: offered for the archive, never dropped."""
    limit = int(engine.cfg[BUDGET_KEY])
    text = files.read_file(memory_path(engine.workspace)).text
    chars = len(text) + adding
    over = max(0, chars - limit) if limit > 0 else 0
    lines = text.split("\n")
    archive, freed = [], 0
    for day, a, b in _promoted_bullets(text) if over else []:
        if freed >= over:
            break
        block = "\n".join(lines[a : b + 1])
        archive.append({"date": day, "text": block})
        freed += len(block) + 1
    return {"limit": limit, "chars": chars, "over": over, "archive": archive}


class _OverBudget(Exception):
    """MEMORY.md would pass its budget (args[0]: by how many characters)."""


def _body(text: str) -> str:
    """A bullet's text: one line of normalised spaces, or, for a fact holding a code block, its
    lines as written (a fence's lines are not prose)."""
    if any(FENCE_RE.match(ln) for ln in text.split("\n")):
        return "\n".join(ln.rstrip() for ln in text.strip("\n").split("\n"))
    return _normal(text)


def _bullet(c: Candidate, body: str) -> str:
    """What add_bullet writes for a promotion: the text, its citations (on its first line, so a
    code block's closing fence stays a fence), OpenClaw's marker."""
    first, _, rest = body.partition("\n")
    return f"{first} ({c.entry_citation})" + (f"\n{rest}" if rest else "") + f"\n<!-- openclaw-memory-promotion:{c.key} -->"


def _overflow(text: str, fact: str, today: dt.date, limit: int) -> int:
    """How many characters past the budget MEMORY.md would be with this bullet (0: it fits)."""
    return max(0, len(files.add_bullet(text, _section(today), fact)[0]) - limit) if limit > 0 else 0


def _no_room(rel: str, need: int, limit: int) -> str:
    return (f"{rel} would be {need} characters over its budget of {limit} (promote.memoryFileMaxChars) and no older "
            f"promoted bullet is left to archive: shorten {rel}, or raise promote.memoryFileMaxChars")


def _oldest_promoted(text: str, need: int, spare: set[str] = frozenset()) -> list[str]:
    """The oldest promoted bullets whose removal frees at least `need` characters (all there
    are, when they free less), skipping those whose fact hash is in `spare`."""
    lines = text.split("\n")
    out, freed = [], 0
    for _, a, b in _promoted_bullets(text):
        if freed >= need:
            break
        block = "\n".join(lines[a : b + 1])
        if any(f and f[1] in spare for f in map(key_fact, promoted_keys(block))):
            continue
        out.append(block)
        freed += len(block) + 1
    return out


def _archive_blocks(engine, jr, blocks: list[str], today: dt.date) -> int:
    """Move these promoted bullets from MEMORY.md to the archive: appended there first, then
    removed from MEMORY.md, each a journaled write (restore undoes either). Returns how many."""
    if not blocks:
        return 0
    ws = engine.workspace

    def to_archive(cur: str) -> str:
        head = cur.rstrip("\n")
        head = head + "\n\n" if head else "# Promoted memories archived from MEMORY.md\n\n"
        return head + f"## Archived {today.isoformat()}\n" + "\n".join(blocks) + "\n"

    _journaled(engine, jr, ws / ARCHIVE, to_archive)

    def from_memory(cur: str) -> str:
        for block in blocks:
            at = cur.find(block + "\n")
            if at >= 0:
                cur = cur[:at] + cur[at + len(block) + 1 :]
        # a promoted section left without bullets loses its heading too
        return re.sub(r"(?m)^## " + re.escape(SECTION) + r" \(\d{4}-\d{2}-\d{2}\)\n(?=\n*(?:## |\Z))\n*", "", cur)

    _journaled(engine, jr, memory_path(ws), from_memory)
    return len(blocks)


def forecast(engine, candidates: list[Candidate], today: dt.date | None = None) -> dict:
    """What `apply` would do to MEMORY.md's size, without writing: the candidates it would
    write (not promoted, found, no contradiction), in order, each after archiving the oldest
    promoted bullets it needs room for. {chars, after, limit, archive (bullets it would move),
    unfit (keys that would not fit)}."""
    today = today or dt.date.today()
    limit = int(engine.cfg[BUDGET_KEY])
    text = files.read_file(memory_path(engine.workspace)).text
    chars, archive, unfit, spare = len(text), 0, [], set()
    for c in candidates:
        if c.promoted or c.status != "ok" or c.conflicts or not c.fact:
            continue
        fact = _bullet(c, _body(c.text()))
        need = _overflow(text, fact, today, limit)
        if need > 0:
            for block in _oldest_promoted(text, need, spare):
                text = text.replace(block + "\n", "", 1)
                archive += 1
            need = _overflow(text, fact, today, limit)
        if need > 0:
            unfit.append(c.key)
            continue
        text = files.add_bullet(text, _section(today), fact)[0]
        spare.add(fact_hash(c.fact))
    return {"chars": chars, "after": len(text), "limit": limit, "archive": archive, "unfit": unfit}


def archive_oldest(engine, today: dt.date | None = None) -> dict:
    """Move the oldest promoted bullets out of MEMORY.md until it is within its budget: first
    appended to memory/promoted-archive.md, then removed from MEMORY.md, each a journaled write
    (restore undoes either). Returns what moved."""
    state = budget_state(engine)
    if not state["archive"]:
        return {"moved": 0, **state}
    today = today or dt.date.today()
    blocks = [b["text"] for b in state["archive"]]
    jr = _open_journal(engine.cfg)
    try:
        _archive_blocks(engine, jr, blocks, today)
    finally:
        if jr is not None:
            jr.close()
    return {"moved": len(blocks), **budget_state(engine)}


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
