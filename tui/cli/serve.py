"""`clawmem serve` (the app in a web browser) and `clawmem mcp` (the memory tools for agents)."""

from __future__ import annotations

from .base import EXIT_USAGE, Command, CommandError, open_engine


def serve_arguments(s) -> None:
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other puts a token in the URL)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument("--max-sessions", type=int, default=None, metavar="N",
                   help="browser tabs (app processes) served at once (default 4); more get a page saying so")


def mcp_arguments(s) -> None:
    s.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP (e.g. 127.0.0.1:8765) instead of stdio")
    s.add_argument("--host", help="address to bind with --http (a non-loopback address needs mcp.token or CLAWMEM_MCP_TOKEN)")


def cmd_serve(args) -> int:
    from clawmem.engine import load_config
    from clawmem.tui.serve import ServeError, serve

    load_config(args.config, workspace=args.workspace, agent=args.agent)  # a bad config is one line here, not in the browser
    try:
        return serve(args)
    except ServeError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None




def cmd_mcp(args) -> int:
    from clawmem.mcp.server import ServeError, serve

    try:
        return serve(open_engine(args, persistent=True, need_workspace=False), http=args.http, host=args.host)
    except ServeError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


SERVE = Command("serve", serve_arguments, cmd_serve)
MCP = Command("mcp", mcp_arguments, cmd_mcp)
