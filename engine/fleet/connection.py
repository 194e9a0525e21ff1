"""The fleet's settings and its one way in: the `[fleet]` keys read (url, host, which files are
shared), how a model is named, `connect` (every connection with its lock and statement
timeouts) and `FleetError`, whose message never shows a password. Every other fleet module
builds on this one; psycopg loads only when a connection is made."""

from __future__ import annotations

import fnmatch
import socket
from urllib.parse import urlsplit

from ..redaction import mask_password
from ..errors import ClawmemError

CONNECT_TIMEOUT = 5  # seconds: a fleet that is down must not hold up the watcher
# Every connection waits at most this long for a lock and runs a statement at most this long:
# a session that holds a lock (the owner's migration, one left idle in a transaction) delays
# the others by seconds, never stalls them
LOCK_TIMEOUT_MS = 3000
STATEMENT_TIMEOUT_MS = 120_000  # a push batch, the owner's commands
SEARCH_TIMEOUT_MS = 8000  # a search: then it says so and answers from this agent's own index
FLEET_PREFIX = "fleet:"  # `clawmem get fleet:AGENT/PATH` reads a fleet hit's stored text


class FleetError(ClawmemError):
    """A fleet operation failed: one line for the user, the password masked."""


# ----------------------------------------------------------------------------- settings


mask_url = mask_password  # the fleet's name for it


def _masked(text: str, url: str) -> str:
    pw = urlsplit(url).password if url else None
    return text.replace(pw, "***") if pw else text


def fleet_url(cfg) -> str:
    url = cfg["fleet.url"]
    if not url:
        from ..config import ConfigError

        raise ConfigError("no fleet database: set [fleet] url in the clawmem config or CLAWMEM_FLEET_URL "
                          "(`clawmem fleet up` starts a local one)")
    return url


def fleet_host(cfg) -> str:
    return cfg["fleet.host"] or socket.gethostname()


def is_shared(cfg, path: str) -> bool:
    """Whether other agents may see this file: it matches a glob of `share` and no `!glob`
    (fnmatch: `*` also crosses folders)."""
    yes = False
    for pat in cfg["fleet.share"]:
        if pat.startswith("!"):
            if fnmatch.fnmatchcase(path, pat[1:]):
                return False
        elif fnmatch.fnmatchcase(path, pat):
            yes = True
    return yes


def model_key(info: dict) -> str:
    """How the fleet names an embedding model: vectors compare only under the same key (the
    dimensions are part of it: one model can give vectors of several sizes)."""
    return f"{info['provider']}/{info['model']}@{info['dims']}"


# ----------------------------------------------------------------------------- connecting


def connect(url: str, *, autocommit: bool = False, statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
            connect_timeout: int = CONNECT_TIMEOUT):
    try:
        import psycopg
    except ImportError:
        raise FleetError("fleet memory needs psycopg and pgvector: pip install 'clawmem[fleet]'") from None
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=connect_timeout,
                               options=f"-c lock_timeout={LOCK_TIMEOUT_MS} -c statement_timeout={statement_timeout_ms}")
    except psycopg.Error as exc:
        raise FleetError(f"cannot reach the fleet database {mask_url(url)}: {_one_line(exc, url)}") from None
    except Exception as exc:  # a malformed URL: psycopg's own message, masked
        raise FleetError(f"fleet url {mask_url(url)} is not usable: {_one_line(exc, url)}") from None
    register_vector(conn)
    if autocommit:
        try:  # pgvector >= 0.8: a filtered HNSW scan keeps looking until it has enough rows
            conn.execute("set hnsw.iterative_scan = relaxed_order")
        except psycopg.Error:
            pass
    return conn


def register_vector(conn) -> None:
    """Vectors as numpy arrays, once the database has the type (the first push may create it)."""
    if conn.execute("select 1 from pg_type where typname = 'vector'").fetchone():
        from pgvector.psycopg import register_vector as register

        register(conn)


def _one_line(exc: BaseException, url: str = "") -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return _masked(text, url)
