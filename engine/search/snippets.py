"""Snippets: the line that matched, the lines cited around it, and the hit as the tools return it."""

from __future__ import annotations

import datetime as dt
import json
import math
from collections import namedtuple
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any

from . import ranking
from ..index.store import Store
from ..text import WORD_RE, has_cjk, index_tokens, normalize, query_terms, relaxed_terms
from .options import Candidate, Options, SNIPPET_CHARS
from .candidates import doc_freqs


# ----------------------------------------------------------------------------- snippets


def line_tokens(line: str) -> list[str]:
    """index_tokens(line), fast: a line without CJK characters has its words as tokens (the
    full tokenizer checks every character and was most of a search's time at 10k chunks)."""
    return normalized_tokens(normalize(line))


def normalized_tokens(norm: str) -> list[str]:
    """line_tokens of a line that is normalized already."""
    if not has_cjk(norm):
        return WORD_RE.findall(norm)
    return index_tokens(norm)


# collections.namedtuple, not typing.NamedTuple: the latter compiles each field's (string) annotation,
# ~0.3 ms a class on every search's start
class LineFocus(namedtuple("LineFocus", "weights context", defaults=(5,))):
    """What finds the line a result matched on, and how much around it is cited. weights: query
    keyword -> weight (a rarer word says more about where the match is); context: lines cited on
    each side of the matched lines."""

    __slots__ = ()


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
        if c.vec_z is not None:  # its cosine's standing above the query's background, vector hit or not
            parts["vectorZ"] = round(c.vec_z, 4)
        parts["chunk"] = {"startLine": start, "endLine": end}
        out["explain"] = parts
    return out
