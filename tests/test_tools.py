"""The agent tools as Python functions (engine/agent/tools.py): OpenClaw's payloads field by field
(study §10), failures as data, and the writes (memory_append, memory_remember) that never
lose a byte somebody else wrote."""

import datetime as dt
import os
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from clawmem.engine.files import conflicts as files
from clawmem.engine.agent import tools
from clawmem.engine.embeddings import remote
from helpers import write

# The study's example payloads (openclaw-memory-study.md §10.1, §10.2), copied here: tests
# never read ../shared. The citation has the one shape every front uses (the CLI's, the spec's):
# `Source: path#L3-L9`, and the snippet ends with it.
STUDY_SEARCH = {
    "results": [{"path": "memory/2026-02-10.md", "startLine": 3, "endLine": 9, "score": 0.71,
                 "snippet": "…\n\nSource: memory/2026-02-10.md#L3-L9", "source": "memory",
                 "citation": "Source: memory/2026-02-10.md#L3-L9", "corpus": "memory"}],
    "provider": "openai", "model": "text-embedding-3-small",
    "citations": "auto",
    "debug": {"backend": "builtin", "effectiveMode": "n/a", "searchMs": 12, "hits": 3},
}
STUDY_SEARCH_FAILURE_KEYS = {"results", "disabled", "unavailable", "error", "warning", "action", "debug"}
STUDY_GET = {"text": "…", "path": "memory/2026-02-10.md"}
STUDY_GET_FAILURE = {"path": "…", "text": "", "disabled": True, "error": "…"}

LOG = "# 2026-02-10\n\n## Billing\n- Decided Postgres for billing.\n- Owner: Dana.\n- Budget fixed at 4k.\n- Cutover in March.\n- Rollback plan agreed.\n- Review on Friday.\n"


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    monkeypatch.setattr(remote, "RETRY", remote.Retry(base=0.005))


@pytest.fixture
def notes(workspace):
    write(workspace / "memory" / "2026-02-10.md", LOG)
    write(workspace / "MEMORY.md", "# Memory\n\nThe cat likes fish.\n")
    return workspace


def openai(server, **more):
    return {"provider": "openai", "remote.baseUrl": server.url + "/v1", "remote.apiKey": server.api_key, **more}


# ----------------------------------------------------------------------------- memory_search


def test_search_payload_matches_the_study_field_by_field(notes, make_engine, embed_server):
    eng = make_engine(openai(embed_server))
    eng.run_index()
    got = tools.memory_search(eng, "  Postgres billing  ")
    assert set(STUDY_SEARCH) <= set(got)
    assert "fallback" not in got  # undefined in OpenClaw when no fallback serves: left out
    assert got["provider"] == STUDY_SEARCH["provider"] and got["model"] == STUDY_SEARCH["model"]
    assert got["citations"] == "auto"
    assert set(got["debug"]) == set(STUDY_SEARCH["debug"]) and got["debug"]["hits"] >= 1
    want = STUDY_SEARCH["results"][0]
    r = got["results"][0]
    assert set(r) == set(want) | {"band"}  # ours: high / medium / low, from the hit's own evidence
    assert r["band"] in ("high", "medium", "low")
    for key, value in want.items():
        assert type(r[key]) is type(value), key
    assert r["path"] == want["path"] and r["source"] == "memory" and r["corpus"] == "memory"
    assert r["citation"] == f"Source: memory/2026-02-10.md#L{r['startLine']}-L{r['endLine']}"
    assert r["snippet"].endswith("\n\n" + r["citation"]) and "Postgres" in r["snippet"]
    # ours beside OpenClaw's
    assert got["mode"] == "hybrid" and got["stale"] is False and got["dateRange"] is None
    assert set(got["hidden"]) == {"count", "bestScore"}


def test_one_line_citation_and_citations_off(workspace, make_engine):
    write(workspace / "MEMORY.md", "- Deploy key id a828e60 lives in the vault.")  # one line: no final newline
    eng = make_engine()
    eng.run_index()
    r = tools.memory_search(eng, "a828e60")["results"][0]
    assert r["citation"] == "Source: MEMORY.md#L1-L1" and r["snippet"].endswith("\n\nSource: MEMORY.md#L1-L1")
    off = make_engine({"citations": "off"})
    got = tools.memory_search(off, "a828e60")
    assert got["citations"] == "off"
    r = got["results"][0]
    assert "citation" not in r and "Source:" not in r["snippet"]
    assert got["mode"] == "keyword" and got["reason"]  # keyword-only by choice says so, no warning
    assert "warning" not in got


def test_numbers_as_strings_snake_case_and_bad_values(notes, make_engine):
    eng = make_engine()
    eng.run_index()
    write(notes / "memory" / "2026-02-11.md", "# 2026-02-11\n\nPostgres tuning notes.\n")
    write(notes / "memory" / "2026-02-12.md", "# 2026-02-12\n\nPostgres vacuum notes.\n")
    eng.run_index()
    assert len(tools.memory_search(eng, "Postgres", maxResults="1")["results"]) == 1
    assert len(tools.memory_search(eng, "Postgres", max_results=2, min_score="0")["results"]) == 2
    bad = tools.memory_search(eng, "Postgres", maxResults="many")
    assert bad == {"results": [], "error": "maxResults: expected a number, got 'many'"}
    assert tools.memory_search(eng, "Postgres", minScore=3)["error"] == "minScore: expected a number from 0 to 1, got 3.0"
    assert tools.memory_search(eng, "Postgres", maxResults=0)["error"] == "maxResults: expected an integer from 1 to 200, got 0"
    assert tools.memory_search(eng, "   ")["error"].startswith("query required")
    res = tools.memory_search(eng, "Postgres notes", minScore=0)["results"]
    engine_order = [(r["path"], r["startLine"]) for r in eng.search("Postgres notes", min_score=0)["results"]]
    assert len(res) > 1 and [(r["path"], r["startLine"]) for r in res] == engine_order


@pytest.mark.parametrize("message, quota", [
    ("openai: 429 Rate limit reached (gave up after 4 attempts)", True),
    ("HTTP 429.", True),
    ("insufficient_quota", True),
    ("cannot reach http://127.0.0.1:42983/v1", False),  # a port
    ("no index yet at /tmp/pytest-429/ws/main.sqlite", False),  # a path (this test failed CI at pytest-429)
    ("voyage: 4290 tokens is too many", False),
])
def test_a_quota_is_a_status_not_digits_of_a_port_or_path(message, quota):
    assert tools._is_quota(message) is quota


def test_an_index_message_is_about_the_index_whatever_its_path_holds():
    got = tools._unavailable("no index yet at /srv/quota-429/main.sqlite: run `clawmem index`")
    assert got["warning"] == tools.INDEX_WARNING and got["action"] == tools.INDEX_ACTION


def test_missing_index_is_an_unavailable_payload(notes, make_engine):
    got = tools.memory_search(make_engine(), "Postgres")
    assert set(got) == STUDY_SEARCH_FAILURE_KEYS
    assert got["results"] == [] and got["disabled"] is True and got["unavailable"] is True
    assert "no index yet" in got["error"] and "clawmem index" in got["action"]
    assert got["warning"] == tools.INDEX_WARNING
    assert got["debug"] == {"warning": got["warning"], "action": got["action"], "error": got["error"]}


def test_corrupt_index_is_an_unavailable_payload(notes, make_engine):
    eng = make_engine()
    eng.run_index()
    eng.close()
    for suffix in ("", "-wal", "-shm"):
        p = eng.index_path.with_name(eng.index_path.name + suffix)
        if p.exists():
            p.unlink()
    eng.index_path.write_bytes(b"this is not a database" * 100)
    got = tools.memory_search(make_engine(), "Postgres")
    assert set(got) == STUDY_SEARCH_FAILURE_KEYS and got["disabled"] is True
    assert str(eng.index_path) in got["error"]


def test_provider_down_still_answers_with_keywords_and_says_why(notes, make_engine, embed_server):
    eng = make_engine(openai(embed_server))
    eng.run_index()
    embed_server.close()  # the provider goes down after indexing: its port is closed
    got = tools.memory_search(make_engine(openai(embed_server)), "Postgres")
    assert got["mode"] == "keyword" and got["results"][0]["path"] == "memory/2026-02-10.md"
    assert got["fallback"]["from"] == "openai" and "query embedding failed" in got["fallback"]["reason"]
    assert got["warning"].startswith(tools.DEGRADED_WARNING) and got["action"] == tools.ERROR_ACTION
    assert "disabled" not in got


def test_quota_exhausted_gets_openclaws_quota_action(notes, make_engine, embed_server):
    eng = make_engine(openai(embed_server))
    eng.run_index()
    embed_server.always = 429
    got = tools.memory_search(make_engine(openai(embed_server)), "Postgres")
    assert got["mode"] == "keyword" and got["fallback"]["from"] == "openai"
    assert got["action"] == tools.QUOTA_ACTION and "429" in got["warning"]


# ----------------------------------------------------------------------------- memory_get


def test_get_payloads(notes, make_engine):
    eng = make_engine()
    got = tools.memory_get(eng, "memory/2026-02-10.md", from_="4", lines=2)
    assert set(got) == set(STUDY_GET)
    assert got == {"path": "memory/2026-02-10.md", "text": "- Decided Postgres for billing.\n- Owner: Dana."}
    assert tools.memory_get(eng, "memory/2026-02-10.md", lines=0)["text"] == LOG  # lines 0: to the end
    # from 0 is refused as the CLI's --from 0 is (it once read as absent, silently; issue 43)
    assert tools.memory_get(eng, "memory/2026-02-10.md", from_=0)["error"].startswith("from: expected a whole number from 1")
    assert tools.memory_get(eng, "memory/2099-01-01.md") == {"path": "memory/2099-01-01.md", "text": ""}
    for bad in ("../outside.md", "/etc/passwd", "notes.txt", ""):
        got = tools.memory_get(eng, bad)
        assert set(got) == set(STUDY_GET_FAILURE) and got["text"] == "" and got["disabled"] is True, bad
        assert got["path"] == bad and got["error"]
    assert "outside the workspace" in tools.memory_get(eng, "../outside.md")["error"]
    assert tools.memory_get(eng, "MEMORY.md", lines="x")["error"] == "lines: expected a number, got 'x'"


# ----------------------------------------------------------------------------- writes


def test_append_creates_todays_log_and_is_found_at_once(workspace, make_engine):
    eng = make_engine()
    now = dt.datetime(2026, 3, 4, 9, 30)
    got = tools.memory_append(eng, "Shipped the zebrafish importer.", heading="release", now=now)
    assert got == {"path": "memory/2026-03-04.md", "startLine": 3, "endLine": 5,
                   "citation": "Source: memory/2026-03-04.md#L3-L5", "indexed": True}
    # a blank line under the heading, as the app's own entries and Markdown written by hand
    assert (workspace / "memory" / "2026-03-04.md").read_text() == "# 2026-03-04\n\n## 09:30 release\n\nShipped the zebrafish importer.\n"
    got = tools.memory_append(eng, "One more line\nand another", now=now.replace(minute=45))
    assert got["startLine"] == 7 and got["endLine"] == 10
    assert (workspace / "memory" / "2026-03-04.md").read_text().endswith("\n\n## 09:45\n\nOne more line\nand another\n")
    hit = tools.memory_search(eng, "zebrafish")["results"][0]
    assert hit["path"] == "memory/2026-03-04.md" and hit["startLine"] <= 4


def test_remember_adds_a_bullet_under_its_section(notes, make_engine):
    eng = make_engine()
    got = tools.memory_remember(eng, "Prefers oat milk.", section="Preferences")
    assert got["path"] == "MEMORY.md" and got["citation"] == "Source: MEMORY.md#L6-L6" and got["indexed"] is True
    got = tools.memory_remember(eng, "Dislikes cilantro.\nSince 2019.", section="preferences")
    assert got["citation"] == "Source: MEMORY.md#L7-L8"
    tools.memory_remember(eng, "Uses a quokka as avatar.")
    assert (notes / "MEMORY.md").read_text() == (
        "# Memory\n\nThe cat likes fish.\n\n## Preferences\n- Prefers oat milk.\n- Dislikes cilantro.\n  Since 2019.\n"
        "\n## Notes\n- Uses a quokka as avatar.\n"
    )
    hit = tools.memory_search(eng, "quokka")["results"][0]
    assert hit["path"] == "MEMORY.md" and hit["startLine"] <= 11 <= hit["endLine"]


def test_remember_the_same_fact_twice_writes_one_bullet(notes, make_engine):
    eng = make_engine()
    first = tools.memory_remember(eng, "Prefers oat milk.", section="Preferences")
    before = (notes / "MEMORY.md").read_bytes()
    again = tools.memory_remember(eng, "  Prefers oat milk.\n", section="preferences")  # a retry, as an agent sends it
    assert (notes / "MEMORY.md").read_bytes() == before
    assert again["citation"] == first["citation"] and again["unchanged"] is True
    # the same words in another section, or a longer bullet that starts with them, are other facts
    tools.memory_remember(eng, "Prefers oat milk.")
    tools.memory_remember(eng, "Dislikes cilantro.\nSince 2019.", section="Preferences")
    assert tools.memory_remember(eng, "Dislikes cilantro.", section="Preferences").get("unchanged") is None
    text = (notes / "MEMORY.md").read_text()
    assert text.count("- Prefers oat milk.") == 2 and text.count("- Dislikes cilantro.") == 2


def test_remember_uses_an_existing_lowercase_memory_md(workspace, make_engine):
    write(workspace / "memory.md", "## Notes\n- old\n\n## Later\n- x\n")
    got = tools.memory_remember(make_engine(), "new")
    assert got["path"] == "memory.md" and not (workspace / "MEMORY.md").exists()
    assert (workspace / "memory.md").read_text() == "## Notes\n- old\n- new\n\n## Later\n- x\n"


def test_writes_refused_when_turned_off_or_empty(workspace, make_engine):
    off = make_engine({"mcp.write": False})
    for call in (lambda: tools.memory_append(off, "x"), lambda: tools.memory_remember(off, "x")):
        got = call()
        assert got["disabled"] is True and "mcp.write = false" in got["error"]
    eng = make_engine()
    assert tools.memory_append(eng, "  \n")["error"].startswith("text required")
    assert tools.memory_remember(eng, "")["error"].startswith("text required")
    assert not (workspace / "MEMORY.md").exists() and list((workspace / "memory").iterdir()) == []


def test_remember_refuses_a_file_that_is_not_utf8(workspace, make_engine):
    (workspace / "MEMORY.md").write_bytes(b"# Memory\n\xff\xfe broken\n")
    got = tools.memory_remember(make_engine(), "fact")
    assert "not valid UTF-8" in got["error"]
    assert (workspace / "MEMORY.md").read_bytes() == b"# Memory\n\xff\xfe broken\n"


def test_writes_never_go_through_symlinks(workspace, make_engine, tmp_path):
    elsewhere = write(tmp_path / "elsewhere.md", "# not in the workspace\n")
    (workspace / "MEMORY.md").symlink_to(elsewhere)
    now = dt.datetime(2026, 3, 4, 9, 30)
    (workspace / "memory" / "2026-03-04.md").symlink_to(elsewhere)
    eng = make_engine()
    assert "is a symlink" in tools.memory_remember(eng, "fact")["error"]
    assert "is a symlink" in tools.memory_append(eng, "entry", now=now)["error"]
    assert elsewhere.read_text() == "# not in the workspace\n" and (workspace / "MEMORY.md").is_symlink()


# ----------------------------------------------------------------------------- no byte lost


def external_append(path, text: str) -> None:
    """What another program does: open, append, close (as `echo >> file`)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def test_append_entry_keeps_a_concurrent_writers_bytes(tmp_path):
    """The app's Ctrl-N (files.append_entry) while another program appends to the same log:
    a read-then-rename would drop the other program's lines."""
    now = dt.datetime(2026, 3, 4, 9, 30)
    log = files.daily_log_path(tmp_path, now.date())
    log.parent.mkdir(parents=True)
    stop = threading.Event()
    theirs: list[str] = []

    def agent():
        i = 0
        while not stop.is_set():
            line = f"agent line {i}\n"
            external_append(log, line)
            theirs.append(line)
            i += 1
            time.sleep(0.001)  # a busy program, not a firehose: the log must stay under the size cap

    t = threading.Thread(target=agent)
    t.start()
    try:
        for i in range(60):
            files.append_entry(tmp_path, f"user entry {i}", now)
    finally:
        stop.set()
        t.join()
    text = log.read_text()
    assert all(line in text for line in theirs)
    assert all(f"user entry {i}\n" in text for i in range(60))


ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.text("abc xyz\n", min_size=1, max_size=12)),
        st.tuples(st.just("remember"), st.text("abc xyz\n", min_size=1, max_size=12), st.sampled_from(["Notes", "People", None]), st.booleans()),
        st.tuples(st.just("external"), st.sampled_from(["log", "memory"])),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=ops)
def test_interleaved_writes_lose_no_byte(tmp_path_factory, make_engine, monkeypatch, steps):
    """memory_append and memory_remember interleaved with another program's appends (at the
    worst moment for remember: after it read MEMORY.md, before it renames), while a thread
    keeps appending to today's log: after every step, everything anybody wrote is there."""
    ws = tmp_path_factory.mktemp("ws")
    (ws / "memory").mkdir()
    eng = make_engine(ws=ws)
    now = dt.datetime.now()
    log = files.daily_log_path(ws, now.date())
    mem = ws / "MEMORY.md"
    expected = {log: [], mem: []}  # marker lines each file must keep
    counter = iter(range(10**6))

    def mark(kind: str) -> str:
        return f"{kind}-{next(counter)}-marker"

    interfere: list[str] = []
    real_add_bullet = tools.add_bullet

    def add_bullet_then_someone_writes(text, section, fact):
        if interfere:
            line = interfere.pop()
            external_append(mem, line + "\n")  # after remember read the file
            expected[mem].append(line)
        return real_add_bullet(text, section, fact)

    monkeypatch.setattr(tools, "add_bullet", add_bullet_then_someone_writes)
    stop = threading.Event()
    lock = threading.Lock()

    def agent():
        while not stop.is_set():
            line = mark("thread")
            with lock:
                external_append(log, line + "\n")
                expected[log].append(line)
            stop.wait(0.002)

    t = threading.Thread(target=agent)
    t.start()
    try:
        for step in steps:
            if step[0] == "append":
                m = mark("append")
                got = tools.memory_append(eng, f"{step[1]} {m}")
                assert got["path"] == log.relative_to(ws).as_posix(), got
                with lock:
                    expected[log].append(m)
            elif step[0] == "remember":
                m = mark("remember")
                if step[3]:
                    interfere.append(mark("external-mem"))
                got = tools.memory_remember(eng, f"{step[1]} {m}", section=step[2])
                assert "error" not in got, got
                expected[mem].append(m)
                assert m in mem.read_text().splitlines()[got["endLine"] - 1] or m in "\n".join(
                    mem.read_text().splitlines()[got["startLine"] - 1 : got["endLine"]])
            else:
                m = mark("external")
                target = log if step[1] == "log" else mem
                with lock:
                    external_append(target, m + "\n")
                    expected[target].append(m)
            with lock:
                for path, marks in expected.items():
                    text = path.read_text() if path.exists() else ""
                    for m in marks:
                        assert text.count(m) == 1, (path.name, m)
    finally:
        stop.set()
        t.join()


def test_fleet_search_without_a_fleet_says_so_not_a_provider_error(notes, make_engine):
    # no [fleet] url, and one where nothing listens: the embedding provider is fine either way
    for eng in (make_engine(), make_engine({"fleet.url": "postgresql://clawmem_x:pw@127.0.0.1:1/clawmem"})):
        eng.run_index()
        got = tools.memory_search(eng, "Postgres billing", corpus="fleet")
        assert got["results"] == [] and got["unavailable"] is True and got["corpus"] == "fleet"
        assert "fleet" in got["error"] and "pw@" not in got["error"]
        said = got["warning"] + got["action"] + str(got["debug"])
        assert "embedding" not in said and "provider" not in said
        assert got["warning"] == tools.FLEET_WARNING and 'without corpus "fleet"' in got["action"]
        assert tools.memory_search(eng, "Postgres billing")["results"]  # its own memory still answers
