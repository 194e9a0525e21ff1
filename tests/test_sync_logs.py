"""The log file (SPEC §9): rotated, owner-only, in the state dir that `status` names, no secrets."""

from __future__ import annotations

import logging
import logging.handlers
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
    (handler,) = [h for h in logging.getLogger("clawmem").handlers if isinstance(h, logging.handlers.RotatingFileHandler)]
    assert handler.maxBytes == logs.MAX_BYTES and handler.backupCount == logs.BACKUPS
    # idempotent: one handler however often it is set up
    logs.setup()
    assert len([h for h in logging.getLogger("clawmem").handlers if isinstance(h, logging.handlers.RotatingFileHandler)]) == 1
    assert make_engine().status()["log"] == str(path)
