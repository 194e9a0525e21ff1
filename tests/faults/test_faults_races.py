"""Fault suite, writer races: a model-based random walk across real processes. Appenders
(memory_append), a rememberer (memory_remember), an editor saving through the app's File tab
(EditSession), a restorer (journal restore of a random earlier version) and a raw program
appending with `>>` all write today's log and MEMORY.md at once, in an order chosen by a seed.

After every run the model checks that each acknowledged write is in the file, unless a restore
took it away on purpose: then the journal's version just before that restore (what the restore
saw under the file's lock) holds it and the restored version does not. A write that landed
between a writer's compare and its rename would be in neither.

CLAWMEM_FAULT_ROUNDS (default 1) and CLAWMEM_FAULT_OPS (default 12 per worker) make longer walks.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

NOW = "2026-03-04T09:30:00"
LOG = "memory/2026-03-04.md"
WORKERS = ("append", "append", "remember", "editor", "restore", "raw")


def worker(kind: str, ws: Path, seed: int, ops: int, acks: Path) -> None:
    """One process of the walk: `ops` writes of one kind, each acknowledged one logged to `acks`."""
    import datetime as dt
    import time

    from clawmem.engine import Engine, load_config
    from clawmem.engine.agent import tools
    from clawmem.engine.files.editing import ChangedOnDisk, EditSession
    from clawmem.engine.files.journal import Journal, restore

    rnd = random.Random(seed)
    eng = Engine(load_config(None, workspace=str(ws), overrides={"provider": "none"}))
    now = dt.datetime.fromisoformat(NOW)
    with open(acks, "a") as out:
        for i in range(ops):
            token = f"tok{kind[:3]}{seed}x{i}"
            rel = rnd.choice([LOG, "MEMORY.md"])
            ok = False
            if kind == "append":
                rel = LOG
                ok = "error" not in tools.memory_append(eng, f"entry {token}", now=now)
            elif kind == "remember":
                rel = "MEMORY.md"
                ok = "error" not in tools.memory_remember(eng, f"fact {token}", rnd.choice(["Notes", "People"]))
            elif kind == "editor":
                session = EditSession(ws / rel)
                time.sleep(rnd.random() * 0.02)  # the user types
                session.edit(session.text + f"- edited {token}\n")
                try:
                    session.save()
                    ok = True
                except ChangedOnDisk:
                    ok = False  # answered as a conflict: the user is shown the difference
            elif kind == "restore":
                with Journal(eng.cfg) as jr:
                    versions = [v for v in jr.versions(rel) if not v.deleted]
                    if versions:
                        restore(jr, rel, ws / rel, rnd.choice(versions).id)
                token = None
            else:  # a program outside clawmem appending with >>: noise, not clawmem's to guarantee
                with open(ws / rel, "a") as fh:
                    fh.write(f"- raw {token}\n")
                token = None
            if ok and token:
                out.write(json.dumps({"token": token, "path": rel}) + "\n")
                out.flush()
            time.sleep(rnd.random() * 0.01)
    eng.close()


def lost_writes(ws: Path, acks: list[dict]) -> list[dict]:
    """Acknowledged writes not in their file and not taken away by a restore."""
    from clawmem.engine import load_config
    from clawmem.engine.files.journal import Journal

    lost = []
    with Journal(load_config(None, workspace=str(ws))) as jr:
        for path in (LOG, "MEMORY.md"):
            text = (ws / path).read_text()
            versions = sorted(jr.versions(path), key=lambda v: v.id)
            pairs = [(jr.data(versions[k - 1].id) or b"", jr.data(v.id) or b"")
                     for k, v in enumerate(versions) if k and v.writer.startswith("restore of v")]
            for ack in acks:
                if ack["path"] != path or ack["token"] in text:
                    continue
                tok = ack["token"].encode()
                if not any(tok in before and tok not in after for before, after in pairs):
                    lost.append(ack)
    return lost


def run_walk(ws: Path, seed: int, ops: int) -> tuple[int, list[dict]]:
    """(acknowledged writes, the lost ones) of one walk with every worker in its own process."""
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / LOG).write_text("# 2026-03-04\n")
    (ws / "MEMORY.md").write_text("# Memory\n\n## Notes\n- tea\n")
    acks_file = ws.parent / f"acks-{seed}.jsonl"
    acks_file.unlink(missing_ok=True)
    procs = [subprocess.Popen([sys.executable, __file__, kind, str(ws), str(seed * 100 + n), str(ops), str(acks_file)],
                              stderr=subprocess.PIPE, text=True)
             for n, kind in enumerate(WORKERS)]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
    acks = [json.loads(line) for line in acks_file.read_text().splitlines()]
    return len(acks), lost_writes(ws, acks)


def test_every_acknowledged_write_survives_a_random_walk(tmp_path):
    rounds = int(os.environ.get("CLAWMEM_FAULT_ROUNDS", "1"))
    ops = int(os.environ.get("CLAWMEM_FAULT_OPS", "12"))
    total = 0
    for seed in range(1, rounds + 1):
        acked, lost = run_walk(tmp_path / f"ws{seed}", seed, ops)
        total += acked
        assert not lost, f"seed {seed}: {len(lost)} of {acked} acknowledged writes lost: {lost[:5]}"
    assert total >= rounds * ops * 2  # the appenders alone are never refused


if __name__ == "__main__":
    worker(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]))
