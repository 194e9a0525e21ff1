"""Raw JSON-RPC lines to a real `clawmem mcp` over stdio: for faults the SDK's client would not
send (a lone surrogate) and for calls that must answer within a time limit (a FIFO)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

from faultkit import cli

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "1"}}}


def exchange(ws: Path, lines: list[str], *, timeout: float = 30, ids: set | None = None) -> dict[int, dict]:
    """Send `lines` (raw JSON text) after the handshake; {id: reply} for every id answered
    within `timeout` seconds (`ids`: the ids to wait for, when the lines cannot be parsed;
    a reply with no id is kept under None)."""
    proc = subprocess.Popen(cli("--workspace", str(ws), "mcp"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    wanted = (ids if ids is not None else {json.loads(line)["id"] for line in lines if '"id"' in line}) | {0}
    replies: dict[int, dict] = {}
    try:
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for line in lines:
            proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        end = time.monotonic() + timeout
        buf = b""
        while not wanted <= replies.keys() and time.monotonic() < end:
            ready, _, _ = select.select([proc.stdout], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                msg = json.loads(raw)
                for one in msg if isinstance(msg, list) else [msg]:
                    if "id" in one:
                        replies[one["id"]] = one
    finally:
        proc.kill()
        proc.wait()
    return replies


def request(rid: int, method: str, params: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
