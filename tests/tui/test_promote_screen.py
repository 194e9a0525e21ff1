"""The Promote screen (F10) on the real engine, recall store and journal, driven by keys only:
accept writes MEMORY.md at once and the History tab shows it, edit changes the text before it
is accepted, reject is remembered, and the header counts what is left to review."""

from __future__ import annotations

from textual.widgets import OptionList, Static

from tuikit import seed_recalls, settle, until


async def open_promote(pilot) -> None:
    await settle(pilot)
    await pilot.press("f10")
    await settle(pilot)


def shown_paths(app) -> list[str]:
    return [f"{c.path}:{c.start}-{c.end}" for c in app.screen.candidates]


async def test_accept_writes_memory_md_at_once_and_history_shows_it(ws, make_app):
    seed_recalls(ws)
    app = make_app(ws)
    before = (ws / "MEMORY.md").read_text()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        topbar = str(app.query_one("#topbar", Static).render())
        assert " to promote (F10)" in topbar
        await open_promote(pilot)
        assert type(app.screen).__name__ == "PromoteScreen"
        first = app.screen.candidates[0]
        n = len(app.screen.candidates)
        assert n >= 2 and app.screen.query_one("#promote-list", OptionList).has_focus
        detail = str(app.screen.query_one("#promote-detail", Static).render())
        assert "relevance" in detail and "Source lines (as the daily log has them now)" in detail and "Goes to MEMORY.md as" in detail

        await pilot.press("a")
        await settle(pilot)
        text = (ws / "MEMORY.md").read_text()
        assert text.startswith(before) and f"- {first.text()} ({first.entry_citation})" in text
        assert first.key not in [c.key for c in app.screen.candidates] and len(app.screen.candidates) == n - 1

        await pilot.press("escape")
        await settle(pilot)
        assert str(app.query_one("#topbar", Static).render()).count(f"{n - 1} to promote") == 1
        await pilot.press("f8")
        await settle(pilot)
        await until(pilot, lambda: app.history_pane.entries, what="the History tab's changes")
        assert ("MEMORY.md", "clawmem promote") in [(e.path, e.writer) for e in app.history_pane.entries]


async def test_edit_before_accepting_and_reject_is_remembered(ws, make_app):
    seed_recalls(ws)
    app = make_app(ws)
    async with app.run_test(size=(110, 32)) as pilot:
        await open_promote(pilot)
        first, second = app.screen.candidates[:2]
        await pilot.press("e")
        await settle(pilot)
        assert type(app.screen).__name__ == "EditScreen"
        await pilot.press(*" (checked with Priya)", "ctrl+s")  # the cursor starts at the end
        await settle(pilot)
        assert type(app.screen).__name__ == "PromoteScreen"
        text = (ws / "MEMORY.md").read_text()
        assert f"- {first.text()} (checked with Priya) ({first.entry_citation})" in text

        assert shown_paths(app)[0] == f"{second.path}:{second.start}-{second.end}"
        await pilot.press("x")
        await settle(pilot)
        assert second.key not in [c.key for c in app.screen.candidates]
        assert second.text() not in (ws / "MEMORY.md").read_text()
        await pilot.press("escape")
        await open_promote(pilot)  # opened again: the rejected passage stays away
        assert second.key not in [c.key for c in app.screen.candidates]
        assert first.key not in [c.key for c in app.screen.candidates]


async def test_supersede_marks_the_contradicted_promoted_fact_and_keeps_it(ws, make_app):
    from tuikit import FIXED_NOW
    from clawmem.engine import Engine, load_config
    from clawmem.engine.consolidate import recall

    log = "# 2026-02-11\n\n## Notes\n- The team standup is at 9:30 in room B.\n"
    (ws / "memory" / "2026-02-09.md").write_text(log)
    with open(ws / "MEMORY.md", "a") as f:
        f.write("\n## Promoted From Short-Term Memory (2026-01-05)\n- The team standup is at 10:00 in room A. (memory/2026-01-04.md#L4)\n"
                "  <!-- openclaw-memory-promotion:memory:memory/2026-01-04.md:4:4:0123456789ab -->\n")
    eng = Engine(load_config(None, workspace=str(ws), overrides={"provider": "none"}))
    hit = {"path": "memory/2026-02-09.md", "startLine": 4, "endLine": 4, "matchLine": 4, "score": 0.9,
           "snippet": "- The team standup is at 9:30 in room B."}
    for ago, q in enumerate(["team standup", "standup room", "when is standup", "standup time", "team standup room"], 1):
        recall.record(eng.cfg, q, [hit], now=FIXED_NOW.timestamp() - ago * 86400)
    eng.close()
    recall.close_all()
    app = make_app(ws)
    async with app.run_test(size=(110, 32)) as pilot:
        await open_promote(pilot)
        i = next(i for i, c in enumerate(app.screen.candidates) if "standup" in c.fact)
        app.screen.query_one("#promote-list", OptionList).highlighted = i
        await settle(pilot)
        assert "s supersedes the promoted fact" in str(app.screen.query_one("#promote-detail", Static).render())
        await pilot.press("s")
        await settle(pilot)
        await until(pilot, lambda: "9:30" in (ws / "MEMORY.md").read_text(), what="the new fact written")
        text = (ws / "MEMORY.md").read_text()
        assert "- ~~The team standup is at 10:00 in room A. (memory/2026-01-04.md#L4)~~" in text
        assert "_superseded 2026-02-12 by: The team standup is at 9:30 in room B._" in text
