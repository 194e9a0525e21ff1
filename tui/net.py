"""Network rules the servers share (`clawmem mcp --http`, `clawmem serve`): who may connect.

Both servers assume a hostile network and a hostile browser. A web page on another site can
make the user's browser send requests to a server on this machine (and, by DNS rebinding,
make them look same-origin), so every request's Host and Origin are checked, on every bind.
Anything but the literal loopback addresses 127.0.0.1 and ::1 also needs a token: other
loopback addresses and names can be reached or re-pointed in ways the literal ones cannot.
Without a token, loopback still reaches every local user, so the token-free bind serves only
connections whose other end is a socket of this same user (`peer_uid`, from the kernel's
table of TCP sockets), as the resident model's Unix socket checks SO_PEERCRED.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from urllib.parse import urlsplit

TOKEN_FREE_BINDS = ("127.0.0.1", "::1")
MIN_TOKEN_LENGTH = 16
MIN_TOKEN_KINDS = 8  # distinct characters: "aaaaaaaaaaaaaaaa" or "1234123412341234" is no secret


def cannot_listen(host: str, port: int) -> str | None:
    """Why nothing can listen on host:port ("Address already in use"), or None: asked before a
    server starts, so the user gets one plain line instead of a server's traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.create_server((host, port), family=family):
            return None
    except OSError as exc:
        return os.strerror(exc.errno) if exc.errno else str(exc)


_TCP_TABLES = {socket.AF_INET: "/proc/net/tcp", socket.AF_INET6: "/proc/net/tcp6"}


def can_check_peers() -> bool:
    """Whether this system shows which user owns a local TCP connection (Linux's /proc/net/tcp)."""
    return all(os.path.exists(p) for p in _TCP_TABLES.values())


def _proc_address(host: str, port: int) -> str:
    """An address as /proc/net/tcp{,6} writes it: the address's 32-bit words in host byte order, hex."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    raw = socket.inet_pton(family, host.split("%")[0])
    words = "".join(f"{w:08X}" for w in struct.unpack(f"={len(raw) // 4}I", raw))
    return f"{words}:{port:04X}"


def peer_uid(sockname: tuple, peername: tuple) -> int | None:
    """The uid owning the other end of a loopback TCP connection: the socket whose local
    address is our peer and whose remote address is us (both ends of a loopback connection are
    on this machine, each in the kernel's table with its owner). None when it is not found
    (gone already, or no such table): the caller refuses."""
    us, them = _proc_address(*sockname[:2]), _proc_address(*peername[:2])
    family = socket.AF_INET6 if ":" in sockname[0] else socket.AF_INET
    try:
        with open(_TCP_TABLES[family], encoding="ascii") as table:
            next(table, None)  # the column names
            for row in table:
                fields = row.split()
                if len(fields) > 7 and fields[1] == them and fields[2] == us:
                    return int(fields[7])
    except OSError:
        return None
    return None


def needs_token(bind: str) -> bool:
    """Every bind but the literal 127.0.0.1 / ::1 (written exactly so) needs a token."""
    return bind.strip("[]") not in TOKEN_FREE_BINDS


def token_weakness(token: str) -> str | None:
    """Why a token is too weak to guard memory, or None."""
    if len(token) < MIN_TOKEN_LENGTH:
        return f"shorter than {MIN_TOKEN_LENGTH} characters"
    if len(set(token)) < MIN_TOKEN_KINDS:
        return f"fewer than {MIN_TOKEN_KINDS} different characters"
    return None


def _split_host(value: str) -> tuple[str, str]:
    """("hostname", "port") of a Host header value; IPv6 brackets removed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest.removeprefix(":")
    name, _, port = value.partition(":") if value.count(":") == 1 else (value, "", "")
    return name, port


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def allowed_names(bind: str) -> set[str]:
    """Host names (besides IP literals) a request may name. A DNS-rebinding page names its own
    domain, so only names that mean this machine pass: localhost, the host's own names, and
    those in CLAWMEM_ALLOWED_HOSTS (comma-separated, for a reverse proxy's name)."""
    bare = bind.strip("[]").lower()
    names = {"localhost", bare}
    if not (bare == "localhost" or (_is_ip(bare) and ipaddress.ip_address(bare).is_loopback)):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    names |= {n.strip().lower() for n in os.environ.get("CLAWMEM_ALLOWED_HOSTS", "").split(",") if n.strip()}
    return names


def refuse_request(host: str | None, origin: str | None, names: set[str]) -> str | None:
    """Why a request with these Host and Origin headers is refused, or None when it may go on.

    Host must name this machine: an IP literal (a browser that connected to an address cannot
    have been rebound) or one of `names`. Origin, which browsers send on cross-site requests
    and on every websocket, must be this same server: scheme http(s) and exactly the Host."""
    if not host:
        return "no Host header"
    name, _ = _split_host(host)
    if not (_is_ip(name) or name in names):
        return f"Host {host!r} is not this server"
    if origin is None:
        return None  # not a browser (curl, an MCP client): nothing cross-site to fear
    parts = urlsplit(origin.strip().lower())
    if parts.scheme not in ("http", "https") or parts.netloc != host.strip().lower():
        return f"Origin {origin!r} is not this server"
    return None
