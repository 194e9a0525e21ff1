"""Issue 11 part 2 in the app: the Search preview marks the engine's matchLine, so a hit only
the vectors found (no query word to scan for) still shows ▶ on its line, not on the heading."""

from __future__ import annotations

from textual.widgets import Input

from helpers import write
from tuikit import settle, until

NOTES = ("# Weekly notes\n- the cat likes fish and milk\n- dinner was lasagna with cheese\n"
         "- we deploy the server on friday after the release\n- the garden needs rain\n")


async def test_the_preview_marks_the_match_line_of_a_vector_only_hit(empty_ws, make_app, tiny_model):
    ws = empty_ws
    write(ws / "memory" / "2026-01-05.md", NOTES)
    app = make_app(ws, overrides={"provider": "local", "local.modelPath": str(tiny_model), "query.minScore": 0})
    app.engine.run_index()  # vectors ready before the app starts
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pane = app.search_pane
        pane.query_one(Input).value = ""
        await pilot.press(*"deploying servers")
        await settle(pilot)
        await until(pilot, lambda: pane.result and pane.result["results"], what="results")
        top = pane.result["results"][0]
        assert top["path"] == "memory/2026-01-05.md" and top["matchLine"] == 4
        assert top["startLine"] == 1  # the citation's context reaches the heading; the mark must not

        def marked() -> str | None:
            rows = str(pane.query_one("#preview").render()).split("\n")
            return next((row for row in rows if "▶" in row), None)

        row = await until(pilot, marked, what="the preview")
        assert row.lstrip().startswith("4 ▶") and "deploy the server" in row
