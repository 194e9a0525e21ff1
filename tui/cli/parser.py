"""The `clawmem` command line: every subcommand, in the order `clawmem --help` lists them."""

from __future__ import annotations

import argparse
import importlib

from .base import Command, Parser, add_command, global_options

# name, where the command lives ("module:Command" in this package), its help line. `clawmem
# --help` needs only the names and help lines, so a command's module loads only when it runs:
# every module imported is paid by each command's start.
COMMANDS = (
    ("status", "status:STATUS",
     'index, freshness, provider and vector state'),
    ("index", "indexing:INDEX",
     'bring the index up to date (all files, all transcripts)'),
    ("search", "search:SEARCH",
     'hybrid search over the memory files'),
    ("promote", "promote:PROMOTE",
     'the daily-log passages searches keep recalling, ranked for MEMORY.md (--apply writes them)'),
    ("get", "search:GET",
     'read lines of a memory file (or a session hit)'),
    ("watch", "indexing:WATCH",
     'keep the index fresh in the foreground (sync daemon)'),
    ("flush-prompt", "session:FLUSH_PROMPT",
     'print the pre-compaction memory-flush prompts for an agent loop'),
    ("archive", "session:ARCHIVE",
     "write a session transcript's summary to memory/YYYY-MM-DD-slug.md and index it"),
    ("context", "session:CONTEXT",
     "what an agent should load at session start (MEMORY.md, today's and yesterday's logs)"),
    ("model", "model:MODEL",
     'download (pull) and list local embedding models'),
    ("history", "history:HISTORY",
     'what changed in the memory files, version by version (the journal)'),
    ("restore", "history:RESTORE",
     'put a memory file back to a version from `clawmem history` (itself undoable)'),
    ("fleet", "fleet:FLEET",
     'share memory with other agents through one PostgreSQL + pgvector database'),
    ("serve", "serve:SERVE",
     'serve the app to a web browser (textual-serve; loopback unless --host)'),
    ("mcp", "serve:MCP",
     'serve the memory tools to agents over MCP (stdio, or HTTP with --http)'),
)

def command(name: str) -> Command:
    module, _, attr = next(where for n, where, _help in COMMANDS if n == name).partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), attr)


def named_command(argv: list[str], with_value: set[str]) -> str | None:
    """The subcommand argv names: its first word that is not a global option or its value
    (`with_value`: the global options that take one)."""
    names = {n for n, _where, _help in COMMANDS}
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in ("-h", "--help"):  # `clawmem --help search` shows the top-level help
            return None
        elif word in with_value:
            skip = True
        elif not word.startswith("-"):
            return word if word in names else None
    return None


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("clawmem")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


class VersionAction(argparse.Action):
    """`clawmem --version`: the installed version, looked up only when asked (every command's
    start pays for what its parser computes)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print clawmem's version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"clawmem {installed_version()}")
        parser.exit(0)


def build_parser(argv: list[str] | None = None, lean: bool = False) -> Parser:
    """The parser for argv: every subcommand with its help line, and the arguments of the one argv
    names (of all of them when argv is None). `lean`: when argv names a subcommand, only its parser
    (each subparser costs a search about half a millisecond); parse_args falls back to the whole
    parser when that one cannot parse argv."""
    p = Parser(prog="clawmem", description="Long-term memory for AI agents, kept as plain Markdown.",
               parents=[global_options(suppress=False)])
    p.add_argument("--version", action=VersionAction)
    p.add_argument("--color-system", choices=["auto", "truecolor", "256", "standard", "none"], help="terminal colours for the app")
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    with_value = {flag for action in p._actions if action.nargs != 0 for flag in action.option_strings}
    wanted = named_command(argv, with_value) if argv is not None else None
    for name, _where, help_ in COMMANDS:
        if lean and wanted is not None and name != wanted:
            continue
        parser = add_command(sub, name, help_)
        if argv is None or name == wanted:
            command(name).arguments(parser)
    p.built_for = wanted if argv is not None else None  # the one command whose arguments it has
    return p


def parse_args(argv: list[str]):
    """argv parsed by the lean parser, or by the whole one when the lean one refuses it or found
    another command than the one it was built for (a global option abbreviated so that its value
    looks like a command): the result and any error are the whole parser's."""
    from .base import UsageError

    lean = build_parser(argv, lean=True)
    try:
        args = lean.parse_args(argv)
    except UsageError:
        args = None
    # the command found may not be the one argv's scan guessed (`--ag search status`: "search" is
    # the abbreviated --agent's value), and then its arguments were never added: parse again with
    # every command's
    if args is None or (args.command is not None and args.command != lean.built_for):
        args = build_parser().parse_args(argv)
    return args
