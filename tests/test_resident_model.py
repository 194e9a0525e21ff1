"""The resident model: one worker per user and model, shared by every clawmem process, reached
over an owner-only Unix socket, gone when idle, restarted after a crash, and never reached by
(or reaching) another user. Real processes, the tiny real GGUF model, real sockets."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clawmem.engine.embeddings import ProviderError, resident, worker
from clawmem.engine.embeddings.local import LocalProvider
from helpers import gone, run_cli, search_in_fresh_process, wait_for, write


def residents() -> list[int]:
    """Pids of resident workers serving this test's runtime folder (by their command lines)."""
    folder = str(resident.runtime_dir())
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                args = fh.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
        except OSError:
            continue
        if b"--resident" in args and folder.encode() in args:
            out.append(int(name))
    return out


@pytest.fixture
def ws(workspace, tiny_model):
    write(workspace / "MEMORY.md", "# Memory\n\n- The heron migration is planned for spring.\n")
    cfg = workspace.parent / "cfg.toml"
    cfg.write_text(f'provider = "local"\n[local]\nmodelPath = "{tiny_model}"\nresidentMinutes = 5\n')
    r = run_cli("--workspace", str(workspace), "--config", str(cfg), "index")
    assert r.returncode == 0, r.stderr
    return workspace, cfg


def search(ws, cfg, query="heron migration") -> dict:
    r = run_cli("--workspace", str(ws), "--config", str(cfg), "search", query, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_two_processes_share_one_resident_model_that_outlives_them(ws):
    """The index run started the worker; two searches (two processes) use it: one worker, one
    model loaded, still up after they exit; `status` shows it and `model stop` ends it."""
    workspace, cfg = ws
    (pid,) = residents()
    for _ in range(2):
        got = search(workspace, cfg)
        assert got["mode"] == "hybrid", got.get("reason")
        assert residents() == [pid]
    st = run_cli("--workspace", str(workspace), "--config", str(cfg), "status")
    assert f"Resident model: tiny-bert.gguf up, pid {pid}" in st.stdout, st.stdout
    st = json.loads(run_cli("--workspace", str(workspace), "--config", str(cfg), "status", "--json").stdout)
    (info,) = st["residentModels"]
    assert info["pid"] == pid and info["rssBytes"] > 1e6 and 0 <= info["idleSeconds"] < 300
    folder = resident.runtime_dir()
    assert os.stat(folder).st_mode & 0o777 == 0o700
    (sock,) = folder.glob("m-*.sock")
    assert os.stat(sock).st_mode & 0o777 == 0o600
    out = run_cli("model", "stop")
    assert f"(pid {pid})" in out.stdout
    assert residents() == [] and not sock.exists()
    assert "Resident model: not running" in run_cli("--workspace", str(workspace), "--config", str(cfg), "status").stdout
    assert search(workspace, cfg)["mode"] == "hybrid"  # the next search starts it again
    assert len(residents()) == 1


# What a hybrid search that finds the resident model up must not load: numpy (~0.1 s), the
# download module, hashlib (its OpenSSL binding, ~3 ms), threading (worker.Turns is made of
# _thread locks), and what only starting or serving a worker needs: socket.py (its enums; the
# client uses _socket), subprocess, signal. (Not struct: a memory this small loads base64 for
# its background vectors, and base64 imports struct.)
NOT_ON_THE_WARM_PATH = ("numpy", "clawmem.engine.embeddings.download", "hashlib", "threading", "socket", "subprocess", "signal")


def test_a_hybrid_search_with_the_model_warm_never_loads_numpy(ws):
    """The query vector comes back from the resident worker as float32 bytes and sqlite-vec
    takes bytes: numpy's import (~0.1 s) was most of what a warm hybrid `clawmem search` cost
    over a keyword one. Nor does it load the download module, hashlib, or what starting or
    serving a worker needs (NOT_ON_THE_WARM_PATH). The search is still hybrid, with the vector
    side's figures."""
    workspace, cfg = ws
    line = search_in_fresh_process(
        ["--workspace", str(workspace), "--config", str(cfg), "search", "heron migration", "--json", "--explain"],
        f"code, json.loads(out)['mode'], [m for m in {NOT_ON_THE_WARM_PATH!r} if m in sys.modules], "
        "(json.loads(out)['results'][0]['explain'].get('vector') or {}).get('rank')")
    assert line == "0 hybrid [] 1", line


def test_two_engines_in_two_processes_load_the_model_once(tiny_model):
    code = ("import sys\n"
            "from clawmem.engine.embeddings.local import LocalProvider\n"
            f"p = LocalProvider({str(tiny_model)!r}, resident_minutes=5)\n"
            "p.embed_query('cat')\n"
            "print(p._model_host.pid, flush=True)\n"
            "sys.stdin.readline()\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        pids = {int(p.stdout.readline()) for p in procs}
        assert len(pids) == 1 and pids == set(residents())
    finally:
        for p in procs:
            p.communicate("\n", timeout=30)


def test_the_resident_model_exits_when_idle(tiny_model):
    p = LocalProvider(tiny_model, resident_minutes=0.02)  # 1.2 s
    p.embed_query("cat")
    pid = p._model_host.pid
    assert residents() == [pid]
    wait_for(lambda: not residents(), limit=10, what="the idle worker to exit")
    # the next query starts a new one; leaving on idle is not a failure
    assert len(p.embed_query("fish")) == 64
    assert p._model_host.pid not in (None, pid)
    assert not worker.Failures().all()
    p.close()


def test_the_resident_model_exits_when_its_folder_goes(tiny_model):
    import shutil

    p = LocalProvider(tiny_model, resident_minutes=5)
    p.embed_query("cat")
    p.close()
    assert len(residents()) == 1
    shutil.rmtree(resident.runtime_dir())
    wait_for(lambda: not residents(), limit=10, what="the worker to exit with its folder")


def test_a_killed_resident_model_is_restarted_by_the_next_search(ws):
    """Killed between two searches (nobody was waiting on it): the next search finds its stale
    socket, starts a new worker and answers hybrid. A crash during a request is recorded and
    waited out instead (test_a_crash_names_its_signal_in_every_client, test_local_worker)."""
    workspace, cfg = ws
    (pid,) = residents()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: gone(pid), what="the worker to die")
    got = search(workspace, cfg)
    assert got["mode"] == "hybrid", got.get("reason")
    (new,) = residents()
    assert new != pid


def test_a_crash_names_its_signal_in_every_client(tiny_model):
    """The process that did not start the worker cannot wait for it: the crash's name comes
    from the worker's log (faulthandler), so every client discloses the same reason."""
    a = LocalProvider(tiny_model, resident_minutes=5)
    a.embed_query("cat")
    pid = a._model_host.pid
    code = ("from clawmem.engine.embeddings.local import LocalProvider\n"
            f"p = LocalProvider({str(tiny_model)!r}, resident_minutes=5)\n"
            "p.embed_query('cat')\n"
            "import sys; print(p._model_host.pid, flush=True); sys.stdin.readline()\n"
            "try:\n    p.embed_query('fish')\nexcept Exception as exc:\n    print(exc, flush=True)\n")
    other = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert int(other.stdout.readline()) == pid
    os.kill(pid, signal.SIGILL)
    # the crash has happened (the worker gone, its last words in its log) before the other
    # client asks again: on a loaded machine the kill is otherwise still pending when it does
    (log,) = resident.runtime_dir().glob("m-*.log")
    wait_for(lambda: not resident._alive(pid) and "Fatal Python error" in log.read_text(errors="replace"), 30, "the worker's crash")
    out, _ = other.communicate("\n", timeout=60)
    assert out.startswith("local model crashed: SIGILL in llama.cpp"), out
    with pytest.raises(ProviderError, match="SIGILL"):
        a.embed_query("fish")
    (rec,) = worker.Failures().all().values()
    assert rec["reason"].startswith("local model crashed: SIGILL")
    a.close()
    b = LocalProvider(tiny_model, resident_minutes=5)
    with pytest.raises(ProviderError, match="not retried before"):  # the back-off holds for everyone
        b.embed_query("cat")
    b.close()
    assert residents() == []


def test_a_symlink_where_the_socket_belongs_is_refused_not_followed(ws, tmp_path):
    workspace, cfg = ws
    assert run_cli("model", "stop").returncode == 0
    (log,) = resident.runtime_dir().glob("m-*.log")  # the socket's name, without the socket
    target = tmp_path / "elsewhere.sock"
    decoy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    decoy.bind(str(target))
    decoy.listen(1)
    decoy.settimeout(0.5)
    link = log.with_suffix(".sock")
    link.symlink_to(target)
    got = search(workspace, cfg)
    assert got["mode"] == "keyword" and got["results"]
    assert "is a symbolic link; clawmem never follows one" in got["reason"]
    with pytest.raises(socket.timeout):
        decoy.accept()  # nobody connected through the link
    assert link.is_symlink() and residents() == []
    assert worker.Failures().all() == {}  # a refusal is not a crash to wait out
    decoy.close()


def test_the_starter_records_the_models_identity_so_a_search_need_not_hash_it(tiny_model, monkeypatch):
    """The process that starts the resident worker records, beside its socket (0600), the model
    file's identity with the file's state (device, inode, size, mtime, ctime); a later process
    takes the identity from there while the file is unchanged, and hashes the file again once it
    changed (a touch changes ctime) or when the record is a symlink (never followed)."""
    from clawmem.engine.embeddings import local

    p = LocalProvider(tiny_model, resident_minutes=5)
    p.embed_query("cat")
    (rec,) = resident.runtime_dir().glob("f-*.json")
    assert os.stat(rec).st_mode & 0o777 == 0o600
    true = local.file_identity(tiny_model)
    assert json.loads(rec.read_text())["identity"] == true
    # a record that says otherwise is believed while the file's state matches: nothing was hashed
    data = json.loads(rec.read_text())
    rec.write_text(json.dumps({**data, "identity": "1:fromtherecord"}))
    monkeypatch.setattr(local, "_IDENTITIES", {})
    assert local.file_identity(tiny_model, resident=True) == "1:fromtherecord"
    assert local.file_identity(tiny_model, resident=False) == "1:fromtherecord"  # this process's memo
    monkeypatch.setattr(local, "_IDENTITIES", {})
    assert local.file_identity(tiny_model, resident=False) == true  # without a resident model: hashed
    monkeypatch.setattr(local, "_IDENTITIES", {})
    os.chmod(tiny_model, os.stat(tiny_model).st_mode)  # same bits, new ctime: the record no longer holds
    assert local.file_identity(tiny_model, resident=True) == true
    target = rec.with_name("elsewhere.json")
    target.write_text(json.dumps({**data, "identity": "1:fromthelink"}))
    rec.unlink()
    rec.symlink_to(target)
    monkeypatch.setattr(local, "_IDENTITIES", {})
    assert local.file_identity(tiny_model, resident=True) == true
    p.close()


def test_a_stale_socket_is_replaced(tiny_model):
    p = LocalProvider(tiny_model, resident_minutes=5)
    p.embed_query("cat")
    (pid,) = residents()
    (sock,) = resident.runtime_dir().glob("m-*.sock")
    os.kill(pid, signal.SIGKILL)  # leaves its socket behind
    wait_for(lambda: gone(pid), what="the worker to die")
    assert sock.is_socket()
    old = sock.stat().st_ino
    q = LocalProvider(tiny_model, resident_minutes=5)
    assert len(q.embed_query("cat")) == 64
    assert len(residents()) == 1 and sock.is_socket() and sock.stat().st_ino != old
    p.close()
    q.close()


def test_a_folder_that_is_not_private_falls_back_to_keywords(ws):
    """The worker cannot start where the socket would not be owner-only: the search answers
    from keywords and says why (and clawmem does not change a mode it did not set)."""
    workspace, cfg = ws
    assert run_cli("model", "stop").returncode == 0
    folder = resident.runtime_dir()
    os.chmod(folder, 0o755)
    got = search(workspace, cfg)
    assert got["mode"] == "keyword" and got["results"][0]["path"] == "MEMORY.md"
    assert "is not private to you (mode 755" in got["reason"]
    assert os.stat(folder).st_mode & 0o777 == 0o755 and residents() == []


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_another_users_process_is_refused_both_ways(tiny_model, tmp_path):
    """Server side: a process of another uid that reaches the socket (through a hard link in a
    folder it may enter) gets no answer. Client side: a socket owned by another uid in our
    folder is refused before any byte is sent."""
    p = LocalProvider(tiny_model, resident_minutes=5)
    p.embed_query("cat")
    (sock,) = resident.runtime_dir().glob("m-*.sock")
    import shutil
    import tempfile

    open_dir = Path(tempfile.mkdtemp(dir="/tmp"))  # beside tmp_path (a hard link stays on one file system)
    os.chmod(open_dir, 0o755)
    if not os.stat("/tmp").st_mode & 0o001 or os.stat(open_dir).st_dev != os.stat(sock).st_dev:
        shutil.rmtree(open_dir)
        pytest.skip("no folder another user may enter on the socket's file system")
    os.link(sock, open_dir / "s")
    os.chmod(sock, 0o666)  # only so the other uid may connect at all; the peer check must refuse it
    r, wfd = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(r)
        try:
            os.setgid(65534)
            os.setuid(65534)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(open_dir / "s"))
            worker._send(s.fileno(), json.dumps({"op": "hello"}).encode())
            got = worker._read_frame(s.fileno())
            os.write(wfd, b"answered" if got else b"refused")
        except (ConnectionResetError, BrokenPipeError):  # closed on it, before or after its request
            os.write(wfd, b"refused")
        except Exception as exc:
            os.write(wfd, f"error {exc}".encode())
        os._exit(0)
    os.close(wfd)
    os.waitpid(child, 0)
    shutil.rmtree(open_dir)
    assert os.read(r, 200) == b"refused"
    (log,) = resident.runtime_dir().glob("m-*.log")
    assert "refused a connection from uid 65534" in log.read_text()
    os.chmod(sock, 0o600)
    assert len(p.embed_query("fish")) == 64  # our own connection is unaffected
    p.close()
    # a socket of another uid where ours belongs: refused, no connection
    assert resident.stop_resident_models()
    theirs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    theirs.bind(str(sock))
    theirs.listen(1)
    os.chown(sock, 65534, 65534)
    q = LocalProvider(tiny_model, resident_minutes=5)
    with pytest.raises(ProviderError, match="is not a socket of yours"):
        q.embed_query("cat")
    theirs.close()
    q.close()
    assert Path(sock).exists()  # not removed either: it is not ours
