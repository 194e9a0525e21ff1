"""memory_search: options from the config, the model whose vectors serve a query (with per-model
caches for a long-lived engine), the query embedding and its fallbacks, and the stale check."""

from __future__ import annotations

import datetime as dt
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any, Callable
    from ..embeddings.providers import Providers

from . import dates
from .. import search as search_mod
from ..config import Config
from ..provider_registry import KEYWORD_BY_CHOICE
from ..errors import BadValue, IndexUnavailable, SearchDisabled
from ..index.freshness import Freshness
from ..index.reader import IndexReader
from ..results import SearchResults
from .options import SearchRequest
from ..index.store import DatabaseError, Store


def citation(path: str, start: int, end: int) -> str:
    """OpenClaw's citation, the one shape of every front: `Source: memory/x.md#L3-L9`."""
    return f"Source: {path}#L{start}-L{end}"


def disabled_reason(cfg: Config) -> str | None:
    """Why memory search is off, naming where `enabled = false` was set; None when it is on."""
    if cfg["enabled"]:
        return None
    source = cfg.sources.get("enabled", "default")
    where = {"flag": "a flag"}.get(source, source.replace("openclaw (", "openclaw.json (").replace("file (", "the clawmem config ("))
    return f"memory search is disabled (enabled = false in {where}); set it to true to search"


def may_recall(cfg: Config, results: list[dict], min_score: float) -> bool:
    """Whether recall.record could keep a hit of these: recall on, and some memory hit scored
    above 0 and at least `min_score` (record then keeps only the daily logs among them)."""
    scores = [float(r.get("score") or 0.0) for r in results if r.get("source", "memory") == "memory"]
    return bool(cfg["recall.enabled"]) and any(s > 0.0 and s >= min_score for s in scores)


def _as_datetime(now: Any) -> dt.datetime | None:
    if now is None or isinstance(now, dt.datetime):
        return now
    if isinstance(now, dt.date):
        return dt.datetime.combine(now, dt.time())
    text = str(now).strip()
    try:
        if len(text) <= 10:
            return dt.datetime.combine(dates.parse_day(text, option="now"), dt.time())
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone().replace(tzinfo=None)
    except ValueError:
        raise BadValue(f"now: expected a date like 2026-02-10, got {text!r}") from None


class Searcher:
    def __init__(self, cfg: Config, reader: IndexReader, providers: Providers | Callable[[], Providers], freshness: Freshness, *,
                 persistent: bool = False, on_stale: Callable[[], None] = lambda: None):
        """`providers`: the Providers, or a function giving them when first needed (the Engine's:
        a search under `provider = "none"` never loads the embeddings package, ~0.5 ms)."""
        self.cfg = cfg
        self.index_reader = reader
        self._providers = providers
        self.freshness = freshness
        self.persistent = persistent  # long-lived (the app, watch): keep vectors in memory
        self.on_stale = on_stale  # a search found the index behind the files; must return at once

    @property
    def providers(self) -> Providers:
        if callable(self._providers):
            self._providers = self._providers()
        return self._providers

    def vector_side(self, store: Store, exclude: tuple[str, ...] = ()) -> tuple[search_mod.VectorSide | None, dict]:
        """Pick the model whose vectors cover the index best among the providers we can use
        (leaving out `exclude`: providers whose query embedding just failed)."""
        info: dict[str, Any] = {"provider": None, "model": None, "fallback": None, "reason": None, "dims": None}
        if self.cfg["provider"] == "none":  # what plan() answers for it, without building the providers
            info["reason"] = KEYWORD_BY_CHOICE
            return None, info
        plan = self.providers.plan()
        if plan.configured == "none":
            info["reason"] = plan.keyword_reason()
            return None, info
        models = {m["fingerprint"]: m for m in store.models()}
        usable = plan.usable()
        if not usable:
            info["reason"] = plan.keyword_reason()
            return None, info
        best = None
        present = []  # (order, provider, model row) of the usable providers with a vector table
        for order, cand in enumerate(usable):
            prov = self.providers.get(cand.name)
            if prov is None or cand.name in exclude:
                continue
            m = models.get(prov.fingerprint())
            if m:
                present.append((order, prov, m))
        for order, prov, m in present:
            # counting 100k vectors takes tens of ms: only count when two models compete
            cov = store.coverage(m["id"]) if len(present) > 1 else int(store.has_vectors(m["id"]))
            if cov and (best is None or cov > best[0]):
                best = (cov, order, prov, m)
        failures = self.providers.known_failures(store)
        if best is None:
            errs = [f"{n}: {e}" if not e.startswith(n) else e for n, e in failures.items()]
            first = usable[0].name
            note = self.providers.built[first].not_ready() if first in self.providers.built else None
            info["reason"] = "; ".join(errs) if errs else note or f"no vectors indexed yet for {first} (run `clawmem index`)"
            return None, info
        _, order, prov, m = best
        side = search_mod.VectorSide(prov, m["id"])
        if self.persistent:
            side.matrix = self.index_reader.cached("matrix", store, m["id"], store.load_matrix)
            side.reference = self.index_reader.cached("reference", store, m["id"], store.reference_sample)
        else:  # float32 blobs: a one-shot search compares them in plain Python, without numpy
            side.reference = store.reference_rows(m["id"])
        # the provider the user asked for (auto: the first usable one) is not the one serving
        primary = usable[0] if plan.configured == "auto" else plan.candidates[0]
        if primary.name != prov.id:
            why = primary.reason or failures.get(primary.name) or f"{primary.name} has fewer vectors indexed than {prov.id}"
            info["fallback"] = {"from": primary.name, "reason": why}
        info["provider"], info["model"], info["dims"] = prov.id, prov.model, m["dims"]
        # the serving provider failed part-way through the last index: some chunks have no vector
        info["lastError"] = failures.get(prov.id)
        return side, info

    def options(self, request: SearchRequest | None = None) -> search_mod.Options:
        request = request or SearchRequest()
        c = self.cfg
        max_results, min_score = request.max_results, request.min_score
        mr = int(max_results) if max_results is not None else c["query.maxResults"]
        if mr < 1:
            raise BadValue(f"max-results: expected an integer >= 1, got {max_results!r}")
        if min_score is not None and not 0 <= float(min_score) <= 1:
            raise BadValue(f"min-score: expected a number from 0 to 1, got {min_score!r}")
        after, before = request.after, request.before
        return search_mod.Options(
            max_results=mr,
            min_score=float(min_score) if min_score is not None else c["query.minScore"],
            # a threshold someone set hides every hit below it; the default only decides, from the
            # evidence, whether to show the list at all
            min_score_explicit=min_score is not None or c.sources.get("query.minScore", "default") != "default",
            # one candidate depth for every maxResults up to it: the verdict, the scores and the
            # bands are computed over the same candidates however many are shown (issue 42)
            candidates=min(200, max(mr, c["query.maxResults"] * c["query.hybrid.candidateMultiplier"])),
            fusion=c["query.hybrid.fusion"],
            vector_weight=c["query.hybrid.vectorWeight"],
            text_weight=c["query.hybrid.textWeight"],
            rrf_k=c["query.hybrid.rrfK"],
            decay=c["query.hybrid.temporalDecay.enabled"],
            half_life=c["query.hybrid.temporalDecay.halfLifeDays"],
            mmr=c["query.hybrid.mmr.enabled"],
            mmr_lambda=c["query.hybrid.mmr.lambda"],
            now=_as_datetime(request.now),
            after=dates.parse_day(after, option="after") if isinstance(after, str) else after,
            before=dates.parse_day(before, option="before") if isinstance(before, str) else before,
            explain=request.explain,
            show_hidden=request.show_hidden,
            sources=tuple(c["sources"]),
            keyword_side=c["query.hybrid.enabled"],
            merge_chars=2 * 4 * c["chunking.tokens"],
            context_lines=c["query.contextLines"],
        )

    def search(self, query: str, request: SearchRequest | None = None) -> SearchResults:
        """memory_search: cited hits for `query`. Raises SearchDisabled when `enabled = false`.

        Daily-log hits are recorded for `clawmem promote` (recall.py) unless `private` is set
        or `recall.enabled` is false."""
        why_off = disabled_reason(self.cfg)
        if why_off:
            raise SearchDisabled(why_off)
        request = request or SearchRequest()
        opts = self.options(request)
        query = (query or "").strip()
        base = {"results": [], "mode": "keyword", "provider": None, "model": None, "fallback": None,
                "hidden": {"count": 0, "bestScore": None}, "absent": None, "dateRange": None, "stale": False}
        store = self.index_reader.reader()
        if store is None or not store.has_schema():
            base["stale"] = True
            base["reason"] = "the index is empty: run `clawmem index`"
            self._stale_found()
            return SearchResults(base)
        # time phrases narrow dated sources (only in short queries, only when not given explicitly)
        date_range = None
        text = query
        use_dates = self.cfg["query.dateFilter"] if request.date_filter is None else request.date_filter
        if use_dates and not (opts.after or opts.before):
            today = (opts.now or dt.datetime.now()).date()
            text, date_range = dates.extract(query, today)
            if date_range:
                opts.after, opts.before = date_range.after, date_range.before
        elif opts.after or opts.before:
            date_range = dates.DateRange(opts.after, opts.before, "options")
        if not text:
            text = query if not date_range else ""
        try:
            out = self._run_search(store, text or query, opts, base)
            if date_range is not None:
                dr = date_range.as_json()
                if not out["results"] and not out["hidden"]["count"] and date_range.phrase != "options":
                    # a filter that leaves nothing is dropped, and the result set says so
                    opts.after = opts.before = None
                    out = self._run_search(store, query, opts, base)
                    dr["applied"] = False
                    dr["reason"] = "no dated entries matched in that range; searched everything instead"
                else:
                    dr["applied"] = True
                out["dateRange"] = dr
        except DatabaseError as exc:
            raise IndexUnavailable(f"{self.index_reader.index_path}: the index cannot be read ({exc}); run `clawmem index` to rebuild it") from None
        if not request.private and may_recall(self.cfg, out["results"], opts.min_score):
            from ..consolidate import recall  # only then: its module (a regex, its schema) is ~0.4 ms of a search's process

            recall.record(self.cfg, query, out["results"], min_score=opts.min_score)
        if request.stale_check:
            try:
                out["stale"] = self.freshness.seen_behind()
            except Exception:
                out["stale"] = True
            if out["stale"] and request.sync_on_stale:
                self._stale_found()
        return SearchResults(out)

    def _stale_found(self) -> None:
        """A search saw the index lag the files: ask for a background sync, never wait for it."""
        if self.cfg["sync.onSearch"]:
            self.on_stale()

    def _run_search(self, store: Store, query: str, opts: search_mod.Options, base: dict) -> dict:
        side, info = self.vector_side(store)
        qvec = None
        fallback = info["fallback"]
        failed: list[str] = []
        while side is not None and query:
            from ..embeddings import ProviderError  # loaded already: `side` is a provider's

            # the query embedding failing degrades to the next model with vectors, then to keywords
            try:
                qvec = self.providers.embed_query(side.provider, query, info["dims"])
                break
            except ProviderError as exc:
                if not failed:
                    fallback = {"from": side.provider.id, "reason": f"query embedding failed: {exc}"}
                failed.append(side.provider.id)
                reason = str(exc)
                side, info = self.vector_side(store, exclude=tuple(failed))
                if side is None:
                    info["reason"] = reason
        result = search_mod.run(store, query, opts, side if qvec is not None else None, qvec)
        out = dict(base)
        out["results"] = result["results"]
        out["mode"] = result["mode"]
        out["hidden"] = result["hidden"]
        out["absent"] = result["absent"]
        if result["mode"] != "keyword":
            out["provider"], out["model"] = info["provider"], info["model"]
        else:
            out["reason"] = info["reason"] or "keyword-only"
        out["fallback"] = fallback
        if self.cfg["citations"] != "off":
            for r in out["results"]:
                r["citation"] = citation(r["path"], r["startLine"], r["endLine"])
        if opts.explain:
            out["timingMs"] = result["ms"]
            out["evidence"] = result["evidence"]
        return out
