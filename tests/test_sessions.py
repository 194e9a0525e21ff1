"""Session transcripts (SPEC §1, §6; study §3): parsing, backfill, citations, memory_get,
delta thresholds, archives, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawmem.engine import events as ev
from clawmem.engine.files.sessions import parse_transcript, redact
from clawmem.engine.index.store import Store
from helpers import run_cli, write

GOLDEN = [
    {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-02-10T10:00:00.000Z", "cwd": "/home/u"},
    {"type": "message", "id": "a1", "parentId": None,
     "message": {"role": "user", "content": [{"type": "text", "text": "Hello\n\n  there   friend"}], "timestamp": 1770717601000}},
    {"type": "message", "id": "a2", "parentId": "a1",
     "message": {"role": "assistant", "content": [
         {"type": "thinking", "thinking": "they greet me"},
         {"type": "text", "text": "Hi! My key is sk-abcdefghijklmnopqrstuvwxyz"},
         {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "x"}}]}},
    {"type": "message", "id": "a3", "parentId": "a2",
     "message": {"role": "toolResult", "toolCallId": "t1", "content": [{"type": "text", "text": "tool output"}]}},
    "",
    "not json",
    {"type": "message", "id": "a4", "parentId": "a3", "timestamp": 1770717700,
     "message": {"role": "user", "content": "plain string content"}},
]


def jsonl(entries) -> str:
    return "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in entries)


def msg(role: str, text: str, ts=None) -> dict:
    m = {"role": role, "content": [{"type": "text", "text": text}]}
    if ts is not None:
        m["timestamp"] = ts
    return {"type": "message", "message": m}


@pytest.fixture
def sessions_dir(tmp_path, monkeypatch) -> Path:
    state = tmp_path / "openclaw"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    d = state / "agents" / "main" / "sessions"
    d.mkdir(parents=True)
    return d


@pytest.fixture
def session_engine(make_engine, sessions_dir):
    def make(**more):
        return make_engine({"sources": ["memory", "sessions"], **more})

    return make


def finished(events) -> ev.JobFinished:
    (f,) = [e for e in events if isinstance(e, ev.JobFinished)]
    return f


def hit_paths(eng, query: str) -> list[str]:
    return [r["path"] for r in eng.search(query, stale_check=False)["results"]]


# ----------------------------------------------------------------------------- parsing


def test_golden_example_from_the_study():
    tr = parse_transcript(jsonl(GOLDEN).encode())
    assert tr.content == "User: Hello there friend\nAssistant: Hi! My key is [OpenAI-style Key …wxyz]\nUser: plain string content"
    assert tr.line_map == [2, 3, 7]
    assert tr.timestamps_ms == [1770717601000, 0, 1770717700000]
    assert redact("sk-abcdefghijklmnopqrstuvwxyz") == "[OpenAI-style Key …wxyz]"  # the kind, the last 4 at most


def test_malformed_lines_are_skipped_and_line_numbers_kept():
    lines = [
        '{"type": "message", "message": {"role": "user"',  # cut short
        "[1, 2, 3]",
        '{"type": "message", "message": "just a string"}',
        json.dumps({"type": "message", "message": {"role": "system", "content": "system prompt"}}),
        json.dumps({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": 5}]}}),
        json.dumps({"type": "message", "message": {"role": "user", "content": None}}),
        json.dumps({"type": "message", "message": {"role": "user", "content": "   \n  "}}),
        json.dumps({"type": "custom", "customType": "x", "data": {"text": "not a message"}}),
        json.dumps({"type": "message", "message": {"role": "assistant", "content": [{"type": "image", "data": "AAAA"}, {"type": "text", "text": "kept one"}]}}),
        '{"type": "message", "timestamp": NaN, "message": {"role": "user", "content": "nan time", "timestamp": true}}',
        json.dumps({"type": "message", "timestamp": "2026-02-10T10:00:00Z", "message": {"role": "user", "content": "iso time"}}),
        json.dumps({"type": "message", "message": {"role": "user", "content": "garbage time", "timestamp": "yesterday-ish"}}),
    ]
    tr = parse_transcript(("\n".join(lines) + "\n").encode())
    assert tr.lines == ["Assistant: kept one", "User: nan time", "User: iso time", "User: garbage time"]
    assert tr.line_map == [9, 10, 11, 12]
    assert tr.timestamps_ms == [0, 0, 1770717600000, 0]


def test_redaction_of_the_usual_secrets():
    text = redact("OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234 and Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345 "
                  'and {"apiKey": "secretvalue123456789"} and ghp_abcdefghijklmnopqrstuvwxyz0123456789 --token hunter2hunter2')
    for secret in ("sk-proj-abcdefghijklmnop1234", "abcdefghijklmnopqrstuvwxyz012345", "secretvalue123456789",
                   "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "hunter2hunter2"):
        assert secret not in text
    pem = redact("-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----")
    assert "MIIEabc" not in pem and pem.startswith("-----BEGIN RSA PRIVATE KEY-----")


# ----------------------------------------------------------------------------- indexing


def test_index_backfills_every_transcript_cites_jsonl_lines_and_memory_get_renders_them(workspace, sessions_dir, tmp_path):
    write(sessions_dir / "golden.jsonl", jsonl(GOLDEN))
    write(sessions_dir / "b.jsonl", jsonl([{"type": "session"}, msg("user", "we chose the aubergine recipe", 1770800000000)]))
    write(sessions_dir / "c.jsonl", jsonl([msg("assistant", "the harbour pilot boards at noon")]))
    # archives, backups and the session store are not live transcripts
    write(sessions_dir / "d.jsonl.reset.2026-02-10T10-00-00.000Z", jsonl([msg("user", "archived zeppelin talk")]))
    write(sessions_dir / "e.jsonl.deleted.2026-02-11T10-00-00Z", jsonl([msg("user", "deleted zeppelin talk")]))
    write(sessions_dir / "f.jsonl.bak.2026-02-11T10-00-00Z", jsonl([msg("user", "backup zeppelin talk")]))
    write(sessions_dir / "sessions.json", "{}")
    config = write(tmp_path / "c.toml", 'provider = "none"\nsources = ["memory", "sessions"]\n[sync]\nonSearch = false\n')
    ws = ["--workspace", str(workspace), "--config", str(config)]
    res = run_cli(*ws, "index")
    assert res.returncode == 0, res.stderr
    st = json.loads(run_cli(*ws, "status", "--json").stdout)
    assert st["index"]["bySource"]["sessions"]["files"] == 3
    assert st["freshness"]["dirty"] is False
    assert json.loads(run_cli(*ws, "search", "zeppelin", "--json").stdout)["results"] == []

    res = json.loads(run_cli(*ws, "search", "plain string content", "--json").stdout)
    top = res["results"][0]
    assert top["path"] == "sessions/golden.jsonl" and top["source"] == "sessions"
    assert (top["startLine"], top["endLine"]) == (2, 7)  # JSONL lines, not rendered lines
    assert top["citation"] == "Source: sessions/golden.jsonl#L2-L7"
    assert "sk-abcdefghijklmnopqrstuvwxyz" not in json.dumps(res)
    # memory_get on the hit: the rendered lines of those JSONL lines
    got = json.loads(run_cli(*ws, "get", top["path"], "--from", str(top["startLine"]), "--lines",
                             str(top["endLine"] - top["startLine"] + 1), "--json").stdout)
    assert got == {"path": "sessions/golden.jsonl",
                   "text": "User: Hello there friend\nAssistant: Hi! My key is [OpenAI-style Key …wxyz]\nUser: plain string content"}
    got = run_cli(*ws, "get", "sessions/golden.jsonl", "--from", "3", "--lines", "1")
    assert got.stdout == "Assistant: Hi! My key is [OpenAI-style Key …wxyz]\n"
    assert json.loads(run_cli(*ws, "get", "sessions/missing.jsonl", "--json").stdout) == {"path": "sessions/missing.jsonl", "text": ""}
    assert run_cli(*ws, "get", "sessions/../../x.jsonl").returncode == 2


def test_archives_are_indexed_when_asked(workspace, sessions_dir, session_engine):
    write(sessions_dir / "live.jsonl", jsonl([msg("user", "live zeppelin")]))
    write(sessions_dir / "old.jsonl.reset.2026-02-10T10-00-00.000Z", jsonl([msg("user", "archived zeppelin")]))
    write(sessions_dir / "old.jsonl.bak.2026-02-10T10-00-00.000Z", jsonl([msg("user", "backup zeppelin")]))
    eng = session_engine(**{"sessions.includeArchives": True})
    list(eng.index())
    assert sorted(hit_paths(eng, "zeppelin")) == ["sessions/live.jsonl", "sessions/old.jsonl.reset.2026-02-10T10-00-00.000Z"]


def test_message_timestamps_are_stored_for_decay(workspace, sessions_dir, session_engine):
    write(sessions_dir / "golden.jsonl", jsonl(GOLDEN))
    eng = session_engine()
    list(eng.index())
    st = Store(eng.index_path)
    try:
        rows = st.conn.execute("select start_line, end_line, ts, linemap from chunks where source = 'sessions'").fetchall()
    finally:
        st.close()
    assert rows == [(2, 7, 1770717700.0, "[2, 3, 7]")]


def test_a_transcript_that_is_not_utf8_is_indexed_with_replacements(workspace, sessions_dir, session_engine):
    good = json.dumps(msg("user", "the quokka photo")).encode()
    bad = b'{"type": "message", "message": {"role": "assistant", "content": "caf\xe9 \xff\xfe menu with falafel"}}'
    write(sessions_dir / "x.jsonl", "")
    (sessions_dir / "x.jsonl").write_bytes(good + b"\n" + bad + b"\n")
    eng = session_engine()
    f = finished(list(eng.index()))
    assert f.files_indexed == 1
    assert hit_paths(eng, "falafel") == ["sessions/x.jsonl"] and hit_paths(eng, "quokka") == ["sessions/x.jsonl"]
    assert "\ufffd" in eng.get("sessions/x.jsonl", 2, 1)["text"]


def test_delta_thresholds_truncation_and_rewrites(workspace, sessions_dir, session_engine):
    path = sessions_dir / "live.jsonl"
    write(path, jsonl([msg("user", "first topic was gardening")]))
    eng = session_engine(**{"sync.sessions.deltaMessages": 5, "sync.sessions.deltaBytes": 100000})

    def watch_sync():
        return finished(list(eng.index(backfill_sessions=False, reason="watch")))

    list(eng.index())
    # a few messages: below the delta, a watcher sync leaves it for later, and status says so
    with open(path, "a") as fh:
        fh.write(jsonl([msg("assistant", "tulips need sun"), msg("user", "and roses?")]))
    assert watch_sync().files_indexed == 0
    assert hit_paths(eng, "tulips") == []
    fr = eng.freshness()
    assert fr["dirty"] is True and fr["behind"] == ["sessions/live.jsonl"]
    # enough messages since the last index: indexed
    with open(path, "a") as fh:
        fh.write(jsonl([msg("assistant", f"message {i} about compost") for i in range(3)]))
    assert watch_sync().files_indexed == 1
    assert hit_paths(eng, "tulips") == ["sessions/live.jsonl"]
    assert eng.freshness()["dirty"] is False
    # truncated (a reset): indexed at once, the old text is gone
    path.write_text(jsonl([msg("user", "a fresh start about beekeeping")]))
    assert watch_sync().files_indexed == 1
    assert hit_paths(eng, "tulips") == [] and hit_paths(eng, "beekeeping") == ["sessions/live.jsonl"]
    # rewritten, and a little longer: the indexed part changed, so it is not an append
    path.write_text(jsonl([msg("user", "a fresh start about woodcarving"), msg("assistant", "ok")]))
    assert watch_sync().files_indexed == 1
    assert hit_paths(eng, "beekeeping") == [] and hit_paths(eng, "woodcarving") == ["sessions/live.jsonl"]
    # rewritten in place, same size
    text = path.read_text().replace("woodcarving", "woodturning")
    path.write_text(text)
    assert watch_sync().files_indexed == 1
    assert hit_paths(eng, "woodturning") == ["sessions/live.jsonl"]
    # the bytes threshold
    eng2 = session_engine(**{"sync.sessions.deltaMessages": 1000, "sync.sessions.deltaBytes": 300})
    with open(path, "a") as fh:
        fh.write(jsonl([msg("user", "short")]))
    assert finished(list(eng2.index(backfill_sessions=False))).files_indexed == 0
    with open(path, "a") as fh:
        fh.write(jsonl([msg("user", "long " * 80 + "kingfisher")]))
    assert finished(list(eng2.index(backfill_sessions=False))).files_indexed == 1
    assert hit_paths(eng2, "kingfisher") == ["sessions/live.jsonl"]
    # a threshold of 0 means any growth counts
    eng3 = session_engine(**{"sync.sessions.deltaMessages": 0})
    with open(path, "a") as fh:
        fh.write(jsonl([msg("user", "one more: ptarmigan")]))
    assert finished(list(eng3.index(backfill_sessions=False))).files_indexed == 1
    # `clawmem index` (backfill) always takes what is there
    with open(path, "a") as fh:
        fh.write(jsonl([msg("user", "the last word: nightjar")]))
    assert finished(list(eng.index())).files_indexed == 1
    assert hit_paths(eng, "nightjar") == ["sessions/live.jsonl"]


def test_transcripts_truncated_or_rewritten_under_the_watcher(workspace, sessions_dir, session_engine):
    from clawmem.engine.index.watcher import Syncer

    path = sessions_dir / "live.jsonl"
    write(path, jsonl([msg("user", "talk about the lighthouse")]))
    eng = session_engine(**{"sync.watchDebounceMs": 100})
    events: list = []
    syncer = Syncer(eng, events.append)
    syncer.start()
    try:
        def wait(cond, what):
            import time

            end = time.monotonic() + 20
            while time.monotonic() < end:
                if cond():
                    return
                time.sleep(0.05)
            raise AssertionError(f"timed out waiting for {what}")

        wait(lambda: hit_paths(eng, "lighthouse") == ["sessions/live.jsonl"], "the start sync")
        path.write_text(jsonl([msg("user", "now about the estuary")]))  # shorter: truncated
        wait(lambda: hit_paths(eng, "estuary") == ["sessions/live.jsonl"], "a truncated transcript")
        assert hit_paths(eng, "lighthouse") == []
        tmp = sessions_dir / ".live.jsonl.tmp"
        tmp.write_text(jsonl([msg("user", "rewritten about the saltmarsh"), msg("assistant", "noted")]))
        tmp.replace(path)  # rewritten by rename, longer than before
        wait(lambda: hit_paths(eng, "saltmarsh") == ["sessions/live.jsonl"], "a rewritten transcript")
        write(sessions_dir / "second.jsonl", jsonl([msg("user", "a new session about ospreys")]))
        wait(lambda: hit_paths(eng, "ospreys") == ["sessions/second.jsonl"], "a new transcript")
        assert "sessions/second.jsonl" in {p for e in events if isinstance(e, ev.FilesChanged) for p in e.paths}
    finally:
        syncer.stop()


def test_session_hits_decay_by_their_message_time(workspace, sessions_dir, session_engine):
    write(sessions_dir / "golden.jsonl", jsonl(GOLDEN))
    eng = session_engine(**{"query.hybrid.temporalDecay.enabled": True})
    list(eng.index())
    res = eng.search("plain string content", now="2026-03-12", explain=True, stale_check=False)
    top = res["results"][0]
    assert top["path"] == "sessions/golden.jsonl" and top["date"] == "2026-02-10"
    decay = top["explain"]["decay"]
    assert decay["basis"] == "message time" and decay["date"] == "2026-02-10"
    assert 0.45 < decay["factor"] < 0.55  # one half-life (30 days) after the last message


def test_a_config_that_indexes_no_sessions_is_not_stale_over_an_index_that_has_them(workspace, sessions_dir, make_engine):
    # one index, two configs: the transcripts the first indexed are not files the second is behind on
    write(sessions_dir / "a.jsonl", jsonl([msg("user", "we talked about the heron census")]))
    write(workspace / "memory" / "2026-01-01.md", "# 2026-01-01\n\nheron census notes\n")
    both = make_engine({"sources": ["memory", "sessions"]})
    both.run_index()
    memory_only = make_engine()
    assert memory_only.index_path == both.index_path
    res = memory_only.search("heron census")
    assert res["stale"] is False and [r["path"] for r in res["results"]] == ["memory/2026-01-01.md"]
    fresh = memory_only.status()["freshness"]
    assert fresh["dirty"] is False and fresh["behind"] == [] and fresh["filesIndexed"] == 1
    # a transcript that is new to a config that indexes sessions is still behind
    write(sessions_dir / "b.jsonl", jsonl([msg("user", "a new heron talk")]))
    assert both.search("heron census")["stale"] is True
