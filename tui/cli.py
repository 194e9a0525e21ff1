"""The `clawmem` command: status, index, search, get, watch, context, mcp, model, history, restore,
serve, flush-prompt, archive, fleet;
no subcommand opens the app.

Imports Textual only when it opens the app, so `clawmem search` starts fast.
Exit codes (SPEC §8): 0 success (an empty result set too), 2 usage or configuration
error, 3 the operation failed. A failure is one line on stderr; given `--json`, also
`{"error": line, "exitCode": N}` on stdout, so a script reading stdout sees it too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
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
    s.add_argument("--index", action="store_true", help="bring the index up to date first (exit 3 if that fails)")
    s.add_argument("--verbose", action="store_true", help="also the files per source on disk and the extra paths")
    s.add_argument("--all-agents", action="store_true", help="every agent with an index, and every agent in OpenClaw's agents.list")
    s.add_argument("--fix", action="store_true", help="repair what can be: a stale writer lock, an unfinished rebuild, a corrupt index")
    s.add_argument("--json", action="store_true", help="print the status as JSON (an array with --all-agents)")

    s = sub.add_parser("index", help="bring the index up to date (all files, all transcripts)")
    _globals(s, True)
    s.add_argument("--force", action="store_true", help="rebuild everything into a new index file")
    s.add_argument("--quiet", action="store_true", help="no progress output")
    s.add_argument("--verbose", action="store_true", help="first print the provider, model, sources and extra paths")
    s.add_argument("--all-agents", action="store_true", help="every agent with an index, and every agent in OpenClaw's agents.list")
    s.add_argument("--json", action="store_true", help="print the summary as JSON (an array with --all-agents)")

    s = sub.add_parser("search", help="hybrid search over the memory files")
    _globals(s, True)
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

    s = sub.add_parser("promote", help="the daily-log passages searches keep recalling, ranked for MEMORY.md (--apply writes them)")
    _globals(s, True)
    s.add_argument("--apply", action="store_true", help="append the candidates to MEMORY.md (one undoable journal version each)")
    s.add_argument("--limit", type=int, help="at most N candidates")
    s.add_argument("--min-score", type=float, default=0.75, help="weighted score from 0 to 1 a candidate needs (default 0.75)")
    s.add_argument("--min-recall-count", type=int, default=3, help="times it was recalled (default 3)")
    s.add_argument("--min-unique-queries", type=int, default=2, help="distinct queries that recalled it (default 2)")
    s.add_argument("--include-promoted", action="store_true", help="also list passages already promoted")
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

    s = sub.add_parser("flush-prompt", help="print the pre-compaction memory-flush prompts for an agent loop")
    _globals(s, True)
    s.add_argument("--date", help="the daily log's date, YYYY-MM-DD (default: today, local time)")
    s.add_argument("--json", action="store_true", help="print {systemPrompt, prompt, date, targetFile, currentTime, ...}")

    s = sub.add_parser("archive", help="write a session transcript's summary to memory/YYYY-MM-DD-slug.md and index it")
    _globals(s, True)
    s.add_argument("session", metavar="SESSION.jsonl", help="an OpenClaw session transcript")
    s.add_argument("--slug", help="the file name's slug (default: words of the first user message, else HHMM)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("context", help="what an agent should load at session start (MEMORY.md, today's and yesterday's logs)")
    _globals(s, True)
    s.add_argument("--max-chars", type=int, help="per-file cap (default: OpenClaw's bootstrapMaxChars, 20000)")
    s.add_argument("--session", choices=["main", "group"], default="main", help="main (private) sessions also get MEMORY.md")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("model", help="download (pull) and list local embedding models")
    _globals(s, True)
    msub = s.add_subparsers(dest="model_command", parser_class=Parser, metavar="{pull,list}")
    m = msub.add_parser("pull", help="download an hf: model into the cache, with progress (resumes a partial one)")
    _globals(m, True)
    m.add_argument("uri", nargs="?", help="hf:owner/repo/file.gguf (default: local.modelPath if it is an hf: URI, else the default model)")
    m.add_argument("--json", action="store_true")
    m = msub.add_parser("list", help="the models in the cache (and unfinished downloads)")
    _globals(m, True)
    m.add_argument("--json", action="store_true")

    s = sub.add_parser("history", help="what changed in the memory files, version by version (the journal)")
    _globals(s, True)
    s.add_argument("path", nargs="?", help="one memory file (its changes are shown as diffs)")
    s.add_argument("--since", help="only changes seen on or after YYYY-MM-DD (or today, yesterday, 7d)")
    s.add_argument("--json", action="store_true", help="print the changes, with their diffs, as JSON")

    s = sub.add_parser("restore", help="put a memory file back to a version from `clawmem history` (itself undoable)")
    _globals(s, True)
    s.add_argument("path", help="the memory file")
    s.add_argument("--to", dest="version", required=True, type=int, metavar="VERSION", help="the version number history shows (vN)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("fleet", help="share memory with other agents through one PostgreSQL + pgvector database")
    _globals(s, True)
    fsub = s.add_subparsers(dest="fleet_command", parser_class=Parser, metavar="{up,down,push,grant}")
    for name, what in (("up", "start a local PostgreSQL with pgvector (data under clawmem's data folder) and print its URL"),
                       ("down", "stop the local PostgreSQL that `fleet up` started"),
                       ("push", "publish this agent's shared chunks (incremental; deletions included)")):
        f = fsub.add_parser(name, help=what)
        _globals(f, True)
        f.add_argument("--json", action="store_true")
    f = fsub.add_parser("grant", help="create or update an agent's role (run with the owner's URL); prints its config")
    _globals(f, True)
    f.add_argument("fleet_agent", metavar="AGENT", help="the agent id the role is for")
    f.add_argument("--read", nargs="*", default=[], metavar="OTHER", help="agents whose shared memory it may read (replaces the list)")
    f.add_argument("--new-password", action="store_true", help="give an existing role a new password (the old one stops working)")
    f.add_argument("--json", action="store_true")

    s = sub.add_parser("serve", help="serve the app to a web browser (textual-serve; loopback unless --host)")
    _globals(s, True)
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other puts a token in the URL)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")

    s = sub.add_parser("mcp", help="serve the memory tools to agents over MCP (stdio, or HTTP with --http)")
    _globals(s, True)
    s.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP (e.g. 127.0.0.1:8765) instead of stdio")
    s.add_argument("--host", help="address to bind with --http (a non-loopback address needs mcp.token or CLAWMEM_MCP_TOKEN)")
    return p


def _engine(args, persistent: bool = False, need_workspace: bool = True):
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
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(obj, indent=indent, ensure_ascii=False))


_C1 = re.compile("[\x7f-\x9f]")  # only inside JSON strings: the rest of JSON is ASCII


def printable(raw: str) -> str:
    """Memory text is never printed raw: control sequences are shown visibly (engine.text)."""
    from clawmem.engine.text import printable as visible  # here: the engine loads only once a command runs

    return visible(raw)


def _err(msg: str) -> None:
    print(printable(f"clawmem: {msg}"), file=sys.stderr)


def _fail(line: str, code: int, as_json: bool) -> int:
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


def _printable_streams() -> None:
    """Under LANG=C (an ASCII terminal) printing a note in another script must not kill the command."""
    import codecs

    codecs.register_error("clawmem-escape", _escape_unshowable)
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if enc and enc != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="clawmem-escape")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _printable_streams()
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE, "--json" in argv)
    if args.command is None:
        return run_app(args)
    from clawmem.engine.config import ConfigError

    as_json = bool(getattr(args, "json", False))
    try:
        return COMMANDS[args.command](args)
    except CommandError as exc:
        return _fail(f"clawmem: {exc}", exc.code, as_json)
    except ConfigError as exc:
        return _fail(f"clawmem: {exc}", EXIT_USAGE, as_json)
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


def _targets(args) -> list:
    """The agents a command covers: [None] (the one the options name) unless --all-agents."""
    if not getattr(args, "all_agents", False):
        return [None]
    if args.agent or args.workspace:
        raise CommandError("--all-agents covers every agent, each with its own workspace; drop --agent and --workspace", EXIT_USAGE)
    from clawmem.engine import load_config
    from clawmem.engine.agents import all_agents

    load_config(args.config)  # a broken config file is one usage error, not one per agent
    return all_agents() or [None]


def _engine_for(args, target):
    if target is None:
        return _engine(args)
    from clawmem.engine import Engine

    # --all-agents: an agent whose workspace does not exist yet is reported with 0 files
    return Engine.open(config_path=args.config, workspace=target.workspace, agent=target.agent_id)


def cmd_status(args) -> int:
    from clawmem.engine.api import IndexUnavailable
    from clawmem.engine.config import ConfigError

    many = args.all_agents
    reports: list[dict] = []
    failed = False
    for target in _targets(args):
        try:
            eng = _engine_for(args, target)
        except ConfigError as exc:
            if not many:
                raise
            reports.append({"agentId": target.agent_id, "error": str(exc)})
            failed = True
            continue
        try:
            repair = eng.repair() if args.fix else None
            index_error = None
            if args.index:
                _, index_error = run_index_job(eng, ProgressLine(quiet=False))
            st = eng.status(deep=args.deep)
            if args.verbose:
                st.update(scan_sources(eng))
            if repair is not None:
                st["repair"] = repair
        except IndexUnavailable as exc:
            if not many:
                raise CommandError(str(exc)) from None
            reports.append({"agentId": eng.cfg.agent_id, "workspace": str(eng.workspace), "error": str(exc)})
            failed = True
            continue
        finally:
            eng.close()
        if index_error:
            _err(f"index failed ({st['agentId']}): {index_error}")
            st["indexError"] = index_error
            failed = True
        if st["index"].get("error"):  # the status is shown, and the one line that says what repairs it
            _err(st["index"]["error"])
            failed = True
        reports.append(st)
    if args.json:
        out = reports if many else reports[0]
        print(dump_json(out, indent=2))
    else:
        print("\n\n".join(format_status(st, verbose=args.verbose) if "index" in st else f"Agent {st['agentId']}: {st['error']}"
                          for st in reports))
    return EXIT_FAILED if failed else EXIT_OK


def scan_sources(eng) -> dict:
    """Files per source on disk and the extra paths (status --verbose)."""
    from collections import Counter

    from clawmem.engine.workspace import normalize_extra_paths

    on_disk = Counter(f["source"] for f in eng.list_files())
    return {
        "scan": {"totalFiles": sum(on_disk.values()), "sources": [{"source": s, "totalFiles": on_disk.get(s, 0)} for s in eng.cfg["sources"]]},
        "extraPaths": [str(p) for p in normalize_extra_paths(eng.workspace, eng.cfg["extraPaths"])],
    }


def format_status(st: dict, verbose: bool = False) -> str:
    fr = st["freshness"]
    pv = st["provider"]
    vec = st["vector"]
    lines = [f"Repaired:  {line}" for line in st.get("repair") or []]
    lines += [
        f"Workspace: {st['workspace']}  (agent {st['agentId']})"
        + ("\n           empty: no MEMORY.md and no memory/*.md yet (fine: the first write creates them)" if st.get("workspaceEmpty") else ""),
        f"Index:     {st['index']['path']}",
        f"           {st['index']['files']} files, {st['index']['chunks']} chunks, schema {st['index']['schemaVersion']}",
    ]
    if st["index"].get("error"):
        lines.append(f"           error: {st['index']['error']}")
    rebuild = st["index"].get("rebuild")
    if rebuild and not rebuild["running"]:
        lines.append(f"Rebuild:   {rebuild_leftover_line(rebuild)}")
    fresh = "clean" if not fr["dirty"] else f"{fr['filesBehind']} files behind"
    lines.append(f"Fresh:     {fresh} ({fr['filesIndexed']} indexed / {fr['filesOnDisk']} on disk), last sync {fr['lastSync'] or 'never'}")
    if fr.get("behind"):
        lines.append("           behind: " + ", ".join(fr["behind"][:5]) + (" …" if len(fr["behind"]) > 5 else ""))
    for item in st.get("fileNotes") or []:
        lines.append(f"{'Skipped:' if item['skipped'] else 'Note:':11}{item['path']}: {item['reason']}")
    for item in st.get("leftovers") or []:
        lines.append(f"Leftover:  {item['path']}: {item['what']} (`clawmem status --fix` cleans it)")
    lines.append(f"Watcher:   {fr['watcher']}" + (f"; {fr['job']}" if fr.get("job") else ""))
    if st.get("enabled") is False:
        lines.append("Search:    disabled (enabled = false): search and the agent tools answer that memory search is off")
    active = f"{pv['active']} ({pv['model']})" if pv["active"] else "none: keyword-only"
    lines.append(f"Provider:  {active}  [configured: {pv['configured']}]")
    if pv.get("reason"):
        lines.append(f"           {pv['reason']}")
    if pv.get("fallback"):
        lines.append(f"           fallback from {pv['fallback']['from']}: {pv['fallback']['reason']}")
    for c in pv.get("candidates") or []:
        if c["name"] != "local" and c.get("keySource"):
            lines.append(f"           {c['name']} key from {c['keySource']}")
    if pv.get("lastError"):
        lines.append(f"           {pv['lastError']}")
    if pv.get("batch"):
        lines.append(f"Batch:     on; the last index fell back: {pv['batch']['lastError']}" if pv["batch"]["lastError"] else "Batch:     on (remote.batch.enabled)")
    if pv.get("probe"):
        pr = pv["probe"]
        lines.append(f"           probe: {'ok, ' + str(pr['dims']) + ' dims, ' + str(pr['ms']) + ' ms' if pr['ok'] else 'failed: ' + pr['error']}")
        if pr.get("build"):
            lines.append(f"           llama.cpp build: {pr['build']}")
    backend = f"{vec['backend']} {vec['version'] or ''}".strip()
    lines.append(f"Vectors:   {backend}" + (f" ({vec['reason']})" if vec.get("reason") else ""))
    for m in vec.get("models", []):
        lines.append(f"           {m['provider']}/{m['model']}: {m['vectors']} vectors, {m['dims']} dims")
    lines.append(f"FTS:       {'ready' if st['fts']['available'] else 'unavailable: ' + st['fts'].get('reason', '')}")
    if verbose:
        lines.append(f"Sources:   {', '.join(st['sources'])}")
        by = st["index"].get("bySource") or {}
        for item in st["scan"]["sources"]:
            got = by.get(item["source"], {"files": 0, "chunks": 0})
            lines.append(f"           {item['source']} · {got['files']}/{item['totalFiles']} files · {got['chunks']} chunks")
        lines.append(f"Extra:     {', '.join(st['extraPaths']) or 'none'}")
    cfg = st["config"]
    lines.append(f"Config:    {cfg['file']}{'' if cfg['fileExists'] else ' (not created; defaults in use)'}")
    if cfg.get("openclaw"):
        lines.append(f"OpenClaw:  {cfg['openclaw']} (read as defaults)")
    for w in cfg.get("warnings") or []:
        lines.append(f"           warning: {w}")
    for k in cfg.get("notHonoured") or []:
        lines.append(f"           not honoured: {k}")
    if "cache" in st:
        c = st["cache"]
        lines.append(f"Cache:     {c.get('entries', '?')} / {c.get('maxEntries', '?')} embeddings ({c.get('path', c.get('error'))})")
    fl = st.get("fleet")
    if fl:
        if fl.get("error"):
            lines.append(f"Fleet:     unreadable push state: {fl['error']}")
        else:
            behind = "up to date" if not fl["behind"] else f"{fl['behind']} chunks behind"
            error = f", last error: {fl['lastError']}" if fl.get("lastError") else ""
            lines.append(f"Fleet:     {behind}{error}")
            lines.append(f"           {fl['url']} as {fl['host']}, publish {'on' if fl['publish'] else 'off'}, last push {fl['lastPush'] or 'never'}")
    lines.append(f"Log:       {st['log']}")
    for issue in st.get("issues") or []:
        lines.append(f"Issue:     {issue}")
    if st.get("indexError"):
        lines.append(f"Index error: {st['indexError']}")
    return "\n".join(lines)


def rebuild_leftover_line(rebuild: dict) -> str:
    done = f" ({rebuild['files']} files done)" if rebuild.get("files") is not None else ""
    return f"a rebuild was left unfinished at {rebuild['path']}{done}; the next `clawmem index` resumes it"


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
    elif isinstance(e, ev.BatchProgress):
        out.show(f"{bar(e.done, e.total)} {e.describe()}", force=e.status != "in_progress")
    elif isinstance(e, (ev.Warning, ev.Error, ev.ProviderSwitched)):
        out.line(e.describe())
    elif isinstance(e, ev.JobStarted):
        out.line(e.describe())


def run_index_job(eng, out: ProgressLine, force: bool = False):
    """Run one index job with progress on `out`: (JobFinished, None) or (None, why it failed)."""
    from clawmem.engine import events as ev
    from clawmem.engine import logs
    from clawmem.engine.lock import LockBusy
    from clawmem.engine.store import DatabaseError

    try:
        logs.setup()  # warnings of a background (--quiet) index end up in the log file
    except OSError:
        pass
    finished = None
    try:
        for e in eng.index(force=force, reason="cli"):
            render_event(e, out)
            if isinstance(e, (ev.Warning, ev.Error, ev.ProviderSwitched, ev.JobFinished)):
                logs.log_event(e)
            if isinstance(e, ev.JobFinished):
                finished = e
    except LockBusy as exc:
        return None, str(exc)
    except OSError as exc:
        return None, f"{getattr(exc, 'filename', '') or eng.index_path}: {exc.strerror or exc}; check permissions and free space"
    except DatabaseError as exc:  # disk full, read-only file: what was committed stays searchable
        return None, f"{eng.index_path}: {exc}; check free space and permissions, then run `clawmem index` again"
    if finished is None:
        return None, "the index job ended before it finished"
    return finished, None


def index_header(eng) -> list[str]:
    """What `index --verbose` prints first (study §11: provider, model, sources, extra paths, fallback)."""
    from clawmem.engine.workspace import normalize_extra_paths

    plan = eng.plan()
    usable = plan.usable()
    provider = f"{usable[0].name} (requested: {plan.configured})" if usable else f"none: keyword-only ({plan.keyword_reason()})"
    fallback = ", ".join(c.name for c in usable[1:]) or "none"
    extra = [str(p) for p in normalize_extra_paths(eng.workspace, eng.cfg["extraPaths"])]
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
    from clawmem.engine.config import ConfigError

    many = args.all_agents
    out = ProgressLine(quiet=args.quiet)
    summaries: list[dict] = []
    failed = False
    for target in _targets(args):
        try:
            eng = _engine_for(args, target)
        except ConfigError as exc:
            if not many:
                raise
            _err(f"index failed ({target.agent_id}): {exc}")
            summaries.append({"agentId": target.agent_id, "error": str(exc)})
            failed = True
            continue
        try:
            if args.verbose:
                for line in index_header(eng):
                    out.line(line)
            elif many:
                out.line(f"Memory index ({eng.cfg.agent_id})")
            finished, error = run_index_job(eng, out, force=args.force)
            if error:
                if not many:
                    raise CommandError(error)
                _err(f"index failed ({eng.cfg.agent_id}): {error}")
                summaries.append({"agentId": eng.cfg.agent_id, "workspace": str(eng.workspace), "error": error})
                failed = True
                continue
            summaries.append({"agentId": eng.cfg.agent_id, "files": finished.files_indexed, "removed": finished.files_removed,
                              "unchanged": finished.files_unchanged, "embedded": finished.chunks_embedded,
                              "seconds": round(finished.seconds, 3)})
            if not args.json:
                out.line(finished.describe())
                if not args.quiet:
                    st = eng.status()
                    pv = st["provider"]
                    mode = f"hybrid search with {pv['active']} ({pv['model']})" if pv["active"] and not pv.get("reason") else f"keyword-only search ({pv['reason']})"
                    out.line(f"index: {st['index']['path']}: {st['index']['files']} files, {st['index']['chunks']} chunks; {mode}")
        finally:
            eng.close()
    if args.json:
        if many:
            print(json.dumps(summaries))
        else:
            print(json.dumps({k: v for k, v in summaries[0].items() if k != "agentId"}))
    return EXIT_FAILED if failed else EXIT_OK


# ---------------------------------------------------------------------------- search


def cmd_search(args) -> int:
    from clawmem.engine.api import IndexUnavailable, SearchDisabled

    query = (args.query_option if args.query_option is not None else " ".join(args.query)).strip()
    if not query:
        raise CommandError("Missing search query. Provide a positional query or use --query <text>.", EXIT_USAGE)
    if args.agents and not args.fleet:
        raise CommandError("--agents picks agents of the fleet: add --fleet", EXIT_USAGE)
    if args.fleet and (args.after or args.before or args.now):
        raise CommandError("--after, --before and --now apply to this agent's memory only: drop them with --fleet", EXIT_USAGE)
    eng = _engine(args, need_workspace=not args.fleet)  # the fleet is searched from any host
    if args.fleet:
        return fleet_search(eng, query, args)

    def spawn(_reason):
        # a stale index is brought up to date by a detached `clawmem index`; this search does not
        # wait (sync.py loads only then: most searches find the index fresh)
        from clawmem.engine.sync import spawn_background_index

        return spawn_background_index(eng)

    eng.sync_hook = spawn
    try:
        res = eng.search(query, max_results=args.max_results, min_score=args.min_score, now=args.now, after=args.after,
                         before=args.before, explain=args.explain, show_hidden=args.show_hidden,
                         date_filter=False if args.no_date_filter else None, private=args.private)
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except IndexUnavailable as exc:
        raise CommandError(str(exc)) from None
    except SearchDisabled as exc:
        # the agent tool's shape, so a script gets what an agent gets
        from clawmem.engine.tools import disabled_payload

        _err(str(exc))
        if args.json:
            print(dump_json(disabled_payload(str(exc)), indent=2))
        return EXIT_FAILED
    if args.json:
        print(dump_json(res, indent=2))
        return EXIT_OK
    print(format_results(res, explain=args.explain, query=query, color=sys.stdout.isatty() and "NO_COLOR" not in os.environ))
    return EXIT_OK


def fleet_search(eng, query: str, args) -> int:
    from clawmem.engine import fleet

    agents = [a.strip() for a in args.agents.split(",") if a.strip()] if args.agents else None
    try:
        res = fleet.search(eng, query, agents=agents, max_results=args.max_results, min_score=args.min_score,
                           explain=args.explain, show_hidden=args.show_hidden)
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except fleet.FleetError as exc:
        raise CommandError(str(exc)) from None
    finally:
        eng.close()
    if args.json:
        print(dump_json(res, indent=2))
    else:
        print(format_results(res, explain=args.explain, query=query, color=sys.stdout.isatty() and "NO_COLOR" not in os.environ))
    return EXIT_OK


def describe_mode(res: dict) -> str:
    if res["mode"] == "keyword":
        why = res.get("reason") or ""
        return f"keyword-only{': ' + why if why else ''}"
    s = f"{res['mode']} ({res['provider']}/{res['model']})"
    if res.get("fallback"):
        s += f"; fallback from {res['fallback']['from']}: {res['fallback']['reason']}"
    return s


def format_results(res: dict, explain: bool = False, query: str = "", color: bool = False) -> str:
    """The text output: each hit's score, band and citation, then its snippet with the line it
    matched on marked `›` and the query's words in bold (on a terminal)."""
    from clawmem.engine.search import snippet_match, term_spans
    from clawmem.engine.text import query_terms

    terms = [t for t in query_terms(query) if len(t) > 1 or not t.isascii()] if query else []
    lines = [printable(f"# {describe_mode(res)}")]
    if res.get("corpus") == "fleet":
        lines.append(printable(f"# fleet: {', '.join(res['agents']) or 'no agent readable'}"))
        lines += [printable(f"# {note}") for note in res["notes"]]
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
        band = f" {r['band']}" if r.get("band") else ""
        where = f"{r['agent']}@{r['host']} " if "agent" in r else ""
        lines.append(printable(f"{r['score']:.3f}{band} {where}{r['path']}:{r['startLine']}-{r['endLine']}" + (f"  [{r['source']}]" if r["source"] != "memory" else "")))
        match = snippet_match(r, terms)
        for i, sl in enumerate(r["snippet"].splitlines() or [""]):
            sl = printable(sl)  # escaped before our own bold codes go in
            if color:
                for a, b in reversed(term_spans(sl, terms)):
                    sl = f"{sl[:a]}\x1b[1m{sl[a:b]}\x1b[0m{sl[b:]}"
            lines.append(("  › " if i == match else "    ") + sl)
        if explain and r.get("explain"):
            from clawmem.engine.search import explain_parts

            lines += [printable(f"    · {part}: {text}") for part, text in explain_parts(r["explain"])]
        lines.append("")
    h = res["hidden"]
    if h.get("reason"):
        held = f" {h['count']} weak hit(s) held back (best {h['bestScore']:.3f}); --show-hidden to see them" if h["count"] else ""
        lines.append(printable(f"Nothing shown: {h['reason']}.{held}"))
    elif h["count"]:
        lines.append(f"{h['count']} more below the score threshold (best {h['bestScore']:.3f}); --show-hidden to see them")
    return "\n".join(lines).rstrip()


# ---------------------------------------------------------------------------- promote


def cmd_promote(args) -> int:
    from clawmem.engine import promote, recall

    if args.limit is not None and args.limit < 0:
        raise CommandError(f"--limit: expected an integer >= 0, got {args.limit}", EXIT_USAGE)
    if not 0 <= args.min_score <= 1:
        raise CommandError(f"--min-score: expected a number from 0 to 1, got {args.min_score}", EXIT_USAGE)
    for flag, value in (("--min-recall-count", args.min_recall_count), ("--min-unique-queries", args.min_unique_queries)):
        if value < 0:
            raise CommandError(f"{flag}: expected an integer >= 0, got {value}", EXIT_USAGE)
    eng = _engine(args)
    if not eng.workspace.is_dir():
        raise CommandError(f"no workspace at {eng.workspace}: give --workspace, or set workspace in the clawmem config", EXIT_USAGE)
    gates = promote.Gates(args.min_score, args.min_recall_count, args.min_unique_queries)
    try:
        found, notes = promote.preview(eng, gates, limit=args.limit, include_promoted=args.include_promoted)
        for note in notes:
            _err(note)
        outcomes = promote.apply(eng, [c for c in found if not c.promoted]) if args.apply else None
    except (promote.PromoteError, recall.RecallUnreadable) as exc:
        raise CommandError(str(exc)) from None
    if outcomes and any(o.promoted for o in outcomes):
        from clawmem.engine.tools import _index_now

        _index_now(eng)
    eng.close()
    if args.json:
        out = {"candidates": [c.as_json() for c in found], "gates": {"minScore": gates.min_score, "minRecallCount": gates.min_recall_count,
               "minUniqueQueries": gates.min_unique_queries}}
        if outcomes is not None:
            out["applied"] = [o.as_json() for o in outcomes]
        print(dump_json(out, indent=2))
        return EXIT_OK
    print(printable("\n".join(format_candidates(found, gates, hint=not args.apply))))
    if outcomes is not None:
        print()
        done = [o for o in outcomes if o.promoted]
        for o in outcomes:
            print(printable(f"{'promoted' if o.promoted else 'skipped'} {o.citation}" + ("" if o.promoted else f": {o.reason}")))
        if done:
            print(f"{len(done)} promoted to MEMORY.md; a summary is in DREAMS.md; clawmem history MEMORY.md shows each, "
                  f"clawmem restore MEMORY.md --to VERSION undoes them")
    return EXIT_OK


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
        for n, ln in enumerate(c.lines, c.start):
            lines.append(f"   {n:>4} │ {ln}")
    if hint and found and not all(c.promoted for c in found):
        lines += ["", "clawmem promote --apply writes them to MEMORY.md; the app's Promote screen (F10) reviews them one by one"]
    return lines


# ---------------------------------------------------------------------------- get


def cmd_get(args) -> int:
    from clawmem.engine.api import AccessDenied

    eng = _engine(args, need_workspace=not args.path.startswith("fleet:"))
    try:
        if args.path.startswith("fleet:"):  # a fleet hit's ref: its stored text, the file being on another host
            from clawmem.engine import fleet

            try:
                res = fleet.get_stored(eng.cfg, args.path, args.from_line, args.lines)
            except fleet.FleetError as exc:
                raise CommandError(str(exc)) from None
        else:
            res = eng.get(args.path, args.from_line, args.lines)
    except AccessDenied as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    if args.json:
        print(dump_json(res))
    else:
        sys.stdout.write(printable(res["text"]) + ("" if res["text"].endswith("\n") or not res["text"] else "\n"))
    return EXIT_OK


# ---------------------------------------------------------------------------- watch


def cmd_watch(args) -> int:
    from clawmem.engine.sync import run_daemon

    eng = _engine(args, persistent=True, need_workspace=False)
    return run_daemon(eng, once=args.once, printer=lambda line: print(printable(line), flush=True))


# ---------------------------------------------------------------------------- writing helpers


def cmd_flush_prompt(args) -> int:
    import datetime as dt
    import re

    from clawmem.engine import load_config
    from clawmem.engine.agent_prompts import flush_plan

    day = None
    if args.date is not None:
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date.strip()):
                raise ValueError
            day = dt.date.fromisoformat(args.date.strip())
        except ValueError:
            raise CommandError(f"--date: expected a date like 2026-02-10, got {args.date!r}", EXIT_USAGE) from None
    cfg = load_config(args.config, workspace=args.workspace, agent=args.agent)
    plan = flush_plan(cfg.agent_id, day=day)
    for w in plan.warnings:
        _err(f"warning: {w}")
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
    from clawmem.engine.archive import ArchiveError, archive_session

    eng = _engine(args)
    try:
        made = archive_session(eng.workspace, args.session, slug=args.slug)
    except ArchiveError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    except OSError as exc:
        raise CommandError(f"{exc.filename or eng.workspace}: cannot write the archive ({exc.strerror or exc}); check permissions and free space") from None
    # indexed at once, so the next search finds it; a busy writer (the watcher) picks it up instead
    _, index_error = run_index_job(eng, ProgressLine(quiet=True))
    eng.close()
    if index_error:
        _err(f"warning: {made.path} written but not indexed yet: {index_error}")
    if args.json:
        print(dump_json({**made.as_json(), "indexed": index_error is None}))
    else:
        print(f"wrote {made.path} ({made.messages} messages){'' if index_error is None else '; not indexed yet'}")
    return EXIT_OK


# ---------------------------------------------------------------------------- context


def cmd_context(args) -> int:
    from clawmem.engine.context import session_context

    try:
        ctx = session_context(_engine(args), max_chars=args.max_chars, session=args.session)
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None
    if args.json:
        print(dump_json(ctx, indent=2))
    else:
        sys.stdout.write(printable(ctx["text"]))
    return EXIT_OK


# ---------------------------------------------------------------------------- journal


def _journal_path(eng, path: str | None) -> str | None:
    from clawmem.engine.api import AccessDenied

    if path is None:
        return None
    try:
        return eng.resolve_allowed(path)[0]
    except AccessDenied as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


def _open_journal(eng):
    import sqlite3

    from clawmem.engine.journal import Journal

    try:
        jr = Journal(eng.cfg)
        if eng.cfg["journal.enabled"]:
            jr.catch_up()  # changes no sync has seen yet
        return jr
    except (OSError, sqlite3.Error) as exc:
        raise CommandError(f"journal: {exc}") from None


def format_change(ch, with_diff: bool, color: bool) -> list[str]:
    import datetime as dt

    plus, minus = ch.counts()
    v = ch.after
    when = dt.datetime.fromtimestamp(v.ts).strftime("%Y-%m-%d %H:%M")
    what = "deleted" if v.deleted else f"+{plus} -{minus} lines, {v.size} bytes"
    out = [printable(f"v{v.id}  {when}  {v.path}  {what}  by {v.writer}  (was v{ch.before.id})")]
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
    from clawmem.engine.journal import parse_since

    eng = _engine(args)
    path = _journal_path(eng, args.path)
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
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
    from clawmem.engine.journal import restore

    eng = _engine(args)
    path = _journal_path(eng, args.path)
    abspath = eng.resolve_allowed(path)[1]
    with _open_journal(eng) as jr:
        before = jr.latest(path)
        try:
            v = restore(jr, path, abspath, args.version)
        except ValueError as exc:
            raise CommandError(str(exc), EXIT_USAGE) from None
        except OSError as exc:
            raise CommandError(f"{path}: cannot write ({exc.strerror or exc}); nothing was changed") from None
    _, index_error = run_index_job(eng, ProgressLine(quiet=True))
    eng.close()
    undo = before.id if before else None
    if args.json:
        print(json.dumps({"path": path, "restored": args.version, "version": v.id, "undo": undo, "indexed": index_error is None}))
    else:
        print(f"restored {path} to v{args.version} (now v{v.id})" + (f"; undo: clawmem restore {path} --to {undo}" if undo else ""))
    return EXIT_OK


# ---------------------------------------------------------------------------- serve


def cmd_serve(args) -> int:
    from clawmem.engine import load_config
    from clawmem.tui.serve import ServeError, serve

    load_config(args.config, workspace=args.workspace, agent=args.agent)  # a bad config is one line here, not in the browser
    try:
        return serve(args)
    except ServeError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


# ---------------------------------------------------------------------------- mcp


def cmd_mcp(args) -> int:
    from clawmem.mcp.server import ServeError, serve

    try:
        return serve(_engine(args, persistent=True, need_workspace=False), http=args.http, host=args.host)
    except ServeError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


# ---------------------------------------------------------------------------- model


def cmd_model(args) -> int:
    from clawmem.engine import load_config
    from clawmem.engine.config import DEFAULT_LOCAL_MODEL
    from clawmem.engine.embeddings import model_cache_dir
    from clawmem.engine.embeddings.download import cached_models

    if args.model_command is None:
        raise CommandError("model: say `clawmem model pull [URI]` or `clawmem model list`", EXIT_USAGE)
    cfg = load_config(args.config, workspace=args.workspace, agent=args.agent)
    cache = model_cache_dir(cfg)
    configured = cfg["local.modelPath"] or DEFAULT_LOCAL_MODEL
    if args.model_command == "pull":
        return model_pull(args.uri or (configured if configured.lower().startswith("hf:") else DEFAULT_LOCAL_MODEL), cache, args.json)
    models = cached_models(cache)
    if args.json:
        print(dump_json({"cacheDir": str(cache), "configured": configured, "models": models}, indent=2))
        return EXIT_OK
    if not models:
        print(f"No models in {cache}; `clawmem model pull` downloads {configured if configured.lower().startswith('hf:') else DEFAULT_LOCAL_MODEL}")
        return EXIT_OK
    for m in models:
        notes = ([] if m["complete"] else ["unfinished: `clawmem model pull` resumes it"]) + (["configured"] if m["uri"] == configured else [])
        print(f"{m['uri']}  {m['bytes'] / 1e6:.1f} MB" + (f"  ({'; '.join(notes)})" if notes else ""))
    print(f"cache: {cache}")
    return EXIT_OK


def model_pull(uri: str, cache, as_json: bool) -> int:
    from clawmem.engine import events as ev
    from clawmem.engine.embeddings.download import DownloadError, cached_path, download

    if not uri.lower().startswith("hf:"):
        raise CommandError(f"model pull: {uri!r} is a local file, not an hf:owner/repo/file.gguf URI; nothing to download", EXIT_USAGE)
    try:
        had = cached_path(uri, cache).is_file()
        out = ProgressLine(quiet=as_json)
        path = download(uri, cache, lambda done, total: render_event(ev.Download(uri, done, total), out))
    except DownloadError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot download {uri}: {exc.strerror or exc} ({exc.filename or cache}); check permissions and free space") from None
    size = path.stat().st_size
    if as_json:
        print(json.dumps({"uri": uri, "path": str(path), "bytes": size, "downloaded": not had}))
    else:
        print(f"{'already downloaded' if had else 'downloaded'}: {uri} -> {path} ({size / 1e6:.1f} MB)")
    return EXIT_OK


def cmd_fleet(args) -> int:
    from clawmem.engine import fleet

    if args.fleet_command is None:
        raise CommandError("fleet: say `clawmem fleet up`, `down`, `push` or `grant AGENT`", EXIT_USAGE)
    try:
        if args.fleet_command in ("up", "down"):
            from clawmem.engine.fleet_server import LocalServer

            server = LocalServer()
            if args.fleet_command == "up":
                url = server.up()
                out = {"url": url, "dataDir": str(server.pgdata)}
                text = (f"PostgreSQL with pgvector runs at {fleet.mask_url(url)} (data in {server.pgdata}).\n"
                        f"The owner's URL, with its password (put it in [fleet] url or CLAWMEM_FLEET_URL; it sees every agent):\n{url}")
            else:
                stopped = server.down()
                out = {"stopped": stopped}
                text = "stopped" if stopped else "not running"
        elif args.fleet_command == "push":
            eng = _engine(args)
            try:
                progress = ProgressLine(quiet=args.json)
                out = fleet.push(eng, lambda done, total: progress.show(f"fleet push {bar(done, total)} {done}/{total} chunks",
                                                                        force=done == total))
                if progress.tty and progress.width:
                    sys.stderr.write("\n")
            finally:
                eng.close()
            text = (f"pushed {out['added']} chunks, deleted {out['deleted']} ({out['chunks']} shared chunks of {out['agent']}@{out['host']}, "
                    f"model {out['model'] or 'none: keyword only'}) in {out['seconds']} s")
        else:
            from clawmem.engine import load_config

            cfg = load_config(args.config, workspace=args.workspace, agent=args.agent)
            out = fleet.grant(fleet.fleet_url(cfg), args.fleet_agent, args.read, new_password=args.new_password)
            reads = ", ".join(out["reads"]) or "no other agent"
            note = "" if out["newPassword"] else "  (password unchanged: --new-password sets a new one)"
            text = (f"role {out['role']} reads its own and {reads}'s shared memory.\n"
                    f"Put this in agent {out['agent']}'s clawmem config{note}:\n\n{out['config']}")
    except fleet.FleetError as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(out, indent=2, ensure_ascii=False) if args.json else text.rstrip())
    return EXIT_OK


COMMANDS = {"status": cmd_status, "index": cmd_index, "search": cmd_search, "get": cmd_get, "watch": cmd_watch,
            "context": cmd_context, "mcp": cmd_mcp, "model": cmd_model, "history": cmd_history, "restore": cmd_restore,
            "serve": cmd_serve, "flush-prompt": cmd_flush_prompt, "archive": cmd_archive, "fleet": cmd_fleet, "promote": cmd_promote}


if __name__ == "__main__":
    sys.exit(main())
