"""`clawmem status`: index, freshness, provider and vector state, for one agent or all."""

from __future__ import annotations

from .base import EXIT_FAILED, EXIT_OK, Command, CommandError, dump_json, engine_for, err, targets
from .indexing import run_index_job
from .progress import ProgressLine


def status_arguments(s) -> None:
    s.add_argument("--deep", action="store_true", help="also probe the embedding provider and list issues")
    s.add_argument("--index", action="store_true", help="bring the index up to date first (exit 3 if that fails)")
    s.add_argument("--verbose", action="store_true", help="also the files per source on disk and the extra paths")
    s.add_argument("--all-agents", action="store_true", help="every agent with an index, and every agent in OpenClaw's agents.list")
    s.add_argument("--fix", action="store_true", help="repair what can be: a stale writer lock, an unfinished rebuild, a corrupt index")
    s.add_argument("--json", action="store_true", help="print the status as JSON (an array with --all-agents)")


def cmd_status(args) -> int:
    from clawmem.engine import IndexUnavailable
    from clawmem.engine import ConfigError

    many = args.all_agents
    reports: list[dict] = []
    failed = False
    for target in targets(args):
        try:
            eng = engine_for(args, target)
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
            err(f"index failed ({st['agentId']}): {index_error}")
            st["indexError"] = index_error
            failed = True
        if st["index"].get("error"):  # the status is shown, and the one line that says what repairs it
            err(st["index"]["error"])
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

    from clawmem.engine import normalize_extra_paths

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


STATUS = Command("status", "index, freshness, provider and vector state", status_arguments, cmd_status)
