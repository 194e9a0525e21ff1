"""Drive the real app in a real terminal: a private tmux server, send-keys, capture-pane."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

TMUX = shutil.which("tmux") or "/usr/bin/tmux"


def have_tmux() -> bool:
    return os.path.exists(TMUX)


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str], size: tuple[int, int] = (100, 30)):
        self.socket = f"clawmem-{uuid.uuid4().hex[:8]}"
        self.env = env
        inner = " ".join(shlex.quote(a) for a in ["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv])
        # a clean environment (env -i): nothing of the test process leaks in, COLUMNS and LINES above all
        # keep the pane after exit so a crash's output can be read
        self._tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", str(size[0]), "-y", str(size[1]), inner)
        self._tmux("set-option", "-t", "app", "remain-on-exit", "on")
        self._tmux("set-option", "-t", "app", "window-size", "manual")
        self._tmux("resize-window", "-t", "app", "-x", str(size[0]), "-y", str(size[1]))

    def _tmux(self, *args: str) -> str:
        out = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=20)
        return out.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "app")

    def send(self, *keys: str, literal: bool = False) -> float:
        """Send keys; returns the moment they were sent (time.perf_counter)."""
        t = time.perf_counter()
        self._tmux("send-keys", "-t", "app", *(("-l",) if literal else ()), *keys)
        return t

    def type(self, text: str) -> float:
        return self.send(text, literal=True)

    def wait_for(self, predicate, timeout: float = 15.0, interval: float = 0.02) -> tuple[str, float]:
        """Poll the screen until predicate(screen) is true; (screen, when) or AssertionError."""
        deadline = time.perf_counter() + timeout
        screen = ""
        while time.perf_counter() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen, time.perf_counter()
            time.sleep(interval)
        raise AssertionError(f"timed out; the screen was:\n{screen}")

    def dead(self) -> bool:
        return self._tmux("display-message", "-p", "-t", "app", "#{pane_dead}").strip() == "1"

    def pid(self) -> int:
        """The app's process id (env execs it, so it is the pane's process)."""
        return int(self._tmux("display-message", "-p", "-t", "app", "#{pane_pid}").strip())

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=20)


def app_env(home: Path) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return env


def app_argv(workspace: Path) -> list[str]:
    return [sys.executable, "-m", "clawmem.tui", "--workspace", str(workspace)]
