"""`clawmem mcp`: the memory tools for any MCP client, on the SDK's high-level server.

Tools (TOOLS, one table: the server, its tests and docs/agents.md's table are made from it):
memory_search and memory_get with OpenClaw's input schemas, descriptions and result payloads
(engine/agent/tools.py), memory_append, memory_remember and memory_promote unless `mcp.write = false`.
Resources: memory://MEMORY.md, memory://today, memory://yesterday, memory://context, memory://promote, memory://team.
Prompt: memory-recall (OpenClaw's "Memory Recall" system prompt section).

One long-lived engine per server (vectors in memory) and a Syncer keeping the index fresh
while it runs. stdout carries the protocol only: the SDK points fd 1 at stderr while it
serves stdio, logs go to clawmem's log file and warnings to stderr.
"""

from __future__ import annotations

import datetime as dt
import hmac
import json
import re
import logging
import os
import threading
import sys
import time
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from clawmem.engine import ClawmemError, FileRefused, human
from clawmem.tui.net import allowed_names, can_check_peers, cannot_listen, needs_token, peer_uid, refuse_request, token_weakness

log = logging.getLogger("clawmem.mcp")


FIRST_INDEX_WAIT = 20.0  # seconds a search waits for the index the server's first sync builds


class ServeError(Exception):
    """The server cannot start as asked; one line for the user."""


# ---------------------------------------------------------------------------- tool contract

SEARCH_DESCRIPTION = (
    "Mandatory recall step: semantically search MEMORY.md + memory/*.md (and indexed session transcripts) "
    "before answering questions about prior work, decisions, dates, people, preferences, or todos; returns top "
    "snippets with path + lines. If the response has disabled=true, tell the user that memory is unavailable. "
    + human.SEARCH_ABSENT_RULE
)
GET_DESCRIPTION = (
    "Safe snippet read from MEMORY.md or memory/*.md with optional from/lines; use after memory_search to pull "
    "only the needed lines and keep context small."
)
APPEND_DESCRIPTION = (
    "Write to memory: append a timestamped entry to today's daily log (memory/YYYY-MM-DD.md, created if missing). "
    "Use it for running notes, decisions made today and things the user asked you to note. Never rewrites what is "
    "already there. Returns the citation (Source: path#Lstart-Lend) of what was written."
)
REMEMBER_DESCRIPTION = (
    "Write to memory: add a durable fact (a preference, a decision, a person, a standing instruction) to MEMORY.md "
    "as a bullet under a section (default \"Notes\"). Keep it to one short, self-contained fact. Returns the "
    "citation (Source: path#Lstart-Lend) of what was written. With scope \"team\", the note goes to the fleet's "
    "team notebook that every agent of the fleet reads (memory://team), naming you as its writer."
)

PROMOTE_DESCRIPTION = (
    "Consolidate memory: promote the facts in daily logs that searches keep recalling into MEMORY.md (the candidates "
    "and their signals are in the memory://promote resource). Give `keys` to promote only those candidates. Each "
    "fact is found again in its daily log first and skipped if it was edited or deleted; one that contradicts "
    "another fact (its `conflicts`) is skipped for a person to review; every promotion can be undone with "
    "`clawmem restore`."
)
PROMOTE_SCHEMA = {
    "type": "object",
    "properties": {"keys": {"type": "array", "items": {"type": "string"}, "description": "candidate keys from memory://promote; default all"},
                   "limit": {"type": "number", "description": "promote at most this many, best first"}},
}

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "maxResults": {"type": "number"}, "minScore": {"type": "number"},
                   "corpus": {"type": "string", "enum": ["memory", "fleet"],
                              "description": "memory (default): this agent's files; fleet: the shared memory of every agent it may read"},
                   "agents": {"type": "array", "items": {"type": "string"},
                              "description": "with corpus fleet: search only these agents (default: every agent it may read)"}},
    "required": ["query"],
}
GET_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "from": {"type": "number"}, "lines": {"type": "number"}},
    "required": ["path"],
}
APPEND_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "the entry (Markdown)"},
                   "heading": {"type": "string", "description": "a few words after the time in the entry's heading"}},
    "required": ["text"],
}
REMEMBER_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "the fact, one short statement"},
                   "section": {"type": "string", "description": "the MEMORY.md section (## heading) to add it under; default Notes"},
                   "scope": {"type": "string", "enum": ["memory", "team"],
                             "description": "memory (default): this agent's MEMORY.md; team: the fleet's team notebook every agent reads"},
                   "replaces": {"type": "number", "description": "scope team: the id of the team note this one replaces (one of yours; another agent's: proposed, it stands)"}},
    "required": ["text"],
}


# Arguments are taken as they come (Any) and checked by engine/agent/tools.py, which answers bad
# values with data an agent can read, as OpenClaw does; the published schemas are OpenClaw's.
class SearchArgs(ArgModelBase):
    query: Any = None
    maxResults: Any = None
    minScore: Any = None
    max_results: Any = None  # OpenClaw accepts snake_case too
    min_score: Any = None
    corpus: Any = None
    private: Any = None  # true: not recorded for promotion (an extension; the published schema stays OpenClaw's)
    agents: Any = None  # with corpus "fleet": only these agents


class PromoteArgs(ArgModelBase):
    keys: Any = None
    limit: Any = None


class GetArgs(ArgModelBase):
    path: Any = None
    from_: Any = Field(None, alias="from")
    lines: Any = None


class AppendArgs(ArgModelBase):
    text: Any = None
    heading: Any = None


class RememberArgs(ArgModelBase):
    text: Any = None
    section: Any = None
    scope: Any = None
    replaces: Any = None


class ToolSpec:
    """One MCP tool: what the server registers, what the tests list and what docs/agents.md's table shows.
    `call(engine, arguments)` answers with the payload; `returns` is the docs' words for it;
    `writes` tools are left out with `mcp.write = false`; a tool that `needs_index` waits for the
    index the server's first sync builds."""

    def __init__(self, name: str, description: str, schema: dict, args: type[ArgModelBase],
                 call: Callable[[Any, dict], dict], returns: str, writes: bool = False, needs_index: bool = False):
        self.name, self.description, self.schema, self.args = name, description, schema, args
        self.call, self.returns, self.writes, self.needs_index = call, returns, writes, needs_index

    def arguments(self) -> str:
        """`query`, `maxResults?`: the schema's arguments, optional ones marked ?."""
        required = self.schema.get("required", [])
        return ", ".join(f"`{name}{'' if name in required else '?'}`" for name in self.schema["properties"])


TOOLS = [
    ToolSpec("memory_search", SEARCH_DESCRIPTION, SEARCH_SCHEMA, SearchArgs, lambda engine, kw: engine.tools.search(**kw),
             "OpenClaw's payload: `results[]` (`path`, `startLine`, `endLine`, `score`, `snippet`, `source`, `citation` as "
             "`Source: path#L3-L9`, ending the snippet too; ours: `band`), `provider`, `model`, `citations`, plus `mode`, "
             "`hidden`, `dateRange`, `stale`; `corpus: \"fleet\"` searches the fleet (each hit also has `agent`, `host`, "
             "`file`, and `path` is `fleet:AGENT/PATH`)", needs_index=True),
    ToolSpec("memory_get", GET_DESCRIPTION, GET_SCHEMA, GetArgs,
             lambda engine, kw: engine.tools.get(kw.get("path"), kw.get("from"), kw.get("lines")),
             "`{path, text}`; a `fleet:AGENT/PATH` path gives the fleet's stored text of that file; `lines` at most 10,000 per call"),
    ToolSpec("memory_append", APPEND_DESCRIPTION, APPEND_SCHEMA, AppendArgs,
             lambda engine, kw: engine.append(kw.get("text"), kw.get("heading")),
             "appends `## HH:MM heading`, a blank line and the text to `memory/YYYY-MM-DD.md`; `{path, startLine, endLine, citation}`",
             writes=True),
    ToolSpec("memory_remember", REMEMBER_DESCRIPTION, REMEMBER_SCHEMA, RememberArgs,
             lambda engine, kw: engine.remember(kw.get("text"), kw.get("section"), kw.get("scope"), kw.get("replaces")),
             "adds `- text` under `## section` (default Notes) in `MEMORY.md`; same shape (a bullet already there is not written "
             "again: `unchanged: true` cites it); `scope: \"team\"` writes to the "
             "fleet's team notebook instead (`{id, agent, host, section, text, ...}`, with `possibleConflicts` naming standing notes it may contradict, both flagged for review; `proposes` when it names another agent's note, which stands)",
             writes=True),
    ToolSpec("memory_promote", PROMOTE_DESCRIPTION, PROMOTE_SCHEMA, PromoteArgs,
             lambda engine, kw: engine.tools.promote(kw.get("keys"), kw.get("limit")),
             "promotes the candidates of `memory://promote` (those named by `keys`, else all, best first) into `MEMORY.md`; "
             "`{promoted: [...], skipped: [{key, citation, reason}]}`; see [Consolidation](consolidation.md)", writes=True),
]


def tools_markdown() -> str:
    """docs/agents.md's table of the tools, made from TOOLS (a test checks the page holds it)."""
    rows = ["| tool | arguments | returns |", "|---|---|---|"]
    rows += [f"| `{t.name}` | {t.arguments()} | {t.returns} |" for t in TOOLS]
    return "\n".join(rows) + "\n"


def as_result(payload: dict) -> CallToolResult:
    """The payload pretty-printed (2 spaces) as text, as OpenClaw does, and as structured content;
    a refusal or failure (a payload with `error`) is flagged isError, so a client that only looks
    at the flag never takes it for a write done or a read answered."""
    # bidi and zero-width characters as \\u escapes: the same JSON, nothing hidden where it is shown
    return CallToolResult(content=[TextContent(type="text", text=human.json_visible(json.dumps(payload, indent=2, ensure_ascii=False)))],
                          structured_content=payload, is_error=bool(payload.get("error")))


def _tool(spec: ToolSpec, call: Callable[[dict], dict]) -> Tool:
    def run(**kw: Any) -> CallToolResult:
        try:
            return as_result(call(kw))
        except ClawmemError as exc:  # worded for a person (a system error with its errno and file)
            log.warning("%s failed: %s", spec.name, exc)
            return as_result({"error": str(exc)})
        except Exception as exc:  # the tools return failures as data; this is the last guard
            log.exception("%s failed", spec.name)
            return as_result({"error": f"{type(exc).__name__}: {exc}"})

    return Tool(fn=run, name=spec.name, description=spec.description, parameters=spec.schema,
                fn_metadata=FuncMetadata(arg_model=spec.args), is_async=False,
                annotations=ToolAnnotations(read_only_hint=not spec.writes, destructive_hint=False))


# ---------------------------------------------------------------------------- prompt


def recall_guidance(citations: str) -> str:
    """OpenClaw's "Memory Recall" system prompt section, so an agent moved from OpenClaw to clawmem
    gets the same guidance."""
    lines = [
        "## Memory Recall",
        "Before answering anything about prior work, decisions, dates, people, preferences, or todos: run "
        "memory_search on MEMORY.md + memory/*.md + indexed session transcripts; then use memory_get to pull only "
        "the needed lines. If low confidence after search, say you checked.",
    ]
    if citations == "off":
        lines.append("Citations are disabled: do not mention file paths or line numbers in replies unless the user explicitly asks.")
    else:
        lines.append("Citations: include Source: <path#line> when it helps the user verify memory snippets.")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- the server


def wait_for_first_index(engine, first_sync_over: Callable[[], bool], limit: float = FIRST_INDEX_WAIT) -> None:
    """A search that comes before the server's first sync has made an index waits for it
    (as OpenClaw's first search bootstraps an empty index), up to `limit` seconds or until
    that sync is over (it may have failed: memory_search then says why there is no index)."""
    end = time.monotonic() + limit
    while time.monotonic() < end and not first_sync_over():
        try:
            store = engine.reader()
        except Exception:
            return  # unreadable: memory_search says so
        if store is not None and store.has_schema():
            return
        time.sleep(0.1)


def build_server(engine, first_sync_over: Callable[[], bool] = lambda: True) -> MCPServer:
    cfg = engine.cfg

    def call(spec: ToolSpec) -> Callable[[dict], dict]:
        def run(kw: dict) -> dict:
            if spec.needs_index:
                wait_for_first_index(engine, first_sync_over)
            return spec.call(engine, kw)

        return run

    made = [_tool(spec, call(spec)) for spec in TOOLS if cfg["mcp.write"] or not spec.writes]
    server = MCPServer(
        "clawmem",
        instructions=recall_guidance(cfg["citations"]),
        tools=made,
        log_level="WARNING",
    )

    def read(path) -> str:
        # the tools' reader: a symlink out of the workspace or a FIFO is refused, never followed
        from mcp.server.mcpserver.exceptions import ResourceError

        try:
            return engine.read_text(path)
        except (FileRefused, OSError) as exc:
            raise ResourceError(str(exc)) from None

    def daily(offset: int) -> str:
        return read(engine.daily_log_path(dt.date.today() - dt.timedelta(days=offset)))

    @server.resource("memory://MEMORY.md", name="MEMORY.md", mime_type="text/markdown",
                     description="Long-term memory: MEMORY.md (or memory.md); empty when there is none")
    def memory_md() -> str:
        return read(engine.memory_file())

    @server.resource("memory://today", name="today", mime_type="text/markdown",
                     description="Today's daily log (memory/YYYY-MM-DD.md, local date); empty when there is none")
    def today() -> str:
        return daily(0)

    @server.resource("memory://yesterday", name="yesterday", mime_type="text/markdown",
                     description="Yesterday's daily log; empty when there is none")
    def yesterday() -> str:
        return daily(1)

    @server.resource("memory://context", name="context", mime_type="text/markdown",
                     description="What to load at session start: MEMORY.md, today's and yesterday's logs within "
                                 "OpenClaw's size caps, saying what was truncated (as `clawmem context`)")
    def context() -> str:
        return engine.context()["text"]

    @server.resource("memory://promote", name="promote", mime_type="application/json",
                     description="Promotion candidates: daily-log passages searches keep recalling, with their six "
                                 "signals, score and live lines (as `clawmem promote --json`); memory_promote writes them")
    def promote_preview() -> str:
        return json.dumps(engine.tools.promote_preview(), indent=2, ensure_ascii=False)

    @server.resource("memory://team", name="team", mime_type="application/json",
                     description="The fleet's team notebook: the notes that stand, each with its writer (memory_remember with scope team writes them)")
    def team() -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        try:
            return json.dumps({"notes": engine.team_notes()}, indent=2, ensure_ascii=False)
        except Exception as exc:  # no fleet, or it is down: said, never a traceback
            raise ResourceError(str(exc)) from None

    @server.prompt("memory-recall", description="The Memory Recall guidance for a system prompt (OpenClaw's)")
    def memory_recall() -> str:
        return recall_guidance(engine.cfg["citations"])

    return server


# ---------------------------------------------------------------------------- stdio


def lone_surrogate_error(line: str) -> dict | None:
    """The JSON-RPC error for a request whose strings hold a lone surrogate ("a\\ud800b"): the
    SDK's JSON parser drops such a line without a reply, leaving the client waiting forever."""
    if "\\u" not in line.lower():
        return None
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    found = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, str):
            if any("\ud800" <= ch <= "\udfff" for ch in value):
                found.append(where)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")

    walk(msg.get("params") if isinstance(msg, dict) else None, "")
    if not found or not isinstance(msg, dict):
        return None
    return {"id": msg.get("id"), "message": f"invalid params: {found[0]} holds a lone UTF-16 surrogate (not text); "
                                            "nothing was done: send valid Unicode"}


MAX_DEPTH = 100  # nesting of one request's JSON: the tools take flat arguments; deeper is refused, not parsed


def _depth_over(line: str, limit: int) -> bool:
    """Whether the JSON text nests arrays and objects deeper than `limit` (outside strings)."""
    if line.count("[") + line.count("{") <= limit:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def shape_errors(line: str) -> list[tuple[Any, str]] | None:
    """(id, message) of the JSON-RPC errors for a line the SDK would drop without any reply: a
    batch (an array of calls; MCP has none since 2025-06-18), which gets one error per call, or
    JSON nested deeper than MAX_DEPTH. None for any other line."""
    text = line.lstrip()
    if _depth_over(text, MAX_DEPTH):
        found = _ID.search(text)
        rid = json.loads(found.group(1)) if found and text.startswith("{") else None
        return [(rid, f"invalid request: JSON nested deeper than {MAX_DEPTH} levels; nothing was done")]
    if not text.startswith("["):
        return None
    try:
        calls = json.loads(text)
    except (ValueError, RecursionError):
        return [(None, "parse error: not valid JSON; nothing was done")]
    if not isinstance(calls, list):
        return None
    ids = [c.get("id") for c in calls if isinstance(c, dict) and isinstance(c.get("id"), (int, str))]
    why = ("invalid request: batches (a JSON array of calls) are not supported; nothing in it was done: send each "
           "request on its own line")
    return [(rid, why) for rid in ids] or [(None, why)]


async def serve_stdio(server) -> None:
    """The SDK's stdio transport, with stdin lines checked by lone_surrogate_error first."""
    import io
    import sys

    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    replies: list = []

    class CheckedLines:
        def __aiter__(self):
            return self

        async def __anext__(self) -> str:
            while True:
                line = await stdin.readline()
                if not line:
                    raise StopAsyncIteration
                shape = shape_errors(line)
                if shape is not None:
                    for rid, message in shape:
                        error = JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=-32600, message=message))
                        await replies[0].send(SessionMessage(error))
                    continue
                bad = lone_surrogate_error(line)
                if bad is None:
                    return line
                if bad["id"] is not None:  # a notification gets no reply, by JSON-RPC's rules
                    error = JSONRPCError(jsonrpc="2.0", id=bad["id"], error=ErrorData(code=-32602, message=bad["message"]))
                    await replies[0].send(SessionMessage(error))

    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, with our stdin
    async with stdio_server(stdin=CheckedLines()) as (read_stream, write_stream):
        replies.append(write_stream)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


# ---------------------------------------------------------------------------- HTTP guards

HEADER_SECONDS = 10.0  # a request's headers must arrive within this; slow-header floods are dropped
BODY_SECONDS = 30.0  # and its body within this after them, on every bind: a trickled body is dropped
MAX_CONNECTIONS = 128  # admitted connections (a request that passed the token check), well under the open-file limit
MAX_PENDING = 256  # connections not admitted yet; when full, the oldest silent one is dropped for the newcomer
MAX_BODY = 8 << 20  # bytes of one request body (a tool call is a few KB; mcp.maxWriteBytes is 64 KB)


def guard(app, token: str | None, names: set[str]):
    """ASGI middleware: a request naming another host or coming from another origin gets 403
    (DNS rebinding, cross-site pages), one without `Authorization: Bearer <token>` 401."""
    expected = f"Bearer {token}".encode() if token else None

    async def refuse(send, status: int, body: bytes, extra=()) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), *extra]})
        await send({"type": "http.response.body", "body": body})

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            # the whole body before the app sees the request: a client that goes away mid-body
            # is one log line here, not a traceback from the MCP SDK's reader
            receive = await _whole_body(scope, receive)
            if receive is None:
                return None
            if receive == "too large":
                return await refuse(send, 413, json.dumps({"error": f"request body over {MAX_BODY} bytes"}).encode())
        if scope["type"] in ("http", "websocket"):
            headers = dict(scope.get("headers") or [])
            origin = headers.get(b"origin")
            why = refuse_request(headers.get(b"host", b"").decode("latin-1"),
                                 None if origin is None else origin.decode("latin-1"), names)
            if why:
                log.warning("refused a request: %s", why)
                return await refuse(send, 403, json.dumps({"error": f"forbidden: {why}"}).encode())
            if expected and not hmac.compare_digest(headers.get(b"authorization", b""), expected):
                return await refuse(send, 401, b'{"error": "unauthorized: send Authorization: Bearer <token> '
                                               b'(mcp.token or CLAWMEM_MCP_TOKEN)"}', [(b"www-authenticate", b"Bearer")])
        await app(scope, receive, send)

    return guarded


async def _whole_body(scope, receive):
    """A receive() that hands the app the request's whole body at once; None when the client
    went away first (logged, one line), "too large" past MAX_BODY. The protocol's body
    deadline (BODY_SECONDS) bounds the wait."""
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            client = scope.get("client") or ("?", 0)
            log.info("a client (%s:%s) went away before its request was complete", *client[:2])
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return "too large"
        chunks.append(chunk)
        more = message.get("more_body", False)
    first = {"type": "http.request", "body": b"".join(chunks), "more_body": False}

    async def replay():
        nonlocal first
        if first is not None:
            message, first = first, None
            return message
        return await receive()  # after the body: only the disconnect is left to hear

    return replay


FOREIGN_USER = (b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nConnection: close\r\n"
                b"Content-Length: %d\r\n\r\n%s")


def _guarded_protocol(token: str | None = None):
    """uvicorn's h11 protocol with deadlines and caps. uvicorn waits for a first request's headers
    and for a request's body forever, so slow clients could hold every socket: headers must come
    within HEADER_SECONDS and a body within BODY_SECONDS after them. A connection counts against
    MAX_CONNECTIONS only once a whole request on it (headers and body) carried the token (any
    request on a token-free loopback bind); until then it is pending, and pending ones beyond
    MAX_PENDING make way for newcomers, silent ones oldest first, so clients that reconnect when
    dropped, silent or trickling a body, cannot keep every normal request out. Without a token
    (127.0.0.1 / ::1 only), a connection from another user's process is refused at once: the
    uid owning its other end (net.peer_uid) must be ours."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    expected = f"Bearer {token}".encode() if token else None
    pending: dict = {}  # connection -> None, oldest first

    class Guarded(H11Protocol):
        def connection_made(self, transport) -> None:
            if expected is None and not self._same_user(transport):
                self.transport = transport  # connection_lost cleans up
                return
            admitted = len(self.connections) - len(pending)
            if admitted >= MAX_CONNECTIONS:
                self.transport = transport  # connection_lost closes it
                transport.abort()
                return
            while len(pending) >= MAX_PENDING:
                # the oldest that has sent nothing yet (a request on its way is spared), else the oldest
                victim = next((c for c in pending if not c._spoke), None) or next(iter(pending))
                pending.pop(victim)
                victim.transport.abort()
            self._spoke = False
            super().connection_made(transport)
            pending[self] = None
            self._arm_header_deadline()

        @staticmethod
        def _same_user(transport) -> bool:
            uid = peer_uid(transport.get_extra_info("sockname"), transport.get_extra_info("peername"))
            if uid == os.getuid():
                return True
            why = f"this server (no token) serves only user {os.getuid()}'s processes; this connection is " + (
                f"user {uid}'s" if uid is not None else "of an unknown user")
            log.warning("refused a connection: %s", why)
            body = json.dumps({"error": f"forbidden: {why}; the owner can set mcp.token to share it"}).encode()
            transport.write(FOREIGN_USER % (len(body), body))
            transport.close()
            return False

        def data_received(self, data: bytes) -> None:
            self._spoke = True
            super().data_received(data)

        def _arm_header_deadline(self) -> None:
            self._waiting_for = self.cycle  # headers have come once the cycle changes
            self._header_timer = self.loop.call_later(HEADER_SECONDS, self._headers_late)

        def _headers_late(self) -> None:
            if self.cycle is self._waiting_for and not self.transport.is_closing():
                self.transport.abort()

        def handle_events(self) -> None:
            super().handle_events()
            cycle = self.cycle
            if cycle is None or cycle is self._waiting_for:
                return
            if getattr(self, "_body_for", None) is not cycle:
                self._body_for = cycle  # this request's headers came: its body has its own deadline
                self._body_timer = self.loop.call_later(BODY_SECONDS, self._body_late, cycle)
            if self in pending and not cycle.more_body and (expected is None or dict(self.headers).get(b"authorization") == expected):
                pending.pop(self, None)  # admitted: a whole request that passed the token check

        def _body_late(self, cycle) -> None:
            if self.cycle is cycle and cycle.more_body and not self.transport.is_closing():
                self.transport.abort()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():  # the next request on this connection gets its own deadline
                self._header_timer.cancel()
                self._arm_header_deadline()

        def handle_websocket_upgrade(self, event) -> None:
            self._header_timer.cancel()  # its headers came; the connection is another protocol's now
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc) -> None:
            pending.pop(self, None)
            for name in ("_header_timer", "_body_timer"):
                timer = getattr(self, name, None)
                if timer is not None:
                    timer.cancel()
            super().connection_lost(exc)

    return Guarded


def _run_http(app, bind: str, port: int, token: str | None = None) -> None:
    import contextlib
    import signal

    import anyio
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self):
            # uvicorn re-raises SIGTERM after its shutdown, which would kill the process before
            # the syncer and the index are closed; here a signal only asks the server to stop
            before = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    config = uvicorn.Config(app, host=bind, port=port, log_level="warning", http=_guarded_protocol(token),
                            timeout_graceful_shutdown=3)
    server = Server(config)
    print(f"clawmem mcp: listening on http://{_url_host(bind)}:{port}/mcp (Ctrl+C stops)", file=sys.stderr, flush=True)
    anyio.run(server.serve)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def parse_http(http: str, host: str | None) -> tuple[str, int]:
    bind, sep, port_text = http.rpartition(":")
    if not sep:
        bind, port_text = "", http
    try:
        port = int(port_text)
        if not 0 < port < 65536:
            raise ValueError
    except ValueError:
        raise ServeError(f"--http {http!r}: expected HOST:PORT or PORT, e.g. 127.0.0.1:8765") from None
    return (host or bind or "127.0.0.1").strip("[]"), port


def bearer_token(cfg, bind: str) -> str | None:
    """The token HTTP clients must send (CLAWMEM_MCP_TOKEN, else mcp.token), checked at start."""
    from_env = os.environ.get("CLAWMEM_MCP_TOKEN")
    token, where = (from_env, "CLAWMEM_MCP_TOKEN") if from_env is not None else (cfg["mcp.token"], "mcp.token")
    if from_env is not None and not from_env:
        raise ServeError("CLAWMEM_MCP_TOKEN is set but empty; give it a long random value or unset it")
    if not token:
        if needs_token(bind):
            raise ServeError(f"--http on {bind} needs a bearer token (only 127.0.0.1 and ::1 run without one): "
                             "set mcp.token in the clawmem config or CLAWMEM_MCP_TOKEN, or bind 127.0.0.1")
        if not can_check_peers():
            raise ServeError(f"--http on {bind} without a token serves only your own processes, and this system does not "
                             "say which user a connection comes from (/proc/net/tcp): set mcp.token or CLAWMEM_MCP_TOKEN")
        return None
    weak = token_weakness(token)
    if weak:
        raise ServeError(f"{where} is too weak ({weak}); use a long random value, e.g. from `python -c \"import secrets; print(secrets.token_urlsafe(24))\"`")
    return token


def check_can_listen(bind: str, port: int) -> None:
    """Say plainly when the address is taken or not ours, before the engine starts."""
    why = cannot_listen(bind, port)
    if why:
        raise ServeError(f"--http {bind}:{port}: cannot listen there ({why}); pick another port or address")


# ---------------------------------------------------------------------------- run


def _warm(engine) -> None:
    """Load what a search needs (its code, the vectors, a local model) while the agent is still
    starting: its first memory_search then costs what the next ones do. Never a remote
    provider's request (Engine.warm_up)."""
    try:
        engine.warm_up()
    except Exception:  # whatever is wrong, the agent's first search says it
        pass


def serve(engine, *, http: str | None = None, host: str | None = None) -> int:
    """Run the server until the client goes away (stdio) or Ctrl-C/SIGTERM (HTTP)."""
    if host and not http:
        raise ServeError("--host needs --http HOST:PORT (stdio has no address)")
    bind = port = token = None
    if http:
        bind, port = parse_http(http, host)
        token = bearer_token(engine.cfg, bind)
        check_can_listen(bind, port)
    try:
        engine.setup_logging()
    except OSError:
        pass
    syncer = engine.watcher()

    def first_sync_over() -> bool:  # done, failed, or waiting for another process's lock
        st = syncer.state
        return st.last_sync is not None or st.last_result is not None or st.waiting_for is not None

    server = build_server(engine, first_sync_over)  # the SDK sends the root logger to stderr ...
    logging.getLogger("clawmem").propagate = False  # ... ours goes to clawmem's log file only
    syncer.start()
    threading.Thread(target=_warm, args=(engine,), name="clawmem-warm", daemon=True).start()
    log.info("clawmem mcp serving %s for %s (pid %d)", f"http on {bind}:{port}" if http else "stdio", engine.workspace, os.getpid())
    try:
        if not http:
            import anyio

            anyio.run(serve_stdio, server)
        else:
            _run_http(guard(server.streamable_http_app(host=bind), token, allowed_names(bind)), bind, port, token)
    except KeyboardInterrupt:
        pass
    finally:
        syncer.stop()
        engine.close()
        log.info("clawmem mcp stopped (pid %d)", os.getpid())
    return 0
