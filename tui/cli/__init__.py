"""The `clawmem` command: status, index, search, get, watch, context, mcp, model, history, restore,
serve, flush-prompt, archive, fleet, promote; no subcommand opens the app.

One module per command group (parser.py lists them); base.py holds what they share.
Imports Textual only when it opens the app, so `clawmem search` starts fast.
Exit codes: 0 success (an empty result set too), 2 usage or configuration error, 3 the
operation failed. A failure is one line on stderr; given `--json`, also
`{"error": line, "exitCode": N}` on stdout, so a script reading stdout sees it too.
"""

from __future__ import annotations

import gc
import os
import sys

from .base import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CommandError, UsageError, err, fail, printable_streams
from .parser import command, parse_args


# commands that end within milliseconds of starting, run without the cyclic garbage collector
SHORT = {"search", "get"}


def main(argv: list[str] | None = None) -> int:
    # A command's start allocates tens of thousands of objects that all stay alive (modules,
    # classes, argparse's actions), and the cyclic GC scanned them again and again: ~5% of a
    # `clawmem search`'s CPU. A search or a get ends in milliseconds, so it runs without it;
    # every other command (indexing, the app, the servers run long) gets it back once parsed,
    # and a caller in the same process (tests) gets back the state it had.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(sys.argv[1:] if argv is None else argv, collecting)
    finally:
        if collecting:
            gc.enable()


def _main(argv: list[str], collecting: bool) -> int:
    printable_streams()
    try:
        args = parse_args(argv)
    except UsageError as exc:
        return fail(str(exc), EXIT_USAGE, "--json" in argv)
    if collecting and args.command not in SHORT:
        gc.enable()
    if args.command is None:
        return run_app(args)
    from clawmem.engine import BadValue, ClawmemError, ConfigError

    as_json = bool(getattr(args, "json", False))
    try:
        return command(args.command).run(args)
    except CommandError as exc:
        return fail(f"clawmem: {exc}", exc.code, as_json)
    except BrokenPipeError:  # the reader went away (`| head`); before ClawmemError, which wraps it across the face
        return EXIT_OK
    except (ConfigError, BadValue) as exc:
        return fail(f"clawmem: {exc}", EXIT_USAGE, as_json)
    except ClawmemError as exc:  # every refusal or failure the engine words for a person: one line
        return fail(f"clawmem: {exc}", EXIT_FAILED, as_json)
    except KeyboardInterrupt:
        err("interrupted")
        return 130


def run_app(args) -> int:
    if args.color_system:
        os.environ["TEXTUAL_COLOR_SYSTEM"] = args.color_system
    from clawmem.engine import ConfigError
    from clawmem.tui.app import main as app_main  # Textual loads only here

    try:
        return app_main(args)
    except ConfigError as exc:
        err(str(exc))
        return EXIT_USAGE
