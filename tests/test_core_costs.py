"""Costs that do not grow with the workspace (issue 14), and that the shortcuts stay honest.

A search's freshness check looks at folders, roots and the files changed last, not at every
file; whatever it cannot see, `status` still reports. The tokeniser's fast paths give the
same tokens; the journal's batched commits lose nothing a later run cannot restore.
"""

from __future__ import annotations

import json
import os
import random
import time

import pytest

from clawmem.engine.search import dates
from clawmem.engine import events as ev
from clawmem.engine import text as T
from clawmem.engine.index.chunking import weight
from clawmem.engine.files.journal import Journal
from clawmem.engine.index.store import known_intact
from clawmem.engine.index.watcher import Syncer
from clawmem.engine.files.workspace import dir_stamp
from helpers import run_cli, search_in_fresh_process, wait_for, write


def notes(workspace, n: int) -> None:
    """n dated notes with mtimes in the past, oldest first."""
    for i in range(n):
        p = write(workspace / "memory" / f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}.md", f"# day {i}\n- note {i} about item{i}\n")
        t = time.time_ns() - (n - i) * 60 * 10**9
        os.utime(p, ns=(t, t))
    # the folder too was last changed a while ago (a folder changed in the last clock tick is not
    # trusted, and a loaded machine may index within that tick)
    past = time.time_ns() - 60 * 10**9
    os.utime(workspace / "memory", ns=(past, past))


def finished(events) -> ev.JobFinished:
    return [e for e in events if isinstance(e, ev.JobFinished)][-1]


# ------------------------------------------------------------------ the tokeniser


def _segments_by_character(word: str) -> list[tuple[str, bool]]:
    """The rule the index was built with: maximal runs, each character tested on its own."""
    out, start = [], 0
    for i in range(1, len(word) + 1):
        if i == len(word) or T.is_cjk(word[i]) != T.is_cjk(word[start]):
            out.append((word[start:i], T.is_cjk(word[start])))
            start = i
    return out


def test_fast_tokeniser_gives_the_tokens_of_the_character_rule():
    rng = random.Random(14)
    edges = [chr(c) for lo, hi in T._CJK_RANGES for c in (lo, hi, lo - 1, hi + 1)]
    pool = edges + list("abcXYZ_ 09ßÄéİﬁＡ１\n-.,") + ["서버에서", "成语", "Zahnarzt", "カタカナ"]
    for _ in range(5000):
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 30)))
        expected = []
        for word in T.words(text):
            for seg, cjk in _segments_by_character(word):
                expected.extend(T._grams(seg) if cjk else [seg])
            assert T._segments(word) == _segments_by_character(word), word
        assert T.index_tokens(text) == expected, text
        assert weight(text) == len(text) + 3 * sum(1 for ch in text if T.is_cjk(ch))


def test_cjk_is_found_as_the_regex_finds_it_without_compiling_it():
    """has_cjk and CJK_RE.search (compiled only for a text that holds CJK) answer as the
    character class itself does, at the edges of every range too."""
    import re

    rng = random.Random(33)
    full = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in T._CJK_RANGES) + "]")
    edges = [chr(c) for lo, hi in T._CJK_RANGES for c in (lo, hi, lo - 1, hi + 1)]
    pool = edges + list("abc’—éß 09") + ["서버", "成语", "カタカナ", "\U0002a6d6"]
    for _ in range(5000):
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 12)))
        m, found = full.search(text), T.CJK_RE.search(text)
        assert T.has_cjk(text) == (m is not None), text
        assert (found and found.span()) == (m and m.span()), text


def test_date_phrases_are_found_without_compiling_every_rule(monkeypatch):
    today = dates.dt.date(2026, 11, 23)
    queries = ["billing decision", "the day before yesterday", "yesterday", "what happened today", "this week",
               "last week billing", "previous week", "this month", "last month", "previous month", "this year",
               "last year", "past 3 days", "in the last seven days", "two days ago", "10 days ago",
               "since 2026-05", "since 2026-05-03", "since March", "since may 2025", "in March", "during feb 2026",
               "on 2026-02-10", "what did we plan in june", "notes in berlin", "billing decision in dec", "上周的会议", "昨天", "3月份", "最近7天", "지난주 회의", "어제", "lasagna recipe", "on call"]
    found = {q: dates.extract(q, today) for q in queries}
    monkeypatch.setattr(dates, "_may_have_a_phrase", lambda low: True)  # every rule, every time
    assert found == {q: dates.extract(q, today) for q in queries}
    assert sum(r is not None for _, r in found.values()) >= 25


# ------------------------------------------------------------------ the freshness a search reports


class StatCounter:
    """Counts os.stat calls (each one still the real call)."""

    def __init__(self, monkeypatch):
        self.calls = 0
        real = os.stat

        def counting(*a, **kw):
            self.calls += 1
            return real(*a, **kw)

        monkeypatch.setattr(os, "stat", counting)


def test_a_search_does_not_stat_every_file(workspace, make_engine, monkeypatch):
    notes(workspace, 600)
    eng = make_engine()
    list(eng.index())
    eng.search("item5")  # opens the index
    counter = StatCounter(monkeypatch)
    res = eng.search("item5")
    assert res["stale"] is False and res["results"]
    assert counter.calls < 60, counter.calls  # the 600 files are not looked at one by one


def test_what_a_search_sees_without_a_watcher_and_status_sees_the_rest(workspace, make_engine):
    notes(workspace, 200)
    write(workspace / "MEMORY.md", "facts\n")
    eng = make_engine()
    list(eng.index())
    assert eng.search("note")["stale"] is False
    # a new file: its folder changed
    write(workspace / "memory" / "2026-01-01.md", "a new day\n")
    assert eng.search("note")["stale"] is True and eng.status()["freshness"]["dirty"] is True
    list(eng.index())
    # an in-place edit of a file changed lately (the newest log, MEMORY.md)
    with open(workspace / "memory" / "2026-01-01.md", "a") as fh:
        fh.write("- more\n")
    assert eng.search("note")["stale"] is True
    list(eng.index())
    with open(workspace / "MEMORY.md", "a") as fh:
        fh.write("- more facts\n")
    assert eng.search("note")["stale"] is True
    list(eng.index())
    # an in-place edit of an old file while nothing watches: a search cannot see it, status does
    old = workspace / "memory" / "2025-01-01.md"
    st = os.stat(old)
    with open(old, "a") as fh:
        fh.write("- appended a year later\n")
    assert eng.search("note")["stale"] is False  # the documented limit (README, Health.seen_behind)
    fr = eng.status()["freshness"]
    assert fr["dirty"] is True and fr["behind"] == ["memory/2025-01-01.md"]
    assert finished(eng.index()).files_indexed == 1  # and the next sync takes it
    assert os.stat(old).st_size > st.st_size and eng.search("note")["stale"] is False


def test_a_folder_changed_in_the_same_clock_tick_is_not_trusted(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    old = time.time_ns() - 3 * 10**9 + 1234  # not a whole second: a nanosecond filesystem
    os.utime(d, ns=(old, old))
    assert dir_stamp(str(d)) == old
    soon = time.time_ns() + 10**9
    os.utime(d, ns=(soon, soon))
    assert dir_stamp(str(d)) is None
    whole = (time.time_ns() // 10**9 - 1) * 10**9  # a whole second, 1 s ago: a coarse filesystem's tick is 2 s
    os.utime(d, ns=(whole, whole))
    assert dir_stamp(str(d)) is None


def test_an_edit_while_nothing_watched_is_found_by_the_next_search_sync(workspace):
    notes(workspace, 50)
    ws = ["--workspace", str(workspace)]
    assert run_cli(*ws, "index").returncode == 0
    with open(workspace / "memory" / "2025-02-22.md", "a") as fh:  # the newest note, edited in place
        fh.write("- a waxwing in the rowan\n")
    status = json.loads(run_cli(*ws, "status", "--json").stdout)["freshness"]
    assert status["dirty"] is True and status["behind"] == ["memory/2025-02-22.md"]
    res = json.loads(run_cli(*ws, "search", "waxwing", "--json").stdout)
    assert res["stale"] is True and res["results"] == []
    wait_for(lambda: json.loads(run_cli(*ws, "status", "--json").stdout)["freshness"]["dirty"] is False,
             what="the background index the search started")
    res = json.loads(run_cli(*ws, "search", "waxwing", "--json").stdout)
    assert res["stale"] is False and res["results"][0]["path"] == "memory/2025-02-22.md"


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_a_running_watcher_tells_searches_elsewhere_about_edits_they_cannot_see(workspace, make_engine):
    notes(workspace, 100)
    eng = make_engine({"sync.watchDebounceMs": 3000}, persistent=True)
    other = make_engine()  # another process's engine: it learns only from the heartbeat
    syncer = Syncer(eng)
    syncer.start()
    try:
        wait_for(lambda: syncer.state.last_sync and other.search("note")["stale"] is False, what="the start sync")
        with open(workspace / "memory" / "2025-01-01.md", "a") as fh:  # old: no search would stat it
            fh.write("- a late entry about a nuthatch\n")
        wait_for(lambda: other.search("note")["stale"] is True, what="the watcher's dirty heartbeat")
        wait_for(lambda: "memory/2025-01-01.md" in [r["path"] for r in other.search("nuthatch", stale_check=False)["results"]],
                 what="the watcher's sync")
        wait_for(lambda: other.search("note")["stale"] is False, what="a clean heartbeat after the sync")
    finally:
        syncer.stop()


# ------------------------------------------------------------------ indexing


def test_one_edited_file_is_the_only_one_read_again(workspace, make_engine):
    notes(workspace, 300)
    eng = make_engine()
    first = finished(eng.index())
    assert first.files_indexed == 300
    assert known_intact(eng.index_path)  # the next writer may skip the whole-file integrity check
    with open(workspace / "memory" / "2025-03-03.md", "a") as fh:
        fh.write("- edited\n")
    done = finished(eng.index())
    assert (done.files_indexed, done.files_unchanged) == (1, 299)
    with open(eng.index_path, "r+b") as fh:  # anyone else writing the file: checked again
        fh.seek(0, 2)
        fh.write(b"\0")
    assert not known_intact(eng.index_path)


def test_a_journal_version_lost_with_a_killed_batch_is_recorded_again(workspace, make_engine):
    notes(workspace, 20)
    eng = make_engine()
    list(eng.index())
    target = workspace / "memory" / "2025-01-05.md"
    with open(target, "a") as fh:
        fh.write("- second version\n")
    list(eng.index())
    j = Journal(eng.cfg)
    try:
        newest = j.latest("memory/2025-01-05.md")
        assert newest is not None and newest.hash is not None
        # what a kill before the batch's commit leaves: the index has the file, the journal only its older version
        j.conn.execute("delete from versions where id = ?", (newest.id,))
        assert j.latest("memory/2025-01-05.md").id < newest.id
    finally:
        j.close()
    list(eng.index())
    j = Journal(eng.cfg)
    try:
        again = j.latest("memory/2025-01-05.md")
        assert again.hash == newest.hash and j.data(again.id) == target.read_bytes()
    finally:
        j.close()


def test_a_keyword_search_imports_only_what_it_needs(workspace):
    """`clawmem search` keyword-only is paid per question by an agent calling the CLI: numpy,
    the embedding clients, dataclasses (and inspect), hashlib's OpenSSL binding, platformdirs,
    the stdlib sqlite3 beside the index's sqlean, tempfile (a search never writes a file), the
    index jobs, status and history parts of the engine, compiling the CJK character class
    (~2.5 ms) for text without CJK or the control-character classes printing and writing use,
    shutil (argparse asking the terminal width for help a search never prints), threading (its
    Lock, RLock and local are _thread's), calendar (for twelve English month names) and the
    text formatter for a --json search each cost milliseconds it does not need, and so does
    every other command's module (the parser loads only the arguments of the command it runs).
    Nor does it need `typing` (annotations are strings; ~3 ms) or tomllib (with `string` and
    typing ~8 ms) for a config file of plain `key = value` lines, which config.simple_toml reads,
    nor the writer lock's module (fcntl) that only status and index jobs ask.
    The search must still answer."""
    write(workspace / "memory" / "2026-01-02.md", "# herons\nthe herons came back\n")
    config = workspace.parent / "kw.toml"
    write(config, 'provider = "none"\n')
    run_cli("--workspace", str(workspace), "--config", str(config), "index", "--quiet")
    heavy = {"numpy", "httpx", "llama_cpp", "dataclasses", "inspect", "hashlib", "platformdirs", "textual", "sqlite_vec",
             "sqlite3", "tempfile", "base64", "shutil", "threading", "calendar", "typing", "tomllib", "string"}
    heavy |= {f"clawmem.tui.cli.{m}" for m in ("fleet", "history", "indexing", "model", "promote", "serve", "session", "status")}
    heavy |= {"clawmem.tui.present", "clawmem.tui.words"}
    heavy |= {f"clawmem.engine.{m}" for m in ("index.health", "index.jobs", "index.lock", "files.history", "files.reading")}
    heavy |= {"clawmem.engine.embeddings", "clawmem.engine.embeddings.providers"}  # provider = none: no provider to plan
    text = "sys.modules['clawmem.engine.text']"
    line = search_in_fresh_process(
        ["--workspace", str(workspace), "--config", str(config), "search", "herons", "--json"],
        f"code, sorted({heavy!r} & set(sys.modules)), 'memory/2026-01-02.md' in out, "
        f"{text}.CJK_RE._compiled is None, {text}._regex.cache_info().currsize", timeout=60)
    assert line == "0 [] True True 0", line


def test_the_chunk_count_a_search_weighs_words_by_follows_the_index(workspace, make_engine):
    """Searches weigh words by how many chunks hold them out of all chunks; the total is counted
    once per index change (a count reads the whole table), and must follow every change."""
    write(workspace / "memory" / "2026-01-01.md", "# one\n\nthe first note\n")
    eng = make_engine()
    list(eng.index())
    reader = eng.reader()
    assert reader.chunk_count() == 1
    write(workspace / "memory" / "2026-01-02.md", "# two\n\nthe second note\n")
    list(eng.index())
    assert eng.reader().chunk_count() == 2 == eng.reader().conn.execute("select count(*) from chunks").fetchone()[0]
    (workspace / "memory" / "2026-01-01.md").unlink()
    list(eng.index())
    assert eng.reader().chunk_count() == 1 == eng.reader().conn.execute("select count(*) from chunks").fetchone()[0]


def test_a_word_count_taken_from_a_vocabulary_range_follows_the_index(workspace, make_engine):
    """word_count reuses the chunk counts a vocabulary range read (words_between) listed rather
    than read the word's postings again: the same number a fresh lookup gives, and a new one
    once the index changes."""
    write(workspace / "memory" / "2026-01-01.md", "# one\n\nthe heron waits\n\nherons fly\n")
    eng = make_engine()
    list(eng.index())
    reader = eng.reader()
    vocab = reader.vocabulary()

    def fresh(term):
        row = reader.conn.execute(f"select doc from {vocab} where term = ?", (term,)).fetchone()
        return row[0] if row else 0

    assert reader.words_between("heron", "heron\uffff") == ["heron", "herons"]
    assert reader.word_count("heron") == fresh("heron") == 1 and reader.word_count("egret") == 0
    write(workspace / "memory" / "2026-01-02.md", "# two\n\na heron again\n")
    list(eng.index())
    reader = eng.reader()
    vocab = reader.vocabulary()
    assert reader.word_count("heron") == fresh("heron") == 2


def test_a_keyword_index_lists_the_workspace_once_and_loads_no_numpy_nor_redaction_patterns(workspace):
    """A no-op `clawmem index` (what a cron job or an agent's hook runs): it used to run a whole
    status afterwards (three more listings of the workspace and a leftovers scan), import numpy
    through sqlite-vec's package and detect_secrets for its one log line; nor does it need
    logging.handlers (socket, pickle) for its log file."""
    import subprocess
    import sys

    for i in range(3):
        write(workspace / "memory" / f"2026-01-0{i + 1}.md", f"# note {i}\nthe herons came back\n")
    config = workspace.parent / "kw.toml"
    write(config, 'provider = "none"\n')
    run_cli("--workspace", str(workspace), "--config", str(config), "index", "--quiet")
    probe = (
        "import sys, io, contextlib\n"
        "from clawmem.engine.files import sources\n"
        "from clawmem.engine.files import workspace as ws_mod\n"
        "calls = []\n"
        "real = ws_mod.list_memory_files\n"
        "def counted(*a, **k):\n"
        "    calls.append(1)\n"
        "    return real(*a, **k)\n"
        "ws_mod.list_memory_files = sources.list_memory_files = counted\n"
        "from clawmem.tui.cli import main\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stderr(err):\n"
        f"    code = main(['--workspace', {str(workspace)!r}, '--config', {str(config)!r}, 'index'])\n"
        "heavy = {'numpy', 'detect_secrets', 'llama_cpp', 'httpx', 'logging.handlers'}\n"
        "print(code, len(calls), sorted(heavy & set(sys.modules)), '3 files, 3 chunks; keyword-only' in err.getvalue())\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert res.stdout.split("\n")[0] == "0 1 [] True", res.stdout + res.stderr


def test_a_no_op_and_a_one_file_index_import_no_typing_hashlib_tempfile_nor_dataclasses(workspace):
    """What `clawmem index --quiet` (an agent's hook, a cron job) runs most: nothing changed, or
    one file edited. Neither needs `typing` (annotations are strings; ~3 ms), hashlib's OpenSSL
    binding (~3 ms: the builtin SHA-256 hashes a few kilobytes as well), tempfile with random,
    shutil, bz2 and lzma (~4 ms: the intact record's temporary file is named without it), nor
    dataclasses with inspect, ast and dis (~7 ms, and ~1 ms for each frozen class made:
    events, chunks, snapshots and journal versions are results.Record), logging (its lines are
    written directly: test_sync_logs), threading (redaction's lock is _thread's) nor difflib
    (the journal diffs only when asked). Both runs must still do their work: the edit is
    indexed and found."""
    for i in range(3):
        write(workspace / "memory" / f"2026-01-0{i + 1}.md", f"# note {i}\nthe herons came back\n")
    config = workspace.parent / "kw.toml"
    write(config, 'provider = "none"\n')
    argv = ["--workspace", str(workspace), "--config", str(config), "index", "--quiet", "--json"]
    run_cli(*argv)
    heavy = {"typing", "hashlib", "_hashlib", "tempfile", "random", "shutil", "bz2", "lzma", "dataclasses", "inspect",
             "logging", "threading", "difflib", "numpy", "detect_secrets"}
    report = f"code, sorted({heavy!r} & set(sys.modules)), json.loads(out)['files'], json.loads(out)['unchanged']"
    assert search_in_fresh_process(argv, report, timeout=60) == "0 [] 0 3"
    write(workspace / "memory" / "2026-01-02.md", "# note 1\nthe herons came back with a gazebo\n")
    assert search_in_fresh_process(argv, report, timeout=60) == "0 [] 1 2"
    out = run_cli("--workspace", str(workspace), "--config", str(config), "search", "gazebo", "--json")
    assert "2026-01-02.md" in out.stdout


def test_the_sha256_that_skips_openssl_gives_hashlibs_digest_past_its_switch():
    """fsutil.sha256_hex hashes with the builtin module for the first megabyte of a process,
    then with hashlib's: the digests are the same on both sides of the switch."""
    import hashlib

    from clawmem.engine.files import fsutil

    rng = random.Random(33)
    sizes = [0, 1, 63, 64, 65, 4096, 300_000, 900_000, 5, 2_000_000, 7]
    for n in sizes:
        data = rng.randbytes(n)
        assert fsutil.sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert fsutil._openssl_sha256 is hashlib.sha256  # the switch happened within this test's bytes


def test_an_atomic_write_never_follows_a_symlink_where_its_temporary_would_go(tmp_path, monkeypatch):
    """atomic_write names its temporary file itself (not tempfile.mkstemp): `.<name>.<8
    random>.tmp`, the shape memfile.leftovers() knows, created owner-only and exclusively, so
    a symlink planted at the name it picks is passed over, its target untouched."""
    import re

    from clawmem.engine.files import fsutil, memfile

    target = tmp_path / "state.json"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    draws = iter([bytes(8), bytes([1] * 8)])
    monkeypatch.setattr(fsutil.os, "urandom", lambda n: next(draws))
    (tmp_path / ".state.json.aaaaaaaa.tmp").symlink_to(outside)
    made = []
    real_replace = os.replace
    monkeypatch.setattr(fsutil.os, "replace", lambda a, b: (made.append(a), real_replace(a, b)))
    fsutil.atomic_write(target, '{"x": 1}', mode=0o600)
    assert made == [str(tmp_path / ".state.json.bbbbbbbb.tmp")]
    assert re.match(memfile._TEMP, os.path.basename(made[0]))
    assert target.read_text() == '{"x": 1}' and (target.stat().st_mode & 0o777) == 0o600
    assert outside.read_text() == "keep" and (tmp_path / ".state.json.aaaaaaaa.tmp").is_symlink()


def test_events_behave_as_the_frozen_dataclasses_they_were_without_loading_dataclasses():
    """Every `clawmem index` makes events; as 13 frozen dataclasses their classes cost ~10 ms to
    make. Written out, they still take fields by position or name with defaults, refuse unknown,
    missing or repeated ones, compare and hash by value, print as `Name(field=…)`, stay read-only
    and copy; and importing them loads no dataclasses."""
    import copy
    import pickle
    import subprocess
    import sys

    import pytest

    done = ev.JobFinished("index", 1, 0, 2, 0, seconds=0.25)
    assert (done.ok, done.message, done.changed) == (True, "", ())
    assert repr(done) == ("JobFinished(job='index', files_indexed=1, files_removed=0, files_unchanged=2, "
                          "chunks_embedded=0, seconds=0.25, ok=True, message='', changed=())")
    assert done == ev.JobFinished("index", 1, 0, 2, 0, 0.25, True, "", ()) and hash(done) == hash(("index", 1, 0, 2, 0, 0.25, True, "", ()))
    assert done != ev.JobFinished("index", 1, 0, 2, 0, 0.5) and done != ev.Warning("x")
    assert copy.copy(done) == done == pickle.loads(pickle.dumps(done))
    assert ev.Warning("w").path is None and ev.Warning("w", path="p").describe() == "warning: p: w"
    started = ev.JobStarted("index", "cli", 3)
    assert abs(started.at - time.time()) < 60 and ev.JobStarted("index", "cli", 3, at=1.0).at == 1.0
    for bad in ((), ("a", "b", "c"), ("a",)):
        with pytest.raises(TypeError):
            ev.Warning(*bad, **({"message": "again"} if bad == ("a",) else {}))
    with pytest.raises(TypeError):
        ev.Warning("a", nope=1)
    with pytest.raises(AttributeError):
        done.ok = False
    with pytest.raises(AttributeError):
        done.extra = 1
    with pytest.raises(AttributeError):
        del done.job
    assert not hasattr(done, "__dict__")
    r = subprocess.run([sys.executable, "-c", "import sys, clawmem.engine.events; print('dataclasses' in sys.modules)"],
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stdout + r.stderr


def test_a_search_with_no_hit_to_recall_never_loads_the_recall_log(workspace):
    """Recall tracking keeps a search's confident daily-log hits: a search with none to keep
    (nothing found here) does not load its module (a regex and its schema, ~0.4 ms), and one
    with a confident daily-log hit does (test_promote checks what it records)."""
    write(workspace / "memory" / "2026-01-02.md", "# herons\nthe herons came back to the pond at dawn\n")
    config = workspace.parent / "kw.toml"
    write(config, 'provider = "none"\n')
    run_cli("--workspace", str(workspace), "--config", str(config), "index", "--quiet")
    argv = ["--workspace", str(workspace), "--config", str(config), "search"]
    line = search_in_fresh_process(argv + ["zeppelin", "--json"],
                                   "code, json.loads(out)['results'], 'clawmem.engine.consolidate.recall' in sys.modules")
    assert line == "0 [] False", line
    line = search_in_fresh_process(argv + ["herons pond", "--json"],
                                   "code, len(json.loads(out)['results']), 'clawmem.engine.consolidate.recall' in sys.modules")
    assert line == "0 1 True", line
