"""The fleet's schema and its access rules, as the owner sets them up: the tables, row-level
security, the `SECURITY DEFINER` functions agents write through, the rights a role holds and
those taken back, the catalogs closed to other fleets, the vector indexes, and how clawmem's
tokens are written as PostgreSQL full text.

Access: each agent logs in as its own role (`admin.grant`); row-level security lets it read its own
rows and those of the agents it was granted, and write only its own. The role that created
the tables (the owner) is exempt from row-level security and sees every agent."""

from __future__ import annotations

from urllib.parse import urlsplit

from .connection import FleetError, _one_line, mask_url

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


# An agent's role reads; it writes through the owner's functions (SCHEMA), which check who it is
GRANTS = ("usage on schema public", "select on clawmem_chunks, clawmem_agents, clawmem_terms, clawmem_notes")
# what an older clawmem granted (write rights, which also allow LOCK TABLE): taken back from every
# role at the owner's next push or grant
OLD_GRANTS = ("insert, update, delete, truncate on clawmem_chunks, clawmem_agents, clawmem_terms, clawmem_notes",
              "usage on sequence clawmem_chunks_id_seq, clawmem_notes_id_seq")


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
