"""Fault suite, handles (issue 43): every write is resolved from one directory handle of the
workspace, held for the process's life. A name swapped between a check and an open (a hard link
to an outside file, a parent folder turned into a symlink, the workspace moved away, a symlink
put where MEMORY.md was) never redirects a write, never lends the file its mode, and never makes
clawmem re-create a folder. Each race has a deterministic version (a hook swaps the name at the
moment between check and open), a time-bounded version with a real swapping process, and a
hypothesis model walk: after every step, every acknowledged write is present."""

from __future__ import annotations

import datetime as dt
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import write

SECRET = "root:x:0:0:the outside file:/root:/bin/sh\n"
DAY = dt.datetime(2026, 3, 4, 9, 0)
LOG = "memory/2026-03-04.md"


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ----------------------------------------------------------------------------- hard link at the name


def test_a_hard_link_put_at_the_name_for_an_instant_is_never_written(workspace, tmp_path, monkeypatch):
    """Today's log renamed away, a hard link to an outside file put at its name, then the log
    renamed back over it: an append that opened the name in that instant wrote into the outside
    file (its link count was 1 again when checked). Here the swap happens inside the open."""
    from clawmem.engine.files import memfile

    outside = write(tmp_path / "outside" / "passwd", SECRET)
    log = write(workspace / LOG, "# 2026-03-04\n")
    aside = workspace / "memory" / "aside"
    real_open = os.open
    armed = [True]

    def open_during_swap(path, flags, mode=0o777, *, dir_fd=None):
        if armed[0] and path == log.name and dir_fd is not None:
            armed[0] = False
            os.rename(log, aside)
            os.link(outside, log)
            try:
                return real_open(path, flags, mode, dir_fd=dir_fd)
            finally:
                os.rename(aside, log)  # the outside file is back to one link
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_during_swap)
    got = memfile.append(workspace, LOG, lambda tail: "- entry one\n")
    monkeypatch.setattr(os, "open", real_open)
    assert not armed[0], "the hook never ran"
    assert outside.read_text() == SECRET
    assert "- entry one\n" in log.read_text() and got.rel == LOG


# The name swapped with a hard link to the outside file and back, each an atomic exchange
# (renameat2 RENAME_EXCHANGE): a hard link stands at the name for an instant and the name is never
# missing. A rename away and a link put in its place (the loop) leaves the name missing
# between the two; a daily log is created then, as it must be, and the loop's next rename then
# overwrote the real log put aside with it: the attacker, not clawmem, lost those appends.
SWAP_LINK = r"""
import ctypes, os, sys, time
log, outside, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
def exchange(a, b):
    if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
link, n = log + ".link", 0
os.link(outside, link)
while time.monotonic() < until:
    exchange(log, link)  # the name: the outside file's hard link; the real log stands at .link
    time.sleep(0.002)
    exchange(log, link)  # and back
    n += 1
os.unlink(link)
print(n)
"""


def test_hard_link_swaps_during_appends_land_no_acknowledged_write_outside(workspace, tmp_path):
    """The same swap in a loop from another process for a bounded time while this one appends:
    no byte reaches the outside file, every acknowledged append is in today's log."""
    from clawmem.engine.files import memfile

    outside = write(tmp_path / "outside" / "passwd", SECRET)
    log = write(workspace / LOG, "# 2026-03-04\n")
    seconds = float(os.environ.get("CLAWMEM_FAULT_SECONDS", "3"))
    swapper = subprocess.Popen([sys.executable, "-c", SWAP_LINK, str(log), str(outside), str(seconds)],
                               stdout=subprocess.PIPE, text=True)
    acked, refused, i = [], 0, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        entry = f"- entry {i:05d}\n"
        i += 1
        try:
            memfile.append(workspace, LOG, lambda tail, e=entry: e)
            acked.append(entry)
        except memfile.Refused as exc:
            assert "\n" not in str(exc) and "ValueError" not in str(exc)
            refused += 1
    out, _ = swapper.communicate(timeout=30)
    assert int(out.split()[-1]) > 10, "the swapper never ran"
    assert outside.read_text() == SECRET
    text = log.read_text()
    missing = [e for e in acked if e not in text]
    assert acked and not missing, f"{len(missing)} of {len(acked)} acknowledged appends missing ({refused} refused)"


# ----------------------------------------------------------------------------- a parent turned symlink


@pytest.fixture
def nested(tmp_path):
    """A workspace below a folder (`base/ws`) and a decoy tree of the same shape elsewhere."""
    base = tmp_path / "base"
    ws = base / "ws"
    (ws / "memory").mkdir(parents=True)
    write(ws / "MEMORY.md", "# Memory\n")
    decoy = tmp_path / "decoy"
    (decoy / "ws" / "memory").mkdir(parents=True)
    write(decoy / "ws" / "MEMORY.md", "# Decoy\n")
    return base, ws, decoy


def swap_parent(base: Path, decoy: Path) -> None:
    os.rename(base, str(base) + ".real")
    os.symlink(decoy, base)


def unswap_parent(base: Path) -> None:
    os.unlink(base)
    os.rename(str(base) + ".real", base)


def decoy_untouched(decoy: Path) -> bool:
    names = sorted(str(p.relative_to(decoy)) for p in decoy.rglob("*"))
    return names == ["ws", "ws/MEMORY.md", "ws/memory"] and (decoy / "ws" / "MEMORY.md").read_text() == "# Decoy\n"


def test_a_parent_swapped_for_a_symlink_after_the_checks_redirects_no_write(nested, monkeypatch):
    """The workspace was resolved by path on every write: a parent folder swapped for a symlink
    to a decoy tree between the checks and the open sent acknowledged writes to the decoy."""
    from clawmem.engine.files import memfile

    base, ws, decoy = nested
    memfile.append(ws, LOG, lambda tail: "- before\n")
    real_open = os.open
    swapped = [False]

    def open_after_swap(path, flags, mode=0o777, *, dir_fd=None):
        if not swapped[0] and dir_fd is None and os.fspath(path) == str(ws):
            swapped[0] = True
            swap_parent(base, decoy)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    real_stat = os.stat

    def stat_then_swap(path, *a, **kw):  # the moment after a check of the workspace's path
        got = real_stat(path, *a, **kw)
        if not swapped[0] and kw.get("dir_fd") is None and os.fspath(path) == str(ws):
            swapped[0] = True
            swap_parent(base, decoy)
        return got

    monkeypatch.setattr(os, "open", open_after_swap)
    monkeypatch.setattr(os, "stat", stat_then_swap)
    try:
        got = memfile.append(ws, LOG, lambda tail: "- during\n")
    except memfile.Refused:
        got = None
    finally:
        monkeypatch.setattr(os, "open", real_open)
        monkeypatch.setattr(os, "stat", real_stat)
        if swapped[0]:
            unswap_parent(base)
    assert swapped[0], "the hook never ran"
    assert decoy_untouched(decoy)
    if got is not None:  # acknowledged: then it is in the real workspace
        assert "- during\n" in (ws / LOG).read_text()


def test_a_workspace_whose_parent_now_is_a_symlink_is_refused(nested):
    """Once a workspace is open, a path that now leads elsewhere is refused in one line, and
    nothing is created in the decoy."""
    from clawmem.engine.files import memfile

    base, ws, decoy = nested
    memfile.append(ws, LOG, lambda tail: "- before\n")
    swap_parent(base, decoy)
    try:
        with pytest.raises(memfile.Refused, match="no longer the folder") as err:
            memfile.append(ws, LOG, lambda tail: "- redirected?\n")
        assert "\n" not in str(err.value)
        with pytest.raises(memfile.Refused, match="no longer the folder"):
            memfile.rewrite(ws, "MEMORY.md", lambda text: text + "- redirected?\n")
    finally:
        unswap_parent(base)
    assert decoy_untouched(decoy)
    memfile.append(ws, LOG, lambda tail: "- after\n")
    assert (ws / LOG).read_text() == "- before\n- after\n"


def test_the_agent_tools_under_a_parent_symlink_write_nowhere_and_say_so_in_one_line(nested, tmp_path, monkeypatch):
    """Through the agent tools the workspace's path was resolved again on every call, so with a
    parent swapped for a symlink the engine itself named the decoy: writes landed there, and
    others came back as raw "ValueError: ... is not in the subpath of ..." text."""
    from clawmem.engine import Engine, load_config
    from clawmem.engine.agent import tools

    base, ws, decoy = nested
    eng = Engine(load_config(None, workspace=str(ws), overrides={"provider": "none"}))
    assert "error" not in tools.memory_append(eng, "before", now=DAY)
    swap_parent(base, decoy)
    try:
        got = [tools.memory_append(eng, "during", now=DAY), tools.memory_remember(eng, "a fact during")]
    finally:
        unswap_parent(base)
        eng.close()
    for res in got:
        assert "no longer the folder" in res.get("error", ""), res
        assert "\n" not in res["error"] and "ValueError" not in res["error"] and "subpath" not in res["error"]
    assert decoy_untouched(decoy)


SWAP_PARENT = r"""
import os, sys, time
base, decoy, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
n = 0
while time.monotonic() < until:
    try:
        os.rename(base, base + ".real"); os.symlink(decoy, base)
        time.sleep(0.001)
        os.unlink(base); os.rename(base + ".real", base)
        n += 1
    except OSError:
        pass
if os.path.islink(base):
    os.unlink(base)
if not os.path.exists(base):
    os.rename(base + ".real", base)
print(n)
"""


def test_parent_symlink_swaps_during_writes_land_nothing_in_the_decoy(nested):
    """Rotating swaps of the workspace's parent while appends and remembers run, bounded in time:
    the decoy stays as it was, every acknowledged write is in the real workspace, MEMORY.md
    stays 0600, and every refusal is one line of clawmem's, never raw ValueError text."""
    from clawmem.engine.files import memfile

    base, ws, decoy = nested
    os.chmod(ws / "MEMORY.md", 0o600)
    memfile.append(ws, LOG, lambda tail: "")  # the workspace is opened before the race
    seconds = float(os.environ.get("CLAWMEM_FAULT_SECONDS", "3"))
    swapper = subprocess.Popen([sys.executable, "-c", SWAP_PARENT, str(base), str(decoy), str(seconds)],
                               stdout=subprocess.PIPE, text=True)
    acked, refusals, i = [], set(), 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        entry = f"- entry {i:05d}\n"
        i += 1
        try:
            if i % 3:
                memfile.append(ws, LOG, lambda tail, e=entry: e)
            else:
                memfile.rewrite(ws, "MEMORY.md", lambda text, e=entry: text + e)
            acked.append(entry)
        except memfile.Refused as exc:
            refusals.add(str(exc).split(":")[0])
            assert "\n" not in str(exc)
    out, _ = swapper.communicate(timeout=30)
    assert int(out.split()[-1]) > 10, "the swapper never ran"
    assert decoy_untouched(decoy)
    text = (ws / LOG).read_text() + (ws / "MEMORY.md").read_text()
    missing = [e for e in acked if e not in text]
    assert acked and not missing, f"{len(missing)} of {len(acked)} acknowledged writes missing; refusals {refusals}"
    assert mode(ws / "MEMORY.md") == 0o600


# ----------------------------------------------------------------------------- modes from fstat


def test_a_symlink_at_the_name_for_an_instant_never_lends_its_mode(workspace, tmp_path, monkeypatch):
    """MEMORY.md came out 0777: a rewrite copied the mode from a stat of the name while a
    symlink (0777) stood there for an instant. The mode now comes from the file read."""
    from clawmem.engine.files import memfile

    top = write(workspace / "MEMORY.md", "# Memory\n")
    os.chmod(top, 0o600)
    elsewhere = write(tmp_path / "elsewhere.md", "x\n")
    real_stat = os.stat
    calls = [0]

    def stat_with_symlink(path, *a, **kw):
        if path == "MEMORY.md" and kw.get("dir_fd") is not None and not kw.get("follow_symlinks", True):
            calls[0] += 1
            if calls[0] == 2:  # the second look at the name during the rewrite
                os.rename(top, str(top) + ".aside")
                os.symlink(elsewhere, top)
                try:
                    return real_stat(path, *a, **kw)
                finally:
                    os.unlink(top)
                    os.rename(str(top) + ".aside", top)
        return real_stat(path, *a, **kw)

    monkeypatch.setattr(os, "stat", stat_with_symlink)
    memfile.rewrite(workspace, "MEMORY.md", lambda text: text + "- fact\n")
    monkeypatch.setattr(os, "stat", real_stat)
    assert calls[0] >= 2, "the hook never ran"
    assert top.read_text() == "# Memory\n- fact\n"
    assert mode(top) == 0o600


def test_the_journal_never_records_a_symlinks_mode_as_a_versions(workspace, tmp_path, make_engine):
    """The journal took a version's mode from lstat of the name: a symlink's 0777, which a
    restore of that version would then give the file."""
    from clawmem.engine.files.journal import Journal

    target = write(tmp_path / "elsewhere.md", "x\n")
    os.chmod(target, 0o600)
    (workspace / "MEMORY.md").symlink_to(target)
    eng = make_engine()
    with Journal(eng.cfg) as j:
        v = j.observe("MEMORY.md", workspace / "MEMORY.md", b"x\n")
        assert j.mode(v.id) != 0o777
        (workspace / "MEMORY.md").unlink()
        write(workspace / "MEMORY.md", "y\n")
        os.chmod(workspace / "MEMORY.md", 0o640)
        v = j.observe("MEMORY.md", workspace / "MEMORY.md", b"y\n")
        assert j.mode(v.id) == 0o640


# ----------------------------------------------------------------------------- moved, never re-created


def test_a_moved_workspace_is_refused_and_never_re_created(workspace, tmp_path):
    """Renamed while writers ran, the workspace came back as a stub (0700, memory/, a new
    MEMORY.md) that took acknowledged writes."""
    from clawmem.engine.files import memfile

    memfile.append(workspace, LOG, lambda tail: "- before\n")
    moved = tmp_path / "moved"
    os.rename(workspace, moved)
    for call in (lambda: memfile.append(workspace, LOG, lambda tail: "- lost?\n"),
                 lambda: memfile.rewrite(workspace, "MEMORY.md", lambda text: text + "- lost?\n"),
                 lambda: memfile.create_new(workspace, "memory", "note", "- lost?\n")):
        with pytest.raises(memfile.Refused) as err:
            call()
        assert "\n" not in str(err.value)
    assert not workspace.exists()
    assert (moved / LOG).read_text() == "- before\n"


def test_a_missing_workspace_and_its_parent_are_never_created(tmp_path):
    """A write to a workspace that does not exist made it and every missing parent."""
    from clawmem.engine.files import memfile

    ws = tmp_path / "never" / "made" / "ws"
    with pytest.raises(memfile.Refused, match="no folder"):
        memfile.append(ws, LOG, lambda tail: "- entry\n")
    assert not (tmp_path / "never").exists()


# ----------------------------------------------------------------------------- the model walk


def test_every_acknowledged_write_is_present_after_each_step(tmp_path):
    """Hypothesis model walk: appends and remembers, each under one of the attacks above set up
    around it (a hard link at the name, the parent a symlink, a symlink at MEMORY.md, the
    workspace moved away) or none. After every step (the attack undone), every acknowledged
    write is in the workspace, the outside files are as they were and MEMORY.md is 0600."""
    from hypothesis import HealthCheck, settings, strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

    from clawmem.engine.files import memfile

    counter = [0]

    class Walk(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            counter[0] += 1
            root = tmp_path / f"walk{counter[0]}"
            self.base, self.ws, self.decoy = root / "base", root / "base" / "ws", root / "decoy"
            (self.ws / "memory").mkdir(parents=True)
            write(self.ws / "MEMORY.md", "# Memory\n")
            os.chmod(self.ws / "MEMORY.md", 0o600)
            (self.decoy / "ws" / "memory").mkdir(parents=True)
            write(self.decoy / "ws" / "MEMORY.md", "# Decoy\n")
            self.outside = write(root / "outside", SECRET)
            self.acked: list[str] = []
            self.n = 0

        def attack(self, kind: str, rel: str):
            target = self.ws / rel
            if kind == "hardlink" and target.exists():
                os.rename(target, str(target) + ".aside")
                os.link(self.outside, target)
                return lambda: os.rename(str(target) + ".aside", target)
            if kind == "symlink" and target.exists():
                os.rename(target, str(target) + ".aside")
                os.symlink(self.outside, target)
                return lambda: (os.unlink(target), os.rename(str(target) + ".aside", target))
            if kind == "parent":
                swap_parent(self.base, self.decoy)
                return lambda: unswap_parent(self.base)
            if kind == "moved":
                os.rename(self.ws, str(self.ws) + ".moved")
                return lambda: os.rename(str(self.ws) + ".moved", self.ws)
            return lambda: None

        @rule(kind=st.sampled_from(["none", "hardlink", "symlink", "parent", "moved"]), remember=st.booleans())
        def write(self, kind, remember):
            self.n += 1
            entry = f"- entry {self.n:04d}\n"
            rel = "MEMORY.md" if remember else LOG
            undo = self.attack(kind, rel)
            try:
                if remember:
                    memfile.rewrite(self.ws, rel, lambda text: text + entry)
                else:
                    memfile.append(self.ws, rel, lambda tail: entry)
                self.acked.append(entry)
            except memfile.Refused as exc:
                assert "\n" not in str(exc)
            finally:
                undo()

        @invariant()
        def every_acknowledged_write_is_present(self):
            log = self.ws / LOG
            text = (self.ws / "MEMORY.md").read_text() + (log.read_text() if log.exists() else "")
            assert [e for e in self.acked if e not in text] == []
            assert self.outside.read_text() == SECRET
            assert decoy_untouched(self.decoy)
            assert mode(self.ws / "MEMORY.md") == 0o600

    Walk.TestCase.settings = settings(max_examples=int(os.environ.get("CLAWMEM_FAULT_EXAMPLES", "25")), stateful_step_count=12,
                                      deadline=None, suppress_health_check=list(HealthCheck))
    Walk.TestCase().runTest()


# ----------------------------------------------------------------------------- the agent's doors


def test_mcp_stdio_answers_deeply_nested_json_and_a_batch(workspace):
    """No reply at all came to a request nested 5,000 deep or to a batch of 500 calls: the client
    waited forever. Each now gets a JSON-RPC error, and the server goes on answering."""
    import json

    from mcpwire import exchange, request

    deep = ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_get","arguments":{"path":'
            + "[" * 5000 + "]" * 5000 + "}}}")
    batch = json.dumps([json.loads(request(100 + i, "tools/call", {"name": "memory_get", "arguments": {"path": "MEMORY.md"}}))
                        for i in range(500)])
    got = exchange(workspace, [deep, batch, request(6, "tools/list", {})], timeout=30, ids={5, 6, *range(100, 600)})
    assert got.get(5, {}).get("error", {}).get("code") == -32600, got.get(5)
    assert all(got.get(i, {}).get("error", {}).get("code") == -32600 for i in range(100, 600)), \
        f"{sum(i in got for i in range(100, 600))} of 500 batch calls answered"
    assert "tools" in got[6]["result"]


def test_mcp_tool_refusals_come_back_flagged_is_error(workspace):
    """A refused write or read came back with isError false: a client looking at the flag took it for done."""
    from mcpwire import exchange, request

    got = exchange(workspace, [request(1, "tools/call", {"name": "memory_get", "arguments": {"path": "../../etc/passwd"}}),
                               request(2, "tools/call", {"name": "memory_append", "arguments": {"text": "  "}}),
                               request(3, "tools/call", {"name": "memory_get", "arguments": {"path": "MEMORY.md"}})])
    assert got[1]["result"]["isError"] is True and got[2]["result"]["isError"] is True
    assert got[3]["result"].get("isError") is not True


@pytest.mark.parametrize("args, word", [({"from": 0}, "from"), ({"from": -1}, "from"), ({"lines": 1.5}, "lines"),
                                        ({"from": 2.5}, "from"), ({"lines": -3}, "lines")])
def test_memory_get_refuses_line_numbers_the_cli_refuses(workspace, make_engine, args, word):
    """memory_get took from 0 / -1 and lines 1.5 silently (the CLI refuses them)."""
    from clawmem.engine.agent import tools

    write(workspace / "MEMORY.md", "one\ntwo\nthree\n")
    got = tools.memory_get(make_engine(), "MEMORY.md", args.get("from"), args.get("lines"))
    assert got["text"] == "" and got["error"].startswith(f"{word}: expected a whole number"), got
    ok = tools.memory_get(make_engine(), "MEMORY.md", 2, 0)
    assert ok["text"] == "two\nthree\n" and "error" not in ok


@pytest.mark.parametrize("text", ["fine\n## 23:59\nforged entry", "## 7:05 forged", "x\n   # 2026-03-04\ny"])
def test_an_append_cannot_carry_a_forged_entry_heading(workspace, make_engine, text):
    """An append's text could carry a `## 23:59` heading into the daily log: a forged entry of its own."""
    from clawmem.engine.agent import tools

    got = tools.memory_append(make_engine(), text, now=DAY)
    assert "heading of another entry" in got.get("error", ""), got
    assert not (workspace / LOG).exists()
    ok = tools.memory_append(make_engine(), "a note about ## headings and 23:59 deadlines", now=DAY)
    assert "error" not in ok, ok


@pytest.mark.parametrize("name", [".", "..", "..."])
def test_agent_names_made_of_dots_are_refused(workspace, tmp_path, name):
    """`--agent ..` passed validation and wrote its journal outside journal/."""
    from faultkit import one_line_error, run

    res = run("--workspace", str(workspace), "--agent", name, "status")
    assert res.returncode != 0 and "--agent" in one_line_error(res), res.stderr


# ----------------------------------------------------------------------------- index and data folder


def test_one_unreadable_transcript_never_fails_the_index(workspace, tmp_path):
    """One unreadable session transcript failed every `clawmem index` (exit 3, "last sync
    never"); an unreadable memory file was skipped properly. Now it is skipped too, with a line."""
    import json
    import shutil

    from faultkit import cli

    state = tmp_path / "openclaw"
    sessions = state / "agents" / "main" / "sessions"
    line = json.dumps({"type": "message", "message": {"role": "user", "content": "the zeppelin hangar opens at nine"}})
    write(sessions / "a.jsonl", line + "\n")
    locked = write(sessions / "b.jsonl", line.replace("zeppelin", "blimp") + "\n")
    os.chmod(locked, 0)
    config = write(tmp_path / "c.toml", 'provider = "none"\nsources = ["memory", "sessions"]\n[sync]\nonSearch = false\n')
    prefix = []
    if os.geteuid() == 0:  # root reads any file: drop the capabilities that let it (a real EACCES)
        assert shutil.which("setpriv"), "setpriv (util-linux) is needed to test unreadable files as root"
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search", "--"]
    env = {**os.environ, "OPENCLAW_STATE_DIR": str(state)}
    ws = ["--workspace", str(workspace), "--config", str(config)]
    res = subprocess.run([*prefix, *cli(*ws, "index")], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    assert "sessions/b.jsonl: transcript is not readable (permission denied)" in res.stderr and "Traceback" not in res.stderr
    out = subprocess.run([*prefix, *cli(*ws, "search", "zeppelin hangar", "--json")], capture_output=True, text=True,
                         timeout=120, env=env)
    assert [r["path"] for r in json.loads(out.stdout)["results"]][:1] == ["sessions/a.jsonl"], out.stdout + out.stderr


@pytest.fixture
def full_data(workspace, tmp_path, make_engine):
    """clawmem's data folder on a real 1 MB tmpfs, indexed once, then filled up."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    write(workspace / "MEMORY.md", "# Memory\n- tea with lemon\n")
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs as the data folder")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(data)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        eng = make_engine()
        list(eng.index())
        eng.close()
        fd = os.open(data / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        yield data
    finally:
        subprocess.run(["umount", "-l", str(data)], capture_output=True)


def test_a_full_data_folder_never_says_another_process_writes_nor_that_the_index_is_damaged(full_data, make_engine):
    """With the data folder full, every memory_remember from the second on waited 10 s with a
    false "the index is being written by another process"; search and status called the intact
    index damaged and suggested a repair."""
    from clawmem.engine.agent import tools

    eng = make_engine()
    for i in range(3):
        started = time.monotonic()
        res = tools.memory_remember(eng, f"fact number {i} about kilns")
        took = time.monotonic() - started
        assert res.get("path") == "MEMORY.md", res
        assert res.get("indexed") is False and "another process" not in res.get("warning", ""), res
        assert took < 5, f"remember {i} took {took:.1f} s"
    found = eng.search("tea lemon")
    assert [r["path"] for r in found["results"]] == ["MEMORY.md"], found
    text = repr(eng.status())
    assert "damaged" not in text and "corrupt" not in text and "repair" not in text, text


def test_a_read_only_data_folder_is_named_not_memory_md(workspace, tmp_path, make_engine):
    """With clawmem's data folder read-only, memory_remember said "MEMORY.md: cannot write
    (Read-only file system)": the file was fine, the data folder (its lock) was not."""
    from clawmem.engine.agent import tools

    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    data = tmp_path / "data"
    eng = make_engine()
    list(eng.index())
    eng.close()
    if os.geteuid() != 0:
        pytest.skip("needs root to remount the data folder read-only")
    if subprocess.run(["mount", "--bind", str(data), str(data)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here")
    try:
        subprocess.run(["rm", "-rf", str(data / "clawmem" / "locks")], check=True)
        assert subprocess.run(["mount", "-o", "remount,bind,ro", str(data)], capture_output=True).returncode == 0
        eng = make_engine()
        for res in (tools.memory_remember(eng, "a fact"), tools.memory_append(eng, "a note", now=DAY)):
            assert str(data) in res.get("error", "") and "data folder" in res["error"], res
            assert "nothing was written" in res["error"]
        assert (workspace / "MEMORY.md").read_text() == "# Memory\n- tea\n"
        eng.close()
    finally:
        subprocess.run(["umount", "-l", str(data)], capture_output=True)


# ----------------------------------------------------------------------------- the model worker


def test_a_stopped_worker_clawmem_killed_is_not_blamed_on_memory(tiny_model, monkeypatch):
    """A resident model paused (SIGSTOP) is killed by the client whose request stalled first; a
    client waiting on it at the same time said "killed (SIGKILL; out of memory?)" and recorded
    that as the reason every next search gave. It now says clawmem stopped it."""
    import signal

    from clawmem.engine.embeddings import ProviderError, worker
    from clawmem.engine.embeddings.local import LocalProvider

    monkeypatch.setattr(worker, "STALL_TIMEOUT", 2.0)
    a = LocalProvider(tiny_model, resident_minutes=5)
    a.embed_query("cat")
    pid = a._model_host.pid
    code = ("from clawmem.engine.embeddings.local import LocalProvider\n"
            f"p = LocalProvider({str(tiny_model)!r}, resident_minutes=5)\n"
            "p.embed_query('cat')\n"
            "import sys; print(p._model_host.pid, flush=True); sys.stdin.readline()\n"
            "try:\n    p.embed_query('fish')\n    print('answered', flush=True)\nexcept Exception as exc:\n    print(exc, flush=True)\n")
    other = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert int(other.stdout.readline()) == pid
        os.kill(pid, signal.SIGSTOP)
        other.stdin.write("\n")  # the other client's request waits on the paused worker too
        other.stdin.flush()
        time.sleep(0.5)
        with pytest.raises(ProviderError, match="stopped working"):
            a.embed_query("fish")
        out, _ = other.communicate(timeout=60)
    finally:
        if other.poll() is None:
            other.kill()
        a.close()
    assert "out of memory" not in out and "SIGKILL" not in out, out
    assert "stopped" in out or out == "answered\n", out  # or it reached a new worker
    (rec,) = worker.Failures().all().values()
    assert "out of memory" not in rec["reason"], rec
