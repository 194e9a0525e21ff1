"""An agent loop's session commands: `context` at its start, `flush-prompt` before compaction,
`archive` at its end."""

from __future__ import annotations

import sys

from .base import EXIT_OK, EXIT_USAGE, Command, CommandError, dump_json, err, open_engine, printable
from .indexing import index_written


def flush_prompt_arguments(s) -> None:
    s.add_argument("--date", help="the daily log's date, YYYY-MM-DD (default: today, local time)")
    s.add_argument("--json", action="store_true", help="print {systemPrompt, prompt, date, targetFile, currentTime, ...}")


def archive_arguments(s) -> None:
    s.add_argument("session", metavar="SESSION.jsonl", help="an OpenClaw session transcript")
    s.add_argument("--slug", help="the file name's slug (default: words of the first user message, else HHMM)")
    s.add_argument("--json", action="store_true")


def context_arguments(s) -> None:
    s.add_argument("--max-chars", type=int, help="per-file cap (default: OpenClaw's bootstrapMaxChars, 20000)")
    s.add_argument("--session", choices=["main", "group"], default="main", help="main (private) sessions also get MEMORY.md")
    s.add_argument("--json", action="store_true")


def cmd_flush_prompt(args) -> int:
    import datetime as dt
    import re


    day = None
    if args.date is not None:
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date.strip()):
                raise ValueError
            day = dt.date.fromisoformat(args.date.strip())
        except ValueError:
            raise CommandError(f"--date: expected a date like 2026-02-10, got {args.date!r}", EXIT_USAGE) from None
    eng = open_engine(args, need_workspace=False)
    plan = eng.flush_plan(day=day)
    for w in plan.warnings:
        err(f"warning: {w}")
    if args.json:
        print(dump_json(plan.as_json(), indent=2))
        return EXIT_OK
    print(f"# memory flush for {plan.target} ({'default prompts' if plan.source == 'default' else 'from ' + plan.source})")
    if not plan.enabled:
        print("# note: OpenClaw has compaction.memoryFlush.enabled = false")
    print("\n## System prompt\n")
    print(plan.system_prompt)
    print("\n## Prompt\n")
    print(plan.prompt)
    return EXIT_OK


def cmd_archive(args) -> int:
    from clawmem.engine import ArchiveError

    eng = open_engine(args)
    try:
        made = eng.archive(args.session, slug=args.slug)
    except ArchiveError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except OSError as exc:
        raise CommandError(f"{exc.filename or eng.workspace}: cannot write the archive ({exc.strerror or exc}); check permissions and free space") from None
    index_error = index_written(eng)
    if index_error:
        err(f"warning: {made.path} written but not indexed yet: {index_error}")
    if args.json:
        print(dump_json({**made.as_json(), "indexed": index_error is None}))
    else:
        print(f"wrote {made.path} ({made.messages} messages){'' if index_error is None else '; not indexed yet'}")
    return EXIT_OK




def cmd_context(args) -> int:
    from clawmem.engine import BadValue

    try:
        ctx = open_engine(args).context(max_chars=args.max_chars, session=args.session)
    except BadValue as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    if args.json:
        print(dump_json(ctx, indent=2))
    else:
        sys.stdout.write(printable(ctx["text"]))
    return EXIT_OK


FLUSH_PROMPT = Command("flush-prompt", flush_prompt_arguments, cmd_flush_prompt)
ARCHIVE = Command("archive", archive_arguments, cmd_archive)
CONTEXT = Command("context", context_arguments, cmd_context)
