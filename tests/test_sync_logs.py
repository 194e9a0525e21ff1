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



def test_a_one_shot_command_writes_setups_lines_without_the_logging_module(tmp_path, workspace):
    """`clawmem index` logs only its job's events: open_for_events() writes them itself (the
    logging module costs ~5 ms of every run). Its lines are exactly what setup()'s handler
    writes for the same record (time, pid, level, logger, redacted message), the file is
    owner-only and rotates by the same rule; debug lines stay out."""
    import os
    import re
    import subprocess
    import sys

    for level, name in ((logs.INFO, "INFO"), (logs.WARNING, "WARNING"), (logs.ERROR, "ERROR")):
        assert getattr(logging, name) == level
        record = logging.LogRecord("clawmem", level, __file__, 1, "%s", ("key sk-abcdefghijklmnopqrstuvwxyz0123 refused",), None)
        record.created, record.msecs = 1767225600.0071, 7.0  # as LogRecord makes them from one time
        formatter = logs.RotatingLog.Redacting("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
        assert logs.format_line(level, "key sk-abcdefghijklmnopqrstuvwxyz0123 refused", created=1767225600.0071) == formatter.format(record)

    path = tmp_path / "one-shot" / "x.log"
    logs.open_for_events(path)
    try:
        logs.log_event(ev.Progress("files", 1, 2, 1.0, 1.0))
        logs.log_event(ev.Warning("odd file", "memory/x.md"))
        logs.log_event(ev.JobFinished("index", 1, 0, 2, 0, 0.25))
    finally:
        logs._events_file.close()
        logs._events_file = None
    lines = path.read_text().splitlines()
    pid = os.getpid()
    assert [re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", "", line) for line in lines] == [
        f"{pid} WARNING clawmem: warning: memory/x.md: odd file",
        f"{pid} INFO clawmem: index finished in 0.2s: 1 indexed, 0 removed, 2 unchanged, 0 chunks embedded"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    small = logs.LogFile(tmp_path / "one-shot" / "r.log", 120, 2)
    for i in range(10):
        small.write(f"line {i:02d} {'x' * 40}\n")
    small.close()
    assert sorted(p.name for p in (tmp_path / "one-shot").glob("r.log*")) == ["r.log", "r.log.1", "r.log.2"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (tmp_path / "one-shot").glob("r.log*"))

    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    (workspace / "memory" / "2026-01-01.md").write_text("# one\nherons\n")
    os.mkfifo(workspace / "memory" / "pipe.md")  # a warning event: not a regular file
    config = workspace.parent / "kw.toml"
    config.write_text('provider = "none"\n')
    probe = (
        "import sys\n"
        "from clawmem.tui.cli import main\n"
        f"code = main(['--workspace', {str(workspace)!r}, '--config', {str(config)!r}, 'index', '--quiet'])\n"
        "print(code, 'logging' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert res.stdout.startswith("0 "), res.stdout + res.stderr  # (a path in a line loads detect_secrets, which logs)
    os.unlink(workspace / "memory" / "pipe.md")
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert res.stdout.split("\n")[0] == "0 False", res.stdout + res.stderr
    text = log_path().read_text()
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \d+ WARNING clawmem: warning: .*pipe\.md: not a regular file; not indexed$", text, re.M), text
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \d+ INFO clawmem: index finished in [0-9.]+s: 1 indexed, 0 removed, 0 unchanged", text, re.M), text
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \d+ INFO clawmem: index finished in [0-9.]+s: 0 indexed, 0 removed, 1 unchanged", text, re.M), text
