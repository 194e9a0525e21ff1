"""No runaway work: the browser front's app processes end with their sessions and with
`clawmem serve`, `mcp --http` stops cleanly on SIGTERM, and the idle app with a query in its
search box syncs once per outside change, not in a loop (a search that finds the index
behind must never start a sync whose end re-runs that search)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from faultkit import Server, free_port

from helpers import wait_for, write

sys.path.insert(0, str(Path(__file__).parents[1] / "tui"))  # tuikit: the app's own test helpers


def app_processes(workspace: Path) -> list[int]:
    """Pids of `python -m clawmem.tui --workspace WS` app processes (not `serve` itself)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"clawmem.tui" in argv and os.fsencode(workspace) in argv and b"serve" not in argv:
            out.append(int(pid))
    return out


async def open_session(port: int):
    import websockets

    ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws?width=100&height=30", origin=f"http://127.0.0.1:{port}")
    await ws.send(json.dumps(["resize", {"width": 100, "height": 30}]))
    return ws


async def first_frames(ws, seconds: float = 8) -> int:
    got, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            await asyncio.wait_for(ws.recv(), 1)
            got += 1
        except asyncio.TimeoutError:
            pass
    return got


@pytest.mark.slow
def test_serve_stops_its_apps_and_each_app_ends_with_its_session(workspace):
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    port = free_port()
    server = Server("--workspace", str(workspace), "serve", "--port", str(port))
    try:
        server.wait_line("clawmem serve: open", 60)

        async def visit_and_leave():
            ws = await open_session(port)
            assert await first_frames(ws) > 0  # the app drew its screen
            assert len(app_processes(workspace)) == 1
            ws.transport.abort()  # the tab closes without a goodbye

        asyncio.run(visit_and_leave())
        wait_for(lambda: not app_processes(workspace), 20, "the closed session's app to exit")

        async def visit_and_stay():
            ws = await open_session(port)
            assert await first_frames(ws) > 0
            return ws

        loop = asyncio.new_event_loop()
        ws = loop.run_until_complete(visit_and_stay())  # left open while serve stops
        assert len(app_processes(workspace)) == 1
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(15) == 0, server.lines
        wait_for(lambda: not app_processes(workspace), 15, "serve's apps to exit after serve stopped")
        loop.run_until_complete(ws.close())
        loop.close()
    finally:
        server.stop()
        for pid in app_processes(workspace):
            os.kill(pid, signal.SIGKILL)


def test_mcp_http_stops_cleanly_on_sigterm(workspace):
    port = free_port()
    server = Server("--workspace", str(workspace), "mcp", "--http", f"127.0.0.1:{port}")
    try:
        import httpx

        def up():
            try:
                return httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=2).status_code
            except httpx.TransportError:
                return None

        wait_for(up, 60, "the MCP server")
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(15) == 0, server.lines  # exited by itself, not killed by the signal
        assert not [ln for ln in server.lines if "Traceback" in ln or "Error" in ln], server.lines
    finally:
        server.stop()
    from clawmem.engine.api import log_path

    assert "clawmem mcp stopped" in log_path().read_text()  # its index and syncer were closed


def message(role: str, text: str) -> str:
    return json.dumps({"type": "message", "message": {"role": role, "content": text}}) + "\n"


async def test_the_idle_app_with_a_query_syncs_once_per_outside_change(workspace, tmp_path, monkeypatch):
    """A transcript that grows by less than the session delta stays behind the index on
    purpose: every search says `stale`, and no sync changes that. The app must not answer
    each such search with a sync whose end re-runs the search."""
    from clawmem.engine import events as ev
    from tuikit import build_app, settle

    state = tmp_path / "openclaw"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    transcript = write(state / "agents" / "main" / "sessions" / "live.jsonl", message("user", "the kiln schedule"))
    write(workspace / "MEMORY.md", "# Memory\n- the kiln is in the shed\n")
    app = build_app(workspace, overrides={"sources": ["memory", "sessions"], "sync.watchDebounceMs": 200}, watch=True)
    syncs: list[str] = []
    real_post = app.post_engine_event

    def counted(event):
        if isinstance(event, ev.JobStarted):
            syncs.append(event.reason)
        real_post(event)

    app.post_engine_event = counted
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, rounds=3)
        await pilot.press(*"kiln")
        await settle(pilot)
        await pilot.pause(2)
        before = len(syncs)
        for i in range(3):  # three outside changes, each below the delta
            with open(transcript, "a") as fh:
                fh.write(message("assistant", f"firing number {i}"))
            await pilot.pause(3)
        await settle(pilot)
        await pilot.pause(2)
        during = syncs[before:]
    app.engine.close()
    assert len(during) <= 2 * 3, f"{len(during)} syncs for 3 outside changes: {during}"
