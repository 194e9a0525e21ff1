"""The `clawmem` command line: every subcommand, in the order `clawmem --help` lists them."""

from __future__ import annotations

from . import fleet, history, indexing, model, promote, search, serve, session, status
from .base import Parser, add_command, global_options

COMMANDS = (status.STATUS, indexing.INDEX, search.SEARCH, promote.PROMOTE, search.GET, indexing.WATCH,
            session.FLUSH_PROMPT, session.ARCHIVE, session.CONTEXT, model.MODEL, history.HISTORY, history.RESTORE,
            fleet.FLEET, serve.SERVE, serve.MCP)
BY_NAME = {c.name: c for c in COMMANDS}


def build_parser() -> Parser:
    p = Parser(prog="clawmem", description="Long-term memory for AI agents, kept as plain Markdown.",
               parents=[global_options(suppress=False)])
    p.add_argument("--color-system", choices=["auto", "truecolor", "256", "standard", "none"], help="terminal colours for the app")
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    for command in COMMANDS:
        command.arguments(add_command(sub, command.name, command.help))
    return p
