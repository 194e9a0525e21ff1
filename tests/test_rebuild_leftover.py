"""A rebuild stopped before its end (Ctrl-Q during F9, a kill) leaves `<index>.rebuild`:
`status` reports it, the next `index` resumes it (or clears it when made for other
settings), and `status --fix` repairs it with the other things it can (SPEC §4, §6)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from clawmem.engine import events as ev
from clawmem.engine.index.lock import WriterLock, lock_path, read_holder
from clawmem.engine.index.store import rebuild_path
from helpers import run_cli, write


def notes(ws: Path, n: int = 40) -> None:
    for i in range(n):
        write(ws / "memory" / f"2026-01-{1 + i % 28:02d}-n{i}.md", "".join(f"grebe {i} note {j} g{i}x{j}\n" for j in range(30)))


def stopped_rebuild(eng, after: int = 10):
    """Run a forced rebuild and stop it after `after` files, as Ctrl-Q during F9 does."""
    seen = {"n": 0}

    def count(e):
        if isinstance(e, ev.FileIndexed):
            seen["n"] += 1

    events = []
    for e in eng.index(force=True, should_stop=lambda: seen["n"] >= after):
        count(e)
        events.append(e)
    (fin,) = [e for e in events if isinstance(e, ev.JobFinished)]
    assert not fin.ok
    return rebuild_path(eng.index_path)


def cli(ws: Path, config: Path, *args: str):
    return run_cli("--workspace", str(ws), "--config", str(config), *args)


def test_status_reports_a_leftover_and_index_resumes_it(workspace, make_engine, tmp_path):
    notes(workspace)
    config = write(tmp_path / "clawmem.toml", 'provider = "none"\n[sync]\nonSearch = false\n')
    eng = make_engine(config_path=config)
    list(eng.index())
    tmp = stopped_rebuild(eng)
    assert tmp.is_file()
    st = json.loads(cli(workspace, config, "status", "--json").stdout)
    assert st["index"]["rebuild"] == {"path": str(tmp), "files": 10, "running": False}
    text = cli(workspace, config, "status").stdout
    assert f"Rebuild:   a rebuild was left unfinished at {tmp} (10 files done); the next `clawmem index` resumes it" in text
    res = cli(workspace, config, "index", "--json")
    assert res.returncode == 0, res.stderr
    assert "resuming the rebuild left unfinished" in res.stderr
    assert json.loads(res.stdout.splitlines()[-1])["unchanged"] == 10  # resumed, not started over
    assert not tmp.exists()
    st = json.loads(cli(workspace, config, "status", "--json").stdout)
    assert st["index"]["rebuild"] is None and st["index"]["files"] == 40
    assert "Rebuild:" not in cli(workspace, config, "status").stdout


def test_a_leftover_for_other_settings_is_cleared(workspace, make_engine):
    notes(workspace, 20)
    eng = make_engine()
    list(eng.index())
    small = make_engine({"chunking.tokens": 100, "chunking.overlap": 10})
    tmp = stopped_rebuild(small, after=5)
    assert tmp.is_file()
    events = list(eng.index())  # back to the old settings: the index needs no rebuild
    assert any(f"removed {tmp}: an unfinished rebuild made for other settings" in getattr(e, "message", "") for e in events)
    assert not tmp.exists()
    assert [e for e in events if isinstance(e, ev.JobFinished)][0].job == "index"


def test_status_does_not_call_a_running_rebuild_left_over(workspace, make_engine):
    notes(workspace, 10)
    eng = make_engine()
    list(eng.index())
    tmp = stopped_rebuild(eng, after=3)
    lock = WriterLock(eng.index_path, command="a rebuild")
    assert lock.try_acquire()
    try:
        assert eng.status()["index"]["rebuild"]["running"] is True
        assert eng.repair() == [f"nothing repaired: the index is being written by pid {lock_holder_pid(eng)} "
                                f"(a rebuild, since {time_of(eng)}); try again when it finishes"]
        assert tmp.exists()
    finally:
        lock.release()


def lock_holder_pid(eng) -> int:
    return read_holder(eng.index_path)["pid"]


def time_of(eng) -> str:
    import time

    return time.strftime("%H:%M:%S", time.localtime(read_holder(eng.index_path)["since"]))


# ----------------------------------------------------------------------------- status --fix


def test_fix_clears_a_stale_lock_resumes_a_rebuild_and_moves_a_corrupt_index(workspace, make_engine, tmp_path):
    notes(workspace, 20)
    config = write(tmp_path / "clawmem.toml", 'provider = "none"\n[sync]\nonSearch = false\n')
    eng = make_engine(config_path=config)
    list(eng.index())
    res = cli(workspace, config, "status", "--fix")
    assert res.returncode == 0 and res.stdout.startswith("Repaired:  nothing to repair\n")

    tmp = stopped_rebuild(eng, after=5)
    # a writer killed with SIGKILL leaves its holder record in the lock file
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom pathlib import Path\nfrom clawmem.engine.index.lock import WriterLock\n"
        "assert WriterLock(Path(sys.argv[1]), command='clawmem index').try_acquire()\n"
        "print('held', flush=True)\ntime.sleep(60)\n"), str(eng.index_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    assert read_holder(eng.index_path)["pid"] == holder.pid
    res = cli(workspace, config, "status", "--fix", "--json")
    assert res.returncode == 0, res.stderr
    repair = json.loads(res.stdout)["repair"]
    assert repair[0] == f"cleared the writer lock left by pid {holder.pid} (clawmem index), which no longer runs"
    assert any(line.startswith("full rebuild: resuming the rebuild left unfinished") for line in repair)
    assert repair[-1].startswith("rebuild finished in ")
    assert lock_path(eng.index_path).read_text() == "" and not tmp.exists()
    assert json.loads(res.stdout)["index"]["files"] == 20

    # a corrupt index: moved aside (where to is said) and rebuilt
    eng.close()
    eng.index_path.write_bytes(b"\0garbage" * 512)
    res = cli(workspace, config, "status", "--fix")
    assert res.returncode == 0, res.stderr
    (aside,) = eng.index_path.parent.glob("*.corrupt-*")
    assert aside.read_bytes() == b"\0garbage" * 512
    assert f"Repaired:  {eng.index_path}: not a usable clawmem index (file is not a database); moved it to {aside}" in res.stdout
    assert "           20 files, " in res.stdout and "error:" not in res.stdout


def test_a_rebuild_swapped_in_never_inherits_the_old_index_journal(workspace, make_engine):
    """A kill during the one header write that turns an index from rollback mode to WAL leaves
    its rollback journal beside it. When a rebuild then replaces that index, the journal goes
    with the old file: left there, SQLite would replay it into the new index. The index comes
    back whole, with every note searchable."""
    notes(workspace)
    eng = make_engine(persistent=True)
    eng.run_index()
    eng.close()
    index = eng.index_path
    journal = Path(str(index) + "-journal")
    journal.write_bytes(b"\0" * 512)  # a stand-in for the old file's journal: it must go with the old file
    eng = make_engine(persistent=True)
    fin = eng.run_index(force=True)
    assert fin.ok and not journal.exists()
    assert eng.search("g39x29")["results"][0]["path"] == "memory/2026-01-12-n39.md"
    eng.close()
