"""Fleet memory against a real PostgreSQL + pgvector: one server for the whole session, started
by `clawmem fleet up` (the `pg` fixture in conftest.py), a fresh database per test, agents
indexing real workspaces with the tiny real GGUF model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import psycopg
import pytest

from helpers import run_cli, wait_for, write


@pytest.fixture
def agent(make_engine, tmp_path, tiny_model):
    """An indexed agent: its id, files and fleet URL."""

    def make(name: str, files: dict[str, str], url: str, *, vectors: bool = True, **more):
        ws = tmp_path / f"ws-{name}"
        (ws / "memory").mkdir(parents=True, exist_ok=True)
        for rel, text in files.items():
            write(ws / rel, text)
        over = {"agentId": name, "fleet.url": url, "fleet.host": f"host-{name}"}
        if vectors:
            over.update({"provider": "local", "local.modelPath": str(tiny_model)})
        over.update(more)
        eng = make_engine(over, ws=ws)
        eng.run_index()
        return eng

    return make


def rows(url: str, sql: str = "select agent, path, text from clawmem_chunks order by agent, path, start_line", args=None):
    with psycopg.connect(url) as conn:
        return conn.execute(sql, args).fetchall()


def assert_counts_match_rows(url: str) -> None:
    """The word counts push keeps equal a count over the rows themselves."""
    kept = set(rows(url, "select agent, term, chunks from clawmem_terms"))
    counted = set(rows(url, "select agent, u.lexeme, count(*)::int from clawmem_chunks, unnest(tokens) u group by 1, 2"))
    assert kept == counted and kept


def local_shared_count(eng) -> int:
    from clawmem.engine.fleet import client as fleet

    return len(fleet._local_chunks(eng.cfg, eng.reader()))


NOTES = {
    "MEMORY.md": "# Memory\n\n- The vault passphrase is zebracrossing.\n",
    "memory/2026-03-02.md": "# 2026-03-02\n\nWe moved the billing service to Postgres 17 on Monday.\n",
    "memory/projects/heron.md": "# Heron\n\nThe heron migration needs a rollback plan for the ledger tables.\n",
}


# ----------------------------------------------------------------------------- server and push


def test_fleet_up_serves_only_with_a_password_and_has_pgvector(pg):
    again = pg.cli("fleet", "up", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["url"] == pg.url  # already running: the same URL
    with psycopg.connect(pg.url) as conn:
        assert conn.execute("select extversion from pg_extension where extname = 'vector'").fetchone()
    no_password = pg.url.replace(":" + pg.url.split(":")[2].split("@")[0] + "@", "@")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(no_password, connect_timeout=5)


def test_push_is_incremental_idempotent_and_deletes(db, agent, uid):
    from clawmem.engine.fleet import client as fleet

    a = agent(f"a{uid}", NOTES, db)
    seen = []
    first = fleet.push(a, lambda done, total: seen.append((done, total)), batch=1)
    n = local_shared_count(a)
    assert first["added"] == n > 0 and first["deleted"] == 0
    assert seen[-1] == (n, n) and len(seen) == n  # one batch per chunk here: progress after each
    assert {p for _, p, _ in rows(db)} == {"memory/2026-03-02.md", "memory/projects/heron.md"}  # MEMORY.md stays home
    assert not any("zebracrossing" in t for *_, t in rows(db))
    assert_counts_match_rows(db)
    again = fleet.push(a)
    assert (again["added"], again["deleted"]) == (0, 0)

    write(a.workspace / "memory" / "projects" / "heron.md", "# Heron\n\nThe heron migration is done; ledger tables moved.\n")
    a.run_index()
    edited = fleet.push(a)
    assert (edited["added"], edited["deleted"]) == (1, 1)
    texts = [t for _, p, t in rows(db) if p == "memory/projects/heron.md"]
    assert len(texts) == 1 and "migration is done" in texts[0]
    assert not any("rollback" in t for *_, t in rows(db))
    assert_counts_match_rows(db)
    assert rows(db, "select count(*) from clawmem_terms where term = 'rollback'")[0][0] == 0  # its only chunk is gone

    (a.workspace / "memory" / "2026-03-02.md").unlink()
    a.run_index()
    gone = fleet.push(a)
    assert gone["deleted"] >= 1 and gone["added"] == 0
    assert {p for _, p, _ in rows(db)} == {"memory/projects/heron.md"}
    (count,) = rows(db, "select chunks from clawmem_agents where agent = %s", (a.cfg.agent_id,))[0]
    assert count == local_shared_count(a) == len(rows(db))
    assert_counts_match_rows(db)


def test_push_killed_mid_way_resumes(db, make_engine, tmp_path, uid):
    """A real `clawmem fleet push` killed with SIGKILL after its first batches: the next push
    adds only what is missing, and nothing twice."""
    name = f"k{uid}"
    ws = tmp_path / "ws-kill"
    for i in range(2500):
        write(ws / "memory" / f"note-{i:04d}.md", f"# Note {i}\n\nFact number {i} about the kestrel project.\n")
    cfg_file = write(tmp_path / "kill.toml", f'provider = "none"\nagentId = "{name}"\n[fleet]\nurl = "{db}"\n')
    eng = make_engine({"agentId": name, "fleet.url": db}, ws=ws)
    eng.run_index()
    total = local_shared_count(eng)
    proc = subprocess.Popen([sys.executable, "-m", "clawmem.tui", "fleet", "push", "--config", str(cfg_file), "--workspace", str(ws)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))

    def part_pushed():
        try:
            got = rows(db, "select count(*) from clawmem_chunks")[0][0]
        except psycopg.Error:  # the tables are being created
            return False
        return got if got > 0 else False

    wait_for(part_pushed, limit=60, what="the first batch", interval=0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = rows(db, "select count(*) from clawmem_chunks")[0][0]
    assert 0 < before < total, "the push must be killed between batches for this test to mean anything"
    from clawmem.engine.fleet import client as fleet

    resumed = fleet.push(eng)
    assert resumed["added"] == total - before and resumed["deleted"] == 0
    assert rows(db, "select count(*), count(distinct (path, start_line, hash)) from clawmem_chunks")[0] == (total, total)
    assert_counts_match_rows(db)  # the killed batch's counts went with its rows
    assert fleet.push(eng)["added"] == 0


# ----------------------------------------------------------------------------- access


def test_private_files_and_ungranted_agents_are_out_of_reach_even_by_sql(db, agent, uid):
    from clawmem.engine.fleet import client as fleet

    a, b, c = f"a{uid}", f"b{uid}", f"c{uid}"
    grants = {name: fleet.grant(db, name, reads) for name, reads in ((a, []), (b, [a]), (c, []))}
    dbname = db.rsplit("/", 1)[1]
    assert all(g["newPassword"] and g["role"] == f"clawmem_{dbname}_{g['agent']}" and g["url"].startswith(f"postgresql://{g['role']}:")
               for g in grants.values())
    assert f'url = "{grants[b]["url"]}"' in grants[b]["config"] and "publish = true" in grants[b]["config"]
    ea = agent(a, NOTES, grants[a]["url"])
    ec = agent(c, {"memory/c.md": "# C\n\nThe osprey team prefers Tuesday releases.\n"}, grants[c]["url"])
    fleet.push(ea)  # each pushes as its own role
    fleet.push(ec)

    as_b = rows(grants[b]["url"])
    assert {r[0] for r in as_b} == {a}  # its grant, nobody else's
    assert not any("zebracrossing" in r[2] or r[1] == "MEMORY.md" for r in as_b)
    assert rows(grants[b]["url"], "select count(*) from clawmem_chunks where text like '%osprey%'")[0][0] == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        rows(grants[b]["url"], "select * from clawmem_roles")
    with psycopg.connect(grants[b]["url"]) as conn:  # writing as another agent is refused
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("insert into clawmem_chunks (agent, host, path, source, start_line, end_line, hash, text, tokens)"
                         " values (%s, 'h', 'x.md', 'memory', 1, 1, 'h', 'forged', ''::tsvector)", (a,))
    for forged in ("delete from clawmem_chunks where agent = %s", "update clawmem_terms set chunks = 0 where agent = %s",
                   "insert into clawmem_terms values (%s, 'forged', 1)"):  # nor another agent's rows or word counts
        with psycopg.connect(grants[b]["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(forged, (a,))
    with psycopg.connect(grants[b]["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select clawmem_delete_chunks(%s, array[1::bigint])", (a,))  # the write functions check who asks
    with psycopg.connect(grants[b]["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select clawmem_vector_index('not/its-model@3')")  # the owner's function: no agent builds indexes
    assert {r[0] for r in rows(grants[c]["url"])} == {c}  # c was granted nothing
    # the keyword functions (they apply the access rule themselves, to use the full-text index)
    assert rows(grants[b]["url"], "select count(*) from clawmem_keyword('osprey'::tsquery, %s, 10, 100)", ([c],))[0][0] == 0
    assert rows(grants[b]["url"], "select count(*) from clawmem_keyword('osprey'::tsquery, null, 10, 100)")[0][0] == 0
    # the word counts kept for the ranking: those of readable agents only
    assert rows(grants[c]["url"], "select count(*) from clawmem_terms where term = 'osprey'")[0][0] == 1
    assert rows(grants[b]["url"], "select count(*) from clawmem_terms where term = 'osprey'")[0][0] == 0
    assert {r[0] for r in rows(grants[b]["url"], "select distinct agent from clawmem_terms")} == {a}
    assert rows(grants[c]["url"], "select count(*) from clawmem_keyword('osprey'::tsquery, %s, 10, 100)", ([c],))[0][0] == 1
    assert rows(grants[c]["url"], "select count(*) from clawmem_keyword('billing'::tsquery, %s, 10, 100)", ([a],))[0][0] == 0
    assert {r[0] for r in rows(grants[b]["url"], "select agent from clawmem_agents")} == {a}  # b has not pushed yet

    owner = rows(db)
    assert {r[0] for r in owner} == {a, c}  # the owner sees every shared row
    assert not any("zebracrossing" in r[2] for r in owner)  # a private file never left its host

    impostor = agent(f"x{uid}", {"memory/x.md": "# X\n\nForged.\n"}, grants[a]["url"], vectors=False)
    with pytest.raises(fleet.FleetError, match=f"is agent {a}'s role, not x{uid}'s"):
        fleet.push(impostor)
    eb = agent(b, {"memory/b.md": "# B\n\nNothing about birds.\n"}, grants[b]["url"])
    res = fleet.search(eb, "billing Postgres")
    assert res["results"] and res["results"][0]["agent"] == a and res["results"][0]["host"] == f"host-{a}"
    assert res["results"][0]["path"] == "memory/2026-03-02.md" and "billing" in res["results"][0]["snippet"]
    assert not fleet.search(eb, "zebracrossing")["results"]
    assert not fleet.search(eb, "osprey Tuesday")["results"]
    got = fleet.get_stored(eb.cfg, res["results"][0]["ref"])
    assert "billing service to Postgres 17" in got["text"] and got["host"] == f"host-{a}"


def test_cjk_is_found_by_clawmem_tokens(db, agent, uid):
    from clawmem.engine.fleet import client as fleet

    a = agent(f"j{uid}", {"memory/tokyo.md": "# 会議\n\n東京の会議は火曜日に決まりました。\n",
                          "memory/other.md": "# Other\n\n大阪の天気は晴れです。\n"}, db, vectors=False)
    fleet.push(a)
    res = fleet.search(a, "東京の会議")
    assert res["mode"] == "keyword"
    assert [r["path"] for r in res["results"]][:1] == ["memory/tokyo.md"]
    # PostgreSQL's own parser would keep the whole sentence as one word: the stored tokens are clawmem's
    assert rows(db, "select count(*) from clawmem_chunks where tokens @@ '会議'::tsquery")[0][0] == 1


def test_vectors_of_another_model_are_never_compared(db, agent, uid, tmp_path):
    from tinymodel import make

    from clawmem.engine.fleet import client as fleet

    other_model = make(tmp_path / "other.gguf", dim=32, seed=7, name="other-bert")
    a = agent(f"m{uid}", {"memory/a.md": "# A\n\nThe falcon release shipped on Friday.\n"}, db)
    b = agent(f"n{uid}", {"memory/b.md": "# B\n\nThe falcon dashboard needs a dark theme.\n"}, db,
              **{"local.modelPath": str(other_model)})
    fleet.push(a)
    fleet.push(b)
    models = dict(rows(db, "select agent, model from clawmem_agents"))
    assert models[a.cfg.agent_id] != models[b.cfg.agent_id]
    res = fleet.search(a, "falcon")
    assert res["mode"] == "hybrid"
    assert any(b.cfg.agent_id in note and "another model" in note for note in res["notes"])
    by_agent = {r["agent"]: r for r in fleet.search(a, "falcon", explain=True)["results"]}
    assert set(by_agent) == {a.cfg.agent_id, b.cfg.agent_id}
    assert "vector" not in by_agent[b.cfg.agent_id]["explain"]  # b's hit came from its words only
    assert "vector" in by_agent[a.cfg.agent_id]["explain"]


# ----------------------------------------------------------------------------- outage and the CLI


def test_outage_leaves_local_work_going_and_the_watcher_catches_up(pg, db, tmp_path, tiny_model, uid):
    name = f"o{uid}"
    ws = tmp_path / "ws-out"
    for rel, text in NOTES.items():
        write(ws / rel, text)
    cfg = write(tmp_path / "out.toml", f'provider = "local"\nagentId = "{name}"\n[local]\nmodelPath = "{tiny_model}"\n'
                                      f'[fleet]\nurl = "{db}"\npublish = true\n')
    cli = lambda *a: run_cli(*a, "--config", str(cfg), "--workspace", str(ws))  # noqa: E731
    first = cli("watch", "--once")
    assert first.returncode == 0, first.stderr
    assert len(rows(db)) == 2
    password = db.split(":")[2].split("@")[0]
    down = pg.cli("fleet", "down")
    assert down.returncode == 0, down.stderr
    try:
        write(ws / "memory" / "2026-03-03.md", "# 2026-03-03\n\nThe puffin launch slipped to April.\n")
        synced = cli("watch", "--once")
        assert synced.returncode == 0, synced.stderr  # local work goes on
        assert "local work goes on" in synced.stdout + synced.stderr
        found = cli("search", "puffin launch", "--json")
        assert found.returncode == 0 and json.loads(found.stdout)["results"][0]["path"] == "memory/2026-03-03.md"
        status = cli("status")
        assert "Fleet:     the last push failed: cannot reach the fleet database" in status.stdout, status.stdout
        assert "(1 chunks behind); clawmem fleet push tries again" in status.stdout and "up to date" not in status.stdout
        pushed = cli("fleet", "push")
        assert pushed.returncode == 3 and "cannot reach" in pushed.stderr
        for out in (status.stdout, pushed.stderr, synced.stdout, synced.stderr):
            assert password not in out
    finally:
        up = pg.cli("fleet", "up")
        assert up.returncode == 0, up.stderr
    caught_up = cli("watch", "--once")
    assert caught_up.returncode == 0, caught_up.stderr
    assert any("puffin" in t for *_, t in rows(db))
    assert "Fleet:     up to date" in cli("status").stdout
    with psycopg.connect(db) as conn:  # the owner deletes the agent's rows: status no longer says "up to date"
        conn.execute("delete from clawmem_chunks where agent = %s", (name,))
    status = cli("status").stdout
    assert "up to date" not in status and "3 pushed chunks are no longer in the fleet (deleted there)" in status, status
    assert cli("fleet", "push").returncode == 0 and "Fleet:     up to date" in cli("status").stdout


def test_searches_keep_one_connection_that_survives_a_server_restart(pg, db, agent, uid):
    """A long-lived engine (the app, `clawmem mcp`) searches on one kept connection; after the
    server restarts, the next search opens a new one by itself, and while it is down the
    search says so in one line."""
    from clawmem.engine.fleet import client as fleet

    a = agent(f"r{uid}", NOTES, db)
    fleet.push(a)
    first = fleet.search(a, "heron rollback")
    kept = fleet.client(a)
    conn = kept.conn
    assert first["results"] and conn is not None and not conn.closed
    assert fleet.search(a, "billing Postgres")["results"] and kept.conn is conn

    def restart() -> None:
        down = pg.cli("fleet", "down")
        assert down.returncode == 0, down.stderr
        up = pg.cli("fleet", "up", "--json")
        assert up.returncode == 0 and json.loads(up.stdout)["url"] == pg.url, up.stderr

    restart()
    again = fleet.search(a, "heron rollback")
    assert [r["path"] for r in again["results"]] == [r["path"] for r in first["results"]]
    assert kept.conn is not conn and fleet.client(a) is kept
    down = pg.cli("fleet", "down")
    assert down.returncode == 0, down.stderr
    try:
        with pytest.raises(fleet.FleetError, match="cannot reach the fleet database") as err:
            fleet.search(a, "heron")
        assert db.split(":")[2].split("@")[0] not in str(err.value)  # the password stays masked
    finally:
        up = pg.cli("fleet", "up")
        assert up.returncode == 0, up.stderr
    assert fleet.search(a, "heron rollback")["results"]


def test_cli_fleet_search_get_and_grant(db, agent, uid, tmp_path):
    from clawmem.engine.fleet import client as fleet

    a = agent(f"s{uid}", NOTES, db)
    fleet.push(a)
    cfg = write(tmp_path / "s.toml", f'provider = "none"\nagentId = "x{uid}"\n[fleet]\nurl = "{db}"\n')
    base = ("--config", str(cfg), "--workspace", str(tmp_path / "empty"))
    res = run_cli("search", "--fleet", "--agents", a.cfg.agent_id, "heron rollback", "--json", *base)
    assert res.returncode == 0, res.stderr
    hit = json.loads(res.stdout)["results"][0]
    assert (hit["agent"], hit["host"], hit["path"]) == (a.cfg.agent_id, f"host-{a.cfg.agent_id}", "memory/projects/heron.md")
    plain = run_cli("search", "--fleet", "heron rollback", *base)
    assert f"{a.cfg.agent_id}@host-{a.cfg.agent_id} memory/projects/heron.md:" in plain.stdout
    none = run_cli("search", "--fleet", "--agents", "nobody", "heron", "--json", *base)
    assert json.loads(none.stdout)["results"] == []
    got = run_cli("get", hit["ref"], "--from", "3", "--lines", "1", *base)
    assert got.stdout.strip() == "The heron migration needs a rollback plan for the ledger tables."
    nothing = run_cli("get", f"fleet:{a.cfg.agent_id}/memory/not-there.md", *base)  # once silent, exit 0
    assert nothing.returncode == 3 and nothing.stdout == "" and "nothing stored under that name" in nothing.stderr
    grant = run_cli("fleet", "grant", f"r{uid}", "--read", a.cfg.agent_id, *base)
    role = f"clawmem_{db.rsplit('/', 1)[1]}_r{uid}"
    assert grant.returncode == 0 and role in grant.stdout and "[fleet]" in grant.stdout
    again = run_cli("fleet", "grant", f"r{uid}", *base)
    assert "password unchanged" in again.stdout and f"postgresql://{role}:<its current password>@" in again.stdout
    usage = run_cli("search", "--agents", "a", "heron", *base)
    assert usage.returncode == 2 and "--fleet" in usage.stderr
    usage = run_cli("search", "--fleet", "--now", "2026-01-01", "heron", *base)
    assert usage.returncode == 2 and "--now" in usage.stderr
    password = db.split(":")[2].split("@")[0]
    (tmp_path / "empty").mkdir()  # status is about a workspace: give it one (an empty one is fine)
    shown = run_cli("status", "--json", *base)
    assert password not in shown.stdout and json.loads(shown.stdout)["fleet"]["url"].count("***") == 1


def test_mcp_memory_search_corpus_fleet(db, agent, uid):
    from clawmem.engine.fleet import client as fleet
    from clawmem.engine.agent import tools

    a = agent(f"p{uid}", NOTES, db)
    fleet.push(a)
    res = tools.memory_search(a, "heron rollback", corpus="fleet")
    hit = res["results"][0]
    assert res["corpus"] == "fleet" and hit["corpus"] == "fleet" and hit["agent"] == a.cfg.agent_id
    assert hit["path"].startswith("fleet:") and hit["citation"] == f"Source: {hit['path']}#L{hit['startLine']}-L{hit['endLine']}"
    assert hit["snippet"].endswith(hit["citation"])
    assert "rollback plan" in tools.memory_get(a, hit["path"])["text"]
    assert "error" in tools.memory_search(a, "heron", corpus="nope")
    local = tools.memory_search(a, "heron rollback")
    assert local["results"][0]["corpus"] == "memory"


def test_fleet_url_password_is_masked_in_config_and_unreachable_errors(make_engine, workspace):
    from clawmem.engine.fleet import client as fleet

    url = "postgresql://clawmem_x:s3cretpass@127.0.0.1:1/clawmem"
    write(workspace / "memory" / "a.md", "# A\n\nSomething to push.\n")
    eng = make_engine({"fleet.url": url})
    eng.run_index()
    assert eng.cfg.masked("fleet.url") == "postgresql://clawmem_x:***@127.0.0.1:1/clawmem"
    with pytest.raises(fleet.FleetError) as err:
        fleet.push(eng)
    assert "s3cretpass" not in str(err.value)


def test_no_fleet_url_is_a_usage_error(workspace, tmp_path):
    pushed = run_cli("fleet", "push", "--workspace", str(workspace), "--json")
    assert pushed.returncode == 2 and "[fleet] url" in pushed.stderr and json.loads(pushed.stdout)["exitCode"] == 2


def test_share_globs():
    from clawmem.engine.fleet import client as fleet
    from clawmem.engine import load_config

    cfg = load_config(None, overrides={})
    assert not fleet.is_shared(cfg, "MEMORY.md") and fleet.is_shared(cfg, "memory/2026-01-01.md")
    cfg = load_config(None, overrides={"fleet.share": ["memory/projects/*"]})
    assert fleet.is_shared(cfg, "memory/projects/a/b.md") and not fleet.is_shared(cfg, "memory/2026-01-01.md")


def test_the_watcher_pushes_after_each_sync(db, make_engine, workspace, uid):
    """A running watcher (the one `clawmem watch`, the app and `clawmem mcp` run) with publish on:
    a new note reaches the fleet without anyone running `fleet push`."""
    write(workspace / "memory" / "2026-04-01.md", "# 2026-04-01\n\nThe auk survey starts in May.\n")
    eng = make_engine({"agentId": f"w{uid}", "fleet.url": db, "fleet.publish": True, "sync.watchDebounceMs": 100}, persistent=True)
    syncer = eng.watcher()  # the engine's watcher: its push is subscribed by Engine.watcher
    syncer.start()
    try:
        wait_for(lambda: any("auk survey" in t for *_, t in rows_or_none(db)), limit=60, what="the first push")
        write(workspace / "memory" / "2026-04-02.md", "# 2026-04-02\n\nThe gannet colony counted 412 nests.\n")
        wait_for(lambda: any("gannet colony" in t for *_, t in rows_or_none(db)), limit=60, what="the push after the edit")
    finally:
        syncer.stop()


def rows_or_none(url: str) -> list:
    try:
        return rows(url)
    except psycopg.Error:  # the tables are not there before the first push
        return []


# ----------------------------------------------------------------------------- peers cannot hurt each other


@pytest.mark.slow
def test_a_peer_cannot_break_another_peers_push_or_make_the_owner_build_indexes(db, agent, uid):
    """Issue 32: agent A (its own role) recorded B's model with 5 dimensions and called the
    owner's index function, so B's next push failed ('expected 5 dimensions, not 384') after
    deleting B's rows. Now the model's key fixes its dimensions, only the owner builds indexes,
    and B's push survives whatever A does."""
    from clawmem.engine.fleet import client as fleet

    a, b = f"pa{uid}", f"pb{uid}"
    ga, gb = fleet.grant(db, a, []), fleet.grant(db, b, [a])
    ea = agent(a, {"memory/a.md": "# A\n\nThe kestrel build is green.\n"}, ga["url"])
    eb = agent(b, {"memory/b.md": "# B\n\nThe plover release ships Thursday.\n"}, gb["url"])
    fleet.push(ea)
    b_model = fleet.push(eb)["model"]
    b_rows = rows(db, "select path, text from clawmem_chunks where agent = %s order by 1", (b,))
    indexes = rows(db, "select indexname from pg_indexes where tablename = 'clawmem_chunks' order by 1")
    with psycopg.connect(ga["url"]) as conn:
        with pytest.raises(psycopg.errors.CheckViolation):  # a model's dimensions are those its key says
            conn.execute("select clawmem_put_agent(%s, 'h', %s, 5)", (a, b_model))
    for call in (f"select clawmem_vector_index('{b_model}')", "select clawmem_vector_index('junk/x@5')"):
        with psycopg.connect(ga["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(call)
    with psycopg.connect(ga["url"]) as conn, pytest.raises(psycopg.errors.UndefinedFunction):
        conn.execute("select clawmem_vector_index(%s, 5)", (b_model,))  # the old two-argument door is gone
    with psycopg.connect(ga["url"]) as conn, pytest.raises(psycopg.errors.CheckViolation):  # nor a vector that lies about its model
        conn.execute("select clawmem_add_chunks(%s, 'h', '{x.md}', '{memory}', '{1}', '{1}', '{h}', array[%s], '{x}',"
                     " array[''::tsvector], array['[1,2,3,4,5]'::vector], '{null}', '{null}', '{null}', '{null}')", (a, b_model))
    assert rows(db, "select indexname from pg_indexes where tablename = 'clawmem_chunks' order by 1") == indexes
    write(eb.workspace / "memory" / "b.md", "# B\n\nThe plover release ships Friday now.\n")
    eb.run_index()
    out = fleet.push(eb)
    assert out["added"] >= 1 and "Friday" in " ".join(t for _, t in rows(db, "select path, text from clawmem_chunks where agent = %s", (b,)))
    assert fleet.search(eb, "plover release")["results"]
    assert b_rows  # and B's rows were there to lose
    # the model's index waits for the owner, and the push says so
    assert any("no vector index in the fleet yet" in n for n in out["notes"])
    assert fleet.build_indexes(db) == [b_model]
    assert fleet.vector_index_name(b_model) in {i for (i,) in rows(db, "select indexname from pg_indexes")}
    assert fleet.push(eb)["notes"] == []


def _clustered(rng, n: int, centers):
    import numpy as np

    v = centers[rng.integers(len(centers), size=n)] + 0.7 * rng.standard_normal((n, centers.shape[1])) / np.sqrt(centers.shape[1])
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.slow
def test_roles_reading_a_few_agents_search_their_agents_graphs_and_find_the_exact_top_k(db, uid):
    """Issue 33: a role reading a few agents searched the model's whole HNSW graph filtered by
    agent (slow, and pgvector stops after max_scan_tuples). Now the owner builds a graph per
    agent beside the model's, and the server searches the readable agents' own graphs when
    they hold a small share of the model's rows. Each role gets the same top 24 as an exact
    search of its own rows (at least the old query's recall), never another agent's row, and
    no role can build an index."""
    import numpy as np
    from psycopg import sql

    from clawmem.engine.fleet import client as fleet

    model, dims, per_agent, k = "test/clustered@32", 32, 400, 24
    names = [f"g{i}{uid}" for i in range(6)]
    rng = np.random.default_rng(3)
    centers = _clustered(rng, 64, np.eye(dims, dtype=np.float32))
    with fleet.connect(db) as conn:
        fleet.ensure_schema(conn, db)
        fleet.register_vector(conn)
        with conn.cursor() as cur:
            for a in names:
                cur.executemany("insert into clawmem_chunks (agent, host, path, source, start_line, end_line, hash, model, text, tokens, embedding)"
                                " values (%s, 'h', %s, 'memory', 1, 1, %s, %s, 'x', ''::tsvector, %s)",
                                [(a, f"memory/{i}.md", f"{i}", model, v) for i, v in enumerate(_clustered(rng, per_agent, centers))])
            cur.executemany("insert into clawmem_agents (agent, host, model, dims, chunks) values (%s, 'h', %s, %s, %s)",
                            [(a, model, dims, per_agent) for a in names])
        conn.commit()
    roles = {"all": fleet.grant(db, names[0], names), "two": fleet.grant(db, names[1], [names[2]]), "own": fleet.grant(db, names[3], [])}
    readable = {"all": names, "two": names[1:3], "own": names[3:4]}
    indexes = {i for (i,) in rows(db, "select indexname from pg_indexes where tablename = 'clawmem_chunks'")}
    assert fleet.vector_index_name(model) in indexes and {fleet.agent_index_name(model, a) for a in names} <= indexes
    with psycopg.connect(roles["own"]["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select clawmem_agent_vector_index(%s, %s)", (model, names[3]))  # the owner's function alone
    old = sql.SQL("select id from clawmem_chunks where model = {m} and clawmem_dated(day, source, ts, null, null)"
                  " order by (embedding::vector(32) <=> %s::vector(32)) limit %s").format(m=sql.Literal(model))
    queries = _clustered(rng, 20, centers)
    owner = fleet.connect(db, autocommit=True)
    agent_of = dict(owner.execute("select id, agent from clawmem_chunks"))
    for who, granted in roles.items():
        conn = fleet.connect(granted["url"], autocommit=True)
        conn.execute("set hnsw.ef_search = 48")
        hits = {"old": 0, "new": 0}
        for q in queries:
            exact = [r[0] for r in owner.execute("select id from clawmem_chunks where agent = any(%s)"
                                                 " order by (embedding::vector(32) <=> %s::vector(32)) + 0, id limit %s", (readable[who], q, k))]
            new = conn.execute(fleet.NEAREST, (model, q, None, k, None, None)).fetchall()
            assert {agent_of[i] for i, _ in new} <= set(readable[who])  # row-level security still decides
            assert [d for _, d in new] == sorted(d for _, d in new)
            hits["new"] += len(set(exact) & {i for i, _ in new})
            hits["old"] += len(set(exact) & {r[0] for r in conn.execute(old, (q, k))})
        recall = {v: n / (k * len(queries)) for v, n in hits.items()}
        assert recall["new"] >= max(0.95, recall["old"] - 0.01), (who, recall)
        conn.close()
    # the few-agent roles searched their agents' graphs, the all-agents role the model's
    conn = fleet.connect(roles["own"]["url"], autocommit=True)
    before = owner.execute("select idx_scan from pg_stat_user_indexes where indexrelname = %s", (fleet.agent_index_name(model, names[3]),)).fetchone()[0]
    conn.execute(fleet.NEAREST, (model, queries[0], None, k, None, None)).fetchall()
    conn.execute("select pg_stat_force_next_flush()")
    conn.close()

    def scanned():
        owner.execute("select pg_stat_clear_snapshot()")
        return owner.execute("select idx_scan from pg_stat_user_indexes where indexrelname = %s",
                             (fleet.agent_index_name(model, names[3]),)).fetchone()[0] > before

    assert wait_for(scanned, 10, "a scan of the agent's own graph")
    owner.close()
    fleet.revoke(db, names[1], delete_rows=True)  # its rows go, and its graph with them
    assert fleet.agent_index_name(model, names[1]) not in {i for (i,) in rows(db, "select indexname from pg_indexes")}


@pytest.mark.slow
def test_a_push_that_fails_on_the_way_deletes_nothing_and_the_owner_cannot_push_as_an_agent(db, agent, uid):
    from clawmem.engine.fleet import client as fleet

    name = f"pf{uid}"
    g = fleet.grant(db, name, [])
    eng = agent(name, {"memory/f.md": "# F\n\nThe tern survey starts in May.\n"}, g["url"], vectors=False)
    fleet.push(eng)
    before = rows(db, "select path, text from clawmem_chunks where agent = %s", (name,))
    with psycopg.connect(db) as conn:  # the database refuses every new row (a full disk, a constraint, a peer)
        conn.execute("create function refuse() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$")
        conn.execute("create trigger refuse before insert on clawmem_chunks for each row execute function refuse()")
    write(eng.workspace / "memory" / "f.md", "# F\n\nThe tern survey moved to June.\n")
    eng.run_index()
    with pytest.raises(fleet.FleetError, match="refused"):
        fleet.push(eng)
    assert rows(db, "select path, text from clawmem_chunks where agent = %s", (name,)) == before  # nothing deleted
    owner_as_agent = agent(name, {"memory/g.md": "# G\n\nOther.\n"}, db, vectors=False)
    with pytest.raises(fleet.FleetError, match=f"agent {name} has its own role in this fleet"):
        fleet.push(owner_as_agent)
    assert rows(db, "select path, text from clawmem_chunks where agent = %s", (name,)) == before


@pytest.mark.slow
def test_a_peer_cannot_stall_the_fleet_and_a_held_lock_bounds_a_search(pg, db, agent, uid):
    """Issue 43: an agent's role held DELETE/UPDATE rights, enough for LOCK TABLE … ACCESS
    EXCLUSIVE, and no timeout was set: a peer's fleet search waited 198 s. Now an agent's role
    can take no lock that blocks a reader, an agent idle in a transaction delays nobody, and a
    lock held by one who may take it (the owner) costs a search seconds: it answers from the
    agent's own index and says why."""
    import time

    from clawmem.engine.agent import tools
    from clawmem.engine.fleet import client as fleet

    a, b = f"la{uid}", f"lb{uid}"
    ga, gb = fleet.grant(db, a, [b]), fleet.grant(db, b, [a])
    ea = agent(a, NOTES, ga["url"])
    eb = agent(b, {"memory/b.md": "# B\n\nThe heron survey counted nine nests.\n"}, gb["url"])
    fleet.push(ea)
    fleet.push(eb)
    tables = ("clawmem_chunks", "clawmem_agents", "clawmem_terms", "clawmem_notes", "clawmem_roles")
    with psycopg.connect(db) as conn:  # the write rights an older clawmem granted go at the owner's next grant or push
        conn.execute(f'grant delete on clawmem_chunks to "{gb["role"]}"')
    fleet.grant(db, b)
    assert not rows(db, "select has_table_privilege(%s, 'clawmem_chunks', 'DELETE')", (gb["role"],))[0][0]
    for table in tables:
        for mode in ("access exclusive", "exclusive", "share row exclusive", "share", "share update exclusive", "row exclusive"):
            with psycopg.connect(gb["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"lock table {table} in {mode} mode")
    for table in tables[:4]:
        with psycopg.connect(gb["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f"select 1 from {table} for update")
    # every clawmem connection carries its timeouts; the server `fleet up` started ends idle transactions
    conn = fleet.connect(gb["url"])
    try:
        assert conn.execute("show lock_timeout").fetchone()[0] == "3s"
        assert conn.execute("show statement_timeout").fetchone()[0] == "2min"
    finally:
        conn.close()
    with psycopg.connect(pg.url) as conn:
        assert conn.execute("show idle_in_transaction_session_timeout").fetchone()[0] == "1min"

    # B sits idle in a transaction holding every lock it can take: A's search is not delayed
    idle = psycopg.connect(gb["url"])
    try:
        for table in tables[:4]:
            idle.execute(f"lock table {table} in access share mode")
        idle.execute("select pg_advisory_lock(hashtext('clawmem_notes'))")
        t0 = time.monotonic()
        res = fleet.search(ea, "heron survey nests")
        assert time.monotonic() - t0 < 3 and "warning" not in res and {r["agent"] for r in res["results"]} >= {b}
        t0 = time.monotonic()
        with pytest.raises(fleet.FleetError, match="lock timeout|canceling statement due to lock timeout"):
            fleet.team_remember(ea, "The heron survey is on Monday", "Field")  # waits seconds, not forever, and says so
        assert time.monotonic() - t0 < 10
    finally:
        idle.close()

    # the owner holds a lock (a migration, or a session left idle): the search answers in bounded
    # time, from A's own index, saying so; MCP too
    owner = psycopg.connect(db)
    try:
        owner.execute("lock table clawmem_chunks in access exclusive mode")
        t0 = time.monotonic()
        res = fleet.search(ea, "heron rollback")
        assert time.monotonic() - t0 < fleet.SEARCH_TIMEOUT_MS / 1000 + 5
        assert "timed out" in res["warning"] and res["fallback"] == "local"
        assert res["results"] and {r["agent"] for r in res["results"]} == {a}
        assert res["results"][0]["path"] == "memory/projects/heron.md"
        t0 = time.monotonic()
        mcp = tools.memory_search(ea, "heron rollback", corpus="fleet")
        assert time.monotonic() - t0 < fleet.SEARCH_TIMEOUT_MS / 1000 + 5
        assert "timed out" in mcp["warning"] and mcp["results"] and mcp["results"][0]["agent"] == a
    finally:
        owner.close()
    assert not fleet.search(ea, "heron survey nests").get("warning")  # the lock gone, the fleet answers again


@pytest.mark.slow
def test_a_peer_cannot_skew_another_agents_scores(db, agent, uid):
    """Issue 44: C inflated its own count for "ledger" in clawmem_terms and A's scores for A's
    own files fell (0.9538 -> 0.5999). The counts are now derived by the database from the rows
    pushed; no agent writes them, its chunk count or its password-free role's rows."""
    from clawmem.engine.fleet import client as fleet

    a, c = f"sa{uid}", f"sc{uid}"
    ga, gc = fleet.grant(db, a, [c]), fleet.grant(db, c, [a])
    ea = agent(a, {"memory/ledger.md": "# Ledger\n\nThe ledger export runs nightly at two.\n",
                   "memory/other.md": "# Other\n\nThe ledger archive moved to cold storage.\n"}, ga["url"], vectors=False)
    ec = agent(c, {"memory/c.md": "# C\n\nThe ledger dashboard is slow.\n"}, gc["url"], vectors=False)
    fleet.push(ea)
    fleet.push(ec)
    before = [(r["path"], r["score"]) for r in fleet.search(ea, "ledger export")["results"]]
    assert before
    attempts = ("update clawmem_terms set chunks = 100000 where agent = %s and term = 'ledger'",
                "insert into clawmem_terms values (%s, 'export', 100000) on conflict (agent, term) do update set chunks = 100000",
                "update clawmem_agents set chunks = 100000 where agent = %s",
                "select clawmem_put_agent(%s, 'h', null, null)")
    for sql in attempts:
        with psycopg.connect(gc["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(sql, (c if "clawmem_put_agent" not in sql else a,))
    after = [(r["path"], r["score"]) for r in fleet.search(ea, "ledger export")["results"]]
    assert after == before
    assert_counts_match_rows(db)


# ----------------------------------------------------------------------------- a fleet for a team


@pytest.mark.slow
def test_team_commands_revoke_list_status_readers_and_per_fleet_roles(pg, db, agent, uid, tmp_path):
    import uuid

    from clawmem.engine.fleet import client as fleet

    a, b, c = f"ta{uid}", f"tb{uid}", f"tc{uid}"
    for name in (a, b, c):
        fleet.grant(db, name, [])
    assert fleet.grant(db, c, add=[a])["reads"] == [a]
    assert fleet.grant(db, c, add=[b])["reads"] == sorted([a, b])  # one more, the rest kept
    assert fleet.grant(db, c, remove=[a])["reads"] == [b]
    cfg = write(tmp_path / "o.toml", f'provider = "none"\n[fleet]\nurl = "{db}"\n')
    base = ("--config", str(cfg), "--workspace", str(tmp_path))
    assert run_cli("fleet", "grant", c, "--add-read", a, *base).returncode == 0
    ga = fleet.grant(db, a, [], new_password=True)
    ea = agent(a, {"memory/a.md": "# A\n\nThe gannet count is 41.\n"}, ga["url"], vectors=False)
    fleet.push(ea)
    listed = {x["agent"]: x for x in json.loads(run_cli("fleet", "list", "--json", *base).stdout)["agents"]}
    assert listed[c]["reads"] == sorted([a, b]) and listed[a]["readBy"] == [c] and listed[a]["chunks"] == 1
    status = run_cli("fleet", "status", *base)
    assert status.returncode == 0 and "PostgreSQL " in status.stdout and f"{a}@host-{a}: 1 rows, last push 20" in status.stdout
    # an agent's URL is not the owner's: said plainly
    for cmd in (("grant", b), ("revoke", b), ("list",), ("status",)):  # status once named `fleet list`
        agent_cfg = write(tmp_path / "a.toml", f'provider = "none"\n[fleet]\nurl = "{ga["url"]}"\n')
        r = run_cli("fleet", *cmd, "--config", str(agent_cfg), "--workspace", str(tmp_path))
        assert r.returncode == 3 and f"is agent {a}'s role: `clawmem fleet {cmd[0]}` needs the owner's URL" in r.stderr, r.stderr
    # revoke: the role can no longer log in, nobody reads it
    r = run_cli("fleet", "revoke", a, *base)
    assert r.returncode == 0 and "can no longer log in" in r.stdout
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(ga["url"], connect_timeout=5)
    from clawmem.engine.agent import tools

    after = tools.memory_search(ea, "gannet count", corpus="fleet")  # once blamed "an embedding/provider error"
    assert after["unavailable"] and "fleet" in after["warning"].lower() and "embedding" not in after["warning"]
    assert fleet.fleet_list(db)["agents"][[x["agent"] for x in fleet.fleet_list(db)["agents"]].index(c)]["reads"] == [b]
    # granted again, A is read again by those that read it before the revoke, and the grant says so
    again = run_cli("fleet", "grant", a, "--json", *base)
    assert again.returncode == 0 and json.loads(again.stdout)["readBy"] == [c]
    assert json.loads(again.stdout)["restoredReaders"] == [c]
    assert f"read again by {c}" in run_cli("fleet", "revoke", a, *base).stdout + run_cli("fleet", "grant", a, *base).stdout
    # a second fleet on the same server: its own roles for the same agent names
    other = "t" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"create database {other}")
    try:
        other_url = pg.url.rsplit("/", 1)[0] + "/" + other
        g1, g2 = fleet.grant(db, b, [], new_password=True), fleet.grant(other_url, b, [], new_password=True)
        assert g1["role"] != g2["role"] and g2["newPassword"]
        psycopg.connect(g1["url"]).close()  # the first fleet's password still works
        # neither fleet's roles see the other's: no login to its database, no list of the server's roles
        with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
            psycopg.connect(g1["url"].rsplit("/", 1)[0] + "/" + other, connect_timeout=5)
        for catalog in ("pg_roles", "pg_user", "pg_stat_activity", "pg_auth_members"):
            with psycopg.connect(g2["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"select * from {catalog}")
    finally:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute(f"drop database {other} with (force)")
            conn.execute(f'drop role if exists "{fleet.role_name(b, other)}"')


@pytest.mark.slow
def test_the_watcher_catches_up_as_soon_as_the_fleet_is_back(pg, db, make_engine, workspace, uid):
    """A push that failed while the database was down is retried every few seconds, so the
    backlog goes out when it is back, not at the next interval sync (5 minutes by default)."""
    from clawmem.engine.index import watcher
    write(workspace / "memory" / "2026-04-01.md", "# 2026-04-01\n\nThe auk survey starts in May.\n")
    eng = make_engine({"agentId": f"cu{uid}", "fleet.url": db, "fleet.publish": True, "sync.watchDebounceMs": 100,
                       "sync.intervalMinutes": 60}, persistent=True)
    said = []
    syncer = eng.watcher(lambda e: said.append(e.describe()))  # the engine's watcher: its push is subscribed by Engine.watcher
    syncer.start()
    try:
        wait_for(lambda: any("auk survey" in t for *_, t in rows_or_none(db)), limit=60, what="the first push")
        assert pg.cli("fleet", "down").returncode == 0
        try:
            write(workspace / "memory" / "2026-04-02.md", "# 2026-04-02\n\nThe gannet colony counted 412 nests.\n")
            wait_for(lambda: syncer._push_retry is not None, limit=60, what="the failed push")
        finally:
            assert pg.cli("fleet", "up").returncode == 0
        wait_for(lambda: any("gannet colony" in t for *_, t in rows_or_none(db)), limit=4 * watcher.PUSH_RETRY_SECONDS,
                 what="the catch-up push")
        wait_for(lambda: syncer._push_retry is None, limit=10, what="the retries to stop")
        # the failure was said, and so is the catch-up (`watch` printed only the failure)
        assert any("local work goes on" in line for line in said)
        wait_for(lambda: any("the fleet is up to date" in line for line in said), limit=5, what="the catch-up line")
    finally:
        syncer.stop()


@pytest.mark.slow
def test_fleet_search_dates_and_the_mcp_agents_argument(db, agent, uid, tmp_path):
    from clawmem.engine.agent import tools
    from clawmem.engine.fleet import client as fleet

    a = agent(f"da{uid}", {"memory/2026-03-02.md": "# 2026-03-02\n\nThe skua count was 12.\n",
                           "memory/2026-03-09.md": "# 2026-03-09\n\nThe skua count was 15.\n",
                           "memory/projects/skua.md": "# Skua\n\nSkua nests are on the north cliff.\n"}, db)
    b = agent(f"db{uid}", {"memory/2026-03-05.md": "# 2026-03-05\n\nThe skua count was 9 on the east side.\n"}, db)
    fleet.push(a)
    fleet.push(b)
    paths = lambda res: sorted((r["agent"], r["path"]) for r in res["results"])  # noqa: E731
    everything = paths(fleet.search(a, "skua count", show_hidden=True))
    assert len(everything) >= 3
    assert paths(fleet.search(a, "skua count", after="2026-03-04", before="2026-03-08", show_hidden=True)) == [(b.cfg.agent_id, "memory/2026-03-05.md")]
    assert paths(fleet.search(a, "skua count", after="2026-03-09", show_hidden=True)) == [(a.cfg.agent_id, "memory/2026-03-09.md")]
    cfg = write(tmp_path / "d.toml", f'provider = "none"\nagentId = "x{uid}"\n[fleet]\nurl = "{db}"\n')
    cli = run_cli("search", "--fleet", "--before", "2026-03-03", "skua count", "--json", "--config", str(cfg), "--workspace", str(tmp_path))
    assert cli.returncode == 0, cli.stderr
    got = json.loads(cli.stdout)
    assert [(r["agent"], r["path"]) for r in got["results"]] == [(a.cfg.agent_id, "memory/2026-03-02.md")]
    assert got["dateRange"] == {"after": None, "before": "2026-03-03", "from": "options", "applied": True}  # once null
    nobody = run_cli("search", "--fleet", "--agents", "Z", "skua count", "--config", str(cfg), "--workspace", str(tmp_path))
    assert nobody.returncode == 0 and "keyword-only" not in nobody.stdout  # once "# keyword-only"
    assert nobody.stdout.startswith("# no agent of the fleet to search: none readable with this role among those named")
    # MCP: the agents argument narrows the agents searched
    only_b = tools.memory_search(a, "skua count", corpus="fleet", agents=[b.cfg.agent_id])
    assert only_b["results"] and {r["agent"] for r in only_b["results"]} == {b.cfg.agent_id} and only_b["agents"] == [b.cfg.agent_id]
    assert "error" in tools.memory_search(a, "skua", corpus="fleet", agents="nope")
    assert "error" in tools.memory_search(a, "skua", agents=[b.cfg.agent_id])  # a local search has no agents


@pytest.mark.slow
def test_team_notes_two_agents_on_two_homes_write_and_read_them(db, agent, uid, tmp_path):
    """memory_remember with scope "team": a note in the fleet's notebook that every agent of the
    fleet reads, its writer named. Nothing is refused for what it says: a note that may
    contradict another (in any section) is written and both are flagged; only a note's writer
    or the owner replaces it, another agent proposes; nobody undoes another's note."""
    from clawmem.engine.agent import tools
    from clawmem.engine.fleet import client as fleet

    a, b, c = f"na{uid}", f"nb{uid}", f"nc{uid}"
    ga, gb, gc = (fleet.grant(db, name, []) for name in (a, b, c))  # no agent may read another's memory
    ea = agent(a, {"memory/a.md": "# A\n\nNothing.\n"}, ga["url"], vectors=False)
    wrote = tools.memory_remember(ea, "The release freeze starts on June 3", "Release", scope="team")
    assert wrote["agent"] == a and wrote["host"] == f"host-{a}" and wrote["section"] == "Release"
    # agent B, another home (its own HOME, state and config), through the CLI
    home = tmp_path / "home-b"
    env = {"HOME": str(home), "XDG_STATE_HOME": str(home / "state"), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache")}
    cfg = write(home / "b.toml", f'provider = "none"\nagentId = "{b}"\n[fleet]\nurl = "{gb["url"]}"\n')
    b_cli = lambda *args: run_cli("fleet", *args, "--config", str(cfg), "--workspace", str(home / "ws"), env=env)  # noqa: E731
    seen = json.loads(b_cli("notes", "--json").stdout)["notes"]
    assert [(n["agent"], n["text"]) for n in seen] == [(a, "The release freeze starts on June 3")]
    # a real contradiction, in another section: written, and flagged on both notes
    flagged = b_cli("note", "Release freeze starts June 10", "--section", "Ops", "--json")
    assert flagged.returncode == 0, flagged.stderr
    other = json.loads(flagged.stdout)
    assert [n["id"] for n in other["possibleConflicts"]] == [wrote["id"]] and "flagged for review" in other["note"]
    conflicts = {n["id"]: n["conflicts"] for n in json.loads(b_cli("notes", "--conflicts", "--json").stdout)["notes"]}
    assert conflicts == {wrote["id"]: [other["id"]], other["id"]: [wrote["id"]]}
    assert b_cli("note", "The release freeze starts on June 3", "--section", "Release").stdout.startswith("already in the team notebook")
    # B names A's note as replaced: a proposal, A's note stands
    proposed = json.loads(b_cli("note", "The release freeze starts on June 12", "--section", "Release", "--replaces",
                                str(wrote["id"]), "--json").stdout)
    assert proposed["replaces"] is None and proposed["proposes"] == wrote["id"] and "proposed as a replacement" in proposed["note"]
    standing = {n["id"] for n in ea.team_notes()}
    assert wrote["id"] in standing and proposed["id"] in standing
    with psycopg.connect(gb["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("select clawmem_note_add(%s, 'h', 'Release', 'x', %s, null, null, null)", (b, wrote["id"]))
    # A replaces its own note
    replaced = fleet.team_remember(ea, "The release freeze starts on June 10", "Release", wrote["id"])
    assert replaced["replaces"] == wrote["id"]
    # every agent of the fleet reads the notebook, whatever it may read of the others' memory
    ec = agent(c, {"memory/c.md": "# C\n\nNothing.\n"}, gc["url"], vectors=False)
    assert wrote["id"] not in {n["id"] for n in ec.team_notes()} and replaced["id"] in {n["id"] for n in ec.team_notes()}
    history = {n["id"]: n["standing"] for n in ec.team_notes(every_version=True)}
    assert history[wrote["id"]] is False and history[replaced["id"]] is True
    with pytest.raises(fleet.FleetError, match="an agent undoes only its own"):
        ec.team_undo(replaced["id"])
    with psycopg.connect(ga["url"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("update clawmem_notes set text = 'forged'")  # a note's text never changes
    assert run_cli("fleet", "notes", "--undo", str(replaced["id"]), "--config",
                   str(write(tmp_path / "a.toml", f'provider = "none"\nagentId = "{a}"\n[fleet]\nurl = "{ga["url"]}"\n')),
                   "--workspace", str(tmp_path)).returncode == 0
    assert wrote["id"] in {n["id"] for n in ea.team_notes()}  # the replaced note stands again
    listed = b_cli("notes", "--all")
    assert f"— {a}@host-{a}" in listed.stdout and "[undone]" in listed.stdout
    fleet.revoke(db, c)  # its notebook privileges go with its role; the notes stay
    assert rows(db, "select count(*) from clawmem_notes")[0][0] == 4


@pytest.mark.slow
def test_team_notes_are_not_refused_for_their_opening_words(db, agent, uid):
    """Two true notes that open alike (production and staging) and a numbered series of 15 are
    all written; only the pair that says two things of one subject is flagged."""
    from clawmem.engine.fleet import client as fleet

    a = f"nw{uid}"
    ea = agent(a, {"memory/a.md": "# A\n\nNothing.\n"}, fleet.grant(db, a, [])["url"], vectors=False)
    prod = fleet.team_remember(ea, "The deploy window for staging is Thursday afternoon", "Deploys")
    stage = fleet.team_remember(ea, "The deploy window for production is Friday morning", "Deploys")
    assert "error" not in stage and "possibleConflicts" not in stage and prod["id"] != stage["id"]
    steps = ["check the backups", "drain the queue workers", "stop the billing cron", "snapshot the ledger volume",
             "run the schema migration", "verify the row counts", "restart the API pods", "warm the search cache",
             "flip the feature flag", "watch the error rate", "page the on-call lead", "update the status page",
             "close the change ticket", "archive the old snapshots", "write the release notes"]
    series = [fleet.team_remember(ea, f"Cutover step {i}: {what}", "Cutover") for i, what in enumerate(steps, start=1)]
    assert all("error" not in n and "id" in n for n in series) and len({n["id"] for n in series}) == 15
    assert len(fleet.team_notes(ea)) == 17


@pytest.mark.slow
def test_team_notes_in_context_and_in_fleet_search(db, agent, uid, tmp_path):
    """Team notes are where agents look: `clawmem context` (capped, said when cut) and fleet
    search (CLI and MCP), each hit with source "team"."""
    from clawmem.engine.agent import tools
    from clawmem.engine.agent.context import session_context
    from clawmem.engine.fleet import client as fleet

    a = f"nx{uid}"
    ea = agent(a, {"memory/a.md": "# A\n\nThe osprey nest is on the east pole.\n"}, fleet.grant(db, a, [])["url"], vectors=False)
    fleet.push(ea)
    note = fleet.team_remember(ea, "The cormorant survey needs two boats on Saturday", "Field")
    ctx = session_context(ea)
    assert "cormorant survey needs two boats" in ctx["text"] and ctx["team"]["included"] == 1
    for i in range(60):
        fleet.team_remember(ea, f"Field note {i}: the gull colony {i} has {i * 7} nests along the harbour wall", "Field")
    capped = session_context(ea)
    assert capped["team"]["truncated"] and "> Truncated: team notes" in capped["text"]
    assert len(capped["text"]) < len(ctx["text"]) + fleet.TEAM_CONTEXT_CAP + 500
    hits = fleet.search(ea, "cormorant survey boats")["results"]
    team = [h for h in hits if h["source"] == "team"]
    assert team and team[0]["snippet"].startswith("The cormorant survey") and team[0]["agent"] == a
    mcp = tools.memory_search(ea, "cormorant survey boats", corpus="fleet")
    assert any(r["source"] == "team" and "cormorant" in r["snippet"] for r in mcp["results"])
    assert note["id"]


# ----------------------------------------------------------------------------- more than one server


@pytest.mark.slow
def test_citus_statements_are_refused_clearly_on_a_plain_server_and_every_key_starts_with_the_agent(db, tmp_path):
    from clawmem.engine.fleet import client as fleet

    fleet.grant(db, "someone", [])  # the owner makes the tables
    cfg = write(tmp_path / "c.toml", f'provider = "none"\n[fleet]\nurl = "{db}"\n')
    r = run_cli("fleet", "distribute", "--config", str(cfg), "--workspace", str(tmp_path))
    assert r.returncode == 3 and r.stderr.startswith("clawmem: this PostgreSQL has no Citus")
    assert "one server needs nothing" in r.stderr and len(r.stderr.splitlines()) == 1
    # what Citus needs of a distributed table: every primary key and unique index starts with
    # the distribution column. Every clawmem table is distributed by agent, but the roles table
    # (a reference table, copied to every node)
    distributed = {stmt.split("'")[1] for stmt in fleet.CITUS_STATEMENTS if "create_distributed_table" in stmt}
    tables = {t for (t,) in rows(db, "select tablename from pg_tables where tablename like 'clawmem\\_%'")}
    assert tables == distributed | {"clawmem_roles"}
    keys = rows(db, "select c.relname, i.indexrelid::regclass::text, a.attname from pg_index i join pg_class c on c.oid = i.indrelid"
                    " join pg_attribute a on a.attrelid = c.oid and a.attnum = i.indkey[0]"
                    " where c.relname = any(%s) and (i.indisunique or i.indisprimary)", (sorted(distributed),))
    assert {t for t, *_ in keys} == distributed  # each has a key
    assert [(t, index) for t, index, first in keys if first != "agent"] == []


def test_the_fleet_drivers_warnings_go_to_the_log_file_not_stderr(tmp_path):
    """Issue 44: a psycopg warning (a pipeline ended by an error) reached MCP's stderr through
    the root logger, which the MCP SDK sends there; it belongs in clawmem's log file."""
    import logging

    from clawmem.engine import logs

    path = logs.setup(tmp_path / "clawmem.log")
    seen: list = []
    catcher = logging.Handler()
    catcher.emit = seen.append
    logging.getLogger().addHandler(catcher)
    driver = logging.getLogger("psycopg")
    try:
        driver.warning("error ignored exiting <psycopg.Pipeline>: canceling statement due to lock timeout")
    finally:
        logging.getLogger().removeHandler(catcher)
        for h in list(driver.handlers) + list(logging.getLogger("clawmem").handlers):
            h.close()
        driver.handlers.clear()
        driver.propagate = True
        logging.getLogger("clawmem").handlers.clear()
    assert seen == [] and "error ignored exiting" in path.read_text()
