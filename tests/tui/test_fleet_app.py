"""The Search tab's fleet switch (ctrl+t) against the session's real PostgreSQL (conftest's `pg`)."""

from __future__ import annotations

from textual.widgets import Input, OptionList

from helpers import write
from tuikit import settle, until


async def test_ctrl_t_searches_the_fleet_and_previews_the_stored_text(ws, make_app, make_engine, tmp_path, db, uid):
    from clawmem.engine.fleet import client as fleet

    other = tmp_path / "other-agent"
    write(other / "memory" / "2026-02-01.md", "# Falcon\n\nThe falcon ledger moved to the new cluster.\n")
    eng = make_engine({"agentId": f"o{uid}", "fleet.url": db, "fleet.host": "far-host"}, ws=other)
    eng.run_index()
    fleet.push(eng)

    app = make_app(ws, overrides={"fleet.url": db})
    async with app.run_test(size=(110, 30)) as pilot:
        await settle(pilot)
        pane = app.search_pane
        await pilot.press("ctrl+t")
        await pilot.press(*"falcon ledger")
        await settle(pilot)
        res = await until(pilot, lambda: pane.result, what="the fleet search")
        assert res["corpus"] == "fleet" and res["results"][0]["agent"] == f"o{uid}"
        assert str(app.query_one("#mode-line").render()).startswith(f"Fleet (o{uid})")
        row = str(pane.query_one("#results", OptionList).get_option_at_index(0).prompt)
        assert row.startswith(f"o{uid}@far-host memory/2026-02-01.md:")
        await until(pilot, lambda: "falcon ledger moved to the new" in str(pane.query_one("#preview").render()),  # the row wraps before "cluster"
                    what="the stored text in the preview")
        await pilot.press("ctrl+t")  # back to this agent's memory, where the falcon is unknown
        pane.query_one(Input).value = "lasagna"
        await settle(pilot)
        res = await until(pilot, lambda: pane.result, what="the local search")
        assert res.get("corpus") != "fleet" and all("agent" not in r for r in res["results"])
