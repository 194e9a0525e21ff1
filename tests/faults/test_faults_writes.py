"""Fault suite, writes: an acknowledged write is on disk, whole, and searchable, and a reply
never claims more. Control characters in tool input, size caps, a writer stopped in the middle
of its write (the state a kill -9 leaves), and the leftovers `status --fix` cleans."""

from __future__ import annotations

import datetime as dt
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from clawmem.engine.index import indexer
from clawmem.engine.agent import tools
from faultkit import run
from helpers import write

NOW = dt.datetime(2026, 3, 4, 9, 30)
LOG = "memory/2026-03-04.md"


def status(ws: Path, *extra: str) -> dict:
    res = run("--workspace", str(ws), "status", "--json", *extra)
    assert "Traceback" not in res.stderr, res.stderr
    return json.loads(res.stdout)


def test_nul_in_appended_text_is_refused_and_nothing_is_written(workspace, make_engine):
    """A NUL once dropped the whole daily log from search while the reply said indexed: true."""
    write(workspace / LOG, "# 2026-03-04\n\n## 09:00\nkiln schedule agreed\n")
    before = (workspace / LOG).read_bytes()
    eng = make_engine()
    for text, heading in (("ferry \x00 timetable", None), ("ok text", "bad\x1b]52;c;aGk=\x07head")):
        res = tools.memory_append(eng, text, heading, now=NOW)
        assert "control character" in res.get("error", ""), res
        assert "indexed" not in res
    assert "control character U+0000" in tools.memory_remember(eng, "fact \x00")["error"]
    assert (workspace / LOG).read_bytes() == before and not (workspace / "MEMORY.md").exists()
    res = tools.memory_append(eng, "tabs\tand\nnewlines are text", now=NOW)
    assert res["indexed"] is True and [r["path"] for r in tools.memory_search(eng, "kiln")["results"]] == [LOG]


def test_a_file_holding_nul_stays_searchable_and_status_names_it(workspace):
    """Another program wrote a NUL: the file is never changed, its words stay searchable, and
    `status` (not only `status --deep`) lists it with the reason."""
    raw = b"# notes\nthe heron nests by the weir\x00 and more\n"
    (workspace / "memory" / "odd.md").write_bytes(raw)
    assert run("--workspace", str(workspace), "index", "--quiet").returncode == 0
    res = run("--workspace", str(workspace), "search", "heron", "--json")
    assert [r["path"] for r in json.loads(res.stdout)["results"]] == ["memory/odd.md"]
    st = status(workspace)
    assert st["fileNotes"] == [{"path": "memory/odd.md", "skipped": False,
                                "reason": "NUL byte at byte 35; indexed with NUL bytes read as spaces"}]
    assert "Note:      memory/odd.md: NUL byte at byte 35" in run("--workspace", str(workspace), "status").stdout
    assert (workspace / "memory" / "odd.md").read_bytes() == raw


def test_one_write_over_the_cap_is_refused_and_the_cap_is_configurable(workspace, make_engine):
    """52 MB in one memory_append once pushed the day's log out of search."""
    eng = make_engine()
    big = "word " * 20000  # 100 kB: over the 64 kB default
    res = tools.memory_append(eng, big, now=NOW)
    assert "over the 65536-byte limit" in res["error"] and "mcp.maxWriteBytes" in res["error"]
    res = tools.memory_remember(eng, big)
    assert "over the 65536-byte limit" in res["error"] and "mcp.maxWriteBytes" in res["error"]
    assert not (workspace / LOG).exists() and not (workspace / "MEMORY.md").exists()
    roomy = make_engine({"mcp.maxWriteBytes": 200000})
    assert tools.memory_append(roomy, big, now=NOW)["endLine"] == 5
    assert tools.memory_remember(roomy, big)["startLine"] == 2


def test_a_file_over_the_index_cap_stays_searchable_up_to_the_cap(workspace, make_engine, monkeypatch):
    """The head of an oversized file is indexed; status says from which line it is not."""
    monkeypatch.setattr(indexer, "MAX_FILE_BYTES", 4096)
    lines = [f"- line {i}: ordinary words about the harbour\n" for i in range(300)]
    lines[0] = "- the first line names the lighthouse keeper\n"
    lines[-1] = "- the last line names the smuggler\n"
    write(workspace / "memory" / "big.md", "".join(lines))
    eng = make_engine()
    list(eng.index())
    assert [r["path"] for r in eng.search("lighthouse keeper")["results"]] == ["memory/big.md"]
    assert eng.search("smuggler")["results"] == []
    (item,) = eng.status()["fileNotes"]
    kept = "".join(lines)[:4096].count("\n")
    assert item["path"] == "memory/big.md"
    assert f"lines 1-{kept} are indexed, lines {kept + 1} on are not searchable" in item["reason"]


# ------------------------------------------------------------------ stopped mid-write

STOPPED_WRITER = r"""
import datetime as dt, resource, signal, sys
from pathlib import Path
from clawmem.engine import Engine, load_config
from clawmem.engine.agent import tools
from clawmem.engine.files import conflicts as files
try:  # an agent allowed big writes (the cap is not what is tested here)
    from clawmem.engine.files import memfile
    memfile.APPEND_CAP = 1 << 26
except ImportError:
    pass
ws, what, limit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
eng = Engine(load_config(None, workspace=str(ws), overrides={"provider": "none"}))
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # die at the limit, as a kill would stop it
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
if what == "append":
    files.add_log_entry(ws, "BEGIN " + "x" * 3_000_000 + " END", dt.datetime(2026, 3, 4, 9, 30))
else:
    tools.memory_remember(eng, "a fact written while the process dies")
print("survived")
"""


def stopped_writer(ws: Path, what: str, limit: int) -> None:
    """Run a writer the kernel kills in the middle of its write (a file-size limit: SIGXFSZ),
    leaving on disk exactly what a kill -9 at that moment leaves."""
    res = subprocess.run([sys.executable, "-c", STOPPED_WRITER, str(ws), what, str(limit)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == -signal.SIGXFSZ, (res.returncode, res.stdout, res.stderr)


def test_an_append_killed_halfway_is_cut_off_whole(workspace):
    log = write(workspace / LOG, "# 2026-03-04\n\n## 08:00\nbreakfast with the ferry crew\n")
    before = log.read_bytes()
    stopped_writer(workspace, "append", len(before) + 1_500_000)
    assert len(log.read_bytes()) > len(before)  # the torn half is there until someone looks
    st = status(workspace)
    assert {"path": str(log), "what": "append interrupted by a kill"} in st["leftovers"]
    fixed = status(workspace, "--fix")
    assert any(line == f"repaired {log}" for line in fixed["repair"]), fixed["repair"]
    assert log.read_bytes() == before and fixed["leftovers"] == []


def test_the_next_append_after_a_kill_repairs_first(workspace, make_engine):
    log = write(workspace / LOG, "# 2026-03-04\n\n## 08:00\nbreakfast\n")
    before = log.read_bytes()
    stopped_writer(workspace, "append", len(before) + 100_000)
    res = tools.memory_append(make_engine(), "after the crash", now=NOW)
    assert log.read_text() == before.decode() + "\n## 09:30\n\nafter the crash\n"
    assert (res["startLine"], res["endLine"]) == (6, 8)


def test_a_remember_killed_halfway_leaves_memory_md_whole_and_its_temporary_is_cleaned(workspace):
    memory = write(workspace / "MEMORY.md", "# Memory\n\n## Notes\n" + "".join(f"- fact {i} " + "y" * 100 + "\n" for i in range(20000)))
    before = memory.read_bytes()
    stopped_writer(workspace, "remember", 1_000_000)
    assert memory.read_bytes() == before
    (tmp,) = [p for p in workspace.iterdir() if p.name.startswith(".MEMORY.md.") and p.name.endswith(".tmp")]
    mine = write(workspace / ".MEMORY.md.draft.tmp", "the user's own file, named a bit like ours\n")
    st = status(workspace)
    assert [item["path"] for item in st["leftovers"]] == [str(tmp)]
    assert "temporary file of an interrupted write" in st["leftovers"][0]["what"]
    assert "Leftover:" in run("--workspace", str(workspace), "status").stdout
    fixed = status(workspace, "--fix")
    assert f"removed {tmp}" in fixed["repair"] and not tmp.exists() and fixed["leftovers"] == []
    assert memory.read_bytes() == before and mine.exists()


def test_a_real_kill_9_during_appends_leaves_every_entry_whole(workspace):
    """A writer appending 1 MB entries is killed at a random moment, three times; after the next
    access every entry in the log is complete."""
    import random

    script = r"""
import datetime as dt, sys
from pathlib import Path
from clawmem.engine.files import conflicts as files
try:
    from clawmem.engine.files import memfile
    memfile.APPEND_CAP = 1 << 26
except ImportError:
    pass
ws = Path(sys.argv[1])
for i in range(1000):
    files.add_log_entry(ws, f"BEGIN-{sys.argv[2]}-{i} " + "z" * 1_000_000 + f" END-{sys.argv[2]}-{i}", dt.datetime(2026, 3, 4, 9, 30))
"""
    rnd = random.Random(20)
    log = workspace / LOG
    for round_ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", script, str(workspace), str(round_)])
        try:
            deadline = time.monotonic() + 60
            while (not log.exists() or log.stat().st_size < 2_000_000 * (round_ + 1)) and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rnd.random() * 0.05)
        finally:
            proc.kill()
            proc.wait()
        status(workspace, "--fix")
    text = log.read_text()
    entries = text.split("## 09:30\n")[1:]
    assert entries
    for entry in entries:
        head, _, rest = entry.partition(" ")
        assert head.startswith("BEGIN-") and rest.rstrip("\n").endswith(" END-" + head[len("BEGIN-"):]), entry[:60] + " … " + entry[-60:]
        assert len(rest.rstrip("\n")) == 1_000_000 + len(" END-" + head[len("BEGIN-"):])
