"""`clawmem promote`: the daily-log passages searches keep recalling, ranked for MEMORY.md."""

from __future__ import annotations

from .base import EXIT_OK, EXIT_USAGE, Command, CommandError, dump_json, err, open_engine, printable, printable_line


def promote_arguments(s) -> None:
    s.add_argument("--apply", action="store_true", help="append the candidates to MEMORY.md (one undoable journal version each)")
    s.add_argument("--limit", type=int, help="at most N candidates")
    s.add_argument("--min-score", type=float, default=0.75, help="weighted score from 0 to 1 a candidate needs (default 0.75)")
    s.add_argument("--min-recall-count", type=int, default=3, help="times it was recalled (default 3)")
    s.add_argument("--min-unique-queries", type=int, default=2, help="distinct queries that recalled it (default 2)")
    s.add_argument("--max-age-days", type=float, help="leave out facts last recalled longer ago than this (OpenClaw's maxAgeDays)")
    s.add_argument("--confirm", action="append", default=[], metavar="KEY",
                   help="with --apply: write this candidate although it contradicts another fact (its key, from --json)")
    s.add_argument("--supersede", action="append", default=[], metavar="KEY",
                   help="with --apply: write this candidate and mark the promoted facts it contradicts superseded (kept, struck, dated)")
    s.add_argument("--retire", metavar="KEY", help="mark a promoted fact no longer true: kept in MEMORY.md, struck, left out of clawmem context")
    s.add_argument("--reinstate", metavar="KEY", help="undo --retire or a supersede of one promoted fact, and only that")
    s.add_argument("--archive", action="store_true",
                   help="move the oldest promoted bullets from MEMORY.md to memory/promoted-archive.md until it is within promote.memoryFileMaxChars")
    s.add_argument("--include-promoted", action="store_true", help="also list facts already promoted")
    s.add_argument("--json", action="store_true")


def cmd_promote(args) -> int:
    from clawmem.engine import PromoteError, PromoteGates, RecallUnreadable

    if args.limit is not None and args.limit < 0:
        raise CommandError(f"--limit: expected an integer >= 0, got {args.limit}", EXIT_USAGE)
    if not 0 <= args.min_score <= 1:
        raise CommandError(f"--min-score: expected a number from 0 to 1, got {args.min_score}", EXIT_USAGE)
    for flag, value in (("--min-recall-count", args.min_recall_count), ("--min-unique-queries", args.min_unique_queries)):
        if value < 0:
            raise CommandError(f"{flag}: expected an integer >= 0, got {value}", EXIT_USAGE)
    if args.max_age_days is not None and args.max_age_days < 0:
        raise CommandError(f"--max-age-days: expected a number >= 0, got {args.max_age_days:g}", EXIT_USAGE)
    eng = open_engine(args)
    if not eng.workspace.is_dir():
        raise CommandError(f"no workspace at {eng.workspace}: give --workspace, or set workspace in the clawmem config", EXIT_USAGE)
    gates = PromoteGates(args.min_score, args.min_recall_count, args.min_unique_queries, args.max_age_days)
    if args.retire and args.reinstate:
        raise CommandError("--retire and --reinstate: give one of them", EXIT_USAGE)
    if (args.confirm or args.supersede) and not args.apply:
        raise CommandError(f"{'--confirm' if args.confirm else '--supersede'}: only with --apply", EXIT_USAGE)
    if args.retire or args.reinstate:
        key = args.retire or args.reinstate
        try:
            fact = eng.retire_promoted(key) if args.retire else eng.reinstate_promoted(key)
        except PromoteError as exc:
            raise CommandError(str(exc)) from None
        eng.tools.index_now()
        eng.close()
        if args.json:
            print(dump_json({"retired" if args.retire else "reinstated": key, "fact": fact}, indent=2))
        else:
            print(printable(f"{'retired' if args.retire else 'reinstated'} {key}: {fact}"
                            + (f"\n(kept in MEMORY.md, struck; clawmem promote --reinstate {key} undoes it)" if args.retire else "")))
        return EXIT_OK
    archived = None
    try:
        if args.archive:
            archived = eng.archive_promoted()
        found, notes = eng.promotion_candidates(gates, limit=args.limit, include_promoted=args.include_promoted)
        for note in notes:
            err(note)
        ahead = eng.promotion_forecast(found) if not args.apply else None
        outcomes = eng.promote([c for c in found if not c.promoted], confirmed=set(args.confirm),
                               supersede=set(args.supersede)) if args.apply else None
        budget = eng.memory_budget()
    except (PromoteError, RecallUnreadable) as exc:
        raise CommandError(str(exc)) from None
    if (outcomes and any(o.promoted for o in outcomes)) or (archived and archived["moved"]):
        eng.tools.index_now()
    eng.close()
    if args.json:
        out = {"candidates": [c.as_json() for c in found], "gates": {"minScore": gates.min_score, "minRecallCount": gates.min_recall_count,
               "minUniqueQueries": gates.min_unique_queries, "maxAgeDays": gates.max_age_days}, "budget": budget}
        if ahead is not None:
            out["forecast"] = ahead
        if outcomes is not None:
            out["applied"] = [o.as_json() for o in outcomes]
        if archived is not None:
            out["archived"] = archived["moved"]
        print(dump_json(out, indent=2))
        return EXIT_OK
    if archived is not None:
        print(f"moved {archived['moved']} promoted bullet{'s' * (archived['moved'] != 1)} to memory/promoted-archive.md; "
              f"MEMORY.md is {archived['chars']} of {archived['limit']} characters\n")
    print(printable("\n".join(format_candidates(found, gates, hint=not args.apply))))
    if ahead and (ahead["after"] != ahead["chars"] or ahead["unfit"]):
        print("\n" + printable(forecast_line(ahead)))
    if budget["over"]:
        print(f"\nMEMORY.md is {budget['chars']} characters, over its budget of {budget['limit']} (promote.memoryFileMaxChars): "
              f"clawmem promote --archive moves the {len(budget['archive'])} oldest promoted bullet"
              f"{'s' * (len(budget['archive']) != 1)} to memory/promoted-archive.md")
    if outcomes is not None:
        print()
        done = [o for o in outcomes if o.promoted]
        for o in outcomes:
            print(printable_line(f"{'promoted' if o.promoted else 'skipped'} {o.citation}" + ("" if o.promoted else f": {o.reason}")))
            for k in o.superseded:
                print(printable_line(f"  superseded {k} (kept, struck; clawmem promote --reinstate {k} undoes it)"))
        moved = sum(o.archived for o in outcomes)
        if moved:
            print(f"{moved} oldest promoted bullet{'s' * (moved != 1)} moved to memory/promoted-archive.md first, "
                  f"to keep MEMORY.md within promote.memoryFileMaxChars ({budget['limit']}): MEMORY.md is {budget['chars']} characters")
        if done:
            print(f"{len(done)} promoted to MEMORY.md; a summary is in DREAMS.md; clawmem history MEMORY.md shows each, "
                  f"clawmem restore MEMORY.md --to VERSION undoes them")
    return EXIT_OK


def forecast_line(ahead: dict) -> str:
    """What --apply would do to MEMORY.md's size, said before it does it."""
    line = f"--apply would take MEMORY.md from {ahead['chars']} to {ahead['after']} characters"
    if ahead["limit"] > 0:
        line += f" (budget {ahead['limit']}, promote.memoryFileMaxChars)"
    if ahead["archive"]:
        line += (f", moving the {ahead['archive']} oldest promoted bullet{'s' * (ahead['archive'] != 1)} to "
                 "memory/promoted-archive.md first")
    if ahead["unfit"]:
        n = len(ahead["unfit"])
        line += (f"; {n} candidate{'s' * (n != 1)} would not fit and would wait: shorten MEMORY.md or raise "
                 "promote.memoryFileMaxChars")
    return line


def format_candidates(found: list, gates, hint: bool = True) -> list[str]:
    head = (f"{len(found)} candidate{'s' * (len(found) != 1)} (score >= {gates.min_score:g}, {gates.min_recall_count}+ recalls, "
            f"{gates.min_unique_queries}+ distinct queries)")
    lines = [head if found else head.replace(f"{len(found)} candidates", "No candidates")]
    for i, c in enumerate(found, 1):
        state = {"changed": "  [edited since recalled: will be skipped]", "deleted": "  [file deleted: will be skipped]"}.get(c.status, "")
        lines.append("")
        lines.append(f"{i}. {c.score:.3f}  {c.path}:{c.start}-{c.end}  {c.recalls} recalls · {c.unique_queries} queries · "
                     f"{len(c.days)} day{'s' * (len(c.days) != 1)} · last {c.last_recalled[:10]}"
                     + (" · already promoted" if c.promoted else "") + (f" · from {c.origin}" if c.origin != "clawmem" else "") + state)
        lines.append("   " + "  ".join(f"{k} {v:.2f}" for k, v in c.signals.items()))
        if c.queries:
            lines.append("   queries: " + ", ".join(f'"{q}"' for q in c.queries[:3]) + (f" (+{len(c.queries) - 3})" if len(c.queries) > 3 else ""))
        if c.fact:
            lines.append(f"   fact: {c.fact} ({c.entry_citation})")
        for other in c.conflicts:
            lines.append(f"   CONTRADICTS: {other}  [applied only with --confirm {c.key}]")
        if c.replaces:
            lines.append(f"   supersede: --apply --supersede {c.key} writes it and marks the promoted fact it contradicts "
                         "superseded (kept, struck, dated)")
        for n, ln in enumerate(c.lines, c.start):
            mark = "▶" if c.fact and c.fact_start <= n <= c.fact_end else " "
            lines.append(f"   {n:>4} {mark}│ {ln}")
    if hint and found and not all(c.promoted for c in found):
        lines += ["", "clawmem promote --apply writes them to MEMORY.md; the app's Promote screen (F10) reviews them one by one"]
    return lines


PROMOTE = Command("promote", promote_arguments, cmd_promote)
