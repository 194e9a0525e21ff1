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
    assert all(g["newPassword"] and g["url"].startswith(f"postgresql://clawmem_{g['agent']}:") for g in grants.values())
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
    with psycopg.connect(grants[b]["url"]) as conn:
        assert conn.execute("delete from clawmem_chunks where agent = %s", (a,)).rowcount == 0
        assert conn.execute("update clawmem_terms set chunks = 0 where agent = %s", (a,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor another agent's word counts
            conn.execute("insert into clawmem_terms values (%s, 'forged', 1)", (a,))
    with psycopg.connect(grants[b]["url"]) as conn, pytest.raises(psycopg.errors.RaiseException):
        conn.execute("select clawmem_vector_index('not/its-model@3', 3)")  # no indexes for models it does not push
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
    assert grant.returncode == 0 and f"clawmem_r{uid}" in grant.stdout and "[fleet]" in grant.stdout
    again = run_cli("fleet", "grant", f"r{uid}", *base)
    assert "password unchanged" in again.stdout and f"postgresql://clawmem_r{uid}:<its current password>@" in again.stdout
    usage = run_cli("search", "--agents", "a", "heron", *base)
    assert usage.returncode == 2 and "--fleet" in usage.stderr
    usage = run_cli("search", "--fleet", "--after", "2026-01-01", "heron", *base)
    assert usage.returncode == 2 and "--after" in usage.stderr
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
    from clawmem.engine.index.watcher import Syncer

    write(workspace / "memory" / "2026-04-01.md", "# 2026-04-01\n\nThe auk survey starts in May.\n")
    eng = make_engine({"agentId": f"w{uid}", "fleet.url": db, "fleet.publish": True, "sync.watchDebounceMs": 100}, persistent=True)
    syncer = Syncer(eng)
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
