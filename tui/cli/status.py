"""`clawmem status`: index, freshness, provider and vector state, for one agent or all."""

from __future__ import annotations

from ..present import format_status
from .base import EXIT_FAILED, EXIT_OK, Command, CommandError, add_all_agents, dump_json, engines, err
from .indexing import run_index_job
from .progress import ProgressLine


def status_arguments(s) -> None:
    s.add_argument("--deep", action="store_true", help="also probe the embedding provider and list issues")
    s.add_argument("--index", action="store_true", help="bring the index up to date first (exit 3 if that fails)")
    s.add_argument("--verbose", action="store_true", help="also the files per source on disk and the extra paths")
    add_all_agents(s)
    s.add_argument("--fix", action="store_true", help="repair what can be: a stale writer lock, an unfinished rebuild, a corrupt index")
    s.add_argument("--json", action="store_true", help="print the status as JSON (an array with --all-agents)")


def cmd_status(args) -> int:
    from clawmem.engine import IndexUnavailable

    many = args.all_agents
    reports: list[dict] = []
    failed = False
    resident_on = False  # a local model that would be resident is configured for one of them
    for target, eng, config_error in engines(args):
        if config_error:
            reports.append({"agentId": target.agent_id, "error": str(config_error)})
            failed = True
            continue
        # the plan says whether a local model serves (provider = "local" without a path uses the default one)
        resident_on = resident_on or (eng.cfg["local.residentMinutes"] > 0 and any(c.name == "local" for c in eng.providers.plan().usable()))
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
    from clawmem.engine import Engine

    from .model import describe_resident

    residents = Engine.resident_models()  # the user's, not an agent's: one line after every agent
    if args.json:
        for st in reports:
            st["residentModels"] = residents
        out = reports if many else reports[0]
        print(dump_json(out, indent=2))
    else:
        print("\n\n".join(format_status(st, verbose=args.verbose) if "index" in st else f"Agent {st['agentId']}: {st['error']}"
                          for st in reports))
        if residents or resident_on:
            print(describe_resident(residents))
    return EXIT_FAILED if failed else EXIT_OK


def scan_sources(eng) -> dict:
    """Files per source on disk and the extra paths (status --verbose)."""
    from collections import Counter

    on_disk = Counter(f["source"] for f in eng.list_files())
    return {
        "scan": {"totalFiles": sum(on_disk.values()), "sources": [{"source": s, "totalFiles": on_disk.get(s, 0)} for s in eng.cfg["sources"]]},
        "extraPaths": [str(p) for p in eng.extra_paths()],
    }


STATUS = Command("status", status_arguments, cmd_status)
