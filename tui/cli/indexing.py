"""`clawmem index` and `clawmem watch`: bring the index up to date, once or continuously."""

from __future__ import annotations

import argparse
import json

from .base import EXIT_FAILED, EXIT_OK, Command, CommandError, add_all_agents, engines, err, open_engine, printable_line
from .progress import ProgressLine, render_event


def index_arguments(s) -> None:
    s.add_argument("--force", action="store_true", help="rebuild everything into a new index file")
    s.add_argument("--quiet", action="store_true", help="no progress output")
    s.add_argument("--verbose", action="store_true", help="first print the provider, model, sources and extra paths")
    add_all_agents(s)
    s.add_argument("--json", action="store_true", help="print the summary as JSON (an array with --all-agents)")
    # what a search that found the index stale starts: it never rebuilds an index built with other settings
    s.add_argument("--background", action="store_true", help=argparse.SUPPRESS)


def watch_arguments(s) -> None:
    s.add_argument("--once", action="store_true", help="sync once and exit")


def run_index_job(eng, out: ProgressLine, force: bool = False, reason: str = "cli"):
    """Run one index job with progress on `out`: (JobFinished, None) or (None, why it failed)."""
    from clawmem.engine import IndexFailed, LockBusy, events as ev

    try:
        # warnings of a background (--quiet) index end up in the log file; a one-shot command logs
        # only its job's events, written without the logging module
        eng.setup_logging(events_only=True)
    except OSError:
        pass
    finished = None
    try:
        for e in eng.index(force=force, reason=reason):
            render_event(e, out)
            if isinstance(e, (ev.Warning, ev.Error, ev.ProviderSwitched, ev.JobFinished)):
                eng.log_event(e)
            if isinstance(e, ev.JobFinished):
                finished = e
    except LockBusy as exc:
        return None, str(exc)
    except OSError as exc:
        return None, f"{getattr(exc, 'filename', '') or eng.index_path}: {exc.strerror or exc}; check permissions and free space"
    except IndexFailed as exc:  # disk full, read-only file: what was committed stays searchable
        return None, str(exc)
    if finished is None:
        return None, "the index job ended before it finished"
    return finished, None


def index_written(eng) -> str | None:
    """After a command wrote a memory file: index it at once, so the next search finds it, and
    close the engine; why it could not be indexed (a busy writer, the watcher, picks it up), or None."""
    _, index_error = run_index_job(eng, ProgressLine(quiet=True), reason="write")
    eng.close()
    return index_error


def index_header(eng) -> list[str]:
    """What `index --verbose` prints first, as OpenClaw's `memory index --verbose` does: provider, model,
    sources, extra paths, fallback."""
    plan = eng.plan()
    usable = plan.usable()
    provider = f"{usable[0].name} (requested: {plan.configured})" if usable else f"none: keyword-only ({plan.keyword_reason()})"
    fallback = ", ".join(c.name for c in usable[1:]) or "none"
    extra = [str(p) for p in eng.extra_paths()]
    return [
        f"Memory index ({eng.cfg.agent_id})",
        f"Provider:    {provider}",
        f"Model:       {(usable[0].model or 'default') if usable else '-'}",
        f"Sources:     {', '.join(eng.cfg['sources'])}",
        f"Extra paths: {', '.join(extra) or 'none'}",
        f"Fallback:    {fallback}",
        f"Workspace:   {eng.workspace}",
        f"Index:       {eng.index_path}",
    ]


def cmd_index(args) -> int:
    from clawmem.engine import vectors_serving

    many = args.all_agents
    out = ProgressLine(quiet=args.quiet)
    summaries: list[dict] = []
    failed = False
    for target, eng, config_error in engines(args):
        if config_error:
            err(f"index failed ({target.agent_id}): {config_error}")
            summaries.append({"agentId": target.agent_id, "error": str(config_error)})
            failed = True
            continue
        try:
            if args.verbose:
                for line in index_header(eng):
                    out.line(line)
            elif many:
                out.line(f"Memory index ({eng.cfg.agent_id})")
            finished, error = run_index_job(eng, out, force=args.force, reason="background" if args.background else "cli")
            if error:
                if not many:
                    raise CommandError(error)
                err(f"index failed ({eng.cfg.agent_id}): {error}")
                summaries.append({"agentId": eng.cfg.agent_id, "workspace": str(eng.workspace), "error": error})
                failed = True
                continue
            summaries.append({"agentId": eng.cfg.agent_id, "files": finished.files_indexed, "removed": finished.files_removed,
                              "unchanged": finished.files_unchanged, "embedded": finished.chunks_embedded,
                              "seconds": round(finished.seconds, 3)})
            if not args.json:
                out.line(finished.describe())
                if not args.quiet:
                    st = eng.index_summary()  # not a whole status: that lists the workspace again
                    pv = st["provider"]
                    mode = f"hybrid search with {pv['active']} ({pv['model']})" if vectors_serving(pv) else f"keyword-only search ({pv['reason']})"
                    out.line(f"index: {st['index']['path']}: {st['index']['files']} files, {st['index']['chunks']} chunks; {mode}")
        finally:
            eng.close()
    if args.json:
        if many:
            print(json.dumps(summaries))
        else:
            print(json.dumps({k: v for k, v in summaries[0].items() if k != "agentId"}))
    return EXIT_FAILED if failed else EXIT_OK


def cmd_watch(args) -> int:
    # a running watcher waits for its workspace to appear; one sync of a missing one is a usage error
    eng = open_engine(args, persistent=True, need_workspace=args.once)
    return eng.run_watcher(once=args.once, printer=lambda line: print(printable_line(line), flush=True))


INDEX = Command("index", index_arguments, cmd_index)
WATCH = Command("watch", watch_arguments, cmd_watch)
