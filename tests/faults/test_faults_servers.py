"""Nothing a web page or another local user can reach: `clawmem mcp --http` and `clawmem serve`
as real processes on loopback addresses, attacked with real HTTP and websocket requests.

A page on another site can make the user's browser talk to a server on this machine; with DNS
rebinding its requests even look same-origin, but they carry the page's domain in Host. A
browser always sends Origin on a websocket. So a foreign Host or Origin must be refused on
every bind, and every bind but the literal 127.0.0.1 / ::1 needs a token."""

from __future__ import annotations

import asyncio
import json
import re
import socket

import httpx
import pytest
from faultkit import Server, free_port, one_line_error, run

from helpers import wait_for, write

TOKEN = "tok-7Hq2LmX9pR4sVw8Z"
EVIL = "evil.example"
FLOOD = 200  # more than the server's connection cap (128), far fewer than the 1100 that wedged it
DROPPED_WITHIN = 30  # seconds: the header deadline (10 s) and a busy machine's slack


def notes(ws):
    write(ws / "MEMORY.md", "# Memory\n- the door code is 4711\n")


def answers(url: str, **kw) -> int | None:
    try:
        return httpx.get(url, timeout=2, **kw).status_code
    except httpx.TransportError:
        return None


def mcp_http(ws, bind: str, port: int, token: str | None = TOKEN) -> Server:
    env = {"CLAWMEM_MCP_TOKEN": token} if token else {}
    return Server("--workspace", str(ws), "mcp", "--http", f"{bind}:{port}", env=env)


def base(bind: str, port: int) -> str:
    return f"http://[{bind}]:{port}" if ":" in bind else f"http://{bind}:{port}"


# ----------------------------------------------------------------------------- mcp --http


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2"])
def test_mcp_http_refuses_a_foreign_host_or_origin(workspace, bind):
    notes(workspace)
    port = free_port(bind)
    server = mcp_http(workspace, bind, port)
    url = f"{base(bind, port)}/mcp"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        wait_for(lambda: answers(url, headers=auth), 60, "the MCP server")
        own_host = f"{bind}:{port}"
        assert answers(url, headers=auth) not in (401, 403, 421)  # its own name passes
        assert answers(url, headers={**auth, "Origin": f"http://{own_host}"}) not in (401, 403, 421)
        # a DNS-rebinding page: same address, its own domain in Host (and in Origin)
        assert answers(url, headers={**auth, "Host": f"{EVIL}:{port}"}) in (403, 421)
        assert answers(url, headers={**auth, "Origin": f"http://{EVIL}:{port}"}) == 403
        assert answers(url, headers={**auth, "Origin": "null"}) == 403
        # a page on another local port is another origin
        assert answers(url, headers={**auth, "Origin": f"http://{bind}:{port + 1}"}) == 403
        assert answers(url) == 401  # and the token is asked for here too
    finally:
        server.stop()


@pytest.mark.parametrize("bind, why", [
    ("127.0.0.2", "needs a bearer token"),
    ("[0:0:0:0:0:0:0:1]", "needs a bearer token"),  # a long form of ::1
    ("localhost", "needs a bearer token"),
])
def test_mcp_http_needs_a_token_on_any_bind_but_literal_loopback(workspace, bind, why):
    res = run("--workspace", str(workspace), "mcp", "--http", f"{bind}:{free_port()}", timeout=60)
    assert res.returncode == 2 and why in one_line_error(res)


@pytest.mark.parametrize("token, why", [
    ("", "set but empty"),
    ("hunter2", "too weak"),
    ("aaaaaaaaaaaaaaaaaaaaaaaa", "too weak"),
])
def test_mcp_http_refuses_a_weak_or_empty_token_at_start(workspace, token, why):
    res = run("--workspace", str(workspace), "mcp", "--http", f"127.0.0.1:{free_port()}", env={"CLAWMEM_MCP_TOKEN": token}, timeout=60)
    assert res.returncode == 2 and why in one_line_error(res)
    assert token == "" or token not in res.stderr  # the message never repeats the token


def test_mcp_http_says_where_it_listens(workspace):
    port = free_port()
    server = mcp_http(workspace, "127.0.0.1", port, token=None)
    try:
        server.wait_line(f"listening on http://127.0.0.1:{port}/mcp", 60)
    finally:
        server.stop()


@pytest.mark.slow
def test_mcp_http_survives_slow_header_connections(workspace):
    """A flood of connections that never finish their headers (more than the connection cap)
    is dropped within the header deadline, and the server answers again while the flood's
    sockets are still open on the attacker's side, and after they go."""
    port = free_port()
    server = mcp_http(workspace, "127.0.0.1", port, token=None)
    url = f"http://127.0.0.1:{port}/mcp"
    flood: list[socket.socket] = []
    try:
        wait_for(lambda: answers(url), 60, "the MCP server")
        for _ in range(FLOOD):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
            flood.append(s)

        def dropped(s: socket.socket) -> bool:
            s.setblocking(False)
            try:
                return s.recv(1024) == b""
            except BlockingIOError:
                return False
            except OSError:
                return True  # reset

        wait_for(lambda: all(dropped(s) for s in flood), DROPPED_WITHIN, "the server to drop the slow connections")
        assert answers(url) is not None  # serving again, the attacker's sockets still open
        for s in flood:
            s.close()
        flood.clear()
        assert answers(url) is not None
    finally:
        for s in flood:
            s.close()
        server.stop()


# ----------------------------------------------------------------------------- serve


async def ws_handshake(url: str, origin: str | None) -> int | str:
    """The HTTP status refusing a websocket handshake, or "open" when it was accepted."""
    import websockets

    try:
        async with websockets.connect(url, origin=origin, open_timeout=20) as ws:
            await ws.send(json.dumps(["resize", {"width": 80, "height": 24}]))
            return "open"
    except websockets.exceptions.InvalidStatus as exc:
        return exc.response.status_code


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2"])
def test_serve_refuses_a_foreign_origin_or_host(workspace, bind):
    notes(workspace)
    port = free_port(bind)
    server = Server("--workspace", str(workspace), "serve", "--host", bind, "--port", str(port))
    try:
        line = server.wait_line("clawmem serve: open", 60)
        page = re.search(r"open (\S+) in a browser", line).group(1)
        if bind != "127.0.0.1":
            assert re.fullmatch(rf"http://{re.escape(bind)}:{port}/[^/]+/", page), "no token in the URL"
            assert answers(f"http://{bind}:{port}/") == 404  # nothing without the token
        origin = f"http://{bind}:{port}"
        ws_url = page.replace("http://", "ws://") + "ws?width=80&height=24"
        assert answers(page) == 200
        assert answers(page, headers={"Host": f"{EVIL}:{port}"}) == 403
        assert answers(page, headers={"Origin": f"http://{EVIL}"}) == 403
        assert asyncio.run(ws_handshake(ws_url, f"http://{EVIL}")) == 403
        assert asyncio.run(ws_handshake(ws_url, f"http://{bind}:{port + 1}")) == 403
        upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": f"http://{EVIL}:{port}", "Host": f"{EVIL}:{port}"}
        assert answers(page + "ws?width=80&height=24", headers=upgrade) == 403  # a rebound page's socket
        assert asyncio.run(ws_handshake(ws_url, origin)) == "open"  # the page's own socket works
    finally:
        server.stop()


def test_serve_refuses_a_weak_token(workspace):
    res = run("--workspace", str(workspace), "serve", "--host", "127.0.0.2", "--port", str(free_port("127.0.0.2")),
              env={"CLAWMEM_SERVE_TOKEN": "abc"}, timeout=60)
    assert res.returncode == 2 and "too weak" in one_line_error(res) and "abc" not in res.stderr.replace("clawmem", "")
