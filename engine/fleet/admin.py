"""The owner's administration of the fleet: agents' roles (`grant`, `revoke`), who may read
whom (`fleet_list`), the vector indexes (`build_indexes`) and sharding over Citus
(`distribute`). Each needs the owner's URL and says so when given an agent's."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from .connection import FleetError, _one_line, connect, mask_url
from .schema import (GRANTS, OLD_GRANTS, _grant_to, _has_schema, _owner_only, agent_index_name, build_vector_indexes,
                     ensure_schema, vector_index_name)

def role_name(agent: str, database: str) -> str:
    """An agent's login role in one fleet database. Roles are server-wide in PostgreSQL, so the
    name carries the database: two fleets on one server each have their own `A`."""
    import hashlib

    tag = database if re.fullmatch(r"[a-z0-9_]{1,16}", database) else hashlib.md5(database.encode()).hexdigest()[:8]
    name = f"clawmem_{tag}_{agent}"
    return name if len(name) <= 63 else f"clawmem_{hashlib.md5(f'{database}/{agent}'.encode()).hexdigest()[:20]}"


AGENT_RE = re.compile(r"[A-Za-z0-9._-]{1,50}")


# ----------------------------------------------------------------------------- grant


def _check_agent(agent: str, flag: str = "agent") -> None:
    if not AGENT_RE.fullmatch(agent):
        raise FleetError(f"{flag} {agent!r}: expected an agent id (1-50 letters, digits, . _ -)")


def _owner_session(url: str, what: str, *, ensure: bool = True):
    """A connection as the owner, the tables made or brought up to date (`ensure`), else
    FleetError saying what is missing."""
    conn = connect(url)
    try:
        _owner_only(conn, url, what)
        if ensure:
            ensure_schema(conn, url)
        elif not _has_schema(conn):
            raise FleetError(f"{mask_url(url)} has no clawmem fleet tables yet (or an older clawmem's): "
                             "`clawmem fleet grant` or the owner's push makes them")
    except BaseException:
        conn.close()
        raise
    return conn


def grant(url: str, agent: str, reads: list[str] | None = None, *, new_password: bool = False,
          add: list[str] = (), remove: list[str] = ()) -> dict:
    """Create or update an agent's role (as the owner) and say what goes in its config.
    `reads` (None: keep) replaces the agents it may read; `add` and `remove` change them one by one."""
    import secrets

    from psycopg import sql

    _check_agent(agent)
    for other in [*(reads or []), *add, *remove]:
        _check_agent(other, "--read")
    conn = _owner_session(url, "grant")
    try:
        row = conn.execute("select role, reads from clawmem_roles where agent = %s", (agent,)).fetchone()
        role = row[0] if row else role_name(agent, conn.info.dbname)
        current = set(row[1]) if row else set()
        wanted = (set(reads) if reads is not None else current) | set(add)
        wanted = sorted(wanted - set(remove) - {agent})
        exists = conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone() is not None
        if exists and not row:
            raise FleetError(f"a role {role} already exists on this server but is not this fleet's: "
                             "drop it, or use another database name")
        password = None
        if not exists or new_password:
            password = secrets.token_urlsafe(24)
            # the server gets the SCRAM verifier, never the password itself (it could be logged)
            verifier = conn.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256").decode()
            verb = sql.SQL("alter role" if exists else "create role")
            conn.execute(sql.SQL("{} {} login password {}").format(verb, sql.Identifier(role), sql.Literal(verifier)))
        _grant_to(conn, role)
        conn.execute("insert into clawmem_roles (role, agent, reads) values (%s, %s, %s) on conflict (role) do update"
                     " set reads = excluded.reads", (role, agent, wanted))
        restored = []
        if row is None:  # granted again after a revoke: those that read it then read it again
            restored = sorted(r for (r,) in conn.execute(
                "update clawmem_roles set reads = array_append(reads, %s) where agent = any(coalesce("
                "(select read_by from clawmem_revoked where agent = %s), '{}')) and not %s = any(reads) returning agent",
                (agent, agent, agent)))
            conn.execute("delete from clawmem_revoked where agent = %s", (agent,))
        read_by = sorted(r for (r,) in conn.execute("select agent from clawmem_roles where %s = any(reads)", (agent,)))
        conn.commit()
        build_vector_indexes(conn)
    except Exception as exc:
        conn.rollback()
        if isinstance(exc, FleetError):
            raise
        raise FleetError(f"fleet grant failed: {_one_line(exc, url)} (it needs the owner's URL, with the right to create roles)") from None
    finally:
        conn.close()
    parts = urlsplit(url)
    where = parts.netloc.rsplit("@", 1)[-1]
    agent_url = urlunsplit(parts._replace(netloc=f"{role}:{password or '<its current password>'}@{where}"))
    return {"agent": agent, "role": role, "reads": wanted, "readBy": read_by, "restoredReaders": restored,
            "newPassword": password is not None,
            "url": agent_url,
            "config": f'[fleet]\nurl = "{agent_url}"\npublish = true\n'}


def revoke(url: str, agent: str, *, delete_rows: bool = False) -> dict:
    """As the owner: the agent's role stops working at once (its login is dropped; sessions it
    has open read nothing more, as the access rule no longer knows them), other agents stop
    reading it; with `delete_rows`, its shared rows go too (else they stay, readable by the owner)."""
    from psycopg import sql

    _check_agent(agent)
    conn = _owner_session(url, "revoke")
    try:
        row = conn.execute("select role from clawmem_roles where agent = %s", (agent,)).fetchone()
        if row is None:
            raise FleetError(f"agent {agent} has no role in this fleet (`clawmem fleet list` shows those that do)")
        role = row[0]
        conn.execute("insert into clawmem_revoked (agent, read_by) select %s, coalesce(array_agg(agent order by agent), '{}')"
                     " from clawmem_roles where %s = any(reads) on conflict (agent) do update set read_by = excluded.read_by,"
                     " revoked_at = now()", (agent, agent))
        conn.execute("delete from clawmem_roles where role = %s", (role,))
        conn.execute("update clawmem_roles set reads = array_remove(reads, %s)", (agent,))
        for stmt in GRANTS + OLD_GRANTS:
            conn.execute(sql.SQL("revoke " + stmt + " from {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("revoke connect on database {} from {}").format(sql.Identifier(conn.info.dbname), sql.Identifier(role)))
        conn.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(role)))
        deleted = 0
        if delete_rows:
            for (model,) in conn.execute("select model from clawmem_agents where agent = %s and model is not null", (agent,)).fetchall():
                conn.execute(sql.SQL("drop index if exists {}").format(sql.Identifier(agent_index_name(model, agent))))
            deleted = conn.execute("delete from clawmem_chunks where agent = %s", (agent,)).rowcount
            conn.execute("delete from clawmem_terms where agent = %s", (agent,))
            conn.execute("delete from clawmem_agents where agent = %s", (agent,))
        conn.commit()
    except Exception as exc:
        conn.rollback()
        if isinstance(exc, FleetError):
            raise
        raise FleetError(f"fleet revoke failed: {_one_line(exc, url)}") from None
    finally:
        conn.close()
    return {"agent": agent, "role": role, "deletedRows": deleted}


def fleet_list(url: str, command: str = "list") -> dict:
    """As the owner: every agent of the fleet, its role, whom it may read and who may read it,
    its rows, model and last push; and the server's health."""
    conn = _owner_session(url, command, ensure=False)
    try:
        roles = {a: (r, list(reads)) for r, a, reads in conn.execute("select role, agent, reads from clawmem_roles")}
        pushed = {r[0]: r[1:] for r in conn.execute(
            "select agent, host, model, dims, chunks, to_char(pushed_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') from clawmem_agents")}
        indexed = {r[0] for r in conn.execute("select relname from pg_class where relname like 'clawmem_vec_%'")}
        agents = []
        for name in sorted(set(roles) | set(pushed)):
            role, reads = roles.get(name, (None, []))
            host, model, dims, chunks, at = pushed.get(name, (None, None, None, 0, None))
            agents.append({"agent": name, "role": role, "reads": sorted(reads),
                           "readBy": sorted(a for a, (_, r) in roles.items() if name in r),
                           "host": host, "model": model, "chunks": chunks, "lastPush": at,
                           "vectorIndex": (vector_index_name(model) in indexed) if model else None})
        server = dict(zip(("version", "vector", "size", "connections"), conn.execute(
            "select current_setting('server_version'), (select extversion from pg_extension where extname = 'vector'),"
            " pg_size_pretty(pg_database_size(current_database())),"
            " (select count(*) from pg_stat_activity where datname = current_database())::int").fetchone()))
        server["database"] = conn.info.dbname
    finally:
        conn.close()
    return {"agents": agents, "server": server}


# Sharding by agent over several servers (Citus): the tables whose every key starts with the
# agent are distributed by it, colocated, so an agent's push and its word counts touch one
# shard; the roles table is small and read by every access check: a copy on every node.
CITUS_STATEMENTS = (
    "select create_distributed_table('clawmem_chunks', 'agent')",
    "select create_distributed_table('clawmem_agents', 'agent', colocate_with => 'clawmem_chunks')",
    "select create_distributed_table('clawmem_terms', 'agent', colocate_with => 'clawmem_chunks')",
    "select create_distributed_table('clawmem_notes', 'agent', colocate_with => 'clawmem_chunks')",
    "select create_distributed_table('clawmem_revoked', 'agent', colocate_with => 'clawmem_chunks')",
    "select create_reference_table('clawmem_roles')",
)


def distribute(url: str) -> list[str]:
    """`clawmem fleet distribute`: as the owner on a Citus coordinator, shard the fleet tables
    by agent (CITUS_STATEMENTS). Refused, saying why, on a server without Citus. Untested on a
    real Citus cluster (none here): see bench/results/citus.md for what a run should measure."""
    conn = _owner_session(url, "distribute")
    try:
        if not conn.execute("select 1 from pg_extension where extname = 'citus'").fetchone():
            available = conn.execute("select 1 from pg_available_extensions where name = 'citus'").fetchone()
            raise FleetError("this PostgreSQL has no Citus" + (" enabled (create extension citus on the coordinator and its workers first)"
                             if available else " (the citus extension is not installed)")
                             + ": `clawmem fleet distribute` shards the fleet over a Citus cluster; one server needs nothing")
        done = []
        for stmt in CITUS_STATEMENTS:
            conn.execute(stmt)
            done.append(stmt)
        conn.commit()
        return done
    except FleetError:
        raise
    except Exception as exc:
        conn.rollback()
        raise FleetError(f"fleet distribute failed: {_one_line(exc, url)}") from None
    finally:
        conn.close()


def build_indexes(url: str) -> list[str]:
    """`clawmem fleet index`: as the owner, the vector indexes of every pushed model."""
    conn = _owner_session(url, "index")
    try:
        return build_vector_indexes(conn)
    finally:
        conn.close()
