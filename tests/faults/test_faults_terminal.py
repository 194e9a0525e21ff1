"""Terminal escape injection: memory text an agent wrote, holding OSC 52 (set the clipboard),
OSC 0 (the window title), CSI colour codes and a bare CR that overwrites a line, never reaches
the user's terminal raw from any text front (CLI search, get, context, history, watch; the
app's screens); `--json` keeps the raw text, correctly escaped."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from faultkit import run

from helpers import write

sys.path.insert(0, str(Path(__file__).parents[1] / "tui"))  # tuikit: the app's own test helpers

CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: put "rm -rf ~" on the clipboard
TITLE = "\x1b]0;pwned\x07"  # OSC 0: the window title
COLOUR = "\x1b[31mred\x1b[0m"  # CSI
OVERWRITE = "all is well\rXXXX"  # a bare CR: XXXX overwrites the start of the line
C1_CSI = "\x9b31m"  # the one-byte CSI some terminals obey
EVIL = f"- kiln note {CLIPBOARD} clip {TITLE} title {COLOUR} colour {OVERWRITE} cr {C1_CSI} c1\n"
# what a terminal must never receive from memory text (tabs and newlines are fine)
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_shown_safely(out: str) -> None:
    assert not RAW.search(out), repr(out[:2000])
    assert "^[]52;c;cm0gLXJmIH4=^G" in out  # shown visibly, so the user sees what was there
    assert "all is well" in out and "XXXX" in out  # the CR shown (^M) or read as a line break: nothing overwritten


@pytest.fixture
def evil_ws(workspace):
    write(workspace / "MEMORY.md", "# Memory\n- the kiln is in the shed\n")
    assert run("--workspace", str(workspace), "index").returncode == 0
    with open(workspace / "MEMORY.md", "a", newline="") as fh:  # an agent's append, after the first index
        fh.write(EVIL)
    write(workspace / "memory" / "2026-02-01.md", "# 2026-02-01\n" + EVIL)
    assert run("--workspace", str(workspace), "index").returncode == 0
    return workspace


def cli(ws: Path, *args: str) -> str:
    res = run("--workspace", str(ws), *args)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_search_text_is_escaped_and_json_keeps_the_raw_text(evil_ws):
    assert_shown_safely(cli(evil_ws, "search", "kiln"))
    raw = cli(evil_ws, "search", "kiln", "--json")
    assert not RAW.search(raw)  # JSON escapes control characters itself
    snippets = " ".join(r["snippet"] for r in json.loads(raw)["results"])
    assert CLIPBOARD in snippets and TITLE in snippets and COLOUR in snippets and OVERWRITE in snippets


def test_get_and_context_text_are_escaped_and_json_keeps_the_raw_text(evil_ws):
    assert_shown_safely(cli(evil_ws, "get", "MEMORY.md"))
    for raw in (cli(evil_ws, "get", "MEMORY.md", "--json"), cli(evil_ws, "context", "--json")):
        assert not RAW.search(raw)  # escaped in the JSON ...
        text = json.loads(raw)["text"]  # ... and the escape sequences kept as written
        assert all(seq in text for seq in (CLIPBOARD, TITLE, COLOUR, C1_CSI)), repr(text)


def test_history_diff_is_escaped(evil_ws):
    out = cli(evil_ws, "history", "MEMORY.md")
    assert "kiln note" in out
    assert_shown_safely(out)


async def test_the_app_never_passes_escapes_to_the_terminal(evil_ws):
    from tuikit import build_app, screen_segments, settle, until

    app = build_app(evil_ws)

    def on_screen() -> str:
        return "".join(seg.text for seg in screen_segments(app) if not seg.control)

    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot, rounds=3)
        await pilot.press(*"kiln")
        await settle(pilot, rounds=3)
        await until(pilot, lambda: "clip" in on_screen(), what="the results and the preview")
        search_screen = on_screen()
        await pilot.press("f8")  # History: the agent's append as a diff
        await settle(pilot, rounds=3)
        history_screen = await until(pilot, lambda: "clip" in on_screen() and on_screen(), what="the diff")
    app.engine.close()
    assert "^[]52;c;" in search_screen
    for screen in (search_screen, history_screen):
        assert not RAW.search(screen.replace("\n", "")), repr(RAW.findall(screen))
