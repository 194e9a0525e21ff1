"""`clawmem serve`: the same app in a web browser, through textual-serve.

Each browser tab gets its own app process (textual-serve runs the command with Textual's
web driver), on the same workspace, config and agent as `clawmem serve` was given.
Loopback by default. Bound to another address, every URL starts with a random token
(`http://host:port/<token>/`), so only someone given the URL can open the app: the app
reads and writes memory.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shlex
import signal
import socket
import sys

from aiohttp import web
from textual_serve.server import Server

from clawmem.engine.net import cannot_listen, is_loopback


class ServeError(Exception):
    """One line for the user (the address is taken, a bad port…)."""


class ClawmemServer(Server):
    def __init__(self, command: str, host: str, port: int, token: str | None, shown_host: str):
        super().__init__(command, host=host, port=port, title="clawmem", public_url=f"http://{_url_host(shown_host)}:{port}")
        self.token = token
        self.url = f"{self.public_url}/{token}/" if token else f"{self.public_url}/"

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        if not self.token:
            return app
        # every route (page, websocket, static files) under /<token>/; anything else is 404
        root = web.Application()
        root.add_subapp(f"/{self.token}/", app)  # its on_startup runs with the root's
        return root

    async def on_startup(self, app: web.Application) -> None:
        pass  # no banner: the one line below, once the port listens, is all the user needs

    def serve(self, debug: bool = False) -> None:
        loop = asyncio.new_event_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    print=lambda *_: print(f"clawmem serve: open {self.url} in a browser (Ctrl+C stops)", flush=True))


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def check_can_listen(host: str, port: int) -> None:
    why = cannot_listen(host, port)
    if why:
        raise ServeError(f"--host {host} --port {port}: cannot listen there ({why}); pick another port or address")


def app_command(args) -> str:
    """The command each browser session runs: this clawmem's app, with the same options."""
    cmd = [sys.executable, "-m", "clawmem.tui"]
    for flag, value in (("--workspace", args.workspace), ("--config", args.config), ("--agent", args.agent)):
        if value:
            cmd += [flag, str(value)]
    return shlex.join(cmd)


def serve(args) -> int:
    host, port = args.host.strip("[]"), args.port
    if not 0 < port < 65536:
        raise ServeError(f"--port {port}: expected a port from 1 to 65535")
    token = None
    if not is_loopback(host):
        token = os.environ.get("CLAWMEM_SERVE_TOKEN") or secrets.token_urlsafe(18)
    check_can_listen(host, port)
    shown = socket.gethostname() if host in ("0.0.0.0", "::") else host
    ClawmemServer(app_command(args), host, port, token, shown).serve()
    return 0
