"""Fleet search by role (issue 33): roles that read a few agents against roles that read all,
this clawmem's server side against the one before it (commit 4b6efe9), A/B alternated query by
query in one run, on two copies of one database on one server.

New: the vector pass is `clawmem_nearest` (the readable agents' own HNSW graphs when they hold
a small share of the model's rows, else the model's graph; values written into the statement),
the date filter `clawmem_dated` is inlined instead of called once per row, and the keyword
index is by agent and token (btree_gin). Old (a copy of the database made with `create
database ... template`): no per-agent graphs, the keyword index by token, the vector statement
search_with sent (the model's graph filtered by agent, pgvector's iterative scan) and the
keyword function with the per-row date filter, recreated under `_old` names. Both copies are
on the same server, with the same settings (shared_buffers as `clawmem fleet up` sets it).

One embedded PostgreSQL + pgvector (what `clawmem fleet up` starts) in a temporary folder;
--chunks synthetic chunks (default 100,000) in the corpus's words over ten agents, loaded as
bench_fleet.py's size run loads them (one binary COPY, the full-text index, the model's HNSW
index by clawmem's own function), with 384-d vectors clustered around 512 centers (cosine
about 0.8 to their center, so recall means something); then the owner's `fleet index`
(build_vector_indexes) builds the per-agent indexes. --run 1 (default) interleaves the agents
row by row, as bench_fleet.py does: the worst case for a role reading a few agents (each of
its rows on another page); --run 500 lays each agent's rows out as a first push does. Six
roles search on kept connections: two read all ten agents, two read three (their own and two
others), two read only their own.

Per role, on the same queries (the corpus's words; a query vector near a random center), old
and new alternated:
- whole search (`search_with`: keyword and vector passes, fusion, snippets; not the query's
  embedding, which is the same on both sides);
- the keyword side alone (search_with without a query vector);
- the vector pass alone, and its recall@24 against an exact search of the role's rows (the
  owner's scan of every row of those agents, by distance).

    python bench/bench_fleet_roles.py                         # 100k chunks, 24 queries per figure
    python bench/bench_fleet_roles.py --chunks 20000 --queries 8   # a quick check

Check `uptime` first: on a busy machine only the ratios in one run mean much.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_fleet import BIG_DIMS, BIG_MODEL, QUERIES, load_big, p50, p95, unit_vectors  # noqa: E402

# the server side before this change, as it was (commit 4b6efe9), under other names: the date
# filter as a function with a SET clause (so called once per row, not inlined), the keyword
# function using it, and search_with's vector statement (the model's graph filtered by agent)
OLD_FUNCTIONS = """
create or replace function clawmem_dated_old(day text, source text, ts float8, lo date, hi date) returns boolean
    language sql immutable set search_path = pg_catalog as $$
    select (lo is null and hi is null)
        or (day is not null and day >= coalesce(lo, '0001-01-01')::text and day < coalesce(hi, '9999-12-31')::text)
        or (source = 'sessions' and ts is not null
            and ts >= coalesce(extract(epoch from lo::timestamp), '-infinity'::float8)
            and ts < coalesce(extract(epoch from hi::timestamp), 'infinity'::float8)) $$;
create or replace function clawmem_keyword_old(q tsquery, wanted text[], n int, pool int, lo date default null, hi date default null)
    returns table (id bigint, rank real)
    language sql stable security definer set search_path = pg_catalog, public as $$
    with hit as (select c.id, c.tokens from clawmem_chunks c where c.tokens @@ q and c.agent = any((select clawmem_allowed(wanted))::text[])
                 and clawmem_dated_old(c.day, c.source, c.ts, lo, hi) limit pool)
    select hit.id, ts_rank(hit.tokens, q, 1) from hit order by 2 desc, 1 limit n $$;
"""
OLD_VECTOR = ("select id, (embedding::vector({d}) <=> %s::vector({d})) from clawmem_chunks where model = {m}"
              " and (%s::text[] is null or agent = any(%s)) and clawmem_dated_old(day, source, ts, %s, %s)"
              " and exists (select 1 from clawmem_agents a where a.model = {m}) order by 2 limit %s")


class OldServerSide:
    """A connection that runs search_with's statements as they were before (everything else
    passes through): the old vector statement, the old keyword function."""

    def __init__(self, conn):
        self.conn = conn

    def __getattr__(self, name):
        return getattr(self.conn, name)

    def execute(self, query, params=None, **kw):
        from psycopg import sql

        from clawmem.engine.fleet import client as fleet

        if query is fleet.NEAREST:
            model, q, agents, n, lo, hi = params
            stmt = sql.SQL(OLD_VECTOR.format(d=int(model.rsplit("@", 1)[1]), m="{m}")).format(m=sql.Literal(model))
            return self.conn.execute(stmt, (q, agents, agents, lo, hi, n), **kw)
        if isinstance(query, str) and "clawmem_keyword(" in query:
            query = query.replace("clawmem_keyword(", "clawmem_keyword_old(")
        return self.conn.execute(query, params, **kw)


ROLES = {"agent0": "all", "agent1": "all", "agent2": "three", "agent3": "three", "agent4": "own", "agent5": "own"}


def reads_of(i: int, agents: list[str]) -> list[str]:
    kind = ROLES[agents[i]]
    return agents if kind == "all" else [agents[(i + k) % 10] for k in (1, 2)] if kind == "three" else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=24, help="queries per role and figure")
    ap.add_argument("--run", type=int, default=1, help="rows in a row per agent: 1 interleaves the agents row by row"
                    " (the worst case for a few agents' rows); 500 is how a first push lays them out")
    ap.add_argument("--shared-buffers", help="PostgreSQL's shared_buffers for this run (default: what `clawmem fleet up` sets;"
                    " 128MB is PostgreSQL's own default, which fleet up used before)")
    ap.add_argument("--vectors", choices=("clustered", "random"), default="clustered",
                    help="random: uniform random unit vectors, as bench_fleet.py's size run (the hardest case for HNSW;"
                         " recall means little there)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="clawmem-bench-roles-"))
    os.chmod(root, 0o711)  # as root, the server's user passes through the folder the benchmark made
    for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")):
        os.environ[var] = str(root / sub)
    import psycopg
    import psycopg.sql

    from clawmem.engine import Engine, load_config
    from clawmem.engine.fleet import client as fleet
    from clawmem.engine.fleet.server import LocalServer

    server = LocalServer(root / "server")
    out: dict = {"chunks": a.chunks, "queries": a.queries, "load before": os.getloadavg()[0]}
    try:
        owner = server.up()
        if a.shared_buffers:
            with psycopg.connect(owner, autocommit=True) as conn:
                conn.execute("alter system set shared_buffers = %s" % psycopg.sql.quote(a.shared_buffers))
            server.down()
            owner = server.up()
        with psycopg.connect(owner) as conn:
            out["shared_buffers"] = conn.execute("show shared_buffers").fetchone()[0]
        with psycopg.connect(owner, autocommit=True) as conn:
            conn.execute("create database roles")
        url = owner.rsplit("/", 1)[0] + "/roles"
        agents = [f"agent{i}" for i in range(10)]
        nrng = np.random.default_rng(11)
        centers = unit_vectors(nrng, 512)
        print(f"  loading {a.chunks} chunks ...", file=sys.stderr)
        out["vectors"] = a.vectors
        out.update(load_big(url, a.chunks, agents, centers if a.vectors == "clustered" else None, a.run))
        out["run"] = a.run
        reference = out.pop("sample")
        t0 = time.perf_counter()
        fleet.build_indexes(url)  # `clawmem fleet index`: the per-agent graphs
        out["per-agent HNSW build s"] = round(time.perf_counter() - t0, 1)
        print(f"  loaded in {out['load s']} s, model's HNSW {out['HNSW build s']} s, per-agent HNSW {out['per-agent HNSW build s']} s",
              file=sys.stderr)
        # the same rows as the server had them before: a copy of the database without the
        # per-agent graphs, with the keyword index by token only and the old functions
        with psycopg.connect(owner, autocommit=True) as conn:
            conn.execute("create database roles_old template roles")
        old_url = owner.rsplit("/", 1)[0] + "/roles_old"
        with psycopg.connect(old_url, autocommit=True) as conn:
            for (name,) in conn.execute("select indexname from pg_indexes where indexname like 'clawmem_veca_%'").fetchall():
                conn.execute(f"drop index {name}")
            conn.execute("drop index if exists clawmem_chunks_agent_tokens")
            conn.execute("create index if not exists clawmem_chunks_tokens on clawmem_chunks using gin (tokens)")
            conn.execute(OLD_FUNCTIONS)
            conn.execute("vacuum analyze clawmem_chunks")
        grants = lambda u: {ag: fleet.grant(u, ag, reads_of(i, agents), new_password=True)["url"]  # noqa: E731
                            for i, ag in enumerate(agents) if ag in ROLES}
        conns = {ag: fleet.connect(u, autocommit=True) for ag, u in grants(url).items()}
        olds = {ag: OldServerSide(fleet.connect(u, autocommit=True)) for ag, u in grants(old_url).items()}
        exact = fleet.connect(url, autocommit=True)
        (root / "ws" / "memory").mkdir(parents=True)
        eng = Engine(load_config(None, workspace=str(root / "ws"), overrides={"provider": "none"}))
        opts = eng.options()
        k = opts.candidates
        qvecs = unit_vectors(nrng, a.queries, centers if a.vectors == "clustered" else None)
        readable = {ag: [ag, *reads_of(i, agents)] if ROLES[ag] != "all" else agents for i, ag in enumerate(agents) if ag in ROLES}

        def qv(i):
            return fleet.QueryVector(BIG_MODEL, BIG_DIMS, qvecs[i], reference, "bench", "clustered")

        def vector_ids(conn, i) -> list[int]:
            conn.execute("select set_config('hnsw.ef_search', %s, false)", (str(max(40, 2 * k)),))
            return [r[0] for r in conn.execute(fleet.NEAREST, (BIG_MODEL, qvecs[i], None, k, None, None))]

        def timed(fn) -> float:
            t = time.perf_counter()
            fn()
            return (time.perf_counter() - t) * 1000

        for ag, conn in conns.items():  # untimed: each statement's first planning
            fleet.search_with(conn, QUERIES[0], opts, None, qv(0))
            fleet.search_with(olds[ag], QUERIES[0], opts, None, qv(0))
        figs = {ag: {f: [] for f in ("whole old", "whole new", "keyword old", "keyword new", "vector old", "vector new", "recall old", "recall new")}
                for ag in conns}
        for i in range(a.queries):  # roles and variants take turns, so a busy moment hits all alike
            query = QUERIES[i % len(QUERIES)]
            truth_cache = {}
            for ag, conn in conns.items():
                f = figs[ag]
                old = olds[ag]
                order = (("old", old), ("new", conn)) if i % 2 == 0 else (("new", conn), ("old", old))
                for name, c in order:
                    f[f"whole {name}"].append(timed(lambda: fleet.search_with(c, query, opts, None, qv(i))))
                for name, c in order:
                    f[f"keyword {name}"].append(timed(lambda: fleet.search_with(c, query, opts, None, None)))
                for name, c in order:
                    got = []
                    f[f"vector {name}"].append(timed(lambda: got.extend(vector_ids(c, i))))
                    key = tuple(readable[ag])
                    if key not in truth_cache:  # every row of the role's agents, by distance: no index
                        truth_cache[key] = {r[0] for r in exact.execute(
                            "select id from clawmem_chunks where agent = any(%s) and model = %s"
                            " order by (embedding::vector(384) <=> %s::vector(384)) + 0 limit %s", (list(key), BIG_MODEL, qvecs[i], k))}
                    f[f"recall {name}"].append(len(truth_cache[key] & set(got)) / k)
        for c in [*conns.values(), *(o.conn for o in olds.values()), exact]:
            c.close()
        eng.close()
        out["load after"] = os.getloadavg()[0]
        out["roles"] = {ag: {"reads": ROLES[ag], **{name: ({"p50 ms": round(p50(xs), 1), "p95 ms": round(p95(xs), 1)}
                                                          if not name.startswith("recall") else round(float(np.mean(xs)), 3))
                                                   for name, xs in f.items()}} for ag, f in figs.items()}
        report(out)
        if a.json:
            a.json.write_text(json.dumps(out, indent=2))
    finally:
        server.down()
        shutil.rmtree(root, ignore_errors=True)


def report(out: dict) -> None:
    print(f"\n{out['chunks']} chunks over 10 agents (rows in turns of {out['run']}), {out['queries']} queries per figure,"
          f" shared_buffers {out['shared_buffers']}, {out['vectors']} vectors;"
          f" load {out['load s']} s, model's HNSW {out['HNSW build s']} s, per-agent HNSW {out['per-agent HNSW build s']} s")
    print(f"{'role':6s} {'reads':5s} | {'whole search p50/p95 ms':^25s} | {'keyword side p50/p95 ms':^25s} |"
          f" {'vector pass p50/p95 ms':^25s} | recall@24")
    print(f"{'':12s} | {'old':^12s} {'new':^12s} | {'old':^12s} {'new':^12s} | {'old':^12s} {'new':^12s} | {'old':>5s} {'new':>5s}")
    for ag, r in out["roles"].items():
        cell = lambda name: f"{r[name]['p50 ms']:5.1f}/{r[name]['p95 ms']:6.1f}"  # noqa: E731
        print(f"{ag:6s} {r['reads']:5s} | {cell('whole old')} {cell('whole new')} | {cell('keyword old')} {cell('keyword new')} |"
              f" {cell('vector old')} {cell('vector new')} | {r['recall old']:.3f} {r['recall new']:.3f}")
    print(f"load average before {out['load before']:.2f}, after {out['load after']:.2f} (2 cores; wall times)")


if __name__ == "__main__":
    main()
