"""What a search is asked (SearchRequest), the settings it runs with (Options), and the
candidate every stage passes on."""

from __future__ import annotations

import datetime as dt
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any

SNIPPET_CHARS = 700


class SearchRequest:
    """What one search asks for besides the query, as a front gives it: the CLI's flags, an
    agent's tool arguments, the app's switches. It travels whole from the front to the search,
    so a new option is a field here plus the code that reads it. Values are checked when the
    engine turns them into Options (a bad one is a ValueError naming it)."""

    __slots__ = ("max_results", "min_score", "now", "after", "before", "explain", "show_hidden", "date_filter",
                 "private", "stale_check", "sync_on_stale", "agents")

    def __init__(self, *, max_results: Any = None, min_score: Any = None, now: Any = None, after: Any = None,
                 before: Any = None, explain: bool = False, show_hidden: bool = False, date_filter: bool | None = None,
                 private: bool = False, stale_check: bool = True, sync_on_stale: bool = True,
                 agents: list[str] | None = None):
        self.max_results = max_results  # None: query.maxResults
        self.min_score = min_score  # None: query.minScore, and the list shown or withheld on its evidence
        self.now = now  # the day "yesterday" and date decay count from (tests, replays)
        self.after, self.before = after, before  # dated sources only in this range (YYYY-MM-DD or dates)
        self.explain = explain  # every part of each score, for --explain and the app
        self.show_hidden = show_hidden  # also what the threshold or the abstention would hide
        self.date_filter = date_filter  # time phrases in the query narrow the dates; None: query.dateFilter
        self.private = private  # not recorded for consolidation
        self.stale_check = stale_check  # say whether the index lags the files
        self.sync_on_stale = sync_on_stale  # and if it does, ask for a background sync
        self.agents = agents  # fleet search: only these agents (None: every agent this role may read)


class Options:
    """One search's settings. Plain classes here, not dataclasses: importing dataclasses (and the
    inspect module it needs) was a fifth of a `clawmem search`'s imports."""

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
