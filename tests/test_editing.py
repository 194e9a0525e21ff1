"""engine/files/editing.py: an edit session never drops a line someone else wrote to disk unless
the user overwrote it having seen it; three-way merge by lines; recovery copies."""

from __future__ import annotations

import os
import random
import stat
import time

import pytest

from clawmem.engine.files import editing, conflicts as files
from clawmem.engine.files.editing import EditSession


class Editor:
    """What the app's TextArea does with text: edits, a linear undo/redo history, replace-all
    (reload and merge are undoable edits there too). Every change is reported to the session."""

    def __init__(self, session: EditSession):
        self.session = session
        self.history = [session.text]
        self.at = 0

    @property
    def text(self) -> str:
        return self.history[self.at]

    def set(self, text: str) -> None:
        del self.history[self.at + 1:]  # a new edit clears redo
        self.history.append(text)
        self.at += 1
        self.session.edit(text)

    def undo(self) -> None:
        if self.at:
            self.at -= 1
            self.session.edit(self.text)

    def redo(self) -> None:
        if self.at + 1 < len(self.history):
            self.at += 1
            self.session.edit(self.text)


def test_the_issue_9_path_reload_then_undo_then_save_asks(tmp_path):
    """Type, the agent appends, save → conflict → reload → undo → save: the save must not drop
    the agent's line silently (it did: the check used the base of the reload)."""
    log = tmp_path / "2026-02-12.md"
    log.write_text("# 2026-02-12\n")
    session = EditSession(log)
    editor = Editor(session)
    editor.set("# 2026-02-12\nmy line\n")
    with log.open("a") as fh:
        fh.write("agent line\n")
    with pytest.raises(files.ChangedOnDisk) as first:
        session.save()
    session.reload(first.value.disk)
    editor.set(session.text)  # the reload is an edit in the TextArea
    editor.undo()  # "ctrl+z brings yours back"
    assert editor.text == "# 2026-02-12\nmy line\n"
    with pytest.raises(files.ChangedOnDisk) as second:
        session.save()
    assert "agent line" in second.value.disk.text
    assert log.read_text() == "# 2026-02-12\nagent line\n"
    merged = session.merge(second.value.disk)
    assert merged.conflicts == 0 and merged.text == "# 2026-02-12\nagent line\nmy line\n"
    session.save()
    assert log.read_text() == "# 2026-02-12\nagent line\nmy line\n"


def test_undo_past_a_save_is_no_conflict(tmp_path):
    """What changed on disk between the base and a save was the user's own doing."""
    p = tmp_path / "a.md"
    p.write_text("one\n")
    session = EditSession(p)
    editor = Editor(session)
    editor.set("one\ntwo\n")
    session.save()
    editor.undo()
    assert session.dirty
    session.save()
    assert p.read_text() == "one\n"


def test_overwrite_needs_the_version_that_was_shown(tmp_path):
    p = tmp_path / "a.md"
    p.write_text("one\n")
    session = EditSession(p)
    Editor(session).set("mine\n")
    p.write_text("one\nagent 1\n")
    with pytest.raises(files.ChangedOnDisk) as shown:
        session.save()
    p.write_text("one\nagent 1\nagent 2\n")  # arrives while the dialog is open
    with pytest.raises(files.ChangedOnDisk) as again:
        session.save_over(shown.value.disk)
    assert "agent 2" in again.value.disk.text and p.read_text().endswith("agent 2\n")
    session.save_over(again.value.disk)
    assert p.read_text() == "mine\n"


def test_deleted_on_disk_then_save_as_new(tmp_path):
    p = tmp_path / "a.md"
    p.write_text("one\n")
    session = EditSession(p)
    Editor(session).set("one\nmine\n")
    p.unlink()
    with pytest.raises(files.ChangedOnDisk) as err:
        session.save()
    assert not err.value.disk.exists
    session.save_over(err.value.disk)  # "save as new"
    assert p.read_text() == "one\nmine\n"


def test_disk_changed_reports_each_new_version_once(tmp_path):
    p = tmp_path / "a.md"
    p.write_text("one\n")
    session = EditSession(p)
    assert session.disk_changed() is None
    with p.open("a") as fh:
        fh.write("two\n")
    assert session.disk_changed().text == "one\ntwo\n"
    assert session.disk_changed() is None
    os.utime(p, ns=(time.time_ns(), time.time_ns() + 10**9))  # touched, same bytes
    assert session.disk_changed() is None
    p.unlink()
    assert not session.disk_changed().exists
    Editor(session).set("x\n")
    session.save_over(files.read_file(p))
    assert session.disk_changed() is None  # its own write is no news


# ---------------------------------------------------------------------- three-way merge


def test_merge_an_edited_line_replaces_that_line():
    base = "# Day\n\n## 09:00\nfirst\n"
    mine = "# Day\n\n## 09:00\nfirst, corrected\n"
    disk = base + "\n## 10:00\nagent wrote this\n"
    merged = files.merge3(base, mine, disk)
    assert merged.conflicts == 0
    assert merged.text == "# Day\n\n## 09:00\nfirst, corrected\n\n## 10:00\nagent wrote this\n"


def test_merge_keeps_changes_on_both_sides_in_place():
    base = "a\nb\nc\nd\ne\n"
    mine = "a\nB\nc\nd\ne\nmine\n"  # changed b, added at the end
    disk = "a\nb\nc\nD\ne\n"  # the agent changed d
    assert files.merge3(base, mine, disk) == files.Merged("a\nB\nc\nD\ne\nmine\n", 0)
    assert files.merge3(base, "a\nc\nd\ne\n", disk).text == "a\nc\nD\ne\n"  # a deletion is applied


def test_merge_both_appending_keeps_both_disk_first():
    merged = files.merge3("x\n", "x\nmine\n", "x\nagent\n")
    assert merged == files.Merged("x\nagent\nmine\n", 0)
    assert files.merge3("x\n", "x\nsame\n", "x\nsame\n").text == "x\nsame\n"


def test_merge_keeps_the_users_line_in_its_section_when_the_agent_opens_a_new_one():
    # the user added a line to the 09:00 entry while the agent appended a 10:00 entry: the
    # user's line stays under 09:00 (it was filed under the agent's new heading)
    base = "# Day\n\n## 09:00\nfirst\n"
    mine = base + "my own line\n"
    disk = base + "\n## 10:00 Deploy\nagent wrote this\n"
    merged = files.merge3(base, mine, disk)
    assert merged == files.Merged("# Day\n\n## 09:00\nfirst\nmy own line\n\n## 10:00 Deploy\nagent wrote this\n", 0)
    # a new section of the user's own still comes after the agent's, as any two additions
    both = files.merge3(base, base + "\n## 11:00\nmine\n", disk)
    assert both.text == disk + "\n## 11:00\nmine\n"


def test_merge_real_conflict_keeps_both_marked():
    merged = files.merge3("a\nb\nc\n", "a\nmine\nc\n", "a\nagent\nc\n")
    assert merged.conflicts == 1
    assert merged.text == "a\n<<<<<<< yours\nmine\n=======\nagent\n>>>>>>> on disk\nc\n"
    gone = files.merge3("a\nb\nc\n", "a\nmine\nc\n", "a\nc\n")  # the agent deleted the line the user changed
    assert gone.conflicts == 1 and "mine\n" in gone.text


def test_merge_without_final_newlines():
    assert files.merge3("a", "a\nb", "z\na").text == "z\na\nb"
    assert files.merge3("a\n", "a\nb", "a\nc\n").text == "a\nc\nb\n"


# ---------------------------------------------------------------------- the model


def walk(path, seed: int, steps: int) -> dict[str, int]:
    """A seeded random walk over everything a user and an agent do to one file.

    Tracks every line an outsider wrote and why it may be gone: the outsider removed it,
    the user deleted it by an edit while it was in the text, or the user overwrote a disk
    version that was shown and held it. After every save: each outsider line is on disk or
    has such a reason, and the disk holds exactly the text the user saved.
    """
    rng = random.Random(seed)
    path.write_text("# log\n")
    session = EditSession(path)
    editor = Editor(session)
    external: set[str] = set()
    excused: set[str] = set()
    counter = {"n": 0}
    tally: dict[str, int] = {}

    def fresh(prefix: str) -> str:
        counter["n"] += 1
        return f"{prefix} {counter['n']}"

    def lines_of(text: str) -> list[str]:
        return text.splitlines()

    def check_after_write(what: str) -> None:
        on_disk = set(lines_of(path.read_text())) if path.exists() else set()
        lost = external - on_disk - excused
        assert not lost, f"seed {seed}: {what} dropped {sorted(lost)}"
        assert path.read_text() == editor.text, f"seed {seed}: the disk is not what the user saved"

    def dialog(disk: files.FileSnapshot) -> None:
        """What the conflict dialog offers; the user picks one."""
        choice = rng.choice(["reload", "merge", "overwrite", "cancel"] if disk.exists else ["save as new", "cancel"])
        tally[choice] = tally.get(choice, 0) + 1
        try:
            if choice == "reload":
                session.reload(disk)
                editor.set(disk.text)
            elif choice == "merge":
                merged = session.merge(disk)
                editor.set(merged.text)
                if not merged.conflicts:
                    session.save()
                    check_after_write("merge")
            elif choice in ("overwrite", "save as new"):
                session.save_over(disk)
                excused.update(lines_of(disk.text))  # shown in the dialog, overwritten on purpose
                check_after_write(choice)
        except files.ChangedOnDisk:
            tally["changed again"] = tally.get("changed again", 0) + 1

    for _ in range(steps):
        op = rng.choices(
            ["type", "delete", "change", "undo", "redo", "save", "append", "rewrite", "remove", "poll"],
            weights=[14, 5, 5, 8, 4, 10, 8, 3, 1, 4],
        )[0]
        tally[op] = tally.get(op, 0) + 1
        lines = lines_of(editor.text)
        if op == "type":
            lines.insert(rng.randint(0, len(lines)), fresh("user"))
            editor.set("\n".join(lines) + "\n")
        elif op in ("delete", "change") and lines:
            i = rng.randrange(len(lines))
            excused.add(lines[i])  # the user removed it, seeing it
            if op == "delete":
                del lines[i]
            else:
                lines[i] = fresh("edited")
            editor.set("\n".join(lines) + ("\n" if lines else ""))
        elif op == "undo":
            editor.undo()
        elif op == "redo":
            editor.redo()
        elif op == "append":
            line = fresh("agent")
            external.add(line)
            with path.open("a") as fh:
                fh.write(line + "\n")
        elif op == "rewrite" and path.exists():
            disk_lines = lines_of(path.read_text())
            if disk_lines:
                excused.add(disk_lines.pop(rng.randrange(len(disk_lines))))  # the outsider removed it
            line = fresh("rewritten")
            external.add(line)
            disk_lines.insert(rng.randint(0, len(disk_lines)), line)
            files.overwrite(path, "\n".join(disk_lines) + "\n")
        elif op == "remove" and path.exists():
            excused.update(lines_of(path.read_text()))
            path.unlink()
        elif op == "poll":
            changed = session.disk_changed()  # the File tab's banner
            if changed is not None and rng.random() < 0.5:
                dialog(changed)
        elif op == "save":
            try:
                session.save()
            except files.ChangedOnDisk as err:
                dialog(err.disk)
            else:
                check_after_write("save")
    return tally


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_random_walk_never_drops_an_outsiders_line(tmp_path, seed):
    started = time.monotonic()
    tally = walk(tmp_path / "log.md", seed, 4000)
    # the walk went everywhere it should
    for op in ("type", "undo", "redo", "save", "append", "rewrite", "remove", "reload", "merge", "overwrite",
               "save as new"):
        assert tally.get(op, 0) > 0, (op, tally)
    print(f"seed {seed}: {tally} in {time.monotonic() - started:.1f} s")


# ---------------------------------------------------------------------- recovery


def test_recovery_round_trip_is_private_and_outside_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    ws = tmp_path / "ws"
    p = ws / "memory" / "2026-02-12.md"
    p.parent.mkdir(parents=True)
    p.write_text("# day\n")
    session = EditSession(p)
    assert editing.find_recovery("main", p) is None
    session.edit("# day\nunsaved words\n")
    kept = editing.keep_recovery("main", session)
    assert ws not in kept.parents and (tmp_path / "data") in kept.parents
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(kept.parent).st_mode) == 0o700
    rec = editing.find_recovery("main", p)
    assert rec.text == "# day\nunsaved words\n" and rec.base_hash == session.base.hash
    assert editing.find_recovery("other-agent", p) is None
    # the disk moved on meanwhile: the restored text still derives from its own base
    with p.open("a") as fh:
        fh.write("agent\n")
    again = EditSession(p)
    again.restore(rec)
    with pytest.raises(files.ChangedOnDisk):
        again.save()
    assert again.merge().text == "# day\nagent\nunsaved words\n"
    editing.drop_recovery("main", p)
    assert not kept.exists() and editing.find_recovery("main", p) is None


def test_an_unreadable_recovery_file_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    p = tmp_path / "a.md"
    target = editing.recovery_file("main", p)
    target.parent.mkdir(parents=True)
    target.write_text("{not json")
    assert editing.find_recovery("main", p) is None
    assert target.read_text() == "{not json"
