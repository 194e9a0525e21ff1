"""`clawmem fleet up|down|push|grant`: share memory with other agents through one PostgreSQL database."""

from __future__ import annotations

import json
import sys

from .base import EXIT_OK, EXIT_USAGE, Command, CommandError, Parser, add_command, open_engine
from .progress import ProgressLine, bar


def fleet_arguments(s) -> None:
    fsub = s.add_subparsers(dest="fleet_command", parser_class=Parser, metavar="{up,down,push,grant}")
    for name, what in (("up", "start a local PostgreSQL with pgvector (data under clawmem's data folder) and print its URL"),
                       ("down", "stop the local PostgreSQL that `fleet up` started"),
                       ("push", "publish this agent's shared chunks (incremental; deletions included)")):
        f = add_command(fsub, name, what)
        f.add_argument("--json", action="store_true")
    f = add_command(fsub, "grant", "create or update an agent's role (run with the owner's URL); prints its config")
    f.add_argument("fleet_agent", metavar="AGENT", help="the agent id the role is for")
    f.add_argument("--read", nargs="*", default=[], metavar="OTHER", help="agents whose shared memory it may read (replaces the list)")
    f.add_argument("--new-password", action="store_true", help="give an existing role a new password (the old one stops working)")
    f.add_argument("--json", action="store_true")


def cmd_fleet(args) -> int:
    from clawmem.engine import FleetError, LocalFleetServer, fleet_grant, fleet_url, load_config, mask_password

    if args.fleet_command is None:
        raise CommandError("fleet: say `clawmem fleet up`, `down`, `push` or `grant AGENT`", EXIT_USAGE)
    try:
        if args.fleet_command in ("up", "down"):
            server = LocalFleetServer()
            if args.fleet_command == "up":
                url = server.up()
                out = {"url": url, "dataDir": str(server.pgdata)}
                text = (f"PostgreSQL with pgvector runs at {mask_password(url)} (data in {server.pgdata}).\n"
                        f"The owner's URL, with its password (put it in [fleet] url or CLAWMEM_FLEET_URL; it sees every agent):\n{url}")
            else:
                stopped = server.down()
                out = {"stopped": stopped}
                text = "stopped" if stopped else "not running"
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
        else:
            cfg = load_config(args.config, workspace=args.workspace, agent=args.agent)
            out = fleet_grant(fleet_url(cfg), args.fleet_agent, args.read, new_password=args.new_password)
            reads = ", ".join(out["reads"]) or "no other agent"
            note = "" if out["newPassword"] else "  (password unchanged: --new-password sets a new one)"
            text = (f"role {out['role']} reads its own and {reads}'s shared memory.\n"
                    f"Put this in agent {out['agent']}'s clawmem config{note}:\n\n{out['config']}")
    except FleetError as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(out, indent=2, ensure_ascii=False) if args.json else text.rstrip())
    return EXIT_OK


FLEET = Command("fleet", fleet_arguments, cmd_fleet)
