"""Fleet memory: the shared chunks of many agents on many hosts in one PostgreSQL + pgvector
database, searched like the local index.

The Markdown files stay the truth and the local SQLite index the fast path for an agent's own
memory; the fleet tables are derived from the local indexes (`push`) and can be dropped and
pushed again at any time. Only files matching `[fleet] share` ever leave their host.

Access: each agent logs in as its own role (`grant`); row-level security lets it read its own
rows and those of the agents it was granted, and write only its own. The role that created
the tables (the owner) is exempt from row-level security and sees every agent.

Keys: a pushed chunk is (agent, path, lines, text hash, model): an edit, a moved chunk or a
vector that arrived later is a new row, and push deletes what the local index no longer holds.
Every batch commits on its own and inserts skip rows already there, so a killed push resumes
where it stopped and a second push changes nothing.

psycopg and pgvector load only here, and this module only when a fleet command runs.
"""

from __future__ import annotations

import fnmatch
import re
import socket
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit, urlunsplit

from ..redaction import mask_password
from ..errors import ClawmemError

PUSH_BATCH = 500
CONNECT_TIMEOUT = 5  # seconds: a fleet that is down must not hold up the watcher
# Every connection waits at most this long for a lock and runs a statement at most this long:
# a session that holds a lock (the owner's migration, one left idle in a transaction) delays
# the others by seconds, never stalls them
LOCK_TIMEOUT_MS = 3000
STATEMENT_TIMEOUT_MS = 120_000  # a push batch, the owner's commands
SEARCH_TIMEOUT_MS = 8000  # a search: then it says so and answers from this agent's own index
FLEET_PREFIX = "fleet:"  # `clawmem get fleet:AGENT/PATH` reads a fleet hit's stored text


class FleetError(ClawmemError):
    """A fleet operation failed: one line for the user, the password masked."""


# ----------------------------------------------------------------------------- settings


mask_url = mask_password  # the fleet's name for it


def _masked(text: str, url: str) -> str:
    pw = urlsplit(url).password if url else None
    return text.replace(pw, "***") if pw else text


def fleet_url(cfg) -> str:
    url = cfg["fleet.url"]
    if not url:
        from ..config import ConfigError

        raise ConfigError("no fleet database: set [fleet] url in the clawmem config or CLAWMEM_FLEET_URL "
                          "(`clawmem fleet up` starts a local one)")
    return url


def fleet_host(cfg) -> str:
    return cfg["fleet.host"] or socket.gethostname()


def is_shared(cfg, path: str) -> bool:
    """Whether other agents may see this file: it matches a glob of `share` and no `!glob`
    (fnmatch: `*` also crosses folders)."""
    yes = False
    for pat in cfg["fleet.share"]:
        if pat.startswith("!"):
            if fnmatch.fnmatchcase(path, pat[1:]):
                return False
        elif fnmatch.fnmatchcase(path, pat):
            yes = True
    return yes


def role_name(agent: str, database: str) -> str:
    """An agent's login role in one fleet database. Roles are server-wide in PostgreSQL, so the
    name carries the database: two fleets on one server each have their own `A`."""
    import hashlib

    tag = database if re.fullmatch(r"[a-z0-9_]{1,16}", database) else hashlib.md5(database.encode()).hexdigest()[:8]
    name = f"clawmem_{tag}_{agent}"
    return name if len(name) <= 63 else f"clawmem_{hashlib.md5(f'{database}/{agent}'.encode()).hexdigest()[:20]}"


AGENT_RE = re.compile(r"[A-Za-z0-9._-]{1,50}")


# ----------------------------------------------------------------------------- connecting


def connect(url: str, *, autocommit: bool = False, statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
            connect_timeout: int = CONNECT_TIMEOUT):
    try:
        import psycopg
    except ImportError:
        raise FleetError("fleet memory needs psycopg and pgvector: pip install 'clawmem[fleet]'") from None
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=connect_timeout,
                               options=f"-c lock_timeout={LOCK_TIMEOUT_MS} -c statement_timeout={statement_timeout_ms}")
    except psycopg.Error as exc:
        raise FleetError(f"cannot reach the fleet database {mask_url(url)}: {_one_line(exc, url)}") from None
    except Exception as exc:  # a malformed URL: psycopg's own message, masked
        raise FleetError(f"fleet url {mask_url(url)} is not usable: {_one_line(exc, url)}") from None
    register_vector(conn)
    if autocommit:
        try:  # pgvector >= 0.8: a filtered HNSW scan keeps looking until it has enough rows
            conn.execute("set hnsw.iterative_scan = relaxed_order")
        except psycopg.Error:
            pass
    return conn


def register_vector(conn) -> None:
    """Vectors as numpy arrays, once the database has the type (the first push may create it)."""
    if conn.execute("select 1 from pg_type where typname = 'vector'").fetchone():
        from pgvector.psycopg import register_vector as register

        register(conn)


def _one_line(exc: BaseException, url: str = "") -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return _masked(text, url)


SCHEMA = """
create extension if not exists vector;
create table if not exists clawmem_agents (
    agent text primary key, host text not null, model text, dims int,
    chunks int not null default 0, pushed_at timestamptz);
-- every key starts with the agent: Citus can distribute the tables by agent
create table if not exists clawmem_chunks (
    id bigserial, agent text not null, host text not null, path text not null,
    source text not null, start_line int not null, end_line int not null, hash text not null,
    model text, text text not null, tokens tsvector not null, embedding vector,
    day text, ts double precision, mtime_ns bigint, linemap text, primary key (agent, id));
create unique index if not exists clawmem_chunks_key on clawmem_chunks (agent, path, start_line, end_line, hash, coalesce(model, ''));
-- the keyword index: by agent and token where the btree_gin extension is there (a trusted
-- extension: the database owner may add it), so a role reading a few agents gets only their
-- matches from the index, not every agent's to sift on the table's pages; else by token
do $$ begin
    begin
        create extension if not exists btree_gin;
    exception when others then
        null;  -- not installed on this server, or not allowed: by token only
    end;
    if exists (select 1 from pg_extension where extname = 'btree_gin') then
        create index if not exists clawmem_chunks_agent_tokens on clawmem_chunks using gin (agent, tokens);
        drop index if exists clawmem_chunks_tokens;
    else
        create index if not exists clawmem_chunks_tokens on clawmem_chunks using gin (tokens);
    end if;
end $$;
-- how many of an agent's chunks hold each token: a search's word weights and its choice of
-- words for the relaxed pass, read in one lookup instead of counted per query. Push changes
-- them in the statement that adds or deletes the chunks (one shard under Citus, as the chunks)
do $$ begin
    if to_regclass('public.clawmem_terms') is null then
        create table clawmem_terms (agent text not null, term text not null, chunks int not null, primary key (agent, term));
        insert into clawmem_terms select agent, u.lexeme, count(*) from clawmem_chunks, unnest(tokens) u group by 1, 2;
    end if;
end $$;
create table if not exists clawmem_roles (role name primary key, agent text not null unique, reads text[] not null default '{}');
revoke all on clawmem_roles from public;
-- who read a revoked agent: its next grant gives them back their reading of it
create table if not exists clawmem_revoked (agent text primary key, read_by text[] not null, revoked_at timestamptz not null default now());
revoke all on clawmem_revoked from public;

-- who is asking is the login role (session_user): inside these functions current_user is the owner
create or replace function clawmem_readable() returns text[] language sql stable security definer
    set search_path = pg_catalog, public
    as $$ select coalesce((select array[agent] || reads from clawmem_roles where role = session_user), '{}') $$;
create or replace function clawmem_own_agent() returns text language sql stable security definer
    set search_path = pg_catalog, public
    as $$ select agent from clawmem_roles where role = session_user $$;
-- the agents of `wanted` (null: every agent) the login role may read: all of them for the
-- tables' owner (and superusers), else its own and those it was granted
create or replace function clawmem_allowed(wanted text[]) returns text[] language sql stable security definer
    set search_path = pg_catalog, public as $$
    select case when pg_has_role(session_user, (select relowner from pg_class where oid = 'public.clawmem_chunks'::regclass), 'USAGE')
                then coalesce(wanted, array(select agent from clawmem_agents))
                else array(select unnest(coalesce(wanted, clawmem_readable())) intersect select unnest(clawmem_readable())) end $$;
-- keyword matches, as functions that apply the same access rule themselves: under row-level
-- security PostgreSQL cannot use the GIN index for @@ (the operator is not leakproof), and a
-- scan of every row per query is what the index is there to avoid. At most `pool` matches are
-- ranked: a word in more chunks than that says little about any of them (as the local search's
-- relaxed pass, which leaves such words out)
-- `lo`/`hi` (null: no bound) keep dated chunks of [lo, hi) only, as the local search's
-- --after/--before: daily logs by their day, session transcripts by their time
drop function if exists clawmem_keyword(tsquery, text[], int, int);
-- Inlined into the query that uses it, not called per row (a call costs about 7 us: 15 ms for
-- a keyword pass's 2,000 rows): so no SET clause, and stable as its body is (a date as text
-- depends on DateStyle). Built-ins only; its callers (clawmem_keyword, clawmem_nearest) run
-- with search_path = pg_catalog first
create or replace function clawmem_dated(day text, source text, ts float8, lo date, hi date) returns boolean
    language sql stable as $$
    select (lo is null and hi is null)
        or (day is not null and day >= coalesce(lo, '0001-01-01')::text and day < coalesce(hi, '9999-12-31')::text)
        or (source = 'sessions' and ts is not null
            and ts >= coalesce(extract(epoch from lo::timestamp), '-infinity'::float8)
            and ts < coalesce(extract(epoch from hi::timestamp), 'infinity'::float8)) $$;
create or replace function clawmem_keyword(q tsquery, wanted text[], n int, pool int, lo date default null, hi date default null)
    returns table (id bigint, rank real)
    language sql stable security definer set search_path = pg_catalog, public as $$
    -- the access rule as a subquery: evaluated once, not once per matching row
    with hit as (select c.id, c.tokens from clawmem_chunks c where c.tokens @@ q and c.agent = any((select clawmem_allowed(wanted))::text[])
                 and clawmem_dated(c.day, c.source, c.ts, lo, hi) limit pool)
    select hit.id, ts_rank(hit.tokens, q, 1) from hit order by 2 desc, 1 limit n $$;
-- a model's key ends with its dimensions ("local/bge@384"): a vector of another size under that
-- key is refused, so no agent can make an HNSW index of another agent's model unusable
create or replace function clawmem_key_dims(model_key text) returns int language sql immutable
    set search_path = pg_catalog as $$ select substring(model_key from '@([0-9]{1,5})$')::int $$;
do $$ begin
    if not exists (select 1 from pg_constraint where conname = 'clawmem_vector_fits') then
        alter table clawmem_chunks add constraint clawmem_vector_fits check (embedding is null
            or vector_dims(embedding) = coalesce(clawmem_key_dims(model), -1)) not valid;
    end if;
    if not exists (select 1 from pg_constraint where conname = 'clawmem_model_fits') then
        alter table clawmem_agents add constraint clawmem_model_fits check (model is null
            or dims = coalesce(clawmem_key_dims(model), -1)) not valid;
    end if;
end $$;
-- an HNSW index per embedding model (vectors of different models are never compared), its
-- dimensions read from the model's key. The owner's alone: an agent cannot make the owner
-- build indexes (the owner's push, grant and `fleet index` build those of pushed models)
drop function if exists clawmem_vector_index(text, int);
create or replace function clawmem_vector_index(model_key text) returns void language plpgsql
    set search_path = pg_catalog, public as $$
begin
    if clawmem_key_dims(model_key) is null then
        raise exception 'model key % does not end with its dimensions (@N)', model_key;
    end if;
    execute format('create index if not exists %I on clawmem_chunks using hnsw ((embedding::vector(%s)) vector_cosine_ops) where model = %L',
                   'clawmem_vec_' || substr(md5(model_key), 1, 16), clawmem_key_dims(model_key), model_key);
exception when unique_violation or duplicate_table then
    null;  -- built by another owner's session at the same moment
end $$;
revoke all on function clawmem_vector_index(text) from public;
-- and one per agent and model beside it (where two or more agents push that model), also the
-- owner's alone: a role that reads a few agents searches their small graphs, where a scan of the
-- model's whole graph would skip the other agents' rows (pgvector's iterative scan looks at
-- about 1/share as many rows, each read from the table to check its agent, to find as many)
create or replace function clawmem_agent_index_name(model_key text, who text) returns text language sql immutable
    set search_path = pg_catalog as $$ select 'clawmem_veca_' || substr(md5(model_key || E'\n' || who), 1, 16) $$;
create or replace function clawmem_agent_vector_index(model_key text, who text) returns void language plpgsql
    set search_path = pg_catalog, public as $$
begin
    if clawmem_key_dims(model_key) is null then
        raise exception 'model key % does not end with its dimensions (@N)', model_key;
    end if;
    execute format('create index if not exists %I on clawmem_chunks using hnsw ((embedding::vector(%s)) vector_cosine_ops) where model = %L and agent = %L',
                   clawmem_agent_index_name(model_key, who), clawmem_key_dims(model_key), model_key, who);
exception when unique_violation or duplicate_table then
    null;
end $$;
revoke all on function clawmem_agent_vector_index(text, text) from public;
-- the `n` nearest chunks to `q` of one model among the caller's readable agents (of `wanted`,
-- null: all), dated in [lo, hi). It runs as the caller, under row-level security: it chooses
-- only how to search. k agents' own graphs cost about k searches of a graph. The model's graph,
-- filtered to a share s of its rows, costs one search, then rounds of ef_search (about 2n)
-- candidates, of which about 2n*s pass, until n have passed: about 1 + 1/(2s) searches. So the
-- agents' graphs when k < 1 + 1/(2s), i.e. 2s(k - 1) < 1 (one agent's own graph always), and
-- each of them has one (the owner builds them); else the model's graph. The row counts come
-- from the catalog (pg_class), which every role reads: a role learns nothing of other
-- agents it could not already read there. Values are written into the statement, so it is
-- planned for them (a date bound that is null drops out, as in a plain query).
create or replace function clawmem_nearest(model_key text, q vector, wanted text[], n int, lo date default null, hi date default null)
    returns table (id bigint, dist float8) language plpgsql stable
    set search_path = pg_catalog, public as $$
declare
    d int := clawmem_key_dims(model_key);
    dist text := format('(embedding::vector(%s) <=> $1::vector(%s))', d, d);
    dated text := format('clawmem_dated(day, source, ts, %L::date, %L::date)', lo, hi);
    names text[];
    mine float8;
    total float8;
    indexed int;
    parts text;
begin
    -- the readable agents that pushed this model (the agents table is under row-level security)
    select array_agg(a.agent order by a.agent) into names from clawmem_agents a
        where a.model = model_key and (wanted is null or a.agent = any(wanted));
    if names is null then
        return;  -- no vectors of this model to read: no scan of the table to find none
    end if;
    select sum(greatest(c.reltuples, 0)), count(c.oid) into mine, indexed from unnest(names) u(who)
        left join pg_class c on c.relname = clawmem_agent_index_name(model_key, u.who);
    select greatest(c.reltuples, 0) into total from pg_class c where c.relname = 'clawmem_vec_' || substr(md5(model_key), 1, 16);
    if indexed = cardinality(names) and total > 0 and 2 * mine * (cardinality(names) - 1) < total then
        select string_agg(format('(select id, %s as dist from clawmem_chunks where model = %L and agent = %L and %s order by 2 limit %s)',
                                 dist, model_key, who, dated, n), ' union all ')
            into parts from unnest(names) u(who);
        return query execute format('select id, dist from (%s) u order by dist limit %s', parts, n) using q;
    else
        return query execute format('select id, %s from clawmem_chunks where model = %L and agent = any(%L::text[]) and %s order by 2 limit %s',
                                    dist, model_key, names, dated, n) using q;
    end if;
end $$;

-- the team's notebook: notes any agent of the fleet writes (memory_remember with scope "team")
-- and every agent of the fleet reads, each naming its writer. Append-only: a note is never
-- edited or deleted; one that replaces another names it, an undo stamps it, so every version
-- stays (the fleet's journal of the notebook)
create table if not exists clawmem_notes (
    id bigserial, agent text not null, host text not null, section text not null, text text not null,
    written_at timestamptz not null default now(), replaces bigint, undone_at timestamptz,
    primary key (agent, id));
alter table clawmem_notes enable row level security;
drop policy if exists clawmem_read on clawmem_notes;
drop policy if exists clawmem_insert on clawmem_notes;
drop policy if exists clawmem_update on clawmem_notes;
create policy clawmem_read on clawmem_notes for select using ((select clawmem_own_agent()) is not null);
create policy clawmem_insert on clawmem_notes for insert with check (agent = (select clawmem_own_agent()));
create policy clawmem_update on clawmem_notes for update using (agent = (select clawmem_own_agent()))
    with check (agent = (select clawmem_own_agent()));

alter table clawmem_chunks enable row level security;
alter table clawmem_agents enable row level security;
drop policy if exists clawmem_read on clawmem_chunks;
drop policy if exists clawmem_insert on clawmem_chunks;
drop policy if exists clawmem_delete on clawmem_chunks;
create policy clawmem_read on clawmem_chunks for select using (agent = any ((select clawmem_readable())::text[]));
create policy clawmem_insert on clawmem_chunks for insert with check (agent = (select clawmem_own_agent()));
create policy clawmem_delete on clawmem_chunks for delete using (agent = (select clawmem_own_agent()));
drop policy if exists clawmem_read on clawmem_agents;
drop policy if exists clawmem_insert on clawmem_agents;
drop policy if exists clawmem_update on clawmem_agents;
create policy clawmem_read on clawmem_agents for select using (agent = any ((select clawmem_readable())::text[]));
create policy clawmem_insert on clawmem_agents for insert with check (agent = (select clawmem_own_agent()));
create policy clawmem_update on clawmem_agents for update using (agent = (select clawmem_own_agent()));
alter table clawmem_terms enable row level security;
drop policy if exists clawmem_read on clawmem_terms;
create policy clawmem_read on clawmem_terms for select using (agent = any ((select clawmem_readable())::text[]));
drop policy if exists clawmem_write on clawmem_terms;
drop policy if exists clawmem_write on clawmem_terms;

-- Agents write only through the functions below (the owner's, security definer), each checking
-- that the login role writes as its own agent. An agent's role holds SELECT on the tables and
-- nothing more: no lock it can take blocks another's read or push (LOCK TABLE above ACCESS
-- SHARE needs UPDATE, DELETE or TRUNCATE, SELECT ... FOR UPDATE needs UPDATE), and the word
-- counts a search weighs words by are derived here from the rows added and deleted, never
-- written by an agent
create or replace function clawmem_is_owner() returns boolean language sql stable security definer
    set search_path = pg_catalog, public as $$
    select pg_has_role(session_user, (select relowner from pg_class where oid = 'public.clawmem_chunks'::regclass), 'USAGE') $$;
-- `who` itself when the login role may write as that agent: its own role, or the owner (who
-- pushes for agents that have no role); else an error
create or replace function clawmem_writer(who text) returns text language plpgsql stable security definer
    set search_path = pg_catalog, public as $$
declare
    own text := clawmem_own_agent();
begin
    if who = own or (own is null and clawmem_is_owner()) then
        return who;
    end if;
    raise exception 'role % cannot write as agent %', session_user, who using errcode = '42501';
end $$;
create or replace function clawmem_put_agent(who text, p_host text, p_model text, p_dims int) returns void
    language plpgsql security definer set search_path = pg_catalog, public as $$
begin
    insert into clawmem_agents (agent, host, model, dims) values (clawmem_writer(who), p_host, p_model, p_dims)
        on conflict (agent) do update set host = excluded.host, model = excluded.model, dims = excluded.dims;
end $$;
-- one push batch, its columns as arrays: the rows it adds (a resumed push skips those already
-- there) are the ones the word counts take in
create or replace function clawmem_add_chunks(who text, p_host text, paths text[], sources text[], starts int[], ends int[],
        hashes text[], models text[], texts text[], toks tsvector[], vecs vector[], days text[], tss float8[],
        mtimes int8[], linemaps text[]) returns int
    language plpgsql security definer set search_path = pg_catalog, public as $$
declare
    me text := clawmem_writer(who);
    n int;
begin
    with added as (insert into clawmem_chunks (agent, host, path, source, start_line, end_line, hash, model, text, tokens,
                       embedding, day, ts, mtime_ns, linemap)
                   select me, p_host, * from unnest(paths, sources, starts, ends, hashes, models, texts, toks, vecs, days, tss,
                       mtimes, linemaps) on conflict do nothing returning agent, tokens),
         counted as (insert into clawmem_terms as t (agent, term, chunks) select a.agent, u.lexeme, count(*) from added a,
                       unnest(a.tokens) u group by 1, 2 order by 1, 2
                     on conflict (agent, term) do update set chunks = t.chunks + excluded.chunks)
    select count(*) into n from added;
    return n;
end $$;
create or replace function clawmem_delete_chunks(who text, ids bigint[]) returns int
    language plpgsql security definer set search_path = pg_catalog, public as $$
declare
    me text := clawmem_writer(who);
    n int;
begin
    with gone as (delete from clawmem_chunks c where c.agent = me and c.id = any(ids) returning c.agent, c.tokens),
         counted as (select g.agent, u.lexeme, count(*) k from gone g, unnest(g.tokens) u group by 1, 2),
         changed as (update clawmem_terms t set chunks = t.chunks - counted.k from counted
                     where t.agent = counted.agent and t.term = counted.lexeme)
    select count(*) into n from gone;
    delete from clawmem_terms t where t.agent = me and t.chunks <= 0;
    return n;
end $$;
create or replace function clawmem_pushed(who text) returns int
    language plpgsql security definer set search_path = pg_catalog, public as $$
declare
    me text := clawmem_writer(who);
    n int;
begin
    select count(*) into n from clawmem_chunks c where c.agent = me;
    update clawmem_agents a set chunks = n, pushed_at = now() where a.agent = me;
    return n;
end $$;
-- the notebook's writes. A note names the standing notes it may contradict (`conflicts`, found
-- by the writer's search of the notebook), so both show for review. Only a note's writer or
-- the owner replaces it: another agent's note that names it proposes a replacement
alter table clawmem_notes add column if not exists proposes bigint;
alter table clawmem_notes add column if not exists conflicts bigint[] not null default '{}';
alter table clawmem_notes add column if not exists tokens tsvector;
create or replace function clawmem_note_add(who text, p_host text, p_section text, p_text text, p_replaces bigint,
        p_proposes bigint, p_conflicts bigint[], p_tokens tsvector) returns bigint
    language plpgsql security definer set search_path = pg_catalog, public as $$
declare
    me text := clawmem_writer(who);
    n bigint;
begin
    if p_replaces is not null and not exists (select 1 from clawmem_notes o where o.id = p_replaces
            and (o.agent = me or (clawmem_own_agent() is null and clawmem_is_owner()))) then
        raise exception 'team note % is not agent %''s: only its writer or the owner replaces it', p_replaces, me
            using errcode = '42501';
    end if;
    insert into clawmem_notes (agent, host, section, text, replaces, proposes, conflicts, tokens)
        values (me, p_host, p_section, p_text, p_replaces, p_proposes, coalesce(p_conflicts, '{}'), p_tokens) returning id into n;
    return n;
end $$;
create or replace function clawmem_note_undo(who text, note bigint) returns bigint
    language plpgsql security definer set search_path = pg_catalog, public as $$
declare
    me text := clawmem_writer(who);
    n bigint;
begin
    update clawmem_notes o set undone_at = now() where o.id = note and o.agent = me and o.undone_at is null returning o.id into n;
    return n;
end $$;
"""


def ensure_schema(conn, url: str) -> None:
    """Create the tables and policies (the owner only; idempotent)."""
    import psycopg

    from psycopg import sql

    try:
        conn.execute(SCHEMA)
        # roles granted by an older clawmem get the privileges of the tables added since
        for (role,) in conn.execute("select r.role from clawmem_roles r join pg_roles p on p.rolname = r.role").fetchall():
            _grant_to(conn, role)
            for stmt in OLD_GRANTS:
                conn.execute(sql.SQL("revoke " + stmt + " from {}").format(sql.Identifier(role)))
        conn.execute(CLOSE_CATALOGS)
        conn.commit()
    except psycopg.Error as exc:
        conn.rollback()
        raise FleetError(f"cannot create the fleet tables as {urlsplit(url).username or 'this user'} ({_one_line(exc, url)}); "
                         "the first push or `clawmem fleet grant` must use the owner's URL") from None


def _grant_to(conn, role: str) -> None:
    from psycopg import sql

    for stmt in GRANTS:
        conn.execute(sql.SQL("grant " + stmt + " to {}").format(sql.Identifier(role)))
    conn.execute(sql.SQL("grant connect on database {} to {}").format(sql.Identifier(conn.info.dbname), sql.Identifier(role)))


# What PostgreSQL lets the owner close of what other fleets on the server could see, as far as
# its rights go (a superuser's, or the database owner's for CONNECT; else left as it is): this
# fleet's database takes only its own roles (and the owner), and in it no role lists the
# server's roles or sessions (other fleets' role names carry their agents' names). Open still:
# a role's name from its id (`::regrole`), the `postgres` database, pg_class's row estimates
CLOSE_CATALOGS = """
do $$ begin
    execute format('revoke connect on database %I from public', current_database());
exception when insufficient_privilege then null;
end $$;
do $$ begin
    revoke select on pg_catalog.pg_roles, pg_catalog.pg_user, pg_catalog.pg_group, pg_catalog.pg_stat_activity,
        pg_catalog.pg_auth_members from public;
exception when insufficient_privilege then null;
end $$;
"""


def _has_schema(conn) -> bool:
    # the newest parts: a database made by an older clawmem gets them at the owner's next push or grant
    return conn.execute("select to_regclass('clawmem_notes') is not null and to_regprocedure('clawmem_vector_index(text)') is not null"
                        " and to_regprocedure('clawmem_keyword(tsquery,text[],int,int,date,date)') is not null"
                        " and to_regprocedure('clawmem_nearest(text,vector,text[],int,date,date)') is not null"
                        " and to_regprocedure('clawmem_note_undo(text,bigint)') is not null").fetchone()[0]


def vector_index_name(model: str) -> str:
    import hashlib

    return "clawmem_vec_" + hashlib.md5(model.encode()).hexdigest()[:16]


def agent_index_name(model: str, agent: str) -> str:
    import hashlib

    return "clawmem_veca_" + hashlib.md5(f"{model}\n{agent}".encode()).hexdigest()[:16]


def build_vector_indexes(conn) -> list[str]:
    """As the owner: an HNSW index for every model an agent records (its dimensions from its
    key; the small agents table, not a scan of the chunks, as this runs at each owner's push),
    and one per agent of a model two or more agents push (what a role reading a few agents
    searches). Returns the models that got their model-wide index now."""
    pairs = conn.execute("select model, agent from clawmem_agents where model is not null and clawmem_key_dims(model) = dims"
                         " order by model, agent").fetchall()
    exists = {r[0] for r in conn.execute("select relname from pg_class where relname like 'clawmem_vec%'")}
    built = []
    conn.execute("set local statement_timeout = '30min'")  # an HNSW build over many rows takes its time
    for model in dict.fromkeys(m for m, _ in pairs):
        if vector_index_name(model) not in exists:
            conn.execute("select clawmem_vector_index(%s)", (model,))
            built.append(model)
        agents = [a for m, a in pairs if m == model]
        for agent in agents if len(agents) > 1 else ():
            if agent_index_name(model, agent) not in exists:
                conn.execute("select clawmem_agent_vector_index(%s, %s)", (model, agent))
    conn.commit()
    return built


def _owner_only(conn, url: str, what: str) -> None:
    """`what` needs the owner's URL: say so, not PostgreSQL's permission error."""
    own = conn.execute("select clawmem_own_agent()").fetchone()[0] if conn.execute(
        "select to_regprocedure('clawmem_own_agent()') is not null").fetchone()[0] else None
    if own is not None:
        raise FleetError(f"{mask_url(url)} is agent {own}'s role: `clawmem fleet {what}` needs the owner's URL "
                         "(the one `clawmem fleet up` printed, or the role that created the fleet tables)")


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


def model_key(info: dict) -> str:
    """How the fleet names an embedding model: vectors compare only under the same key (the
    dimensions are part of it: one model can give vectors of several sizes)."""
    return f"{info['provider']}/{info['model']}@{info['dims']}"


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


def tsvector_literal(text: str) -> str:
    """clawmem's own tokens (CJK as characters and bigrams, diacritics folded) as a tsvector,
    positions kept: PostgreSQL's parsers would cut CJK text differently from the local index."""
    from ..text import index_tokens

    parts = []
    for i, tok in enumerate(index_tokens(text)[:16383], start=1):
        parts.append("'" + tok.replace("\\", "\\\\").replace("'", "''") + f"':{i}")
    return " ".join(parts)


def tsquery_literal(terms: list[str], joiner: str) -> str:
    return f" {joiner} ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


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


# An agent's role reads; it writes through the owner's functions (SCHEMA), which check who it is
GRANTS = ("usage on schema public", "select on clawmem_chunks, clawmem_agents, clawmem_terms, clawmem_notes")
# what an older clawmem granted (write rights, which also allow LOCK TABLE): taken back from every
# role at the owner's next push or grant
OLD_GRANTS = ("insert, update, delete, truncate on clawmem_chunks, clawmem_agents, clawmem_terms, clawmem_notes",
              "usage on sequence clawmem_chunks_id_seq, clawmem_notes_id_seq")


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


# ----------------------------------------------------------------------------- search


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


TEAM_HIT_SHARE = 0.5  # a team note is a hit when it holds this share of the query's weighted words


def team_hits(conn, weights: dict[str, float], opts, agents: list[str] | None = None) -> list[dict]:
    """The standing team notes that hold the query's words, as search hits (`source: "team"`):
    found by the full-text index of their tokens, scored by the share of the query's weighted
    words (the fleet's own word weights, as the memory hits) each holds."""
    total = sum(weights.values())
    if not total:
        return []
    found = conn.execute(f"select {NOTE_COLUMNS}, null from clawmem_notes where tokens @@ %s::tsquery",
                         (tsquery_literal(sorted(weights), "|"),)).fetchall()
    if not found:
        return []
    standing = {n["id"] for n in _live([_note((*r, None, [])) for r in conn.execute(
        "select id, agent, host, section, text, written_at, replaces, undone_at from clawmem_notes")])}
    hits = []
    for row in found:
        n = _note(row[:-1])
        if n["id"] not in standing or (agents is not None and n["agent"] not in agents):
            continue
        words = _words(n["text"])
        score = sum(w for t, w in weights.items() if t in words) / total
        if score < max(TEAM_HIT_SHARE, opts.min_score):
            continue
        hits.append({"path": f"team notes/{n['section']}", "ref": f"team:{n['id']}", "startLine": 1, "endLine": 1,
                     "score": round(score, 4), "snippet": n["text"], "source": "team", "agent": n["agent"], "host": n["host"],
                     "noteId": n["id"], "writtenAt": n["writtenAt"], "conflicts": n["conflicts"],
                     "citation": f"Source: team note {n['id']} by {n['agent']}"})
    return hits


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


# ----------------------------------------------------------------------------- team notes


TEAM_SECTION = "Notes"


def _team_conn(engine):
    conn = connect(fleet_url(engine.cfg))
    if not _has_schema(conn):
        conn.close()
        raise FleetError("the fleet database has no team notebook yet: the owner's `clawmem fleet grant` or push makes it")
    return conn


def _note(row) -> dict:
    nid, agent, host, section, text, at, replaces, undone, proposes, conflicts = row
    return {"id": nid, "agent": agent, "host": host, "section": section, "text": text,
            "writtenAt": at.isoformat(timespec="seconds"), "replaces": replaces,
            "undoneAt": undone.isoformat(timespec="seconds") if undone else None,
            "proposes": proposes, "conflicts": sorted(conflicts or [])}


NOTE_COLUMNS = "id, agent, host, section, text, written_at, replaces, undone_at, proposes, conflicts"
# a note shares this share of its words with a standing note, the smaller's, and is not the same
# fact: they may say two things of one subject (a contradiction restates its subject and
# changes a value). Words, not opening words: "the deploy window for production" and "… for
# staging" share two of five and are two facts. No list of words, no fit to a data set
CONFLICT_SHARE = 0.6


def _words(text: str) -> set[str]:
    from ..text import STOPWORDS, index_tokens

    return {t for t in index_tokens(text) if t not in STOPWORDS}


def _may_conflict(text: str, other: str) -> bool:
    from ..consolidate.promote import _fact_key

    a, b = _words(text), _words(other)
    if not a or not b or _fact_key(text) == _fact_key(other):
        return False
    return len(a & b) / min(len(a), len(b)) >= CONFLICT_SHARE


def _flag_both(notes: list[dict]) -> list[dict]:
    """Each note's possible conflicts both ways (a note names those it met when written), among
    the given notes."""
    ids = {n["id"] for n in notes}
    met: dict[int, set[int]] = {n["id"]: set(n["conflicts"]) & ids for n in notes}
    for n in notes:
        for other in met[n["id"]]:
            met[other].add(n["id"])
    return [{**n, "conflicts": sorted(met[n["id"]])} for n in notes]


def _live(notes: list[dict]) -> list[dict]:
    """The notes that stand: not undone, and not replaced by a note that stands."""
    by_id = {n["id"]: n for n in notes}
    standing = {n["id"] for n in notes if not n["undoneAt"]}
    for n in sorted(notes, key=lambda n: n["id"], reverse=True):  # newest first: a replacement of a replacement
        if n["id"] in standing and n["replaces"] in standing:
            standing.discard(n["replaces"])
    return [by_id[i] for i in sorted(standing)]


def _all_notes(conn) -> list[dict]:
    return [_note(r) for r in conn.execute(f"select {NOTE_COLUMNS} from clawmem_notes order by id")]


def team_notes(engine, *, every_version: bool = False, conflicts: bool = False) -> list[dict]:
    """The team's notebook, oldest first: the notes that stand, each with the standing notes it
    may contradict (`conflicts`: only those that have one; `every_version`: all of them,
    undone and replaced ones too, each saying so)."""
    conn = _team_conn(engine)
    try:
        notes = _all_notes(conn)
    except Exception as exc:
        raise FleetError(f"team notes: {_one_line(exc, fleet_url(engine.cfg))}") from None
    finally:
        conn.close()
    live = _flag_both(_live(notes))
    if conflicts:
        return [n for n in live if n["conflicts"]]
    if every_version:
        flagged = {n["id"]: n["conflicts"] for n in live}
        return [{**n, "standing": n["id"] in flagged, "conflicts": flagged.get(n["id"], [])} for n in notes]
    return live


def team_remember(engine, text: str, section: str | None = None, replaces: int | None = None) -> dict:
    """Write a note to the team's notebook, named with this agent and host, under a lock on
    the notebook (two writers at once are taken one after the other). Never refused for what it
    says: the same note again is not written twice; the standing notes of any section that
    share most of its words (the notebook searched with its words) are flagged with it as
    possible conflicts, for review (`fleet notes --conflicts`). `replaces` another note: this
    agent's own (or any, as the owner) is replaced; another agent's is proposed a replacement,
    and stands until its writer or the owner replaces it. Returns the note, or {error}."""
    from ..consolidate.promote import _fact_key

    text = " ".join((text or "").split())
    section = " ".join((section or TEAM_SECTION).split()) or TEAM_SECTION
    if not text:
        return {"error": "text required: the note to write"}
    agent, host = engine.cfg.agent_id, fleet_host(engine.cfg)
    url = fleet_url(engine.cfg)
    conn = _team_conn(engine)
    try:
        conn.execute("select pg_advisory_xact_lock(hashtext('clawmem_notes'))")
        notes = _all_notes(conn)
        by_id = {n["id"]: n for n in notes}
        if replaces is not None and replaces not in by_id:
            return {"error": f"replaces: no team note {replaces} (`clawmem fleet notes` lists them)"}
        standing = _live(notes)
        same = next((n for n in standing if n["section"] == section and _fact_key(n["text"]) == _fact_key(text)), None)
        if same is not None:
            return {**same, "note": f"already in the team notebook (note {same['id']} by {same['agent']}): not written again"}
        is_owner = conn.execute("select clawmem_own_agent() is null and clawmem_is_owner()").fetchone()[0]
        proposes = None
        if replaces is not None and by_id[replaces]["agent"] != agent and not is_owner:
            replaces, proposes = None, replaces
        # the notebook searched with the note's words (its stored tokens, clawmem's), any section
        query = tsquery_literal(sorted(_words(text)), "|")
        found = conn.execute("select id from clawmem_notes where tokens @@ %s::tsquery", (query,)).fetchall() if query else []
        found_ids = {r[0] for r in found}
        against = [n for n in standing if n["id"] in found_ids and n["id"] not in (replaces, proposes)
                   and _may_conflict(text, n["text"])]
        nid = conn.execute("select clawmem_note_add(%s, %s, %s, %s, %s, %s, %s, %s::tsvector)",
                           (agent, host, section, text, replaces, proposes, [n["id"] for n in against],
                            tsvector_literal(text))).fetchone()[0]
        row = conn.execute(f"select {NOTE_COLUMNS} from clawmem_notes where id = %s", (nid,)).fetchone()
        conn.commit()
    except FleetError:
        raise
    except Exception as exc:
        conn.rollback()
        raise FleetError(f"team note not written: {_one_line(exc, url)}") from None
    finally:
        conn.close()
    out = _note(row)
    said = []
    if proposes is not None:
        said.append(f"proposed as a replacement of note {proposes} by {by_id[proposes]['agent']}, which stands until "
                    f"its writer or the fleet's owner replaces it")
    if against:
        out["possibleConflicts"] = against
        said.append("it may contradict " + "; ".join(f"note {n['id']} by {n['agent']} ({n['section']}): {n['text']}" for n in against)
                    + ": both are flagged for review (`clawmem fleet notes --conflicts`)")
    if said:
        out["note"] = f"team note {out['id']} written by {agent}@{host} under {section}; " + "; ".join(said)
    return out


TEAM_CONTEXT_CAP = 4000  # characters of team notes in `clawmem context`: the newest first


def team_for_context(engine, cap: int) -> dict:
    """The standing team notes as Markdown bullets within `cap` characters, newest first (a
    cut drops the oldest, and says how many)."""
    notes = sorted(team_notes(engine), key=lambda n: n["id"], reverse=True)
    lines = []
    for n in notes:
        flag = f"; may conflict with note {', '.join(map(str, n['conflicts']))}" if n["conflicts"] else ""
        lines.append(f"- {n['text']} ({n['section']}, {n['agent']}, note {n['id']}{flag})")
    kept, used = [], 0
    for line in lines:
        if used + len(line) + 1 > cap:
            break
        kept.append(line)
        used += len(line) + 1
    return {"notes": len(notes), "included": len(kept), "includedChars": used, "chars": sum(len(x) + 1 for x in lines),
            "truncated": len(kept) < len(lines), "text": "\n".join(kept)}


def team_undo(engine, note_id: int) -> dict:
    """Undo one of this agent's own notes (it stays in the notebook's history, stamped undone;
    a note it replaced stands again)."""
    url = fleet_url(engine.cfg)
    conn = _team_conn(engine)
    try:
        done = conn.execute("select clawmem_note_undo(%s, %s)", (engine.cfg.agent_id, note_id)).fetchone()[0]
        row = conn.execute(f"select {NOTE_COLUMNS} from clawmem_notes where id = %s", (done,)).fetchone() if done else None
        conn.commit()
    except Exception as exc:
        conn.rollback()
        raise FleetError(f"team note not undone: {_one_line(exc, url)}") from None
    finally:
        conn.close()
    if row is None:
        raise FleetError(f"team note {note_id}: not one of agent {engine.cfg.agent_id}'s standing notes (an agent undoes only its own)")
    return _note(row)
