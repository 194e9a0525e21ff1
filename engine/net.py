"""Network helpers the servers share (`clawmem mcp --http`, `clawmem serve`)."""

from __future__ import annotations

import ipaddress
import os
import socket


def cannot_listen(host: str, port: int) -> str | None:
    """Why nothing can listen on host:port ("Address already in use"), or None: asked before a
    server starts, so the user gets one plain line instead of a server's traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.create_server((host, port), family=family):
            return None
    except OSError as exc:
        return os.strerror(exc.errno) if exc.errno else str(exc)


def is_loopback(host: str) -> bool:
    """Only this machine can reach host (localhost, 127.x, ::1): no token needed there."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
