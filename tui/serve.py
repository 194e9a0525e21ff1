"""`clawmem serve`: the same app in a web browser, through textual-serve.

Each browser tab gets its own app process (textual-serve runs the command with Textual's
web driver), on the same workspace, config and agent as `clawmem serve` was given.
Loopback by default. Bound to anything but the literal 127.0.0.1 / ::1, every URL starts
with a random token (`http://host:port/<token>/`), so only someone given the URL can open
the app: the app reads and writes memory. Every request, the websocket's too, must name
this machine in Host and come from this same server (Origin), so a web page elsewhere
cannot drive the app through the user's browser.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shlex
import signal
import socket
import sys

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.server import Server

from .net import allowed_names, cannot_listen, needs_token, refuse_request, token_weakness


SHUTDOWN_SECONDS = 3.0
MAX_SESSIONS = 4  # app processes (one per browser tab) at once: each is a whole app (~25 MB and up); --max-sessions


class ServeError(Exception):
    """One line for the user (the address is taken, a bad port…)."""


# textual-serve's page asks a font CDN for Roboto Mono; the same font ships in its static/fonts
# folder, so the page is served with that link swapped for a local @font-face (works offline)
FONT_LINK = re.compile(r'<link\s[^>]*href="https?://fonts\.(?:googleapis|gstatic)\.com[^"]*"[^>]*>', re.S)
LOCAL_FONT = ('<style>@font-face { font-family: "Roboto Mono"; font-style: normal; font-weight: 100 700; '
              'src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }'
              '@font-face { font-family: "Roboto Mono"; font-style: italic; font-weight: 100 700; '
              'src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype"); }</style>')


class OfflineTemplates(jinja2.FileSystemLoader):
    """textual-serve's templates, with any link to a font CDN replaced by the bundled font."""

    def get_source(self, environment, template):
        source, filename, uptodate = super().get_source(environment, template)
        return FONT_LINK.sub(lambda _: LOCAL_FONT, source), filename, uptodate


class ClawmemServer(Server):
    def __init__(self, command: str, host: str, port: int, token: str | None, shown_host: str, max_sessions: int = MAX_SESSIONS):
        super().__init__(command, host=host, port=port, title="clawmem", public_url=f"http://{_url_host(shown_host)}:{port}")
        self.token = token
        self.url = f"{self.public_url}/{token}/" if token else f"{self.public_url}/"
        self.max_sessions = max_sessions
        self.sessions = 0

    def full_page(self) -> str:
        return (f"clawmem serve: {self.sessions} sessions are open, the most this server runs at once "
                f"(--max-sessions {self.max_sessions}); close another clawmem tab, then reload this page.\n")

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        # each session is an app process: a page opening sockets in a loop started 60 (1.36 GB)
        if self.sessions >= self.max_sessions:
            raise web.HTTPServiceUnavailable(text=self.full_page())
        self.sessions += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions -= 1

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        aiohttp_jinja2.get_env(app).loader = OfflineTemplates(self.templates_path)
        names = allowed_names(self.host)

        @web.middleware
        async def same_origin_only(request: web.Request, handler):
            why = refuse_request(request.headers.get("Host"), request.headers.get("Origin"), names)
            if why:
                raise web.HTTPForbidden(text=f"clawmem serve: forbidden: {why}\n")
            route = request.match_info.route.name if request.match_info.route else None
            if route == "index" and self.sessions >= self.max_sessions:  # a page that says so, not a dead terminal
                raise web.HTTPServiceUnavailable(text=self.full_page())
            return await handler(request)

        if not self.token:
            app.middlewares.append(same_origin_only)
            return app
        # every route (page, websocket, static files) under /<token>/; anything else is 404
        root = web.Application(middlewares=[same_origin_only])
        root.add_subapp(f"/{self.token}/", app)  # its on_startup runs with the root's
        return root

    async def on_startup(self, app: web.Application) -> None:
        pass  # no banner: the one line below, once the port listens, is all the user needs

    def serve(self, debug: bool = False) -> None:
        import logging

        logging.getLogger("aiohttp.server").addFilter(_one_line)  # a malformed request: one line, no traceback
        loop = asyncio.new_event_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        # open sessions get SHUTDOWN_SECONDS to close; then the loop ends, the apps' input closes
        # and each app exits on its own (tui/session_driver.py)
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    shutdown_timeout=SHUTDOWN_SECONDS,
                    print=lambda *_: print(f"clawmem serve: open {self.url} in a browser (Ctrl+C stops)", flush=True))


def _one_line(record) -> bool:
    """aiohttp logs a request it cannot parse (no Host, a bad request line) with a traceback on
    serve's terminal; say it in one line instead."""
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        why = " ".join(str(getattr(exc, "message", "") or exc).split())[:200]
        record.msg, record.args = "clawmem serve: refused a malformed request (%s: %s)", (type(exc).__name__, why)
        record.exc_info = record.exc_text = None
    return True


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def check_can_listen(host: str, port: int) -> None:
    why = cannot_listen(host, port)
    if why:
        raise ServeError(f"--host {host} --port {port}: cannot listen there ({why}); pick another port or address")


def app_command(args) -> str:
    """The command each browser session runs: this clawmem's app, with the same options, as
    the shell's own process (exec: a signal reaches the app, not a shell left in between)
    and with a driver that ends the app when its session ends (tui/session_driver.py)."""
    cmd = [sys.executable, "-m", "clawmem.tui"]
    for flag, value in (("--workspace", args.workspace), ("--config", args.config), ("--agent", args.agent)):
        if value:
            cmd += [flag, str(value)]
    return f"TEXTUAL_DRIVER=clawmem.tui.session_driver:SessionDriver exec {shlex.join(cmd)}"


def serve(args) -> int:
    host, port = args.host.strip("[]"), args.port
    if not 0 < port < 65536:
        raise ServeError(f"--port {port}: expected a port from 1 to 65535")
    token = None
    if needs_token(host):
        token = os.environ.get("CLAWMEM_SERVE_TOKEN") or secrets.token_urlsafe(18)
        weak = token_weakness(token)
        if weak:
            raise ServeError(f"CLAWMEM_SERVE_TOKEN is too weak ({weak}); unset it for a random one")
    check_can_listen(host, port)
    shown = socket.gethostname() if host in ("0.0.0.0", "::") else host
    max_sessions = MAX_SESSIONS if getattr(args, "max_sessions", None) is None else args.max_sessions
    if max_sessions < 1:
        raise ServeError(f"--max-sessions {max_sessions}: expected 1 or more")
    ClawmemServer(app_command(args), host, port, token, shown, max_sessions).serve()
    return 0
