"""What every command shares: exit codes and errors, the global options, printing and opening the engine.

Imports nothing heavy: `clawmem search` loads this on every question an agent asks.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

EXIT_OK, EXIT_USAGE, EXIT_FAILED = 0, 2, 3


class UsageError(Exception):
    pass


class CommandError(Exception):
    """A command failed: `message` is the one line for the user, `code` the exit code."""

    def __init__(self, message: str, code: int = EXIT_FAILED):
        super().__init__(message)
        self.code = code


class Parser(argparse.ArgumentParser):
    _building = False

    def error(self, message: str) -> None:  # one line, exit 2, as for every usage error
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")

    # argparse makes a help formatter for each argument added (to check its metavar) and for the
    # subcommands' prog prefix ("clawmem"); a formatter asks the terminal's width, which imports
    # shutil with bz2 and lzma: ~2 ms of every search, for help text a search never prints. While
    # building, a fixed width does (neither check wraps); help and usage still get the terminal's.
    def add_argument(self, *args, **kwargs):
        self._building = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._building = False

    def add_subparsers(self, **kwargs):
        self._building = True
        try:
            return super().add_subparsers(**kwargs)
        finally:
            self._building = False

    def _get_formatter(self):
        return self.formatter_class(prog=self.prog, width=1000) if self._building else super()._get_formatter()


def global_options(suppress: bool) -> Parser:
    """The options every command takes, as a parent parser. A subcommand's copies default to
    SUPPRESS, so `clawmem --workspace W status` keeps the W given before the subcommand."""
    p = Parser(add_help=False)
    d = argparse.SUPPRESS if suppress else None
    p.add_argument("--workspace", default=d, help="agent workspace (holds MEMORY.md and memory/)")
    p.add_argument("--config", default=d, help="config file (default: ~/.config/clawmem/config.toml)")
    p.add_argument("--agent", default=d, help="agent id (default: main)")
    return p


class Command:
    """One subcommand: its name, what adds its arguments to its parser, and what runs it (returns
    the exit code); its help line is in parser.py's table. A plain class: `typing` would cost
    every search milliseconds."""

    def __init__(self, name: str, arguments, run):
        self.name, self.arguments, self.run = name, arguments, run


def add_command(sub, name: str, help: str) -> Parser:
    """A subcommand's parser, with the global options."""
    return sub.add_parser(name, help=help, parents=[global_options(suppress=True)])


def add_all_agents(p: Parser) -> None:
    p.add_argument("--all-agents", action="store_true", help="every agent with an index, and every agent in OpenClaw's agents.list")


def open_engine(args, persistent: bool = False, need_workspace: bool = True):
    from clawmem.engine import Engine

    eng = Engine.open(config_path=args.config, workspace=args.workspace, agent=args.agent, persistent=persistent)
    if need_workspace:
        check_workspace(eng.workspace)
    return eng


def check_workspace(ws: Path) -> None:
    """A missing workspace, or a file where it should be, is a usage error, not "0 files, clean"."""
    if ws.is_file():
        raise CommandError(f"{ws} is a file, not a workspace folder: give --workspace with the folder that holds "
                           "MEMORY.md and memory/, or set workspace in the clawmem config", EXIT_USAGE)
    if not ws.is_dir():
        raise CommandError(f"no workspace at {ws}: create it (the app offers to), give --workspace, "
                           "or set workspace in the clawmem config", EXIT_USAGE)


def dump_json(obj, indent: int | None = None) -> str:
    """JSON as clawmem prints it: non-ASCII text as is, every control character escaped.
    json.dumps escapes only C0; DEL and the C1 codes (U+009B is a one-byte CSI to some
    terminals) are escaped too, so `--json` printed to a terminal is as safe as the text."""
    from clawmem.engine import human

    return human.json_visible(json.dumps(obj, indent=indent, ensure_ascii=False))


def printable(raw: str) -> str:
    """Memory text is never printed raw: control sequences are shown visibly (engine.text)."""
    from clawmem.engine import human  # here: the engine loads only once a command runs

    return human.printable(raw)


def printable_line(raw: str) -> str:
    """One line (a file name, a log line) with newlines and tabs shown too (engine.text)."""
    from clawmem.engine import human

    return human.printable_line(raw)


def err(msg: str) -> None:
    print(printable(f"clawmem: {msg}"), file=sys.stderr)


def fail(line: str, code: int, as_json: bool) -> int:
    """Report a failure: the line on stderr and, for `--json`, the JSON error on stdout."""
    print(printable(line), file=sys.stderr)
    if as_json:
        print(dump_json({"error": line, "exitCode": code}))
    return code


def _escape_unshowable(exc: UnicodeError):
    """What a terminal that cannot show a character gets instead: its \\u escape (valid JSON too)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    units = exc.object[exc.start:exc.end].encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2)), exc.end


def printable_streams() -> None:
    """Under LANG=C (an ASCII terminal) printing a note in another script must not kill the command."""
    import codecs

    codecs.register_error("clawmem-escape", _escape_unshowable)
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if enc and enc != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="clawmem-escape")


def targets(args) -> list:
    """The agents a command covers: [None] (the one the options name) unless --all-agents."""
    if not getattr(args, "all_agents", False):
        return [None]
    if args.agent or args.workspace:
        raise CommandError("--all-agents covers every agent, each with its own workspace; drop --agent and --workspace", EXIT_USAGE)
    from clawmem.engine import Engine, load_config

    load_config(args.config)  # a broken config file is one usage error, not one per agent
    return Engine.all_agents() or [None]


def engines(args):
    """(agent, engine, None) for each agent the command covers; with --all-agents, an agent whose
    config is broken comes as (agent, None, the ConfigError) and the others still run."""
    from clawmem.engine import ConfigError

    for target in targets(args):
        try:
            eng = engine_for(args, target)
        except ConfigError as exc:
            if not args.all_agents:
                raise
            # the id came from OpenClaw's agents.list or an index, not from a --agent typed
            yield target, None, ConfigError(re.sub(r"^--agent: ", "agent id: ", str(exc)))
            continue
        yield target, eng, None


def engine_for(args, target):
    if target is None:
        return open_engine(args)
    from clawmem.engine import Engine

    # --all-agents: an agent whose workspace does not exist yet is reported with 0 files
    return Engine.open(config_path=args.config, workspace=target.workspace, agent=target.agent_id)
