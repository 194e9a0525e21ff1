"""Bad input never stops an index and never produces a traceback (SPEC §11, issue 2's list)."""

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from clawmem.engine import events as ev
from clawmem.engine.index import indexer
from clawmem.engine import ClawmemError
from clawmem.engine.api import AccessDenied
from helpers import foreign_database, run_cli, write


def collect(eng, **kw):
    return list(eng.index(**kw))


def warnings_of(events):
    return [e for e in events if isinstance(e, ev.Warning)]


def tree(root):
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def test_invalid_utf8_is_indexed_with_replacement_and_a_warning(workspace, make_engine):
    (workspace / "memory" / "bad.md").write_bytes(b"caf\xe9 latte budget\nsecond line\n")
    eng = make_engine()
    events = collect(eng)
    w = warnings_of(events)
    assert any(e.path == "memory/bad.md" and "invalid UTF-8 at byte 3" in e.message for e in w)
    (r,) = eng.search("latte")["results"]
    assert "\ufffd" in r["snippet"]


def test_nul_bytes_are_indexed_as_spaces_and_reported(workspace, make_engine):
    """The file is never changed, but its text stays searchable; the reason is in status."""
    (workspace / "memory" / "blob.md").write_bytes(b"looks like text\x00\x01\x02 zebra")
    write(workspace / "memory" / "ok.md", "zebra crossing\n")
    eng = make_engine()
    w = warnings_of(collect(eng))
    assert any(e.path == "memory/blob.md" and "NUL byte at byte 15" in e.message for e in w)
    assert sorted(r["path"] for r in eng.search("zebra")["results"]) == ["memory/blob.md", "memory/ok.md"]
    assert any("memory/blob.md: NUL byte at byte 15" in i for i in eng.issues())
    assert (workspace / "memory" / "blob.md").read_bytes() == b"looks like text\x00\x01\x02 zebra"
    # a second run does not re-read it (unchanged stat) and still reports the issue in status
    assert not warnings_of(collect(eng))


@pytest.mark.slow  # over 1.5 s: the full suite runs it, the fast lane does not
def test_huge_file_is_refused_with_a_reason(workspace, make_engine):
    big = workspace / "memory" / "huge.md"
    with open(big, "wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing them
    write(workspace / "memory" / "small.md", "small note about otters\n")
    eng = make_engine()
    w = warnings_of(collect(eng))
    assert any(e.path == "memory/huge.md" and "52.4 MB" in e.message and "limit" in e.message for e in w)
    assert eng.search("otters")["results"]


def test_file_vanishing_mid_index(workspace, make_engine, monkeypatch):
    write(workspace / "memory" / "keep.md", "kept note about herons\n")
    ghost = write(workspace / "memory" / "ghost.md", "ghost note\n")
    real_list = indexer.list_sources

    def listing_then_vanish(cfg, errors=None, layout=None):
        files = real_list(cfg, errors, layout)
        ghost.unlink()  # the race: listed, then gone before it is read
        return files

    monkeypatch.setattr(indexer, "list_sources", listing_then_vanish)
    eng = make_engine()
    w = warnings_of(collect(eng))
    assert any(e.path == "memory/ghost.md" and "vanished" in e.message for e in w)
    assert eng.search("herons")["results"]


def test_symlink_loop_and_symlinks_are_not_followed(workspace, make_engine, tmp_path):
    (workspace / "memory" / "loop").symlink_to(workspace / "memory")
    outside = write(tmp_path / "outside" / "secret.md", "secret penguin plans\n")
    (workspace / "memory" / "link.md").symlink_to(outside)
    write(workspace / "memory" / "real.md", "real penguin facts\n")
    eng = make_engine()
    collect(eng)
    assert [r["path"] for r in eng.search("penguin")["results"]] == ["memory/real.md"]


def test_unreadable_file_is_skipped(workspace, tmp_path):
    """The real CLI on a mode-000 file; as root, without the capabilities that bypass permissions."""
    write(workspace / "memory" / "open.md", "open note about lynx\n")
    locked = write(workspace / "memory" / "locked.md", "locked note about lynx\n")
    os.chmod(locked, 0)
    prefix = []
    if os.geteuid() == 0:
        # root reads any file: drop the capabilities that let it (real permission check, real error)
        assert shutil.which("setpriv"), "setpriv (util-linux) is needed to test unreadable files as root"
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search", "--"]
    proc = subprocess.run([*prefix, sys.executable, "-m", "clawmem.tui", "--workspace", str(workspace), "index"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "memory/locked.md: file is not readable (permission denied)" in proc.stderr
    assert "Traceback" not in proc.stderr
    out = subprocess.run([*prefix, sys.executable, "-m", "clawmem.tui", "--workspace", str(workspace), "search", "lynx", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert [r["path"] for r in json.loads(out.stdout)["results"]] == ["memory/open.md"]


def test_get_refuses_paths_outside_memory(workspace, make_engine, tmp_path):
    write(workspace / "MEMORY.md", "one\ntwo\nthree\n")
    write(workspace / "notes.md", "not memory\n")
    eng = make_engine()
    for bad, why in [("../../etc/passwd", "outside the workspace"), ("/etc/passwd", "outside the workspace"),
                     ("notes.md", "only MEMORY.md"), ("memory/../../x.md", "outside")]:
        with pytest.raises(AccessDenied, match=why):
            eng.get(bad)
    (workspace / "memory" / "sneaky.md").symlink_to(workspace / "notes.md")
    with pytest.raises(AccessDenied, match="symlink"):
        eng.get("memory/sneaky.md")
    assert eng.get("MEMORY.md", 2, 1) == {"path": "MEMORY.md", "text": "two"}
    assert eng.get("memory/2030-01-01.md") == {"path": "memory/2030-01-01.md", "text": ""}
    assert eng.get("MEMORY.md", 10, 2)["text"] == ""
    proc = run_cli("--workspace", str(workspace), "get", "../../etc/passwd")
    assert proc.returncode == 2 and "refused" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_another_programs_database_at_the_index_path_is_never_moved(workspace, make_engine):
    from clawmem.engine.config import ConfigError

    write(workspace / "MEMORY.md", "walrus facts\n")
    eng = make_engine()
    path = eng.index_path
    original = foreign_database(path)
    with pytest.raises(ConfigError, match="store.path: .* nothing was touched"):
        collect(eng)
    assert path.read_bytes() == original


def test_a_corrupt_index_file_is_moved_aside_and_rebuilt(workspace, make_engine):
    write(workspace / "MEMORY.md", "walrus facts\n")
    eng = make_engine()
    path = eng.index_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    original = path.read_bytes()
    w = warnings_of(collect(eng))
    moved = [e.message for e in w if "moved it to" in e.message]
    assert moved, w
    dest = moved[0].split("moved it to ")[1].split(" and rebuilt")[0]
    assert open(dest, "rb").read() == original  # never deleted
    assert eng.search("walrus")["results"]


def test_index_files_are_private_and_workspace_untouched(workspace, make_engine):
    write(workspace / "MEMORY.md", "private notes\n")
    write(workspace / "memory" / "2026-01-01.md", "daily\n")
    before = tree(workspace)
    eng = make_engine()
    collect(eng)
    eng.search("private")
    assert tree(workspace) == before
    assert stat.S_IMODE(os.stat(eng.index_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(eng.index_path.parent).st_mode) == 0o700


def test_cli_bad_config_and_usage_exit_codes(workspace, tmp_path):
    bad = write(tmp_path / "bad.toml", "[query]\nminScore = 'high'\n")
    proc = run_cli("--config", str(bad), "--workspace", str(workspace), "status")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("query.minScore: expected a number from 0 to 1, got 'high'")
    assert proc.stderr.count("\n") == 1
    proc = run_cli("search")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = run_cli("--workspace", str(workspace), "search", "x", "--max-results", "0")
    assert proc.returncode == 2 and "max-results" in proc.stderr


def test_a_name_too_long_is_refused_for_what_it_is(workspace, make_engine):
    """A file name longer than the file system allows is refused with the system's reason, not
    as "a folder on its way changed" (which would send a user to try again, in vain)."""
    eng = make_engine()
    name = "memory/" + "a" * 300 + ".md"
    for call in (lambda: eng.get(name), lambda: eng.edit(name)):
        with pytest.raises(ClawmemError) as caught:  # AccessDenied (get), FileRefused (edit)
            call()
        msg = str(caught.value)
        assert "File name too long" in msg and "changed" not in msg and "try again" not in msg, msg
