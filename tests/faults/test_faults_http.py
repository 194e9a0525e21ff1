"""`clawmem mcp --http` on the token-free loopback bind, attacked with real HTTP on 127.0.0.1:
another local user's process (any user can reach 127.0.0.1) is refused, as the resident
model's socket refuses other users; clients trickling request bodies and reconnecting cannot
keep a normal client out; a client that goes away mid-body is one log line, not a traceback."""

from __future__ import annotations

import os
import socket
import time

import httpx
import pytest
from faultkit import Server, free_port

from helpers import wait_for, write

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}
TRICKLERS = 160  # more than the server's connection cap (128)


def token_free(ws, port: int) -> Server:
    write(ws / "MEMORY.md", "# Memory\n- the door code is 4711\n")
    server = Server("--workspace", str(ws), "mcp", "--http", f"127.0.0.1:{port}")
    wait_for(lambda: initialize(port, timeout=2) == 200, 60, "the MCP server")
    return server


def initialize(port: int, timeout: float = 10) -> int | None:
    try:
        return httpx.post(f"http://127.0.0.1:{port}/mcp", json=INIT, headers=ACCEPT, timeout=timeout).status_code
    except httpx.TransportError:
        return None


def as_user(uid: int, port: int) -> bytes:
    """What a process of user `uid` gets for a request to the server (a forked child, real TCP)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only the socket module, then _exit
        try:
            os.close(r)
            os.setgid(uid)
            os.setuid(uid)
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n\r\n" % port)
            got = b""
            while chunk := s.recv(4096):
                got += chunk
                if len(got) > 100:
                    break
            os.write(w, got[:4096])
        finally:
            os._exit(0)
    os.close(w)
    out = b""
    while chunk := os.read(r, 4096):
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return out


@pytest.mark.skipif(os.getuid() != 0, reason="switching to another user needs root")
def test_the_token_free_bind_refuses_another_users_process(workspace):
    port = free_port()
    server = token_free(workspace, port)
    try:
        assert initialize(port) == 200  # this user's client
        got = as_user(65534, port)  # nobody
        assert got.startswith(b"HTTP/1.1 403"), got
        assert b"user 65534" in got and b"mcp.token" in got
        assert initialize(port) == 200
    finally:
        server.stop()


def test_peer_uid_names_the_owner_of_the_other_end():
    from clawmem.tui.net import peer_uid

    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        with socket.socket(family) as srv:
            srv.bind((host, 0))
            srv.listen()
            with socket.socket(family) as client:
                client.connect(srv.getsockname()[:2])
                conn, _ = srv.accept()
                assert peer_uid(conn.getsockname(), conn.getpeername()) == os.getuid()
                assert peer_uid(conn.getsockname(), (host, 1)) is None  # no such end: refused, never guessed
                conn.close()


def test_trickled_bodies_do_not_keep_a_normal_client_out(workspace):
    """Past the connection cap, clients that send whole headers and then a body one byte at a
    time (and reconnect when dropped) kept every other client out: they counted against the
    cap from their headers on. Now a connection counts once its whole request is in."""
    port = free_port()
    server = token_free(workspace, port)
    tricklers: list[socket.socket] = []
    try:
        head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{" % port)
        for _ in range(TRICKLERS):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(head)
            tricklers.append(s)
        time.sleep(1.0)
        for s in tricklers:
            try:
                s.sendall(b" ")
            except OSError:
                pass
        started = time.monotonic()
        assert initialize(port, timeout=10) == 200
        assert time.monotonic() - started < 10
    finally:
        for s in tricklers:
            s.close()
        server.stop()


def test_a_client_gone_mid_body_is_one_log_line_not_a_traceback(workspace, tmp_path):
    port = free_port()
    server = token_free(workspace, port)
    try:
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                      b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{" % port)
            time.sleep(0.3)
            s.close()
        assert initialize(port) == 200
        time.sleep(1.0)
        shown = "\n".join(server.lines)
        assert "Traceback" not in shown and "ClientDisconnect" not in shown, shown
        log = wait_for(lambda: next((p.read_text() for p in (tmp_path / "state").rglob("clawmem.log")
                                     if p.read_text().count("went away before its request was complete") >= 3), None),
                       10, "three lines in the log")
        assert "Traceback" not in log
    finally:
        server.stop()
