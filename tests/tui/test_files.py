"""engine/files/conflicts.py: read with a hash, save-if-unchanged, conflicts, merge, append to today
(engine/files/editing.py and the merge in detail: tests/test_editing.py)."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from clawmem.engine.files import conflicts as files


def test_read_missing_and_existing(tmp_path):
    p = tmp_path / "a.md"
    snap = files.read_file(p)
    assert not snap.exists and snap.text == "" and snap.hash == files.MISSING
    p.write_bytes(b"hello\n\xff\n")
    snap = files.read_file(p)
    assert snap.exists and snap.text == "hello\n\ufffd\n"
    assert snap.hash == files.content_hash(b"hello\n\xff\n")


def test_save_if_unchanged_writes_atomically_and_keeps_mode(tmp_path):
    p = tmp_path / "a.md"
    p.write_text("one\n")
    os.chmod(p, 0o640)
    base = files.read_file(p)
    saved = files.save_if_unchanged(p, "one\ntwo\n", base.hash)
    assert p.read_text() == "one\ntwo\n"
    assert saved.hash == files.read_file(p).hash
    assert os.stat(p).st_mode & 0o777 == 0o640
    assert [x for x in os.listdir(tmp_path) if x.endswith(".tmp")] == []


def test_save_new_file_is_private(tmp_path):
    p = tmp_path / "memory" / "new.md"
    # root: the workspace, which a save never creates; its missing memory/ is made owner-only
    files.save_if_unchanged(p, "x\n", files.MISSING, root=tmp_path)
    assert p.read_text() == "x\n"
    assert os.stat(p).st_mode & 0o777 == 0o600


def test_conflict_when_changed_on_disk(tmp_path):
    p = tmp_path / "a.md"
    p.write_text("one\n")
    base = files.read_file(p)
    p.write_text("one\nagent line\n")
    with pytest.raises(files.ChangedOnDisk) as err:
        files.save_if_unchanged(p, "one\nmy line\n", base.hash)
    assert err.value.disk.text == "one\nagent line\n"
    assert p.read_text() == "one\nagent line\n"  # nothing written


def test_conflict_when_deleted_or_created(tmp_path):
    p = tmp_path / "a.md"
    p.write_text("one\n")
    base = files.read_file(p)
    p.unlink()
    with pytest.raises(files.ChangedOnDisk):
        files.save_if_unchanged(p, "mine\n", base.hash)
    p.write_text("agent\n")
    with pytest.raises(files.ChangedOnDisk):
        files.save_if_unchanged(p, "mine\n", files.MISSING)


def test_merge_replaces_an_edited_line_in_place_and_drops_nothing_from_disk():
    base = "a\nb\nc\n"
    mine = "a\nB changed\nc\nd\n"
    disk = "a\nb\nc\nagent\n"
    assert files.merge3(base, mine, disk) == files.Merged("a\nB changed\nc\nagent\nd\n", 0)


def test_unified_diff_shows_both_sides():
    lines = files.unified_diff("a\nagent\n", "a\nmine\n", "memory/x.md")
    assert "-agent" in lines and "+mine" in lines
    assert lines[0].startswith("--- memory/x.md (on disk)")


def test_append_entry_creates_todays_log(tmp_path):
    now = dt.datetime(2026, 2, 12, 9, 30)
    snap, line = files.append_entry(tmp_path, "Bought milk.", now)
    assert snap.path == tmp_path / "memory" / "2026-02-12.md"
    assert snap.text == "# 2026-02-12\n\n## 09:30\n\nBought milk.\n"  # a blank line under the heading
    assert snap.text.splitlines()[line - 1] == "## 09:30"
    snap, line = files.append_entry(tmp_path, "Second.\nTwo lines.", now.replace(hour=10, minute=5))
    assert snap.text.endswith("Bought milk.\n\n## 10:05\n\nSecond.\nTwo lines.\n")
    assert snap.text.splitlines()[line - 1] == "## 10:05"


def test_append_entry_to_file_without_final_newline(tmp_path):
    p = tmp_path / "memory" / "2026-02-12.md"
    p.parent.mkdir(parents=True)
    p.write_text("agent text")
    snap, _ = files.append_entry(tmp_path, "x", dt.datetime(2026, 2, 12, 8, 0))
    assert snap.text == "agent text\n\n## 08:00\n\nx\n"


def test_create_workspace(tmp_path):
    root = tmp_path / "new" / "ws"
    made = files.create_workspace(root)
    assert (root / "MEMORY.md").is_file() and (root / "memory").is_dir()
    assert len(made) == 3
    assert files.create_workspace(root) == []


def test_engine_files_module_stays_ui_free():
    import subprocess
    import sys

    code = ("import sys, clawmem.engine.files.conflicts; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]; sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
