"""The log file (SPEC §9): rotated, owner-only, in the state dir that `status` names, no secrets."""

from __future__ import annotations

import logging
import stat

from clawmem.engine import events as ev
from clawmem.engine import logs
from clawmem.engine.api import log_path


def test_log_file_is_rotated_private_and_redacted(tmp_path, make_engine):
    path = logs.setup()
    assert path == log_path() and str(path).startswith(str(tmp_path / "state"))
    logs.log_event(ev.Error("openai: 401 for key sk-abcdefghijklmnopqrstuvwxyz0123"))
    logs.log_event(ev.Warning("Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345 rejected"))
    logs.log_event(ev.Progress("files", 1, 2, 1.0, 1.0))  # progress is debug: not in the file
    text = path.read_text()
    assert "[OpenAI-style Key …0123]" in text and "sk-abcdefghijklmnopqrstuvwxyz0123" not in text
    assert "abcdefghijklmnopqrstuvwxyz012345" not in text
    assert "files: 1/2" not in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (handler,) = [h for h in logging.getLogger("clawmem").handlers if isinstance(h, logs.RotatingLog)]
    assert handler.maxBytes == logs.MAX_BYTES and handler.backupCount == logs.BACKUPS
    # idempotent: one handler however often it is set up
    logs.setup()
    assert len([h for h in logging.getLogger("clawmem").handlers if isinstance(h, logs.RotatingLog)]) == 1
    assert make_engine().status()["log"] == str(path)


def test_the_log_rotates_at_its_size_keeps_its_backups_and_stays_private(tmp_path):
    """Past max_bytes the file becomes .1 (the older ones .2 … .backups, the oldest dropped), and
    the new file is owner-only like the first (the stdlib handler opened it with the umask's mode)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    path = folder / "x.log"
    handler = logs.RotatingLog(path, max_bytes=200, backups=2)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("clawmem.test-rotation")
    log.propagate = False
    log.addHandler(handler)
    try:
        for i in range(12):
            log.warning("line %02d %s", i, "x" * 40)
    finally:
        log.removeHandler(handler)
        handler.close()
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["x.log", "x.log.1", "x.log.2"]
    assert all(p.stat().st_size < 200 for p in folder.iterdir())
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())
    assert "line 11" in path.read_text() and "line 10" in path.read_text()
    kept = "".join((folder / n).read_text() for n in ("x.log.2", "x.log.1", "x.log"))
    assert [int(line.split()[1]) for line in kept.splitlines()] == list(range(12 - len(kept.splitlines()), 12))

