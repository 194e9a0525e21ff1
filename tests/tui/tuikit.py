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
    # the start-up work begins after the first frame, which a loaded machine delays
    deadline = time.monotonic() + timeout
    while not getattr(pilot.app, "startup_requested", True) and pilot.app.engine.workspace.is_dir() and time.monotonic() < deadline:
        await pilot.pause(0.02)
    for _ in range(rounds):
        await pilot.pause(0.05)
        deadline = time.monotonic() + timeout
        while any(w.state in busy for w in pilot.app.workers) and time.monotonic() < deadline:
            await pilot.pause(0.02)
        await pilot.pause()


async def until(pilot, check, limit: float = 20.0, what: str = "condition"):
    """Let the app run until `check()` is truthy (returned), or fail after `limit` seconds:
    for what the app does after a refresh (scrolling), which a loaded machine delays."""
    import time

    deadline = time.monotonic() + limit
    while not (got := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit:.0f}s waiting for {what}")
        await pilot.pause(0.05)
    return got


def preview_on_screen(app) -> str:
    """The Search preview's lines a person sees now (after wrapping and scrolling)."""
    from textual.geometry import Region

    side, preview = app.search_pane.query_one("#side"), app.search_pane.query_one("#preview")
    top, height = round(side.scroll_offset.y), side.scrollable_content_region.height
    return "\n".join(strip.text for strip in preview.render_lines(Region(0, top, preview.size.width, height)))


def screen_segments(app, system: str | None = None) -> list:
    """The screen as Rich segments, every colour put through Rich's own downgrade to 16
    ("standard") or 256 ("256") colours, as on the way to such a terminal (None: as is)."""
    import io

    from rich.color import ColorSystem
    from rich.console import Console
    from rich.segment import Segment
    from rich.style import Style

    target = {"standard": ColorSystem.STANDARD, "256": ColorSystem.EIGHT_BIT, None: None}[system]

    def down(style: Style | None) -> Style | None:
        if style is None or target is None:
            return style
        return style + Style.from_color(style.color.downgrade(target) if style.color else None,
                                        style.bgcolor.downgrade(target) if style.bgcolor else None)

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system="truecolor",
                      legacy_windows=False, safe_box=False)
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    return [Segment(text, down(style), control) for text, style, control in console.render(update)]


def contrast(style) -> float:
    """WCAG contrast ratio of a segment's text on its background (standard colours as Rich's
    default terminal palette shows them)."""
    from rich.terminal_theme import DEFAULT_TERMINAL_THEME

    def luminance(color, default) -> float:
        r, g, b = color.get_truecolor(DEFAULT_TERMINAL_THEME) if color else default

        def channel(c: int) -> float:
            c = c / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)

    fg = luminance(style.color, DEFAULT_TERMINAL_THEME.foreground_color)
    bg = luminance(style.bgcolor, DEFAULT_TERMINAL_THEME.background_color)
    hi, lo = max(fg, bg), min(fg, bg)
    return (hi + 0.05) / (lo + 0.05)


def limit_colours(app, system: str = "standard"):
    """Make `app.export_screenshot` (what snapshots record) show the screen as a terminal with
    16 ("standard") or 256 ("256") colours shows it (screen_segments)."""
    import io

    from rich.console import Console
    from rich.segment import Segments

    def export_screenshot(title: str | None = None, simplify: bool = False) -> str:
        width, height = app.size
        console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, color_system="truecolor",
                          record=True, legacy_windows=False, safe_box=False)
        console.print(Segments(screen_segments(app, system)))
        return console.export_svg(title=title or app.title)

    app.export_screenshot = export_screenshot
    return app


RECALL_QUERIES = {  # per passage: distinct queries, each recalled on a different earlier day
    "migration": ["database migration", "staging deploy failed migration", "build a828e60 database migration"],
    "vectors": ["vector databases", "reading about sqlite-vec", "vector databases sqlite-vec"],
}


def seed_recalls(workspace) -> None:
    """Real keyword searches over the workspace, recorded as recalls on the three days before
    the app's fixed clock (so the ranking, and the picture, never depend on today's date)."""
    from clawmem.engine import Engine, load_config
    from clawmem.engine.consolidate import recall

    eng = Engine(load_config(None, workspace=str(workspace), overrides={"provider": "none"}))
    try:
        for _ in eng.index():
            pass
        now = FIXED_NOW.timestamp()
        for queries in RECALL_QUERIES.values():
            for ago, q in enumerate(queries, 1):
                res = eng.search(q, private=True, now=FIXED_NOW)
                recall.record(eng.cfg, q, res["results"], now=now - ago * 86400)
    finally:
        eng.close()
        recall.close_all()
