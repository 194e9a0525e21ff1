"""The app at 80×24 (a fresh SSH session, a tmux pane): what each tab shows and where typing
goes, on the real engine over a temporary workspace."""

from __future__ import annotations

from rich.style import Style
from textual.widgets import DataTable, Input

from tuikit import build_app, screen_segments, settle

SMALL = (80, 24)


def visible_rows(table: DataTable) -> int:
    return min(table.row_count, table.scrollable_content_region.height - 1)  # minus the header


async def test_config_shows_eight_settings_with_their_source(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        table = app.config_pane.query_one(DataTable)
        assert visible_rows(table) >= 8
        # the From column is whole on screen: its header and a source word end inside the table
        width = table.scrollable_content_region.width
        header, first = table.render_line(0).text, table.render_line(1).text
        assert header.rstrip().endswith("From") and len(header.rstrip()) < width
        assert first.split()[-1] in ("default", "flag", "file") and len(first.rstrip()) < width
        assert table.max_scroll_x == 0  # nothing hides to the right
        # the session-start section is one line, F6 unfolds it and folds it again
        context = app.config_pane.query_one("#context-view")
        assert str(context.render()).startswith("▶ Session start: ") and context.size.height == 1
        await pilot.press("f6")
        await settle(pilot, 1)
        assert str(context.render()).startswith("Session start (main)") and context.size.height > 1
        await pilot.press("f6")
        await settle(pilot, 1)
        assert context.size.height == 1


async def test_a_long_value_ends_in_an_ellipsis_not_mid_word(ws, make_app):
    app = make_app(ws, overrides={"remote.baseUrl": "https://embeddings.example.internal/v1/some/very/long/path/for/a/proxy"})
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        table = app.config_pane.query_one(DataTable)
        row = table.get_row("remote.baseUrl")
        assert str(row[1]).endswith("…") and str(row[2]) == "flag"


async def test_typing_goes_to_the_search_box_however_the_tab_is_shown(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot, 1)
        await pilot.click("#tabs-list Tab#--content-tab-search")  # a click on the tab's title
        await settle(pilot, 1)
        await pilot.press(*"tokyo")
        await settle(pilot)
        assert app.search_pane.query_one(Input).value == "tokyo" and app.focused is app.search_pane.query_one(Input)
        await pilot.press("f3")
        await settle(pilot, 1)
        await pilot.press("f2")
        await settle(pilot, 1)
        assert app.focused is app.search_pane.query_one(Input)


async def test_the_selected_result_shows_while_the_box_has_the_focus(ws, make_app):
    """lazygit and k9s always show where you are: with the focus in the search box the first
    result is still drawn in the selection's colours, unlike the rows below it."""
    app = make_app(ws)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"migration")
        await settle(pilot)
        results = app.search_pane.query_one("#results")
        assert results.highlighted == 0 and app.focused is app.search_pane.query_one(Input)
        y0 = results.region.y + 1  # inside the border: the first option's first row
        rows: dict[int, set] = {}
        y = 0
        for seg in screen_segments(app):
            if seg.text == "\n":
                y += 1
                continue
            if seg.style and seg.style.bgcolor and seg.text.strip() and y in (y0, results.region.bottom - 2):
                rows.setdefault(y, set()).add(seg.style.bgcolor.triplet.hex)
        assert rows[y0] != rows[results.region.bottom - 2]


async def test_the_sync_log_follows_unless_scrolled_up(ws, make_app):
    app = make_app(ws)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        pane = app.sync_pane
        log = pane.query_one("#sync-log")
        for n in range(40):
            pane.log_line(f"line {n}")
        await settle(pilot, 1)
        assert log.following and log.scroll_y == log.max_scroll_y and "line 39" in log.lines[-1]
        await pilot.press("pageup")
        await settle(pilot, 1)
        assert not log.following and log.border_subtitle == "paused, End to follow"
        held = log.scroll_y
        pane.log_line("written while paused")
        await settle(pilot, 1)
        assert log.scroll_y == held  # the user's place is kept
        await pilot.press("end")
        await settle(pilot, 1)
        assert log.following and log.border_subtitle == "" and log.scroll_y == log.max_scroll_y


async def test_after_f9_the_log_ends_with_the_summary(ws, make_app):
    """The job line and the log's last entry say the same thing once the rebuild finished,
    even with the log written while another tab was shown."""
    app = make_app(ws)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f4", "f9")
        await settle(pilot, 3)
        summary = str(app.sync_pane.query_one("#job-line").render())
        assert summary.startswith("Rebuild finished")
        log = app.sync_pane.query_one("#sync-log")
        tail = " ".join(line.strip() for line in log.lines[-3:])
        assert summary in tail and log.scroll_y == log.max_scroll_y


def test_long_lines_wrap_with_a_hanging_indent_keeping_their_marker():
    from clawmem.tui.widgets.history_pane import hanging

    rows = hanging("+", "- Decided to keep the staging database on the old schema until review", 30)
    assert all(r.startswith("  +") for r in rows) and len(rows) > 1
    assert all(r.startswith("  +  ") for r in rows[1:])  # the continuation hangs two further in
    assert " ".join(r[3:].strip() for r in rows) == "- Decided to keep the staging database on the old schema until review"
    assert all(len(r) <= 30 for r in rows)
    assert hanging("-", "short", 30) == ["  -short"]


def test_long_names_keep_the_part_that_tells_them_apart():
    from clawmem.tui.widgets.promote_screen import short_names

    names = ["sessions/2026-11-20-cache-warmup.md", "sessions/2026-11-20-ack-from-ops.md", "2026-02-10.md"]
    short = short_names(names, 24)
    assert short[2] == "2026-02-10.md"
    assert short[0] != short[1] and all(len(s) <= 24 for s in short)
    assert short[0].endswith("cache-warmup.md") and short[1].endswith("ack-from-ops.md") and "…" in short[0]


async def test_the_help_says_how_to_close_it_without_scrolling(ws, make_app):
    """F1 at 80×24: the first screen of the help (and its frame) says that esc, F1 or q closes
    it, and esc does."""
    from clawmem.tui.widgets.dialogs import HelpScreen

    app = make_app(ws)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        shown = "".join(seg.text for seg in screen_segments(app))
        assert "esc, F1 or q closes" in shown and "Esc, F1 or q closes this help" in shown
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_at_60_columns_the_daily_logs_keep_their_day(ws, make_app):
    """At 60 columns the File tab's tree is narrow: a daily log's name is cut at its start
    ("…02-11.md"), so each day still shows, not "2026-02…" for every one."""
    app = make_app(ws)
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        tree = app.query_one("#file-tree")
        leaves = [n for n in (tree.get_node_at_line(i) for i in range(tree.last_line + 1)) if n is not None and n.data
                  and n.data.startswith("memory/20")]
        assert len(leaves) == 2  # the newest month's logs (the other month is folded)
        shown = [tree.render_label(n, Style(), Style()).plain for n in leaves]
        assert all(s.startswith("…") for s in shown), shown  # cut: the tree is that narrow
        assert [s[-5:] for s in shown] == ["11.md", "10.md"], shown
