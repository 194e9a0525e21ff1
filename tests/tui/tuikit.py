"""Helpers for the app's tests: sample notes, the fixed clock, building the real app, settling."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

FIXED_NOW = dt.datetime(2026, 2, 12, 9, 30)

MEMORY = """# Memory

## Preferences
- The user prefers dark mode in every editor.
- Coffee: oat milk flat white, no sugar.

## People
- Priya leads the platform team; weekly sync on Tuesdays.
"""

DAY_10 = """# 2026-02-10

## 09:00
Planning for the Tokyo trip: flights booked with ANA, hotel near Shinjuku.

## 14:20
Reviewed the release checklist with Priya.
The staging deploy of build a828e60 failed on the database migration.
Rolled back and opened ticket OPS-1432.

## 17:45
Dinner ideas: lasagna with extra cheese.
"""

DAY_11 = """# 2026-02-11

## 10:15
Fixed the migration: the index on sessions.user_id was missing.
Deployed a828e60 to staging again; all checks green.
"""

DAY_JAN = """# 2026-01-20

## 11:00
Started reading about vector databases and sqlite-vec.
"""

PROJECTS = """# Projects

- clawmem: memory for agents, plain Markdown, hybrid search.
- Garden: plant tomatoes in April.
"""


def ui_settings(**changes):
    from clawmem.tui.settings import UISettings

    base = dict(watch=False, blinkingCursor=False, searchDelayMs=0, animation="none", theme="clawmem-dark")
    base.update(changes)
    return UISettings(**base)


def build_app(workspace: Path | None, *, overrides: dict | None = None, config_path=None, **settings):
    """The real app on the real engine: keyword-only unless overrides name a provider."""
    from clawmem.engine import Engine, load_config
    from clawmem.tui.app import ClawmemApp

    load_args = {"config_path": config_path, "workspace": str(workspace) if workspace else None,
                 "overrides": {"provider": "none", **(overrides or {})}}
    cfg = load_config(**load_args)
    engine = Engine(cfg, persistent=True)
    return ClawmemApp(engine, settings=ui_settings(**settings), clock=lambda: FIXED_NOW, load_args=load_args)


async def settle(pilot, rounds: int = 2, timeout: float = 30.0) -> None:
    """Let timers fire, every worker finish and the screen catch up.

    Polls the workers' states instead of awaiting them: `wait_for_complete` raises when an
    exclusive worker is cancelled by a newer one, or when a worker is still pending, both of
    which happen in normal use depending on timing.
    """
    import time

    from textual.worker import WorkerState

    busy = (WorkerState.PENDING, WorkerState.RUNNING)
    for _ in range(rounds):
        await pilot.pause(0.05)
        deadline = time.monotonic() + timeout
        while any(w.state in busy for w in pilot.app.workers) and time.monotonic() < deadline:
            await pilot.pause(0.02)
        await pilot.pause()
