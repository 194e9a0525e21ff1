"""Search: keyword (FTS5 BM25) and vector candidates, fusion, decay, MMR, threshold (SPEC §3, §5).

Order: candidates → fuse → decay → sort → MMR → minScore → maxResults. Every score is on
one 0..1 scale; what the threshold hides is counted and reported, never silently dropped.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import time
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    import numpy as np

from . import ranking
from .store import OperationalError, Store
from .text import CJK_RE, STOPWORDS, WORD_RE, index_tokens, is_cjk, mmr_tokens, normalize, query_terms, relaxed_terms
from .workspace import is_evergreen

SNIPPET_CHARS = 700


class Options:
    """One search's settings. Plain classes here, not dataclasses: importing dataclasses (and the
    inspect module it needs) was a fifth of a `clawmem search`'s imports (issue 14)."""

    def __init__(self, max_results: int, min_score: float, *, min_score_explicit: bool = False,
                 candidates: int = 24, fusion: str = "relative", vector_weight: float = 0.7, text_weight: float = 0.3,
                 rrf_k: int = 60, decay: bool = False, half_life: float = 30.0, mmr: bool = False,
                 mmr_lambda: float = 0.7, now: dt.datetime | None = None, after: dt.date | None = None,
                 before: dt.date | None = None, explain: bool = False, show_hidden: bool = False,
                 sources: tuple[str, ...] = ("memory",), merge_chars: int = 3200, keyword_side: bool = True,
                 context_lines: int = 5):
        self.max_results = max_results
        self.min_score = min_score
        self.min_score_explicit = min_score_explicit
        self.candidates = candidates
        self.fusion = fusion
        self.vector_weight = vector_weight
        self.text_weight = text_weight
        self.rrf_k = rrf_k
        self.decay = decay
        self.half_life = half_life
        self.mmr = mmr
        self.mmr_lambda = mmr_lambda
        self.now = now
        self.after = after
        self.before = before  # exclusive
        self.explain = explain
        self.show_hidden = show_hidden
        self.sources = sources
        self.merge_chars = merge_chars  # overlapping hits of one file merge up to two chunks' worth
        self.keyword_side = keyword_side  # false: query.hybrid.enabled = false (vector-only when vectors exist)
        self.context_lines = context_lines  # a citation is the matched lines and this many each side (query.contextLines)


class Candidate:
    __slots__ = ("id", "kw_rank", "kw_bm25", "kw_strict", "vec_rank", "vec_cos", "vec_score", "vec_z", "score", "rank", "parts", "row")

    def __init__(self, id: int, *, kw_rank: int | None = None, kw_bm25: float | None = None, kw_strict: bool = False,
                 vec_rank: int | None = None, vec_cos: float | None = None, vec_score: float | None = None):
        self.id = id
        self.kw_rank = kw_rank
        self.kw_bm25 = kw_bm25
        self.kw_strict = kw_strict
        self.vec_rank = vec_rank
        self.vec_cos = vec_cos
        self.vec_score = vec_score
        self.vec_z: float | None = None  # the cosine's standing above the query's background, for every candidate (relative fusion)
        self.score = 0.0  # the reported confidence, 0..1
        self.rank = 0.0  # the order key: fused score relative to the best, after decay
        self.parts: dict = {}
        self.row: tuple | None = None  # path, source, start, end, text, ts, linemap, day, mtime_ns


def fts_query(terms: list[str], joiner: str) -> str | None:
    if not terms:
        return None
    return f" {joiner} ".join('"' + t.replace('"', '""') + '"' for t in terms)


def _filter_sql(opts: Options) -> tuple[str, list]:
    """The sources and dates asked for, as " and ..." SQL over chunks c / files fl, and its arguments."""
    date_sql, date_args = _date_sql(opts)
    return f" and c.source in ({','.join('?' * len(opts.sources))}){date_sql}", [*opts.sources, *date_args]


def _date_sql(opts: Options) -> tuple[str, list]:
    """Restrict to dated chunks in [after, before): daily logs by their name, sessions by time."""
    if not (opts.after or opts.before):
        return "", []
    lo = opts.after or dt.date(1, 1, 1)
    hi = opts.before or dt.date(9999, 12, 31)
    lo_ts = dt.datetime.combine(lo, dt.time()).timestamp() if lo.year > 1 else -1e18
    hi_ts = dt.datetime.combine(hi, dt.time()).timestamp() if hi.year < 9999 else 1e18
    sql = (
        " and ((fl.day is not null and fl.day >= ? and fl.day < ?)"
        " or (c.source = 'sessions' and c.ts is not null and c.ts >= ? and c.ts < ?))"
    )
    return sql, [lo.isoformat(), hi.isoformat(), lo_ts, hi_ts]


OR_POSTINGS = 2000  # the relaxed pass scores about this many chunks at most (issue 11: long questions)


def doc_freqs(store: Store, terms: list[str], cap: int | None = None) -> dict[str, int]:
    """How many chunks hold each term, counted up to `cap` (reading a common word's whole
    posting list is the cost being avoided). FTS5 itself matches each term, so its tokenizer
    (diacritics folded) decides, as it does for the search."""
    count = "select count(*) from (select 1 from chunks_fts where chunks_fts match ? limit ?)"
    cap = cap or OR_POSTINGS + 1
    return {t: store.conn.execute(count, (fts_query([t], "AND"), cap)).fetchone()[0] for t in terms}


def selective_terms(terms: list[str], df: dict[str, int], budget: int | None = None) -> list[str]:
    """The query's rarest keywords whose chunks add up to about `budget` (at least the rarest
    one), in query order. An OR of every word of a long question makes FTS5 score most of a
    big index; the common words it leaves out weigh little in BM25 anyway."""
    budget = budget or OR_POSTINGS
    keep: set[str] = set()
    total = 0
    for t in sorted((t for t in terms if df.get(t)), key=lambda t: df[t]):
        if keep and total + df[t] > budget:
            break
        keep.add(t)
        total += df[t]
    return [t for t in terms if t in keep]


def keyword_candidates(store: Store, query: str, opts: Options) -> tuple[list[Candidate], dict]:
    """Strict AND first; if it finds fewer than the pool needs, relaxed OR hits fill the rest below them."""
    info: dict[str, Any] = {"strict": 0, "relaxed": 0}
    terms = query_terms(query)
    relaxed = relaxed_terms(query)
    df = doc_freqs(store, relaxed)
    info["df"] = df
    out: list[Candidate] = []
    seen: set[int] = set()
    strict = fts_query(terms, "AND") if strict_can_match(store, terms, df) else None
    if strict:
        for rowid, r in ranked_matches(store, strict, opts):
            out.append(Candidate(rowid, kw_rank=len(out) + 1, kw_bm25=r, kw_strict=True))
            seen.add(rowid)
        info["strict"] = len(out)
    if len(out) < opts.candidates:
        chosen = selective_terms(relaxed, df)
        q = fts_query(chosen, "OR")
        if q and not (strict and relaxed == terms and len(terms) <= 1):
            for rowid, r in ranked_matches(store, q, opts):
                if rowid in seen:
                    continue
                out.append(Candidate(rowid, kw_rank=len(out) + 1, kw_bm25=r))
                seen.add(rowid)
                if len(out) >= opts.candidates:
                    break
            info["relaxed"] = len(out) - info["strict"]
            info["orTerms"] = chosen
    info["terms"] = terms
    return out, info


def ranked_matches(store: Store, match: str, opts: Options) -> list[tuple[int, float]]:
    """The best `opts.candidates` chunks (id, bm25) for an FTS5 query, within the sources and
    dates asked for. FTS5 ranks alone first and the few it returns are filtered after (joining
    every match to its row doubled a long question's time); only when the filter leaves too
    few of them is the whole join run, so the answer is the same either way."""
    n = opts.candidates
    conn = store.conn
    top = conn.execute("select rowid, bm25(chunks_fts) as r from chunks_fts where chunks_fts match ? order by r limit ?", (match, 2 * n)).fetchall()
    if not top:
        return []
    filter_sql, filter_args = _filter_sql(opts)
    ids = [i for i, _ in top]
    ok = {r[0] for r in conn.execute(
        f"select c.id from chunks c left join files fl on fl.path = c.path where c.id in ({','.join('?' * len(ids))}){filter_sql}",
        (*ids, *filter_args))}
    kept = [(i, r) for i, r in top if i in ok]
    if len(kept) >= n or len(top) < 2 * n:  # enough, or every match was looked at
        return kept[:n]
    sql = (
        "select f.rowid, bm25(chunks_fts) as r from chunks_fts f join chunks c on c.id = f.rowid"
        " left join files fl on fl.path = c.path"
        f" where chunks_fts match ?{filter_sql} order by r limit ?"
    )
    return conn.execute(sql, (match, *filter_args, n)).fetchall()


def strict_can_match(store: Store, terms: list[str], df: dict[str, int]) -> bool:
    """False when no chunk can hold every term, found cheaply: a keyword no chunk holds, or no
    chunk holding all the keywords. The full AND also reads the posting lists of the question's
    stop words ("what", "the", "i"), the slow part of a long question's strict pass."""
    if not terms:
        return False
    keys = [t for t in terms if t in df]
    if any(df[t] == 0 for t in keys):
        return False
    if len(keys) < 2 or len(keys) == len(terms):
        return True
    rarest_first = sorted(keys, key=lambda t: df[t])
    # the four rarest first: their short posting lists answer in ~0.1 ms, and a long question's
    # rare words seldom share a chunk; the common ones' long lists make the whole AND cost ms
    for n in sorted({min(4, len(keys)), len(keys)}):
        q = fts_query(rarest_first[:n], "AND")
        if store.conn.execute("select 1 from chunks_fts where chunks_fts match ? limit 1", (q,)).fetchone() is None:
            return False
    return True


def date_filtered_ids(store: Store, opts: Options) -> list[int]:
    filter_sql, filter_args = _filter_sql(opts)
    return [
        r[0]
        for r in store.conn.execute(
            f"select c.id from chunks c left join files fl on fl.path = c.path where 1=1{filter_sql}",
            filter_args,
        )
    ]


def load_rows(store: Store, ids: list[int]) -> dict[int, tuple]:
    rows: dict[int, tuple] = {}
    for i in range(0, len(ids), 900):
        part = ids[i : i + 900]
        marks = ",".join("?" * len(part))
        for r in store.conn.execute(
            "select c.id, c.path, c.source, c.start_line, c.end_line, c.text, c.ts, c.linemap, fl.day, fl.mtime_ns"
            f" from chunks c left join files fl on fl.path = c.path where c.id in ({marks})",
            part,
        ):
            rows[r[0]] = r[1:]
    return rows


# ----------------------------------------------------------------------------- scoring


def term_weights(store: Store, terms: list[str], counted: dict[str, int] | None = None) -> tuple[dict[str, float], int]:
    """({term: idf over the index}, chunks in the index). `counted`: the keyword pass's
    document counts (doc_freqs, exact below its cap); the FTS5 vocabulary gives the others."""
    if not terms:
        return {}, 0
    counted = counted or {}
    try:
        n = store.chunk_count()
        df = {t: counted[t] for t in terms if counted.get(t, OR_POSTINGS + 1) <= OR_POSTINGS}
        missing = [t for t in terms if t not in df]
        if missing:
            store.conn.execute("create virtual table if not exists temp.clawmem_vocab using fts5vocab(main, chunks_fts, row)")
            for t in missing:
                row = store.conn.execute("select doc from temp.clawmem_vocab where term = ?", (t,)).fetchone()
                df[t] = row[0] if row else 0
    except OperationalError:  # no fts5vocab: every term counts alike
        return {t: 1.0 for t in terms}, 0
    top = ranking.idf(0, n)
    return {t: ranking.idf(d, n) / top for t, d in df.items()}, n


PASSAGE_CHARS = 200  # the query's words must stand together: within a line, or lines this long together


def passage_coverage(weights: dict[str, float], text: str, words: QueryWords | None = None) -> tuple[float, set[str]]:
    """The best term coverage of one passage of the chunk (a line, or consecutive lines of at
    most PASSAGE_CHARS), and the query terms that passage holds. Measured on other people's
    chat histories, a question's rare words turn up somewhere in some chunk far more often than
    side by side: over the whole chunk, 10 % of LongMemEval questions asked of the wrong history
    came back empty; over a passage, 47 %, with no answerable question emptied that was not before.
    `words`: QueryWords(weights), made once per query."""
    norm = normalize(text)
    found = (words or QueryWords(weights)).find(norm)
    if not found:
        return 0.0, set()
    held: dict[int, tuple[int, set[str]]] = {}  # start of a line with a term -> (its end, its terms)
    for at, word in found:
        start = norm.rfind("\n", 0, at) + 1
        if start not in held:
            end = norm.find("\n", at)
            held[start] = (len(norm) if end < 0 else end, set())
        held[start][1].add(word)
    starts = sorted(held)
    best, best_terms = 0.0, set()
    # only a passage starting on a line with a term can be best: starting later reaches further
    for a, start in enumerate(starts):
        terms = held[start][1]
        for later in starts[a + 1 :]:
            end, more = held[later]
            if end - start > PASSAGE_CHARS:  # lines start..end do not fit in one passage
                break
            terms = terms | more
        cov = ranking.term_coverage(weights, terms)
        if cov > best:
            best, best_terms = cov, terms
    return best, best_terms


class QueryWords:
    """Finds the query's terms in normalized text exactly where its tokenizer would cut them:
    a CJK unigram or bigram wherever it stands, any other term as a whole run of word
    characters, bounded by a non-word or a CJK character (mysql服务器 holds the token mysql).
    str.find per term: four times faster than one regex of alternatives on chat text."""

    def __init__(self, weights: dict[str, float]):
        self.terms = [(t, all(is_cjk(ch) for ch in t)) for t in weights if t]

    def find(self, norm: str) -> list[tuple[int, str]]:
        """(offset, term) of every occurrence."""
        has_cjk = not norm.isascii() and CJK_RE.search(norm) is not None
        out = []
        for term, cjk in self.terms:
            i = norm.find(term)
            while i >= 0:
                if cjk or not (_glued(norm, i - 1, has_cjk) or _glued(norm, i + len(term), has_cjk)):
                    out.append((i, term))
                i = norm.find(term, i + 1)
        return out


def _glued(text: str, at: int, has_cjk: bool) -> bool:
    """Whether the character at `at` would join a word there (a \\w character that is not CJK)."""
    if at < 0 or at >= len(text):
        return False
    ch = text[at]
    return (ch.isalnum() or ch == "_") and not (has_cjk and is_cjk(ch))


EXACT_CONFIDENCE = 0.7  # holding a rare identifier the query names: high, whatever else the chunk holds


def confidence(cands: list[Candidate], weights: dict[str, float], n_docs: int, exact: dict[int, dict]) -> None:
    """Each candidate's score: its own evidence that it answers the query (see ranking,
    "confidence"), never borrowed from a better hit: the query terms one passage of it holds,
    weighted by their rarity here, its own cosine's standing, a rare identifier it names."""
    total = sum(weights.values())
    words = QueryWords(weights)
    for c in cands:
        cov, present = passage_coverage(weights, c.row[4], words) if weights else (0.0, set())
        k = ranking.keyword_confidence(cov)
        v = 0.0
        if c.vec_cos is not None:
            ref = c.parts.get("vectorReference") or {}
            v = ranking.vector_confidence(c.vec_cos, ref.get("mean", 0.0), ref.get("std", 1.0), n_docs)
        own = ranking.combine_confidence(k, v)
        conf = {
            "terms": sorted(present, key=lambda t: -weights.get(t, 0.0)),
            "termWeight": round(sum(w for t, w in weights.items() if t in present), 3),
            "queryWeight": round(total, 3),
            "termCoverage": round(cov, 4),
            "keyword": round(k, 4),
            "vector": round(v, 4),
        }
        conf["words"] = round(own, 4)  # what its words and vector say, before a rare name lifts it
        if c.id in exact:
            conf["exact"] = exact[c.id]["token"]
            own = max(own, EXACT_CONFIDENCE)
        conf["own"] = round(own, 4)
        c.parts["confidence"] = conf
        c.score = own


def fuse(cands: list[Candidate], opts: Options, mode: str) -> None:
    """The order within a band: each candidate's fused score relative to the best (c.rank).
    The fusion only orders; the reported score stays the hit's own evidence (confidence)."""
    fused = {}
    if mode == "keyword":
        for c in cands:
            if opts.fusion != "weighted":  # by rank, as the keyword list has it
                f = ranking.rrf_score([c.kw_rank], opts.rrf_k) if c.kw_rank else 0.0
            else:
                f = ranking.bm25_to_score(c.kw_bm25) if c.kw_bm25 is not None else 0.0
                if not c.kw_strict:
                    f *= 0.5  # relaxed (OR) hits rank below strict ones
            fused[c.id] = f
            c.parts["fusion"] = {"method": "keyword-only", "scale": "bm25" if opts.fusion == "weighted" else "rank"}
    elif opts.fusion == "weighted":
        wv, wt = ranking.normalize_weights(opts.vector_weight, opts.text_weight)
        for c in cands:
            t = ranking.bm25_to_score(c.kw_bm25) if c.kw_bm25 is not None else 0.0
            v = c.vec_score or 0.0
            fused[c.id] = wv * v + wt * t
            c.parts["fusion"] = {"method": "weighted", "vectorWeight": round(wv, 4), "textWeight": round(wt, 4), "textScore": round(t, 4)}
    elif opts.fusion == "relative":
        text = [-c.kw_bm25 for c in cands if c.kw_bm25 is not None]  # none in vector-only mode
        text_top = max(text, default=0.0)
        # outside the keyword pool: no query word when the pool holds every match, else at most its last one's
        text_floor = min(text, default=0.0) if len(text) >= opts.candidates else 0.0
        z_top = max((c.vec_z for c in cands if c.vec_z is not None), default=0.0)
        for c in cands:
            t, v = ranking.relative_shares(-c.kw_bm25 if c.kw_bm25 is not None else text_floor, text_top, c.vec_z, z_top)
            fused[c.id] = (t + v) / 2
            c.parts["fusion"] = {"method": "relative", "textShare": round(t, 4), "vectorShare": round(v, 4)}
    else:
        for c in cands:
            ranks = [c.vec_rank, c.kw_rank] if mode == "hybrid" else [c.vec_rank]
            fused[c.id] = ranking.rrf_score(ranks, opts.rrf_k)
            c.parts["fusion"] = {"method": "rrf", "k": opts.rrf_k, "vectorRank": c.vec_rank, "keywordRank": c.kw_rank}
    best = max(fused.values(), default=0.0)
    for c in cands:
        c.rank = fused[c.id] / best if best > 0 else 0.0
        c.parts["fusion"]["relative"] = round(c.rank, 4)


def chunk_date(row: tuple) -> tuple[dt.datetime | None, str]:
    """(timestamp used for decay, what it is). None: evergreen, never decays."""
    path, source, _, _, _, ts, _, day, mtime_ns = row
    if source == "sessions":
        return (dt.datetime.fromtimestamp(ts) if ts else None), "message time"
    if day:
        return dt.datetime.fromisoformat(day), "date in file name"
    if is_evergreen(path):
        return None, "evergreen"
    if mtime_ns:
        return dt.datetime.fromtimestamp(mtime_ns / 1e9), "file mtime"
    return None, "no date"


def apply_decay(cands: list[Candidate], opts: Options) -> None:
    now = opts.now or dt.datetime.now()
    for c in cands:
        when, kind = chunk_date(c.row)
        if when is None:
            c.parts["decay"] = {"factor": 1.0, "basis": kind}
            continue
        age = (now - when).total_seconds() / 86400
        f = ranking.decay_factor(age, opts.half_life)
        c.score *= f
        c.rank *= f
        c.parts["decay"] = {"factor": round(f, 5), "date": when.date().isoformat(), "ageDays": round(max(age, 0), 2), "basis": kind}


# ----------------------------------------------------------------------------- snippets


def line_tokens(line: str) -> list[str]:
    """index_tokens(line), fast: a line without CJK characters has its words as tokens (the
    full tokenizer checks every character and was most of a search's time at 10k chunks)."""
    return normalized_tokens(normalize(line))


def normalized_tokens(norm: str) -> list[str]:
    """line_tokens of a line that is normalized already."""
    if norm.isascii() or not CJK_RE.search(norm):
        return WORD_RE.findall(norm)
    return index_tokens(norm)


class LineFocus(NamedTuple):
    """What finds the line a result matched on, and how much around it is cited (issue 11)."""

    weights: dict[str, float]  # query keyword -> weight: a rarer word says more about where the match is
    context: int = 5  # lines cited on each side of the matched lines


def line_focus(store: Store, query: str, info: dict, context: int) -> LineFocus:
    keys = relaxed_terms(query) or query_terms(query)
    df = dict(info.get("df") or {})
    df.update(doc_freqs(store, [t for t in keys if t not in df]))
    n = max(store.chunk_count(), 1)
    return LineFocus({t: math.log(1 + n / max(df[t], 1)) for t in keys}, context)


def _related(a: str, b: str) -> bool:
    """Two forms of one word, roughly: a shared start of 4+ letters covering most of the
    shorter one (deploy/deploying, meet/meeting, tutor/tutoring)."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n >= 4 and n >= 0.75 * min(len(a), len(b))


def line_scores(lines: list[str], weights: dict[str, float]) -> list[float]:
    """Each line's weight of query keywords. When no line holds one as written (a hit only the
    vectors found), related forms of the words count half."""
    toks = [set(line_tokens(line)) for line in lines]
    scores = [sum(w for t, w in weights.items() if t in tk) for tk in toks]
    if any(scores):
        return scores
    by_start: dict[str, list[tuple[str, float]]] = {}
    for t, w in weights.items():
        if len(t) >= 4:
            by_start.setdefault(t[:4], []).append((t, w))
    for i, tk in enumerate(toks):
        got = {t: w / 2 for x in tk for t, w in by_start.get(x[:4], ()) if _related(x, t)}
        scores[i] = sum(got.values())
    return scores


def _is_heading(line: str) -> bool:
    return line.lstrip().startswith("#")


def match_line(lines: list[str], scores: list[float]) -> int:
    """The best-scoring line (a body line before a heading that scores the same); with no
    score at all, the first line of text under the headings, never the heading itself."""
    if any(scores):
        return max(range(len(lines)), key=lambda i: (scores[i], not _is_heading(lines[i]), -i))
    return next((i for i, line in enumerate(lines) if line.strip() and not _is_heading(line)), 0)


MATCHED_SHARE = 0.5  # a line scoring at least this share of the best one is a matched line too


def cited_lines(lines: list[str], scores: list[float], best: int, context: int) -> tuple[int, int]:
    """The matched lines (from the first to the last scoring near the best one) and `context`
    lines each side, inside the chunk, blank edges trimmed."""
    top = scores[best]
    matched = [i for i, x in enumerate(scores) if top and x >= MATCHED_SHARE * top] or [best]
    first, last = max(0, min(matched) - context), min(len(lines) - 1, max(matched) + context)
    while first < best and not lines[first].strip():
        first += 1
    while last > best and not lines[last].strip():
        last -= 1
    return first, last


def snippet_window(lines: list[str], best: int, first: int, last: int, weights: dict[str, float],
                   limit: int = SNIPPET_CHARS) -> tuple[str, int, int]:
    """The cited lines when they fit in `limit` chars, else the whole lines around `best` that
    do (a line too long on its own is cut around its rarest query word).

    Returns (snippet, first line offset, last line offset) relative to the chunk.
    """
    size = sum(len(x) + 1 for x in lines[first : last + 1]) - 1
    if size <= limit:
        return "\n".join(lines[first : last + 1]), first, last
    line = lines[best]
    if len(line) > limit:
        low = line.lower()
        pos = next((p for t in sorted(weights, key=lambda t: -weights[t]) for p in [low.find(t)] if p >= 0), 0)
        start = max(0, min(pos - limit // 3, len(line) - limit))
        return line[start : start + limit], best, best
    i = j = best
    size = len(line)
    grew = True
    while grew:  # add a line below, then one above, while they fit
        grew = False
        if j < last and size + len(lines[j + 1]) + 1 <= limit:
            j += 1
            size += len(lines[j]) + 1
            grew = True
        if i > first and size + len(lines[i - 1]) + 1 <= limit:
            i -= 1
            size += len(lines[i]) + 1
            grew = True
    return "\n".join(lines[i : j + 1]), i, j


def term_spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
    """(start, end) of every occurrence of the query terms in `text`, case-insensitive, longest
    term first, never overlapping, in text order: what the fronts highlight."""
    low = text.lower()
    taken: list[tuple[int, int]] = []
    for term in sorted({t for t in terms if t}, key=len, reverse=True):
        start = 0
        while (pos := low.find(term, start)) >= 0:
            end = pos + len(term)
            if not any(a < end and pos < b for a, b in taken):
                taken.append((pos, end))
            start = end
    return sorted(taken)


def snippet_match(result: dict, terms: list[str]) -> int:
    """The index of the line of a result's snippet that it matched on (its matchLine). When
    the snippet is the cited lines as they stand in the file, that is matchLine's place; when
    it is cut shorter (or a transcript's lines map elsewhere), the line holding the most
    distinct query terms (the first of equals), else the first line with text."""
    lines = result["snippet"].split("\n")
    at = result.get("matchLine", 0) - result["startLine"]
    if len(lines) == result["endLine"] - result["startLine"] + 1 and 0 <= at < len(lines) and result.get("source") != "sessions":
        return at
    best, best_n = None, 0
    for i, line in enumerate(lines):
        low = line.lower()
        n = sum(1 for t in set(terms) if t and t in low)
        if n > best_n:
            best, best_n = i, n
    if best is None:
        best = next((i for i, line in enumerate(lines) if line.strip() and not _is_heading(line)), 0)
    return best


def line_span(row: tuple, first: int, last: int) -> tuple[int, int]:
    _, source, start, end, _, _, linemap, _, _ = row
    if source == "sessions" and linemap:
        lm = json.loads(linemap)
        return lm[min(first, len(lm) - 1)], lm[min(last, len(lm) - 1)]
    return start + first, start + last


# ----------------------------------------------------------------------------- the search


class VectorSide:
    def __init__(self, provider: Any, model_id: int):
        self.provider = provider  # embeddings.Provider
        self.model_id = model_id
        self.reference: np.ndarray | None = None  # vectors of a random sample of the index (calibration)
        self.matrix: tuple[np.ndarray, np.ndarray] | None = None  # (ids, matrix) when searched in memory


def vector_standing(store: Store, side: VectorSide, qvec: np.ndarray, cands: list[Candidate]) -> None:
    """Every candidate's z (cosine above the query's background, in standard deviations), the
    keyword side's too: fused against a guessed "outside the vector pool" value, a lexical hit
    the vectors merely ranked 41st would lose to any chunk both lists hold."""
    ref = next((c.parts["vectorReference"] for c in cands if "vectorReference" in c.parts), None)
    if ref is None:
        return
    cos = {c.id: c.vec_cos for c in cands if c.vec_cos is not None}
    missing = [c.id for c in cands if c.vec_cos is None]
    if missing:
        ids, mat = store.load_matrix(side.model_id, missing)
        cos.update(zip(ids.tolist(), matvec(mat, qvec).tolist()))
    for c in cands:
        if c.id in cos:
            c.vec_z = (cos[c.id] - ref["mean"]) / max(ref["std"], 1e-4)


def vector_candidates(store: Store, side: VectorSide, qvec: np.ndarray, opts: Options, filtered: list[int] | None,
                      product: Product | None = None) -> list[Candidate]:
    """The `opts.candidates` nearest chunks. `product`: the in-memory matrix's product with
    `qvec`, started earlier by the caller."""
    import numpy as np

    n = opts.candidates
    if filtered is not None:
        ids, mat = store.load_matrix(side.model_id, filtered)
        pairs = _top(ids, matvec(mat, qvec), n)
    elif side.matrix is not None:
        pairs = _top(side.matrix[0], product.result() if product else matvec(side.matrix[1], qvec), n)
    elif store.has_vec_table(side.model_id):
        pairs = store.knn(side.model_id, qvec, n * 2)  # over-fetch: other sources are filtered below
    else:
        ids, mat = store.load_matrix(side.model_id)
        pairs = _top(ids, matvec(mat, qvec), n)
    if side.reference is not None:
        ref = matvec(side.reference, qvec)
        mean, std = float(ref.mean()), float(ref.std())
    else:  # no sample yet: treat the candidates' own spread as the reference
        sims = np.array([c for _, c in pairs] or [0.0])
        mean, std = float(np.median(sims)), float(sims.std() or 1.0)
    out = []
    for cid, cos in pairs:
        cand = Candidate(int(cid), vec_rank=len(out) + 1, vec_cos=float(cos), vec_score=ranking.calibrate_cosine(float(cos), mean, std))
        cand.parts["vectorReference"] = {"mean": round(mean, 4), "std": round(std, 4)}
        out.append(cand)
    return out


SPLIT_ROWS = 50_000  # above this, two threads share the product
_helper: Any = None


def _helper_thread() -> Any:
    global _helper
    if _helper is None:
        from concurrent.futures import ThreadPoolExecutor

        _helper = ThreadPoolExecutor(1, thread_name_prefix="clawmem-matvec")
    return _helper


def two_cores(rows: int) -> bool:
    """Whether a product over this many rows is worth a second thread."""
    return rows >= SPLIT_ROWS and (os.cpu_count() or 1) >= 2


class Product:
    """mat @ q in blocks, taken by whichever thread is free: the helper thread starts at once,
    the caller joins in when it asks for the result. A search starts it before its keyword
    pass, so a short query's product is shared by both cores while a long question's runs
    beside FTS5. The helper never waits on anything, so a busy helper only means the caller
    does more blocks itself."""

    BLOCK = 8192  # rows: ~1 ms of work at 384 dims, fine enough for the two threads to even out

    def __init__(self, mat: np.ndarray, q: np.ndarray):
        import numpy as np

        self.mat, self.q = mat, q.astype(np.float32, copy=False)
        self.out = np.empty(len(mat), dtype=np.float32)
        self.blocks = iter(range(0, len(mat), self.BLOCK))  # next() on it is atomic: each block is done once
        self.helper = _helper_thread().submit(self._work)

    def _work(self) -> None:
        import numpy as np

        for start in self.blocks:
            stop = start + self.BLOCK
            np.einsum("ij,j->i", self.mat[start:stop], self.q, out=self.out[start:stop])

    def result(self) -> np.ndarray:
        self._work()
        self.helper.result()
        return self.out


def matvec(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """mat @ q without numpy's threaded BLAS, which spin-waits at its barriers and stalls
    whenever other work keeps the cores busy (8 ms for 10k x 384 instead of 0.3 ms on this
    2-core box: bench/bench_vector.py). einsum runs on the calling thread; a big matrix is
    shared with one helper thread, which simply waits its turn on a busy box."""
    import numpy as np

    if two_cores(len(mat)):
        return Product(mat, q).result()
    return np.einsum("ij,j->i", mat, q.astype(np.float32, copy=False))


def _top(ids: np.ndarray, sims: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The n best (id, similarity) pairs, best first."""
    import numpy as np

    if len(ids) == 0:
        return []
    k = min(n, len(ids))
    idx = np.argpartition(sims, len(sims) - k)[-k:]
    idx = idx[np.argsort(-sims[idx])]
    return [(int(ids[i]), float(sims[i])) for i in idx]


def run(store: Store, query: str, opts: Options, vector: VectorSide | None, query_vector: np.ndarray | None) -> dict:
    """The ranked result set (without mode/provider bookkeeping, which the facade adds)."""
    t0 = time.perf_counter()
    has_vec = vector is not None and query_vector is not None
    product = None
    if has_vec and not (opts.after or opts.before) and vector.matrix is not None and two_cores(len(vector.matrix[0])):
        # the helper starts on the product while this thread asks FTS5 (both release the GIL)
        product = Product(vector.matrix[1], query_vector)
    if opts.keyword_side or not has_vec:
        kw, info = keyword_candidates(store, query, opts)
    else:
        kw, info = [], {"strict": 0, "relaxed": 0, "terms": query_terms(query)}
    mode = ("hybrid" if opts.keyword_side else "vector") if has_vec else "keyword"
    # what needs only the query is read now, while the helper may still be busy with the product:
    # the weights of the query's content words (stop words say nothing about whether a passage
    # answers it), rare identifiers, the words that place a result's citation
    content = [t for t in info["terms"] if t not in STOPWORDS]
    weights, n_docs = term_weights(store, content or info["terms"], info.get("df"))
    exact = exact_hits(store, query, opts)
    focus = line_focus(store, query, info, opts.context_lines)
    vec: list[Candidate] = []
    if has_vec:
        filtered = date_filtered_ids(store, opts) if (opts.after or opts.before) else None
        vec = vector_candidates(store, vector, query_vector, opts, filtered, product)
    by_id: dict[int, Candidate] = {}
    for c in vec:
        by_id[c.id] = c
    for c in kw:
        if c.id in by_id:
            b = by_id[c.id]
            b.kw_rank, b.kw_bm25, b.kw_strict = c.kw_rank, c.kw_bm25, c.kw_strict
        else:
            by_id[c.id] = c
    for cid in exact:
        by_id.setdefault(cid, Candidate(cid))
    rows = load_rows(store, list(by_id))
    cands = []
    for c in by_id.values():
        row = rows.get(c.id)
        if row is None or row[1] not in opts.sources:
            continue
        c.row = row
        cands.append(c)
    # sqlite-vec KNN cannot filter by source: re-rank the vector side over what survived
    if vec:
        ranked = sorted((c for c in cands if c.vec_rank is not None), key=lambda c: c.vec_rank)
        for i, c in enumerate(ranked, start=1):
            c.vec_rank = i if i <= opts.candidates else None
            if c.vec_rank is None:
                c.vec_cos = c.vec_score = None
        cands = [c for c in cands if c.vec_rank is not None or c.kw_rank is not None or c.id in exact]
        if opts.fusion == "relative":
            vector_standing(store, vector, query_vector, cands)
    shown, hidden_info, evidence = select(cands, query, weights, n_docs, exact, opts, mode)
    results = [render(c, focus, opts) for c in shown]
    return {
        "results": results,
        "mode": mode,
        "hidden": hidden_info,
        "evidence": evidence,
        "keyword": info,
        "ms": round((time.perf_counter() - t0) * 1000, 2),
    }


def select(cands: list[Candidate], query: str, weights: dict[str, float], n_docs: int, exact: dict[int, dict],
           opts: Options, mode: str, merge: Callable[[list[Candidate], int], list[Candidate]] | None = None,
           ) -> tuple[list[Candidate], dict[str, Any], dict]:
    """From scored candidates to what is shown, in order: each hit's own evidence, fusion,
    decay, pinned identifiers, overlap merging (`merge`, default merge_overlapping), MMR, then
    the list stands or falls on the query's evidence. (shown, hidden info, evidence)."""
    confidence(cands, weights, n_docs, exact)
    fuse(cands, opts, mode)
    if opts.decay:
        apply_decay(cands, opts)
    pin_exact_hits(cands, exact)
    cands.sort(key=lambda c: (-c.rank, c.id))
    cands = (merge or merge_overlapping)(cands, opts.merge_chars)
    if opts.mmr and len(cands) > 1:
        order = ranking.mmr_order([c.rank for c in cands], [mmr_tokens(c.row[4]) for c in cands], opts.mmr_lambda)
        reordered = []
        for step, (i, sim) in enumerate(order, start=1):
            cands[i].parts["mmr"] = {"step": step, "maxSimilarity": round(sim, 4), "lambda": opts.mmr_lambda}
            reordered.append(cands[i])
        cands = reordered
    if mode == "keyword":
        # a weak (low band) hit never stands above a medium or high one: here the band and the
        # order weigh the same evidence, the query's words (costs nothing on the eval sets).
        # With vectors the fusion's order stands: the band counts a cosine only once it beats
        # the best unrelated chunk, and sinking by band cost MADial 0.03-0.08 of hit@5.
        cands.sort(key=lambda c: ranking.band(c.score) == "low")
    evidence = query_evidence(query, weights, n_docs, cands)
    if opts.min_score_explicit:  # asked for: every hit below it is hidden
        shown = [c for c in cands if c.score >= opts.min_score]
    else:  # by default the whole list stands or falls on the evidence that this memory holds the answer
        shown = [] if evidence.get("abstain") else cands
    kept = {c.id for c in shown}
    hidden = [c for c in cands if c.id not in kept]
    if opts.show_hidden:
        shown = cands
    hidden_info: dict[str, Any] = {"count": len(hidden) if not opts.show_hidden else 0,
                                   "bestScore": round(max(h.score for h in hidden), 4) if hidden else None}
    if evidence.get("abstain") and not opts.min_score_explicit and not opts.show_hidden:
        hidden_info["reason"] = evidence["abstain"]
    return shown[: opts.max_results], hidden_info, evidence


TITLES = frozenset("dr mr mrs ms mx st prof sr jr mt".split())  # "Dr." does not end a sentence


def named_terms(query: str) -> list[str]:
    """The index terms of what the query names: a capitalised word that does not open a
    sentence or a line (Mongolia, Okafor, New Year's), and identifiers (exact_tokens)."""
    out: dict[str, None] = {}
    for line in re.split(r"[\n:;]+", query):
        opens = True
        for word in line.split():
            bare = word.strip("\"'()[]{},*.!?")
            title = bare.lower() in TITLES or (len(bare) == 1 and bare.isupper())
            if not opens and not title and bare[:1].isupper() and bare.lower() not in STOPWORDS:
                out.update(dict.fromkeys(t for t in query_terms(bare) if t not in STOPWORDS))
            opens = word.endswith((".", "!", "?")) and not title
    out.update(dict.fromkeys(exact_tokens(query)))
    return list(out)


STRONG_HIT = 0.6  # a hit this strong answers for the list, whatever the query names that is absent
ABSENT_SHARE = 0.95  # nearly all of the query's words never used in this memory (another language, another life)


def abstain_reason(evidence: dict, strong: float = STRONG_HIT, absent_share: float = ABSENT_SHARE) -> str | None:
    """Why to show nothing for this evidence (query_evidence), or None to show the list."""
    if evidence["candidates"] and evidence["best"] >= strong:
        return None
    if evidence["namedAbsent"]:
        return f"this memory never mentions {', '.join(repr(t) for t in evidence['namedAbsent'])}"
    if not evidence["candidates"]:
        return "no passage holds any query word"
    if evidence["absentShare"] >= absent_share:
        return f"this memory uses almost none of the query's words ({', '.join(repr(t) for t in evidence['absentTerms'][:5])})"
    return None


def query_evidence(query: str, weights: dict[str, float], n_docs: int, cands: list[Candidate]) -> dict:
    """Whether this memory holds the answer at all, from evidence that means the same in any
    workspace. A question about someone else's history names someone or something that never
    occurs here far more often than an answerable one does; a weak best hit alone is not such
    evidence (the answer is often a weak hit: emptying an answerable question costs more than
    a weak hit the agent can weigh). "abstain": why to show nothing (None: show the list)."""
    absent = [t for t, w in weights.items() if w >= 1.0] if n_docs else []
    out: dict[str, Any] = {
        "candidates": len(cands),
        # one rare name held is not a strong hit when the query names another this memory lacks
        "best": round(max((c.parts["confidence"]["words"] for c in cands), default=0.0), 4),
        "absentTerms": absent,
        "namedAbsent": [t for t in named_terms(query) if t in absent],
        # counted, not weighed: a word common here weighs little, and the few a query shares
        # with this memory are what says it may hold the answer
        "absentShare": round(len(absent) / len(weights), 4) if weights else 0.0,
    }
    out["abstain"] = abstain_reason(out)
    return out


EXACT_MAX_CHUNKS = 3  # an identifier found in at most this many chunks is "rare"


def exact_tokens(query: str) -> list[str]:
    """Query words that look like identifiers: an id mixing letters and digits (a828e60), a
    number of 4+ digits, a name with underscores (OPENAI_API_KEY), an all-caps code (ENOENT)."""
    out = []
    for raw in re.findall(r"[A-Za-z0-9_]+", query):
        word = raw.strip("_")
        if len(word) < 4:
            continue
        digits = any(ch.isdigit() for ch in word)
        letters = any(ch.isalpha() for ch in word)
        if digits or "_" in word or (letters and word.isupper()):
            out.append(word.lower())
    return list(dict.fromkeys(out))


def exact_hits(store: Store, query: str, opts: Options) -> dict[int, dict]:
    """Chunks holding a rare identifier or name of the query: {chunk id: {token, chunks}}.

    Vectors say little about ids, env vars, error codes and names they never saw, and a fused
    score can bury the one chunk that holds them; the caller pins these near the top.
    """
    hits: dict[int, dict] = {}
    filter_sql, filter_args = _filter_sql(opts)
    for tok in named_terms(query):
        try:
            ids = [r[0] for r in store.conn.execute(
                "select f.rowid from chunks_fts f join chunks c on c.id = f.rowid left join files fl on fl.path = c.path"
                f" where chunks_fts match ?{filter_sql} limit ?",
                (fts_query([tok], "AND"), *filter_args, EXACT_MAX_CHUNKS + 1),
            )]
        except OperationalError:
            continue
        if 0 < len(ids) <= EXACT_MAX_CHUNKS:
            for cid in ids:
                hits.setdefault(cid, {"token": tok, "chunks": len(ids)})
    return hits


def pin_exact_hits(cands: list[Candidate], hits: dict[int, dict]) -> None:
    """Lift the chunks naming a rare identifier to the first place of the others, so they come
    back in the top results whatever the vectors say (their score, from confidence, is high:
    naming a rare identifier is evidence enough)."""
    if not hits:
        return
    others = [c for c in cands if c.id not in hits]
    rank_floor = max([c.rank for c in others], default=0.0) + 1e-6
    for c in cands:
        if c.id in hits and c.rank < rank_floor:
            c.parts["exact"] = {**hits[c.id], "rankBefore": round(c.rank, 4)}
            c.rank = rank_floor


def merge_overlapping(cands: list[Candidate], max_chars: int = 3200) -> list[Candidate]:
    """Fold a hit into a better one from the same file whose lines overlap it.

    Chunks overlap by design (80 tokens), so neighbouring chunks of one passage often both
    match; showing them as two results wastes a slot on a near-duplicate. The better hit
    keeps its score and grows to cover both passages (its citation spans both), up to
    `max_chars` (two chunks' worth), so a citation stays something a person reads.
    """
    kept: list[Candidate] = []
    for c in cands:
        path, source, start, end = c.row[0], c.row[1], c.row[2], c.row[3]
        host = None
        if source != "sessions":
            for k in kept:
                if k.row[0] == path and k.row[1] == source and start <= k.row[3] and k.row[2] <= end:
                    host = k
                    break
        if host is None:
            kept.append(c)
            continue
        h_path, h_source, h_start, h_end, h_text = host.row[:5]
        h_lines = h_text.split("\n")
        c_lines = c.row[4].split("\n")
        if start < h_start:  # c extends the host upwards
            lines = c_lines[: h_start - start] + h_lines
        else:
            lines = h_lines
        if end > h_end:  # and/or downwards
            lines = lines + c_lines[len(c_lines) - (end - h_end) :]
        if sum(len(x) + 1 for x in lines) > max_chars:
            kept.append(c)
            continue
        host.row = (h_path, h_source, min(start, h_start), max(end, h_end), "\n".join(lines), *host.row[5:])
        host.parts.setdefault("merged", []).append({"startLine": start, "endLine": end, "score": round(c.score, 4)})
    return kept


def render(c: Candidate, focus: LineFocus, opts: Options) -> dict:
    path, source, start, end, text = c.row[:5]
    lines = text.split("\n")
    scores = line_scores(lines, focus.weights)
    best = match_line(lines, scores)
    first, last = cited_lines(lines, scores, best, focus.context)
    # the snippet is the cited lines (or the ≤700-char part of them around the match)
    snippet, _, _ = snippet_window(lines, best, first, last, focus.weights)
    s, e = line_span(c.row, first, last)
    out: dict[str, Any] = {
        "path": path,
        "startLine": s,
        "endLine": e,
        "matchLine": line_span(c.row, best, best)[0],
        "score": round(c.score, 4),
        "band": ranking.band(c.score),
        "snippet": snippet,
        "source": source,
    }
    day = c.row[7]
    if day:
        out["date"] = day
    elif source == "sessions" and c.row[5]:
        out["date"] = dt.datetime.fromtimestamp(c.row[5]).date().isoformat()
    if opts.explain:
        parts = dict(c.parts)
        if c.kw_rank is not None:
            parts["keyword"] = {
                "rank": c.kw_rank,
                "bm25": round(c.kw_bm25, 4) if c.kw_bm25 is not None and math.isfinite(c.kw_bm25) else None,
                "score": round(ranking.bm25_to_score(c.kw_bm25), 4) if c.kw_bm25 is not None else None,
                "match": "all terms" if c.kw_strict else "some terms",
            }
        if c.vec_rank is not None:
            parts["vector"] = {"rank": c.vec_rank, "cosine": round(c.vec_cos or 0.0, 4), "calibrated": round(c.vec_score or 0.0, 4)}
        parts["chunk"] = {"startLine": start, "endLine": end}
        out["explain"] = parts
    return out
