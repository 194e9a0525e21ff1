"""`clawmem search` and `clawmem get`: ask the memory, read what a hit cites."""

from __future__ import annotations

import os
import sys

from .base import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Command, CommandError, dump_json, err, open_engine, printable


def search_arguments(s) -> None:
    s.add_argument("query", nargs="*", help="what to look for (or --query)")
    s.add_argument("--query", dest="query_option", metavar="TEXT", help="the query, as `openclaw memory search --query` (wins over the positional one)")
    s.add_argument("--max-results", type=int)
    s.add_argument("--min-score", type=float)
    s.add_argument("--now", help="evaluate as of this date (YYYY-MM-DD), for decay and date phrases")
    s.add_argument("--after", help="only dated entries on or after YYYY-MM-DD")
    s.add_argument("--before", help="only dated entries before YYYY-MM-DD")
    s.add_argument("--explain", action="store_true", help="show how each score was made")
    s.add_argument("--show-hidden", action="store_true", help="include results below the score threshold")
    s.add_argument("--no-date-filter", action="store_true", help="do not read time phrases in the query as a date filter")
    s.add_argument("--fleet", action="store_true", help="search the fleet database (every agent this one may read) instead")
    s.add_argument("--agents", metavar="A,B", help="with --fleet: only these agents")
    s.add_argument("--private", action="store_true", help="do not record this search's daily-log hits for clawmem promote")
    s.add_argument("--json", action="store_true")


def line_number(option: str):
    """An argparse type for --from / --lines: a whole number from 1 (lines count from 1)."""

    def parse(text: str) -> int:
        import argparse

        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if n < 1:
            raise argparse.ArgumentTypeError(f"{n}: lines count from 1 (the first line is {option} 1)")
        return n

    return parse


def get_arguments(s) -> None:
    s.add_argument("path")
    s.add_argument("--from", dest="from_line", type=line_number("--from"), metavar="LINE", help="the first line (from 1)")
    s.add_argument("--lines", type=line_number("--lines"), metavar="N", help="how many lines")
    s.add_argument("--json", action="store_true")


def cmd_search(args) -> int:
    from clawmem.engine import BadValue, IndexUnavailable, SearchDisabled

    query = (args.query_option if args.query_option is not None else " ".join(args.query)).strip()
    if not query:
        raise CommandError("Missing search query. Provide a positional query or use --query <text>.", EXIT_USAGE)
    if args.agents and not args.fleet:
        raise CommandError("--agents picks agents of the fleet: add --fleet", EXIT_USAGE)
    if args.fleet and args.now:
        raise CommandError("--now applies to this agent's memory only: drop it with --fleet", EXIT_USAGE)
    from clawmem.engine import SearchRequest

    request = SearchRequest(max_results=args.max_results, min_score=args.min_score, now=args.now, after=args.after,
                            before=args.before, explain=args.explain, show_hidden=args.show_hidden,
                            date_filter=False if args.no_date_filter else None, private=args.private,
                            agents=[a.strip() for a in args.agents.split(",") if a.strip()] if args.agents else None)
    eng = open_engine(args, need_workspace=not args.fleet)  # the fleet is searched from any host
    if args.fleet:
        from clawmem.engine import FleetError

        search, failed = eng.fleet_search, FleetError
    else:
        def spawn(_reason):
            # a stale index is brought up to date by a detached `clawmem index`; this search does not
            # wait (sync.py loads only then: most searches find the index fresh)
            return eng.index_in_background()

        eng.sync_when_asked(spawn)
        search, failed = eng.search, IndexUnavailable
    try:
        res = search(query, request)
    except BadValue as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except failed as exc:
        raise CommandError(str(exc)) from None
    except SearchDisabled as exc:
        # the agent tool's shape, so a script gets what an agent gets
        err(str(exc))
        if args.json:
            print(dump_json(eng.tools.disabled(str(exc)), indent=2))
        return EXIT_FAILED
    finally:
        if args.fleet:
            eng.close()
    if args.json:
        print(dump_json(res, indent=2))
        return EXIT_OK
    from ..present import format_results  # here: a --json search (an agent's) never formats text

    print(format_results(res, explain=args.explain, query=query, color=sys.stdout.isatty() and "NO_COLOR" not in os.environ))
    return EXIT_OK


def cmd_get(args) -> int:
    from clawmem.engine import AccessDenied, BadValue, FileUnreadable

    eng = open_engine(args, need_workspace=not args.path.startswith("fleet:"))
    try:
        if args.path.startswith("fleet:"):  # a fleet hit's ref: its stored text, the file being on another host
            from clawmem.engine import FleetError

            try:
                res = eng.fleet_get(args.path, args.from_line, args.lines)
            except FleetError as exc:
                raise CommandError(str(exc)) from None
        else:
            res = eng.get(args.path, args.from_line, args.lines)
            # --json is the tool's payload: a missing allowed file is {path, text: ""} (SPEC);
            # a person reading text gets told it is missing rather than an empty line
            if not args.json and not res["text"] and not _exists(eng, args.path):
                raise CommandError(f"{args.path}: no such memory file in {eng.workspace} (paths are relative to it, "
                                   "e.g. MEMORY.md or memory/2026-02-10.md)")
    except FileUnreadable as exc:  # the path was right, the read failed
        raise CommandError(str(exc), EXIT_FAILED) from None
    except (AccessDenied, BadValue) as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    if res.get("fleet") and not res["text"]:  # nothing stored under that name: said, not an empty success
        raise CommandError(f"{args.path}: {res.get('note') or 'nothing stored'}")
    if args.json:
        print(dump_json(res))
    else:
        sys.stdout.write(printable(res["text"]) + ("" if res["text"].endswith("\n") or not res["text"] else "\n"))
    return EXIT_OK


def _exists(eng, path: str) -> bool:
    """Whether the file `get` read is there (an empty file is; a missing one reads as "")."""
    from clawmem.engine import AccessDenied

    raw = path.strip()
    if raw.startswith("sessions/"):
        return (eng.cfg.sessions_dir() / raw[len("sessions/"):]).is_file()
    try:
        _, abs_p = eng.resolve_allowed(raw)
    except AccessDenied:
        return True  # refused, not missing: get said so already
    return abs_p.is_file()


SEARCH = Command("search", search_arguments, cmd_search)
GET = Command("get", get_arguments, cmd_get)
