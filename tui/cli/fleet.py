"""`clawmem fleet up|down|push|grant|revoke|list|status|index`: share memory with other agents through one PostgreSQL database."""

from __future__ import annotations

import json
import sys

from .base import EXIT_OK, EXIT_USAGE, Command, CommandError, Parser, add_command, open_engine, printable
from .progress import ProgressLine, bar


def fleet_arguments(s) -> None:
    fsub = s.add_subparsers(dest="fleet_command", parser_class=Parser, metavar="{up,down,push,grant,revoke,list,status,index,distribute,note,notes}")
    for name, what in (("up", "start a local PostgreSQL with pgvector (under [fleet] serverDir; default: clawmem's data folder, "
                              "as root /var/lib/clawmem-fleet) and print its URL"),
                       ("down", "stop the local PostgreSQL that `fleet up` started"),
                       ("push", "publish this agent's shared chunks (incremental; deletions included)")):
        f = add_command(fsub, name, what)
        f.add_argument("--json", action="store_true")
        if name == "down":
            f.add_argument("--purge", action="store_true", help="also remove its data, log, password record and programs' copy")
    f = add_command(fsub, "grant", "create or update an agent's role (run with the owner's URL); prints its config")
    f.add_argument("fleet_agent", metavar="AGENT", help="the agent id the role is for")
    f.add_argument("--read", nargs="*", default=None, metavar="OTHER", help="agents whose shared memory it may read (replaces the list)")
    f.add_argument("--add-read", action="append", default=[], metavar="OTHER", help="may also read OTHER (the rest of the list stays)")
    f.add_argument("--remove-read", action="append", default=[], metavar="OTHER", help="may no longer read OTHER (the rest stays)")
    f.add_argument("--new-password", action="store_true", help="give an existing role a new password (the old one stops working)")
    f.add_argument("--json", action="store_true")
    f = add_command(fsub, "revoke", "drop an agent's role (owner's URL): it can no longer log in, and nobody reads it")
    f.add_argument("fleet_agent", metavar="AGENT")
    f.add_argument("--delete-rows", action="store_true", help="also delete its shared rows from the fleet")
    f.add_argument("--json", action="store_true")
    f = add_command(fsub, "note", "write a note to the team notebook every agent of the fleet reads")
    f.add_argument("text", help="the note, one short statement")
    f.add_argument("--section", help="its section (default Notes)")
    f.add_argument("--replaces", type=int, metavar="ID", help="the team note it replaces (one it contradicts)")
    f.add_argument("--json", action="store_true")
    f = add_command(fsub, "notes", "the team notebook: the notes that stand, each with its writer")
    f.add_argument("--all", action="store_true", help="every version: undone and replaced notes too")
    f.add_argument("--undo", type=int, metavar="ID", help="undo one of this agent's notes (it stays in the history)")
    f.add_argument("--conflicts", action="store_true", help="only the standing notes flagged as possibly contradicting another")
    f.add_argument("--json", action="store_true")
    for name, what in (("list", "who may read whom (owner's URL)"),
                       ("status", "the server's health, and each agent's rows, model and last push (owner's URL)"),
                       ("index", "build the vector index of every pushed model (owner's URL)"),
                       ("distribute", "shard the fleet tables by agent over a Citus cluster (owner's URL, on the coordinator)")):
        f = add_command(fsub, name, what)
        f.add_argument("--json", action="store_true")


def cmd_fleet(args) -> int:
    from clawmem.engine import Engine, FleetError, human, load_config

    if args.fleet_command is None:
        raise CommandError("fleet: say `clawmem fleet up`, `down`, `push`, `grant AGENT`, `revoke AGENT`, `list`, `status`, `index`, "
                           "`distribute`, `note TEXT` or `notes`", EXIT_USAGE)
    try:
        if args.fleet_command in ("up", "down"):
            cfg = load_config(args.config, workspace=args.workspace, agent=args.agent)
            server = Engine.local_fleet_server(cfg["fleet.serverDir"])
            if args.fleet_command == "up":
                url = server.up()
                out = {"url": url, "dataDir": str(server.pgdata), "serverDir": str(server.root)}
                text = (f"PostgreSQL with pgvector runs at {human.mask_password(url)} (data in {server.pgdata}).\n"
                        f"The owner's URL, with its password (put it in [fleet] url or CLAWMEM_FLEET_URL; it sees every agent):\n{url}")
            else:
                stopped = server.down()
                out = {"stopped": stopped}
                text = "stopped" if stopped else "not running"
                if args.purge:
                    out.update(server.purge())
                    if not out["removed"]:
                        text += (f"; no server of clawmem's in {server.root}, nothing removed" if out["kept"] else
                                 f"; nothing to remove ({server.root} does not exist)")
                    elif out["kept"]:
                        text += f"; removed its files from {server.root} (the folder stays: clawmem did not create it)"
                    else:
                        text += f"; removed {server.root}"
        elif args.fleet_command in ("note", "notes"):
            eng = open_engine(args, need_workspace=False)
            try:
                if args.fleet_command == "note":
                    out = dict(eng.remember(args.text, args.section, "team", args.replaces))
                    if "error" in out:
                        raise CommandError(out["error"])
                    text = out.get("note") or f"team note {out['id']} written by {out['agent']}@{out['host']} under {out['section']}"
                elif args.undo is not None:
                    out = eng.team_undo(args.undo)
                    text = f"team note {out['id']} undone (it stays in `clawmem fleet notes --all`)"
                else:
                    notes = eng.team_notes(every_version=args.all, conflicts=args.conflicts)
                    out = {"notes": notes}
                    text = (format_notes(notes) if notes else
                            "no team note is flagged as a possible conflict" if args.conflicts else "the team notebook is empty")
            finally:
                eng.close()
        elif args.fleet_command == "push":
            eng = open_engine(args)
            try:
                progress = ProgressLine(quiet=args.json)
                out = eng.fleet_push(lambda done, total: progress.show(f"fleet push {bar(done, total)} {done}/{total} chunks",
                                                                        force=done == total))
                if progress.tty and progress.width:
                    sys.stderr.write("\n")
            finally:
                eng.close()
            text = (f"pushed {out['added']} chunks, deleted {out['deleted']} ({out['chunks']} shared chunks of {out['agent']}@{out['host']}, "
                    f"model {out['model'] or 'none: keyword only'}) in {out['seconds']} s")
            text += "".join(f"\nnote: {n}" for n in out.get("notes", []))
        else:
            fleet = Engine(load_config(args.config, workspace=args.workspace, agent=args.agent)).fleet
            if args.fleet_command == "grant":
                out = fleet.grant(args.fleet_agent, args.read, new_password=args.new_password,
                                  add=args.add_read, remove=args.remove_read)
                reads = ", ".join(out["reads"]) or "no other agent"
                note = "" if out["newPassword"] else "  (password unchanged: --new-password sets a new one)"
                read_by = ", ".join(out["readBy"]) or "no other agent (`clawmem fleet grant OTHER --add-read AGENT` lets one)"
                again = f" (read again by {', '.join(out['restoredReaders'])}, as before its revoke)" if out["restoredReaders"] else ""
                text = (f"role {out['role']} reads its own and {reads}'s shared memory; read by {read_by}{again}.\n"
                        f"Put this in agent {out['agent']}'s clawmem config{note}:\n\n{out['config']}")
            elif args.fleet_command == "revoke":
                out = fleet.revoke(args.fleet_agent, delete_rows=args.delete_rows)
                text = (f"role {out['role']} dropped: agent {out['agent']} can no longer log in and no agent reads it"
                        + (f"; {out['deletedRows']} shared rows deleted" if args.delete_rows else
                           "; its shared rows stay (--delete-rows removes them)"))
            elif args.fleet_command == "distribute":
                out = {"statements": fleet.distribute()}
                text = "sharded by agent:\n" + "\n".join(out["statements"])
            elif args.fleet_command == "index":
                built = fleet.build_indexes()
                out = {"built": built}
                text = f"built the vector index of {', '.join(built)}" if built else "every pushed model has its vector index"
            else:
                out = fleet.list(args.fleet_command)
                text = format_list(out) if args.fleet_command == "list" else format_status(out)
    except FleetError as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(out, indent=2, ensure_ascii=False) if args.json else text.rstrip())
    return EXIT_OK


def format_notes(notes: list[dict]) -> str:
    lines, section = [], None
    for n in sorted(notes, key=lambda n: (n["section"], n["id"])):
        if n["section"] != section:
            section = n["section"]
            lines.append(f"## {section}")
        state = "" if n.get("standing", True) else (" [undone]" if n["undoneAt"] else " [replaced]")
        again = f" (replaces {n['replaces']})" if n["replaces"] else ""
        again += f" (proposes replacing {n['proposes']})" if n.get("proposes") else ""
        again += f" [may conflict with {', '.join(map(str, n['conflicts']))}]" if n.get("conflicts") else ""
        lines.append(printable(f"- {n['text']}  — {n['agent']}@{n['host']}, {n['writtenAt'][:16].replace('T', ' ')}, note {n['id']}{again}{state}"))
    return "\n".join(lines)


def format_list(out: dict) -> str:
    if not out["agents"]:
        return "no agents in this fleet yet (`clawmem fleet grant AGENT` makes one)"
    lines = []
    for a in out["agents"]:
        role = a["role"] or "no role (pushed with the owner's URL)"
        lines.append(f"{a['agent']}  {role}\n  reads: {', '.join(a['reads']) or 'only its own'}\n"
                     f"  read by: {', '.join(a['readBy']) or 'nobody (and the owner)'}")
    return "\n".join(lines)


def format_status(out: dict) -> str:
    s = out["server"]
    lines = [f"PostgreSQL {s['version']}, pgvector {s['vector'] or 'missing'}, database {s['database']} ({s['size']}), "
             f"{s['connections']} connection{'s' * (s['connections'] != 1)}"]
    for a in out["agents"]:
        index = {None: "", True: ", vector index built", False: ", no vector index yet (clawmem fleet index)"}[a["vectorIndex"]]
        lines.append(f"{a['agent']}@{a['host'] or '?'}: {a['chunks']} rows, last push {a['lastPush'] or 'never'} UTC, "
                     f"model {a['model'] or 'none'}{index}; reads {', '.join(a['reads']) or 'only its own'}")
    return "\n".join(lines)


FLEET = Command("fleet", fleet_arguments, cmd_fleet)
