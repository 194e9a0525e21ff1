"""The `clawmem` command: status, index, search, get, watch; no subcommand opens the app.

Imports Textual only when it opens the app, so `clawmem search` starts fast.
Exit codes (SPEC §8): 0 success (an empty result set too), 2 usage or configuration
error, 3 the operation failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

EXIT_OK, EXIT_USAGE, EXIT_FAILED = 0, 2, 3


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as for every usage error
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _globals(p: argparse.ArgumentParser, suppress: bool) -> None:
    d = argparse.SUPPRESS if suppress else None
    p.add_argument("--workspace", default=d, help="agent workspace (holds MEMORY.md and memory/)")
    p.add_argument("--config", default=d, help="config file (default: ~/.config/clawmem/config.toml)")
    p.add_argument("--agent", default=d, help="agent id (default: main)")


def build_parser() -> Parser:
    p = Parser(prog="clawmem", description="Long-term memory for AI agents, kept as plain Markdown.")
    _globals(p, suppress=False)
    p.add_argument("--color-system", choices=["auto", "truecolor", "256", "standard", "none"], help="terminal colours for the app")
    sub = p.add_subparsers(dest="command", parser_class=Parser)

    s = sub.add_parser("status", help="index, freshness, provider and vector state")
    _globals(s, True)
    s.add_argument("--deep", action="store_true", help="also probe the embedding provider and list issues")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("index", help="bring the index up to date (all files, all transcripts)")
    _globals(s, True)
    s.add_argument("--force", action="store_true", help="rebuild everything into a new index file")
    s.add_argument("--quiet", action="store_true", help="no progress output")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")

    s = sub.add_parser("search", help="hybrid search over the memory files")
    _globals(s, True)
    s.add_argument("query", nargs="+")
    s.add_argument("--max-results", type=int)
    s.add_argument("--min-score", type=float)
    s.add_argument("--now", help="evaluate as of this date (YYYY-MM-DD), for decay and date phrases")
    s.add_argument("--after", help="only dated entries on or after YYYY-MM-DD")
    s.add_argument("--before", help="only dated entries before YYYY-MM-DD")
    s.add_argument("--explain", action="store_true", help="show how each score was made")
    s.add_argument("--show-hidden", action="store_true", help="include results below the score threshold")
    s.add_argument("--no-date-filter", action="store_true", help="do not read time phrases in the query as a date filter")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("get", help="read lines of a memory file (or a session hit)")
    _globals(s, True)
    s.add_argument("path")
    s.add_argument("--from", dest="from_line", type=int)
    s.add_argument("--lines", type=int)
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("watch", help="keep the index fresh in the foreground (sync daemon)")
    _globals(s, True)
    s.add_argument("--once", action="store_true", help="sync once and exit")
    return p


def _engine(args, persistent: bool = False):
    from clawmem.engine import Engine

    return Engine.open(config_path=args.config, workspace=args.workspace, agent=args.agent, persistent=persistent)


def _err(msg: str) -> None:
    print(f"clawmem: {msg}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    if args.command is None:
        return run_app(args)
    from clawmem.engine.config import ConfigError

    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK


def run_app(args) -> int:
    if args.color_system:
        os.environ["TEXTUAL_COLOR_SYSTEM"] = args.color_system
    from clawmem.engine.config import ConfigError
    from clawmem.tui.app import main as app_main  # Textual loads only here

    try:
        return app_main(args)
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_USAGE


# ---------------------------------------------------------------------------- status


def cmd_status(args) -> int:
    from clawmem.engine.api import IndexUnavailable

    eng = _engine(args)
    try:
        st = eng.status(deep=args.deep)
    except IndexUnavailable as exc:
        _err(str(exc))
        return EXIT_FAILED
    if args.json:
        print(json.dumps(st, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(format_status(st))
    return EXIT_OK


def format_status(st: dict) -> str:
    fr = st["freshness"]
    pv = st["provider"]
    vec = st["vector"]
    lines = [
        f"Workspace: {st['workspace']}  (agent {st['agentId']})",
        f"Index:     {st['index']['path']}",
        f"           {st['index']['files']} files, {st['index']['chunks']} chunks, schema {st['index']['schemaVersion']}",
    ]
    if st["index"].get("error"):
        lines.append(f"           error: {st['index']['error']}")
    fresh = "clean" if not fr["dirty"] else f"{fr['filesBehind']} files behind"
    lines.append(f"Fresh:     {fresh} ({fr['filesIndexed']} indexed / {fr['filesOnDisk']} on disk), last sync {fr['lastSync'] or 'never'}")
    if fr.get("behind"):
        lines.append("           behind: " + ", ".join(fr["behind"][:5]) + (" …" if len(fr["behind"]) > 5 else ""))
    lines.append(f"Watcher:   {fr['watcher']}" + (f"; {fr['job']}" if fr.get("job") else ""))
    active = f"{pv['active']} ({pv['model']})" if pv["active"] else "none: keyword-only"
    lines.append(f"Provider:  {active}  [configured: {pv['configured']}]")
    if pv.get("reason"):
        lines.append(f"           {pv['reason']}")
    if pv.get("fallback"):
        lines.append(f"           fallback from {pv['fallback']['from']}: {pv['fallback']['reason']}")
    if pv.get("lastError"):
        lines.append(f"           {pv['lastError']}")
    if pv.get("probe"):
        pr = pv["probe"]
        lines.append(f"           probe: {'ok, ' + str(pr['dims']) + ' dims, ' + str(pr['ms']) + ' ms' if pr['ok'] else 'failed: ' + pr['error']}")
    backend = f"{vec['backend']} {vec['version'] or ''}".strip()
    lines.append(f"Vectors:   {backend}" + (f" ({vec['reason']})" if vec.get("reason") else ""))
    for m in vec.get("models", []):
        lines.append(f"           {m['provider']}/{m['model']}: {m['vectors']} vectors, {m['dims']} dims")
    lines.append(f"FTS:       {'ready' if st['fts']['available'] else 'unavailable: ' + st['fts'].get('reason', '')}")
    cfg = st["config"]
    lines.append(f"Config:    {cfg['file']}{'' if cfg['fileExists'] else ' (not created; defaults in use)'}")
    if cfg.get("openclaw"):
        lines.append(f"OpenClaw:  {cfg['openclaw']} (read as defaults)")
    for w in cfg.get("warnings") or []:
        lines.append(f"           warning: {w}")
    for k in cfg.get("openclawIgnored") or []:
        lines.append(f"           ignored OpenClaw key: {k}")
    if "cache" in st:
        c = st["cache"]
        lines.append(f"Cache:     {c.get('entries', '?')} / {c.get('maxEntries', '?')} embeddings ({c.get('path', c.get('error'))})")
    lines.append(f"Log:       {st['log']}")
    for issue in st.get("issues") or []:
        lines.append(f"Issue:     {issue}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- index


class ProgressLine:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.width = 0

    def show(self, text: str, force: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if not force and now - self.last < (0.1 if self.tty else 2.0):
            return
        self.last = now
        if self.tty:
            pad = max(0, self.width - len(text))
            sys.stderr.write("\r" + text + " " * pad)
            self.width = len(text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def line(self, text: str) -> None:
        if self.quiet:
            return
        if self.tty and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            self.width = 0
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def bar(done: int, total: int, width: int = 24) -> str:
    frac = done / total if total else 1.0
    full = int(frac * width)
    return "[" + "#" * full + "." * (width - full) + "]"


def render_event(e, out: ProgressLine) -> None:
    from clawmem.engine import events as ev

    if isinstance(e, ev.Progress):
        unit = "files" if e.phase == "files" else "chunks embedded"
        eta = f"  eta {e.eta:.0f}s" if e.eta is not None and e.done < e.total else ""
        out.show(f"{bar(e.done, e.total)} {e.done}/{e.total} {unit}  {e.rate:.0f}/s{eta}", force=e.done == e.total)
    elif isinstance(e, ev.Download):
        finished = e.total is not None and e.done >= e.total
        progress = f"{bar(e.done, e.total)} " if e.total else ""
        out.show(f"{progress}{e.describe()}", force=finished or e.done == 0)
        if finished:
            out.line(f"downloaded {e.uri} ({e.total / 1e6:.1f} MB)")
    elif isinstance(e, (ev.Warning, ev.Error, ev.ProviderSwitched)):
        out.line(e.describe())
    elif isinstance(e, ev.JobStarted):
        out.line(e.describe())


def cmd_index(args) -> int:
    from clawmem.engine import events as ev
    from clawmem.engine.lock import LockBusy
    from clawmem.engine.store import DatabaseError

    eng = _engine(args)
    out = ProgressLine(quiet=args.quiet)
    finished = None
    from clawmem.engine import logs

    try:
        logs.setup()  # warnings of a background (--quiet) index end up in the log file
    except OSError:
        pass
    try:
        for e in eng.index(force=args.force, reason="cli"):
            render_event(e, out)
            if isinstance(e, (ev.Warning, ev.Error, ev.ProviderSwitched, ev.JobFinished)):
                logs.log_event(e)
            if isinstance(e, ev.JobFinished):
                finished = e
    except LockBusy as exc:
        _err(str(exc))
        return EXIT_FAILED
    except OSError as exc:
        _err(f"{getattr(exc, 'filename', '') or eng.index_path}: {exc.strerror or exc}; check permissions and free space")
        return EXIT_FAILED
    except DatabaseError as exc:  # disk full, read-only file: what was committed stays searchable
        _err(f"{eng.index_path}: {exc}; check free space and permissions, then run `clawmem index` again")
        return EXIT_FAILED
    if finished is None:
        return EXIT_FAILED
    if args.json:
        print(json.dumps({"files": finished.files_indexed, "removed": finished.files_removed, "unchanged": finished.files_unchanged,
                          "embedded": finished.chunks_embedded, "seconds": round(finished.seconds, 3)}))
    else:
        out.line(finished.describe())
        if not args.quiet:
            st = eng.status()
            pv = st["provider"]
            mode = f"hybrid search with {pv['active']} ({pv['model']})" if pv["active"] and not pv.get("reason") else f"keyword-only search ({pv['reason']})"
            out.line(f"index: {st['index']['path']}: {st['index']['files']} files, {st['index']['chunks']} chunks; {mode}")
    return EXIT_OK


# ---------------------------------------------------------------------------- search


def cmd_search(args) -> int:
    from clawmem.engine.api import IndexUnavailable

    query = " ".join(args.query)
    eng = _engine(args)
    # a stale index is brought up to date by a detached `clawmem index`; this search does not wait
    from clawmem.engine.sync import spawn_background_index

    eng.sync_hook = lambda _reason: spawn_background_index(eng)
    try:
        res = eng.search(query, max_results=args.max_results, min_score=args.min_score, now=args.now, after=args.after,
                         before=args.before, explain=args.explain, show_hidden=args.show_hidden,
                         date_filter=False if args.no_date_filter else None)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except IndexUnavailable as exc:
        _err(str(exc))
        return EXIT_FAILED
    if args.json:
        print(json.dumps(res, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(format_results(res, explain=args.explain))
    return EXIT_OK


def describe_mode(res: dict) -> str:
    if res["mode"] == "keyword":
        why = res.get("reason") or ""
        return f"keyword-only{': ' + why if why else ''}"
    s = f"{res['mode']} ({res['provider']}/{res['model']})"
    if res.get("fallback"):
        s += f"; fallback from {res['fallback']['from']}: {res['fallback']['reason']}"
    return s


def format_results(res: dict, explain: bool = False) -> str:
    lines = [f"# {describe_mode(res)}"]
    if res.get("dateRange"):
        d = res["dateRange"]
        span = f"{d['after'] or '…'} to {d['before'] or '…'} (before)"
        if d.get("applied") is False:
            lines.append(f"# date filter '{d['from']}' ({span}) dropped: {d.get('reason')}")
        else:
            lines.append(f"# dated entries from {span}, from '{d['from']}'")
    if res.get("stale"):
        lines.append("# the index is behind the files (run `clawmem index` or `clawmem watch`)")
    if not res["results"]:
        lines.append("No matches.")
    for r in res["results"]:
        lines.append(f"{r['score']:.3f} {r['path']}:{r['startLine']}-{r['endLine']}" + (f"  [{r['source']}]" if r["source"] != "memory" else ""))
        for sl in r["snippet"].splitlines() or [""]:
            lines.append("    " + sl)
        if explain and r.get("explain"):
            from clawmem.engine.search import explain_parts

            lines += [f"    · {part}: {text}" for part, text in explain_parts(r["explain"])]
        lines.append("")
    h = res["hidden"]
    if h["count"]:
        lines.append(f"{h['count']} more below the score threshold (best {h['bestScore']:.3f}); --show-hidden to see them")
    return "\n".join(lines).rstrip()


# ---------------------------------------------------------------------------- get


def cmd_get(args) -> int:
    from clawmem.engine.api import AccessDenied

    eng = _engine(args)
    try:
        res = eng.get(args.path, args.from_line, args.lines)
    except AccessDenied as exc:
        _err(str(exc))
        return EXIT_USAGE
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
    else:
        sys.stdout.write(res["text"] + ("" if res["text"].endswith("\n") or not res["text"] else "\n"))
    return EXIT_OK


# ---------------------------------------------------------------------------- watch


def cmd_watch(args) -> int:
    from clawmem.engine.sync import run_daemon

    eng = _engine(args, persistent=True)
    return run_daemon(eng, once=args.once, printer=lambda line: print(line, flush=True))


COMMANDS = {"status": cmd_status, "index": cmd_index, "search": cmd_search, "get": cmd_get, "watch": cmd_watch}


if __name__ == "__main__":
    sys.exit(main())
