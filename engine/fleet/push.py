"""Push: this agent's shared chunks into the fleet, and what the fleet holds of them as this host
knows it (`PushState`, read by `status` without the network).

Keys: a pushed chunk is (agent, path, lines, text hash, model): an edit, a moved chunk or a
vector that arrived later is a new row, and push deletes what the local index no longer holds.
Every batch commits on its own and inserts skip rows already there, so a killed push resumes
where it stopped and a second push changes nothing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterable

from .connection import FleetError, _one_line, connect, fleet_host, fleet_url, is_shared, mask_url, model_key, register_vector
from .schema import _has_schema, build_vector_indexes, ensure_schema, tsvector_literal, vector_index_name

PUSH_BATCH = 500


# ----------------------------------------------------------------------------- the local side


def state_path(cfg) -> Path:
    from .. import paths
    from ..config import workspace_key

    return paths.state_dir() / "fleet" / f"{cfg.agent_id}-{workspace_key(cfg.workspace)}.sqlite"


class PushState:
    """What this agent knows is in the fleet (so `status` can say how far behind it is while
    the database is down) and the last push's outcome. Rewritten from the server's own rows
    at every push: the server is the truth."""

    def __init__(self, cfg):
        from .. import paths
        from ..index.store import db

        path = state_path(cfg)
        paths.private_dir(path.parent)
        self.conn = db.connect(str(path), timeout=10)
        self.conn.executescript(
            "create table if not exists pushed (path text, start_line int, end_line int, hash text, model text);"
            "create table if not exists meta (key text primary key, value text);")

    def keys(self) -> set[tuple]:
        return set(self.conn.execute("select path, start_line, end_line, hash, model from pushed"))

    def replace(self, keys: Iterable[tuple]) -> None:
        with self.conn:
            self.conn.execute("delete from pushed")
            self.conn.executemany("insert into pushed values (?,?,?,?,?)", keys)

    def add(self, keys: list[tuple]) -> None:
        with self.conn:
            self.conn.executemany("insert into pushed values (?,?,?,?,?)", keys)

    def remove(self, keys: list[tuple]) -> None:
        with self.conn:
            self.conn.executemany("delete from pushed where path = ? and start_line = ? and end_line = ? and hash = ? "
                                  "and model is ?", keys)

    def get(self, key: str) -> str | None:
        row = self.conn.execute("select value from meta where key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set(self, **values: str | None) -> None:
        with self.conn:
            for k, v in values.items():
                self.conn.execute("insert or replace into meta values (?, ?)", (k, v))

    def close(self) -> None:
        self.conn.close()


def _local_model(engine, store) -> tuple[str | None, int | None, int | None]:
    """(model key, dims, local model id) of the vectors this agent's searches use."""
    side, info = engine.searcher.vector_side(store)
    if side is None:
        return None, None, None
    return model_key(info), info["dims"], side.model_id


def _local_chunks(cfg, store) -> dict[tuple, int]:
    """(path, start, end, hash) -> local chunk id, for the shared files."""
    out = {}
    for cid, path, s, e, h in store.file_chunks():
        if is_shared(cfg, path):
            out[(path, s, e, h)] = cid
    return out


def _vector_ids(store, mid: int | None) -> set[int]:
    if mid is None:
        return set()
    return set(store.vector_chunk_ids(int(mid)))


def _wanted(engine, store) -> tuple[str | None, int | None, int | None, dict[tuple, int]]:
    """(model key, dims, local model id, {fleet key: local chunk id}) of what the fleet should
    hold of this agent: its shared chunks, each keyed with the model of its vector (None
    until it has one, so a vector that arrives later is pushed then)."""
    model, dims, mid = _local_model(engine, store)
    with_vec = _vector_ids(store, mid)
    want = {(*k, model if cid in with_vec else None): cid for k, cid in _local_chunks(engine.cfg, store).items()}
    return model, dims, mid, want


def fleet_status(engine) -> dict | None:
    """The fleet line of `status`, read locally (no network): None when no fleet is set."""
    cfg = engine.cfg
    if not cfg["fleet.url"]:
        return None
    out = {"url": mask_url(cfg["fleet.url"]), "publish": cfg["fleet.publish"], "host": fleet_host(cfg),
           "lastPush": None, "lastError": None}
    pushed: set[tuple] = set()
    if state_path(cfg).exists():
        state = PushState(cfg)
        try:
            pushed = state.keys()
            out.update(lastPush=state.get("last_push"), lastError=state.get("last_error"))
        finally:
            state.close()
    store = engine.reader()
    want = set(_wanted(engine, store)[3]) if store is not None and store.has_schema() else set()
    out["behind"] = len(want - pushed) + len(pushed - want)
    if pushed and not out["lastError"]:
        # what this agent pushed may since have been deleted on the server (the owner's revoke
        # --delete-rows, a restore): "up to date" only when the server still holds it
        try:
            conn = connect(cfg["fleet.url"], autocommit=True, statement_timeout_ms=2000, connect_timeout=2)
            try:
                held = conn.execute("select count(*) from clawmem_chunks where agent = %s", (cfg.agent_id,)).fetchone()[0]
            finally:
                conn.close()
        except Exception as exc:  # unreachable now: said, the local count stands
            out["checked"] = f"not checked on the server: {_one_line(exc, cfg['fleet.url'])}"
        else:
            if held < len(pushed):
                out["missingOnServer"] = len(pushed) - held
                out["behind"] += len(pushed) - held
    return out


# ----------------------------------------------------------------------------- push

def push(engine, progress: Callable[[int, int], None] | None = None, batch: int = PUSH_BATCH) -> dict:
    """Publish this agent's shared chunks: add what the fleet lacks, delete what the local index
    no longer holds. Raises FleetError (and records it for `status`) when the database fails."""
    cfg = engine.cfg
    url = fleet_url(cfg)
    state = PushState(cfg)
    try:
        out = _push(engine, url, state, progress, batch)
        state.set(last_push=time.strftime("%Y-%m-%d %H:%M:%S"), last_error=None)
        return out
    except FleetError as exc:
        state.set(last_error=str(exc))
        raise
    except Exception as exc:
        msg = f"fleet push failed: {_one_line(exc, url)}"
        state.set(last_error=msg)
        raise FleetError(msg) from None
    finally:
        state.close()


def _push(engine, url: str, state: PushState, progress, batch: int) -> dict:
    import psycopg

    cfg = engine.cfg
    agent, host = cfg.agent_id, fleet_host(cfg)
    store = engine.reader()
    if store is None or not store.has_schema():
        raise FleetError("nothing to push: the local index is empty (run `clawmem index`)")
    t0 = time.perf_counter()
    conn = connect(url)
    try:
        # after the connection: while the fleet is down, the watcher's retries cost one connect, not a scan
        model, dims, mid, want = _wanted(engine, store)
        if not _has_schema(conn):
            ensure_schema(conn, url)
            register_vector(conn)
        own = conn.execute("select clawmem_own_agent()").fetchone()[0]
        if own is not None and own != agent:  # row-level security would refuse every row: say why instead
            raise FleetError(f"{mask_url(url)} is agent {own}'s role, not {agent}'s: "
                             f"use the URL `clawmem fleet grant {agent}` printed, or agentId = \"{own}\"")
        if own is None and conn.execute("select 1 from clawmem_roles where agent = %s", (agent,)).fetchone():
            # the owner is exempt from row-level security: pushing as an agent that has its own
            # role would replace (and delete) that agent's rows
            raise FleetError(f"agent {agent} has its own role in this fleet: push with the URL `clawmem fleet grant {agent}` "
                             "printed, not the owner's")
        conn.execute("select clawmem_put_agent(%s, %s, %s, %s)", (agent, host, model, dims))
        conn.commit()
        server = {tuple(r[1:]): r[0] for r in conn.execute(
            "select id, path, start_line, end_line, hash, model from clawmem_chunks where agent = %s", (agent,))}
        state.replace(server)
        gone = [(key, rid) for key, rid in server.items() if key not in want]
        todo = [(key, cid) for key, cid in want.items() if key not in server]
        total, done = len(gone) + len(todo), 0
        # what is new first, then what is gone: a push that fails on the way (the database
        # refuses a row, the server stops) never leaves the agent with fewer rows than before
        for part in _batches(todo, batch):
            # one statement per batch, its columns as arrays (the word counts follow in it)
            conn.execute(
                "select clawmem_add_chunks(%s, %s, %s::text[], %s::text[], %s::int[], %s::int[], %s::text[], %s::text[],"
                " %s::text[], %s::tsvector[], %s::vector[], %s::text[], %s::float8[], %s::int8[], %s::text[])",
                (agent, host, *(list(col) for col in zip(*_rows_for(store, mid, part)))))
            conn.commit()
            state.add([key for key, _ in part])
            done += len(part)
            if progress:
                progress(done, total)
        for part in _batches(gone, 1000):
            conn.execute("select clawmem_delete_chunks(%s, %s::bigint[])", (agent, [rid for _, rid in part]))
            conn.commit()
            state.remove([key for key, _ in part])
            done += len(part)
            if progress:
                progress(done, total)
        conn.execute("select clawmem_pushed(%s)", (agent,))
        conn.commit()
        notes = []
        if model:
            if own is None:
                build_vector_indexes(conn)
            elif not conn.execute("select 1 from pg_class where relname = %s", (vector_index_name(model),)).fetchone():
                notes.append(f"model {model} has no vector index in the fleet yet: the owner's next push, "
                             "`clawmem fleet grant` or `clawmem fleet index` builds it (searches scan its rows until then)")
    except psycopg.Error as exc:
        raise FleetError(f"fleet push to {mask_url(url)} failed: {_one_line(exc, url)}") from None
    finally:
        conn.close()
    return {"agent": agent, "host": host, "model": model, "dims": dims, "chunks": len(want), "added": len(todo),
            "deleted": len(gone), "seconds": round(time.perf_counter() - t0, 3), "notes": notes}


def _batches(items: list, size: int) -> Iterable[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _rows_for(store, mid: int | None, part: list[tuple]) -> list[tuple]:
    ids = [cid for _, cid in part]
    # (source, text, day, ts, mtime_ns, linemap) from the store's (path, source, start, end, text, ts, linemap, day, mtime_ns)
    local = {cid: (r[1], r[4], r[7], r[5], r[8], r[6]) for cid, r in store.rows(ids).items()}
    vectors: dict[int, Any] = {}
    if mid is not None and any(key[4] for key, _ in part):
        got, mat = store.load_matrix(mid, ids)
        vectors = dict(zip(got.tolist(), mat))
    rows = []
    for (path, s, e, h, model), cid in part:
        source, text, day, ts, mtime_ns, linemap = local[cid]
        vec = vectors.get(cid) if model else None
        rows.append((path, source, s, e, h, model if vec is not None else None, text, tsvector_literal(text),
                     vec, day, ts, mtime_ns, linemap))
    return rows


def push_quietly(engine) -> str | None:
    """The watcher's push after a sync: never raises; the error, if any (also kept for status)."""
    try:
        push(engine)
        return None
    except FleetError as exc:
        return str(exc)
    except Exception as exc:
        return f"fleet push failed: {type(exc).__name__}: {_one_line(exc)}"
