"""`clawmem history` and `clawmem restore`: the journal of memory-file versions, and putting one back."""

from __future__ import annotations

import json
import os
import sys

from .base import EXIT_OK, EXIT_USAGE, Command, CommandError, dump_json, open_engine, printable, printable_line
from .indexing import index_written


def history_arguments(s) -> None:
    s.add_argument("path", nargs="?", help="one memory file (its changes are shown as diffs)")
    s.add_argument("--since", help="only changes seen on or after YYYY-MM-DD (or today, yesterday, 7d)")
    s.add_argument("--json", action="store_true", help="print the changes, with their diffs, as JSON")


def version_number(text: str) -> int:
    """--to as `history` prints it (v42) or as a number (42)."""
    import argparse

    digits = text.strip().removeprefix("v").removeprefix("V")
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"expected a version as history prints it (v42) or its number, got {text!r}")
    return int(digits)


version_number.__name__ = "version"


def restore_arguments(s) -> None:
    s.add_argument("path", help="the memory file")
    s.add_argument("--to", dest="version", required=True, type=version_number, metavar="VERSION",
                   help="the version history shows: v42 or 42")
    s.add_argument("--json", action="store_true")


def _journal_path(eng, path: str | None) -> str | None:
    from clawmem.engine import AccessDenied

    if path is None:
        return None
    try:
        return eng.resolve_allowed(path)[0]
    except AccessDenied as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


def _open_journal(eng):
    from clawmem.engine import JournalUnavailable

    try:
        return eng.open_journal()  # with the changes no sync has seen yet
    except JournalUnavailable as exc:
        raise CommandError(f"journal: {exc}") from None


def format_change(ch, with_diff: bool, color: bool) -> list[str]:
    import datetime as dt

    plus, minus = ch.counts()
    v = ch.after
    when = dt.datetime.fromtimestamp(v.ts).strftime("%Y-%m-%d %H:%M")
    if ch.created:
        what, was = f"created, +{plus} lines, {v.size} bytes", "(new file)"
    else:
        what, was = ("deleted" if v.deleted else f"+{plus} -{minus} lines, {v.size} bytes"), f"(was v{ch.before.id})"
    out = [printable_line(f"v{v.id}  {when}  {v.path}  {what}  by {v.writer}  {was}")]
    if with_diff:
        for ln in map(printable, ch.diff()[2:]):  # escaped before our own colour codes go in
            if color and ln.startswith("+"):
                ln = f"\x1b[32m{ln}\x1b[0m"
            elif color and ln.startswith("-"):
                ln = f"\x1b[31m{ln}\x1b[0m"
            elif color and ln.startswith("@@"):
                ln = f"\x1b[36m{ln}\x1b[0m"
            out.append("    " + ln)
    return out


def cmd_history(args) -> int:
    from clawmem.engine import BadValue, human

    eng = open_engine(args)
    path = _journal_path(eng, args.path)
    try:
        since = human.parse_since(args.since) if args.since else None
    except BadValue as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    with _open_journal(eng) as jr:
        changes = jr.changes(path, since)
        if args.json:
            print(dump_json([c.as_json() for c in changes], indent=1))
            return EXIT_OK
        if not changes:
            kept = jr.versions(path)
            scope = path or "the memory files"
            print(f"no changes to {scope} recorded{' since ' + args.since if args.since else ''}"
                  + (f" (the journal holds {len(kept)} version{'s' * (len(kept) != 1)})" if kept else ""))
            return EXIT_OK
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        for c in changes:
            print("\n".join(format_change(c, path is not None, color)))
        if path is None:
            print("(clawmem history PATH shows the diffs; clawmem restore PATH --to VERSION puts a version back)")
    return EXIT_OK


def cmd_restore(args) -> int:
    from clawmem.engine import AccessDenied, BadValue, JournalUnavailable

    eng = open_engine(args)
    path = _journal_path(eng, args.path)
    try:
        done = eng.restore(path, args.version)
    except JournalUnavailable as exc:
        raise CommandError(f"journal: {exc}") from None
    except (AccessDenied, BadValue) as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot write ({exc.strerror or exc}); nothing was changed") from None
    index_error = index_written(eng)
    undo = done["undo"]
    if args.json:
        print(json.dumps({**done.as_json(), "indexed": index_error is None}))
    else:
        print(f"restored {path} to v{args.version} (now v{done['version']})" + (f"; undo: clawmem restore {path} --to v{undo}" if undo else ""))
    return EXIT_OK


HISTORY = Command("history", history_arguments, cmd_history)
RESTORE = Command("restore", restore_arguments, cmd_restore)
