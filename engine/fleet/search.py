"""Search over the fleet: the local search's ranking on the rows this agent may read
(PostgreSQL full text over clawmem's tokens, pgvector for the vectors, then the same fusion
and abstention), the connection a long-lived front keeps for it, the answer from this agent's
own index when the fleet does not answer in time, and a hit's stored text (`get_stored`)."""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable

from .connection import FLEET_PREFIX, SEARCH_TIMEOUT_MS, FleetError, _one_line, connect, fleet_host, fleet_url, mask_url, model_key
from .notes import team_hits
from .schema import tsquery_literal

class _Counts:
    """What search.line_focus asks of an index: how many chunks it holds."""

    def __init__(self, n: int):
        self.n = n

    def chunk_count(self) -> int:
        return self.n


class Client:
    """The connection an engine's fleet searches share. A new connection costs a TCP and SCRAM
    handshake and the vector type's lookup (about 10 ms here), so a long-lived front (the app,
    `clawmem mcp`) keeps one: opened on the first search, opened again when the server
    restarted in between, closed when the engine goes away. One search at a time uses it."""

    def __init__(self, url: str):
        self.url = url
        self.conn = None
        self.lock = threading.Lock()

    def run(self, work: Callable[[Any], Any]) -> Any:
        import psycopg

        with self.lock:
            while True:
                fresh = self.conn is None or self.conn.closed
                if fresh:
                    self.conn = connect(self.url, autocommit=True, statement_timeout_ms=SEARCH_TIMEOUT_MS)
                try:
                    return work(self.conn)
                except psycopg.Error:
                    if fresh or not self.conn.broken:
                        raise
                    self.conn.close()  # the kept connection died with the server's restart: once more on a new one

    def close(self) -> None:
        with self.lock:
            if self.conn is not None:
                self.conn.close()
                self.conn = None


_clients: "weakref.WeakKeyDictionary[Any, Client]" = weakref.WeakKeyDictionary()
_clients_lock = threading.Lock()


def client(engine) -> Client:
    """The engine's kept fleet connection (a new one when its [fleet] url changed)."""
    url = fleet_url(engine.cfg)
    with _clients_lock:
        kept = _clients.get(engine)
        if kept is None or kept.url != url:
            if kept is not None:
                kept.close()
            kept = _clients[engine] = Client(url)
            weakref.finalize(engine, kept.close)
    return kept


def search(engine, query: str, request=None, **fields) -> dict:
    """Hybrid search over the fleet rows this agent may read. Hits carry agent, host, path,
    lines and the stored snippet; `ref` reads a hit's stored text back (`get`). `request`: a
    SearchRequest (or its fields as keywords); its `agents` narrows the agents searched."""
    import psycopg

    from ..search.options import SearchRequest

    request = request or SearchRequest(**fields)
    agents = request.agents
    kept = client(engine)
    opts = engine.options(request)
    query = (query or "").strip()
    t0 = time.perf_counter()
    notes: list[str] = []
    qv = query_vector(engine, query, notes) if query else None
    try:
        out = kept.run(lambda conn: search_with(conn, query, opts, agents, qv))
    except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable) as exc:
        # the server is busy or a lock is held: this agent's own memory answers, saying so
        return local_instead(engine, query, request, f"the fleet search timed out ({_one_line(exc, kept.url)})", t0)
    except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedFunction):
        raise FleetError("the fleet database has no clawmem tables yet: push first (`clawmem fleet push`)") from None
    except psycopg.Error as exc:
        raise FleetError(f"fleet search on {mask_url(kept.url)} failed: {_one_line(exc, kept.url)}") from None
    out["notes"][:0] = notes
    weights = out.pop("weights", None)
    if weights is None:  # no memory hit to weigh them by: each content word alike
        from ..text import STOPWORDS, query_terms

        weights = {t: 1.0 for t in query_terms(query) if t not in STOPWORDS}
    if query and weights and opts.after is None and opts.before is None:  # a note has no day: a dated search leaves them out
        try:
            team = kept.run(lambda conn: team_hits(conn, weights, opts, agents))
        except psycopg.Error:  # a notebook that cannot be read leaves the memory hits standing, said
            out["notes"].append("team notes not searched: the notebook did not answer")
        else:
            if team:
                out["results"] = sorted(out["results"] + team, key=lambda r: -r["score"])[:opts.max_results]
    out["ms"] = round((time.perf_counter() - t0) * 1000, 2)
    return out


def local_instead(engine, query: str, request, why: str, t0: float) -> dict:
    """A fleet search's answer from this agent's own index, when the fleet did not answer in
    time: the results carry this agent's name as fleet hits do, and the warning says why."""
    import copy

    warning = f"{why}: these are this agent's own results only"
    out: dict[str, Any] = {"results": [], "mode": "keyword", "provider": None, "model": None, "corpus": "fleet",
                           "agents": [engine.cfg.agent_id], "notes": [warning], "warning": warning, "fallback": "local",
                           "hidden": {"count": 0, "bestScore": None}, "absent": None, "dateRange": None}
    if engine.workspace is not None and engine.reader() is not None:
        try:
            mine = copy.copy(request)
            mine.agents = None
            local = engine.search(query, mine)
        except Exception as exc:  # no usable local index either: said, with the fleet's reason
            out["notes"].append(f"no local results either: {_one_line(exc)}")
        else:
            for k in ("mode", "provider", "model", "hidden", "absent", "dateRange"):
                out[k] = local.get(k, out[k])
            host = fleet_host(engine.cfg)
            out["results"] = [{**r, "agent": engine.cfg.agent_id, "host": host, "ref": r["path"]} for r in local["results"]]
    out["ms"] = round((time.perf_counter() - t0) * 1000, 2)
    return out


class QueryVector:
    """The query embedded by this agent's model, and that model's reference sample (the
    similarities that count as unrelated, which calibrate a cosine)."""

    def __init__(self, model: str, dims: int, vector, reference=None, provider: str | None = None, name: str | None = None):
        self.model, self.dims, self.vector, self.reference = model, dims, vector, reference
        self.provider, self.name = provider, name


def query_vector(engine, query: str, notes: list[str]) -> QueryVector | None:
    from ..embeddings import ProviderError

    store = engine.reader()
    if store is None or not store.has_schema():
        return None
    side, info = engine.searcher.vector_side(store)
    if side is None:
        return None
    try:
        vec = engine.providers.embed_query(side.provider, query, info["dims"])
    except ProviderError as exc:
        notes.append(f"query embedding failed ({exc}): keyword results only")
        return None
    return QueryVector(model_key(info), info["dims"], vec, side.reference, info["provider"], info["model"])


def _batch(conn):
    """Statements sent together and answered together: each round trip to the server (and
    each wait for its process to be scheduled on a busy host) is paid once per batch."""
    import contextlib

    import psycopg

    return conn.pipeline() if psycopg.Pipeline.is_supported() else contextlib.nullcontext()


NEAREST = "select id, dist from clawmem_nearest(%s, %s, %s, %s, %s, %s)"


def search_with(conn, query: str, opts, agents: list[str] | None, qv: QueryVector | None) -> dict:
    """The fleet search on an open connection, the query's vector given (None: keywords only).
    `agents`: only these (None: every agent the login role may read). Three round trips at
    most: everything that needs only the query, the relaxed keyword pass if the strict one
    found too few, the candidates' rows."""
    import numpy as np
    from psycopg import sql

    from ..search import ranking
    from .. import search as s
    from ..text import STOPWORDS, query_terms, relaxed_terms

    n = opts.candidates
    terms, relaxed = query_terms(query), relaxed_terms(query)
    words = list(dict.fromkeys(relaxed + terms))
    model = qv.model if qv is not None else None
    q = np.asarray(qv.vector, dtype=np.float32) if qv is not None else None
    # the model as a literal, as in the partial index's predicate, so the planner can use it;
    # the dimensions are part of the model's key, so the cast fits every row of that model
    dist = sql.SQL("(embedding::vector({d}) <=> %s::vector({d}))").format(d=sql.Literal(int(qv.dims))) if qv else None
    lo, hi = opts.after, opts.before  # dates (None: unbounded), as the local search's --after/--before
    keyword = "select id, rank from clawmem_keyword(%s::tsquery, %s, %s, %s, %s, %s)"
    exact_toks = s.exact_tokens(query) if qv is not None else []
    with _batch(conn):
        if qv is not None:
            conn.execute("select set_config('hnsw.ef_search', %s, false)", (str(max(40, 2 * n)),))
        seen_cur = conn.execute("select agent, host, model, dims, chunks from clawmem_agents")
        df_cur = conn.execute("select term, sum(chunks)::bigint from clawmem_terms where term = any(%s)"
                              " and (%s::text[] is null or agent = any(%s)) group by term", (words, agents, agents))
        # all words at once needs no counts first: a word no chunk holds ends it in the index
        strict_cur = conn.execute(keyword, (tsquery_literal(terms, "&"), agents, n, s.OR_POSTINGS, lo, hi)) if terms and query else None
        # the server chooses the model's graph or the readable agents' own (clawmem_nearest)
        vec_cur = conn.execute(NEAREST, (model, q, agents, n, lo, hi)) if qv is not None and query else None
        # chunks naming a rare identifier of the query (an id, an env var, an error code) are
        # lifted as in the local search: vectors say little about such words
        exact_cur = conn.execute("select t, k.id from unnest(%s::text[]) with ordinality as u(t, i),"
                                 " clawmem_keyword(u.t::tsquery, %s, %s, %s, %s, %s) k order by u.i",
                                 ([tsquery_literal([t], "&") for t in exact_toks], agents, s.EXACT_MAX_CHUNKS + 1,
                                  s.EXACT_MAX_CHUNKS + 1, lo, hi)) if exact_toks else None
    seen = {r[0]: r[1:] for r in seen_cur.fetchall()}
    names = [a for a in seen if agents is None or a in agents]
    unknown = sorted(set(agents or ()) - set(seen))
    base: dict[str, Any] = {"results": [], "mode": "keyword", "provider": None, "model": None, "corpus": "fleet",
                            "agents": sorted(names), "notes": [], "hidden": {"count": 0, "bestScore": None}, "absent": None,
                            # the dates the search kept, as the local search says them (team notes have none: left out)
                            "dateRange": {"after": str(lo) if lo else None, "before": str(hi) if hi else None,
                                          "from": "options", "applied": True} if lo or hi else None}
    if not names:
        base["reason"] = "no agent of the fleet to search: none readable with this role" + (" among those named" if agents else "")
    if unknown:
        base["notes"].append(f"not in the fleet, or not readable with this role: {', '.join(unknown)}")
    if not names or not query:
        return base
    n_docs = max(1, sum(seen[a][3] or 0 for a in names))
    df = {t: 0 for t in words} | {t: int(c) for t, c in df_cur.fetchall()}
    content = [t for t in terms if t not in STOPWORDS] or terms
    top = ranking.idf(0, n_docs)
    weights = {t: ranking.idf(min(df.get(t, 0), n_docs), n_docs) / top for t in content}
    base["weights"] = weights  # the team notes' hits are scored with them too (search)

    # keyword side: clawmem's tokens against the stored tsvectors, all words first, then the rarest
    kw: dict[int, s.Candidate] = {}

    def keyword_hits(rows, strict: bool) -> None:
        for rid, r in rows:
            if rid not in kw and len(kw) < n:
                # ts_rank is about a tenth of FTS5's bm25 magnitude; negative as bm25 is, better first
                kw[rid] = s.Candidate(rid, kw_rank=len(kw) + 1, kw_bm25=-float(r) * 10, kw_strict=strict)

    if strict_cur is not None:
        keyword_hits(strict_cur.fetchall(), True)
    chosen = s.selective_terms(relaxed, df) if len(kw) < n else []
    if chosen and not (strict_cur is not None and chosen == terms and len(terms) == 1):  # that OR is the AND just run
        keyword_hits(conn.execute(keyword, (tsquery_literal(chosen, "|"), agents, n, s.OR_POSTINGS, lo, hi)).fetchall(), False)

    # vector side: only rows whose vectors come from the query's model
    vec = {rid: 1.0 - float(d) for rid, d in vec_cur.fetchall()} if vec_cur is not None else {}
    other = sorted(a for a in names if seen[a][1] != model)
    if other and model:
        base["notes"].append(f"{', '.join(other)}: vectors from another model than {model}; keyword results only from them")

    by_id: dict[int, s.Candidate] = dict(kw)
    if vec:
        ref = qv.reference
        if ref is not None:
            sims = s.matvec(ref, q)
            mean, std = float(sims.mean()), float(sims.std())
        else:
            sims = np.array(list(vec.values()))
            mean, std = float(np.median(sims)), float(sims.std() or 1.0)
        ranked = sorted(vec.items(), key=lambda x: -x[1])
        for rank, (rid, cos) in enumerate(ranked, start=1):
            c = by_id.setdefault(rid, s.Candidate(rid))
            c.vec_rank, c.vec_cos, c.vec_score = rank, cos, ranking.calibrate_cosine(cos, mean, std)
    exact: dict[int, dict] = {}
    if vec and exact_cur is not None:
        found: dict[str, list[int]] = {}
        for tok, rid in exact_cur.fetchall():
            found.setdefault(tok, []).append(rid)
        for tok in exact_toks:
            ids = found.get(tsquery_literal([tok], "&"), [])
            if 0 < len(ids) <= s.EXACT_MAX_CHUNKS:
                for rid in ids:
                    exact.setdefault(rid, {"token": tok, "chunks": len(ids)})
                    by_id.setdefault(rid, s.Candidate(rid))
    if not by_id:
        return base
    # the rows, and every candidate's cosine (relative fusion weighs the standing of keyword
    # hits outside the vector pool too); by agent and id, the table's key
    cosine = sql.SQL("case when model = {m} then 1 - {dist} end").format(m=sql.Literal(model), dist=dist) if vec else sql.SQL("null")
    rows = {r[0]: r[1:] for r in conn.execute(sql.SQL(
        "select id, agent, host, path, source, start_line, end_line, text, ts, linemap, day, mtime_ns, {cos} from clawmem_chunks"
        " where agent = any(%s) and id = any(%s)").format(cos=cosine), ((q,) if vec else ()) + (names, list(by_id)))}
    cands = []
    for rid, c in by_id.items():
        if rid not in rows:
            continue
        agent, host, path, source, start, end, text, ts, linemap, day, mtime_ns, cos = rows[rid]
        c.row = (path, source, start, end, text, ts, linemap, day, mtime_ns)
        c.parts["fleet"] = (agent, host)
        if vec:
            c.parts["vectorReference"] = {"mean": round(mean, 4), "std": round(std, 4)}
            cos = c.vec_cos if c.vec_cos is not None else cos
            if cos is not None and opts.fusion == "relative":
                c.vec_z = (float(cos) - mean) / max(std, 1e-4)
        cands.append(c)
    mode = "hybrid" if vec else "keyword"

    def merge_within_agents(ranked: list, max_chars: int) -> list:
        """Overlapping hits fold together within one agent's file only."""
        by_agent: dict[str, list] = {}
        for c in ranked:
            by_agent.setdefault(c.parts["fleet"][0], []).append(c)
        return sorted((m for group in by_agent.values() for m in s.merge_overlapping(group, max_chars)),
                      key=lambda c: (-c.rank, c.id))

    shown, hidden_info, evidence = s.select(cands, query, weights, n_docs, exact, opts, mode, merge=merge_within_agents)
    base["absent"] = s.public_absent(evidence)
    focus = s.line_focus(_Counts(n_docs), query, {"df": df}, opts.context_lines)
    for c in shown:
        agent, host = c.parts.pop("fleet")
        r = s.render(c, focus, opts)
        r.update({"agent": agent, "host": host, "ref": f"{FLEET_PREFIX}{agent}/{r['path']}"})
        r["citation"] = f"Source: {r['ref']}#L{r['startLine']}-L{r['endLine']}"  # the one citation shape; `get` reads the ref
        base["results"].append(r)
    base["hidden"] = hidden_info
    base["mode"] = mode
    if mode != "keyword":
        base["provider"], base["model"] = qv.provider, qv.name
    return base


# ----------------------------------------------------------------------------- get


def get_stored(cfg, ref: str, from_line: int | None = None, lines: int | None = None) -> dict:
    """A fleet hit's stored text (`fleet:AGENT/PATH`): the file itself is on another host, so
    what the fleet holds of it, its shared chunks, line by line."""
    rest = ref[len(FLEET_PREFIX):]
    agent, _, path = rest.partition("/")
    if not agent or not path:
        raise FleetError(f"{ref!r}: expected fleet:AGENT/PATH, as a fleet hit's ref says")
    url = fleet_url(cfg)
    conn = connect(url, autocommit=True)
    try:
        rows = conn.execute("select host, start_line, text from clawmem_chunks where agent = %s and path = %s"
                            " order by start_line", (agent, path)).fetchall()
    except Exception as exc:
        raise FleetError(f"fleet get failed: {_one_line(exc, url)}") from None
    finally:
        conn.close()
    if not rows:
        return {"path": ref, "agent": agent, "text": "", "fleet": True,
                "note": "nothing stored under that name, or not readable with this role"}
    by_line: dict[int, str] = {}
    for _, start, text in rows:
        for i, line in enumerate(text.split("\n")):
            by_line.setdefault(start + i, line)
    first = max(1, from_line or min(by_line))
    last = max(by_line) if not lines else first + lines - 1
    text = "\n".join(by_line.get(i, "") for i in range(first, last + 1))
    return {"path": ref, "agent": agent, "host": rows[0][0], "file": path, "from": first, "text": text, "fleet": True,
            "note": f"stored text from the fleet: the file is on {rows[0][0]}"}
