"""The Config tab lists every OpenClaw setting read but not honoured, with what clawmem does
instead (issue 13, item 4)."""

from __future__ import annotations

import json

from helpers import write
from tuikit import settle


async def test_config_tab_lists_settings_not_honoured(ws, make_app, home_dirs, monkeypatch):
    state = home_dirs / ".openclaw"
    write(state / "openclaw.json", json.dumps({"memory": {"backend": "qmd"},
                                               "agents": {"defaults": {"memorySearch": {"store": {"fts": {"tokenizer": "trigram"}}}}}}))
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    app = make_app(ws)
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        head = str(app.config_pane.query_one("#config-head").render())
    assert "Not honoured: memory.backend = 'qmd': clawmem always searches its own SQLite index" in head
    assert "Not honoured: agents.defaults.memorySearch.store.fts.tokenizer: clawmem's keyword index always uses unicode61" in head
