"""Storage faults (issue 9, fault suite): the disk fills up while indexing, the index file or its
folder is read-only, the index path cannot be written at all. Each gives one line and exit 3,
never a traceback; what was indexed before keeps answering searches; nothing is moved aside as
"corrupt"; the next run after the fault is gone completes.

Root ignores file permissions, so read-only here means `chattr +i` and read-only bind mounts,
and a full disk is a small tmpfs; each test skips with the reason where it cannot set that up.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from faultkit import cli, fingerprint, generate, index_file, one_line_error, run, stray_files, token
from helpers import write
from test_crash_resume import check


def sh(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs / read-only bind mount or set chattr +i")


@contextlib.contextmanager
def mounted(*args: str, target: Path):
    need_root()
    res = sh("mount", *args, str(target))
    if res.returncode != 0:
        pytest.skip(f"mount {' '.join(args)} failed: {res.stderr.strip()}")
    try:
        yield target
    finally:
        sh("umount", "-l", str(target))


@contextlib.contextmanager
def read_only_bind(path: Path):
    with mounted("--bind", str(path), target=path):
        res = sh("mount", "-o", "remount,bind,ro", str(path))
        if res.returncode != 0:
            pytest.skip(f"read-only remount failed: {res.stderr.strip()}")
        yield path


@contextlib.contextmanager
def immutable(path: Path):
    need_root()
    if not shutil.which("chattr"):
        pytest.skip("chattr is not installed")
    res = sh("chattr", "+i", str(path))
    if res.returncode != 0:
        pytest.skip(f"chattr +i failed: {res.stderr.strip()}")
    try:
        yield path
    finally:
        sh("chattr", "-i", str(path))


def cfg(tmp_path: Path, extra: str = "") -> Path:
    return write(tmp_path / "clawmem.toml", f'provider = "none"\n{extra}[sync]\nonSearch = false\n')


def found(ws: Path, config: Path, query: str) -> list[str]:
    res = run("--workspace", str(ws), "--config", str(config), "search", query, "--json")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    return [r["path"] for r in json.loads(res.stdout)["results"]]


def index(ws: Path, config: Path, *more: str) -> subprocess.CompletedProcess:
    return run("--workspace", str(ws), "--config", str(config), "index", *more, timeout=180)


def more_notes(ws: Path, n: int) -> None:
    for i in range(n):
        write(ws / "memory" / "later" / f"l{i}.md", "\n".join(f"- later note {i}, line {j}: the kiln cooled, ltok{i}" for j in range(40)) + "\n")


def test_disk_full_while_indexing(workspace, tmp_path):
    data = tmp_path / "data"  # XDG_DATA_HOME: the index lives under it
    data.mkdir()
    config = cfg(tmp_path)
    paths = generate(workspace, 20)
    with mounted("-t", "tmpfs", "-o", "size=3m", "tmpfs", target=data):
        assert index(workspace, config).returncode == 0
        idx = index_file(workspace)
        before = check(idx)
        more_notes(workspace, 600)  # several MB of index: more than the disk holds
        md = fingerprint(workspace)

        for args in ((), ("--force",)):
            res = index(workspace, config, *args)
            assert res.returncode == 3, res.stderr
            line = one_line_error(res)
            assert "disk is full" in line or "No space left" in line, line
            check(idx)  # the index is consistent and the old files still answer
            assert found(workspace, config, token(7)) == [paths[7]]
            assert check(idx)["files"] >= before["files"]
            assert stray_files(idx.parent, rebuild_ok=True) == []  # nothing moved aside as "corrupt"
        assert sh("mount", "-o", "remount,size=64m", str(data)).returncode == 0  # space is back
        res = index(workspace, config)
        assert res.returncode == 0, res.stderr
        assert found(workspace, config, "ltok599") == ["memory/later/l599.md"]
        res = index(workspace, config, "--force")  # the rebuild the full disk stopped completes too
        assert res.returncode == 0, res.stderr
        assert stray_files(idx.parent, rebuild_ok=False) == []
        assert check(idx)["files"] == 621
        assert fingerprint(workspace) == md


def test_read_only_index_file(workspace, tmp_path):
    config = cfg(tmp_path)
    paths = generate(workspace, 20)
    assert index(workspace, config).returncode == 0
    idx = index_file(workspace)
    write(workspace / "memory" / "new.md", "a new note, toknew\n")
    with immutable(idx):
        res = index(workspace, config)
        assert res.returncode == 3
        assert "the index is not writable" in one_line_error(res)
        assert found(workspace, config, token(3)) == [paths[3]]
        st = run("--workspace", str(workspace), "--config", str(config), "status")
        assert st.returncode == 0 and "Traceback" not in st.stderr
        assert stray_files(idx.parent, rebuild_ok=False) == []  # a read-only index is not "corrupt"
    assert index(workspace, config).returncode == 0
    assert found(workspace, config, "toknew") == ["memory/new.md"]


def test_read_only_data_folder(workspace, tmp_path):
    config = cfg(tmp_path)
    paths = generate(workspace, 20)
    assert index(workspace, config).returncode == 0
    folder = tmp_path / "data" / "clawmem" / "index"
    write(workspace / "memory" / "new.md", "a new note, toknew\n")
    with read_only_bind(folder):
        for args in ((), ("--force",)):
            res = index(workspace, config, *args)
            assert res.returncode == 3
            assert "Read-only file system" in one_line_error(res)
        assert found(workspace, config, token(3)) == [paths[3]]
        watch = run("--workspace", str(workspace), "--config", str(config), "watch", "--once")
        assert watch.returncode == 3 and "Traceback" not in watch.stdout + watch.stderr
    assert index(workspace, config).returncode == 0
    assert found(workspace, config, "toknew") == ["memory/new.md"]


@pytest.mark.parametrize("where", ["under a file", "read-only mount"])
def test_an_index_path_that_cannot_be_written(where, workspace, tmp_path):
    generate(workspace, 5)
    if where == "under a file":
        write(tmp_path / "afile", "not a folder\n")
        target = tmp_path / "afile" / "idx"
    else:
        (tmp_path / "ro").mkdir()
        target = tmp_path / "ro" / "idx"
    config = cfg(tmp_path, f'[store]\npath = "{target}/{{agentId}}.sqlite"\n')
    with contextlib.ExitStack() as stack:
        if where == "read-only mount":
            stack.enter_context(read_only_bind(tmp_path / "ro"))
        res = index(workspace, config)
        assert res.returncode == 3
        line = one_line_error(res)
        assert str(target) in line and ("Not a directory" in line or "Read-only file system" in line), line
        res = run("--workspace", str(workspace), "--config", str(config), "search", "note")
        assert res.returncode == 0 and "run `clawmem index`" in res.stdout, res.stderr
        res = run("--workspace", str(workspace), "--config", str(config), "status")
        assert res.returncode == 0 and "Traceback" not in res.stderr


def test_an_index_folder_of_another_user(tmp_path):
    """The index in another user's private folder (nobody's, 0700). Root runs clawmem without
    the capabilities that let it pass any folder (so it still reaches a virtual environment
    under a private 0700 clone folder, as CI's is)."""
    import tempfile

    need_root()
    base = Path(tempfile.mkdtemp(prefix="clawmem-other-"))  # outside pytest's root-only folder
    try:
        os.chmod(base, 0o755)
        ws = base / "ws"
        generate(ws, 3)
        for p in [ws, *ws.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        private = base / "nobodys-only"
        private.mkdir(mode=0o700)
        os.chown(private, 65534, 65534)
        own = base / "home"
        own.mkdir()
        config = write(base / "clawmem.toml", f'provider = "none"\n[store]\npath = "{private}/idx/{{agentId}}.sqlite"\n[sync]\nonSearch = false\n')
        os.chmod(config, 0o644)
        env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        env.update(HOME=str(own), **{f"XDG_{d}_HOME": str(own / d.lower()) for d in ("DATA", "STATE", "CACHE", "CONFIG")})
        if not shutil.which("setpriv"):
            pytest.skip("setpriv is not installed (needed to drop root's capability to pass any folder)")
        without_dac = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search", "--"]
        results = {}
        for args in (("index",), ("search", "note"), ("status",), ("status", "--deep")):
            results[" ".join(args)] = subprocess.run(without_dac + cli("--workspace", str(ws), "--config", str(config), *args),
                                              capture_output=True, text=True, env=env, cwd=base, timeout=60)
        res = results["index"]
        assert res.returncode == 3
        assert one_line_error(res) == f"clawmem: {private}/idx: Permission denied; check permissions and free space"
        assert results["search note"].returncode == 3
        assert one_line_error(results["search note"]) == (f"clawmem: {private}/idx/main.sqlite: cannot open the index (Permission denied); "
                                                     "check the permissions of its folder")
        # status still shows everything else, and exits 3 with the index's one line (SPEC §8)
        st = results["status"]
        assert st.returncode == 3 and "Traceback" not in st.stderr, st.stderr
        assert "Permission denied" in st.stdout and "Permission denied" in one_line_error(st)
        deep = results["status --deep"]
        assert deep.returncode == 3 and "Traceback" not in deep.stderr and "Issue:     " in deep.stdout, deep.stderr
        assert not (private / "idx").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_corrupt_embedding_cache_is_set_aside_and_indexing_completes(workspace, tmp_path, tiny_model):
    for i in range(3):
        write(workspace / "memory" / f"c{i}.md", f"the cat ate fish number {i}\n")
    config = write(tmp_path / "clawmem.toml", f'provider = "local"\n[local]\nmodelPath = "{tiny_model}"\n[sync]\nonSearch = false\n')
    assert index(workspace, config).returncode == 0
    cache = tmp_path / "cache" / "clawmem" / "embeddings.sqlite"
    garbage = os.urandom(40_000)
    cache.write_bytes(garbage)
    for name in ("embeddings.sqlite-wal", "embeddings.sqlite-shm"):
        (cache.parent / name).unlink(missing_ok=True)
    write(workspace / "memory" / "c9.md", "a new note about the dog\n")
    res = index(workspace, config)
    assert res.returncode == 0, res.stderr
    assert "the embedding cache was not a usable database; moved it to" in res.stderr
    (aside,) = cache.parent.glob("embeddings.sqlite.corrupt-*")
    assert aside.read_bytes() == garbage  # set aside, never deleted
    st = json.loads(run("--workspace", str(workspace), "--config", str(config), "status", "--json").stdout)
    (model,) = st["vector"]["models"]
    assert model["vectors"] == st["index"]["chunks"] == 4
