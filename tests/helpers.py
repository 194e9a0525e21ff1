"""Helpers for tests: writing files, running the real `clawmem` command."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def foreign_database(path: Path) -> bytes:
    """Another program's SQLite database at `path` (one table, one row); returns its bytes."""
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("create table contacts (name text)")
    con.execute("insert into contacts values ('Ada')")
    con.commit()
    con.close()
    return path.read_bytes()


def run_cli(*args: str, env: dict | None = None, cwd=None, timeout: float = 120, prefix: list[str] = ()):
    """Run `python -m clawmem.tui` as a real process; returns CompletedProcess (text).
    `prefix`: a command it runs under (as_unprivileged())."""
    import subprocess

    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run([*prefix, sys.executable, "-m", "clawmem.tui", *args], capture_output=True, text=True, env=full_env, cwd=cwd, timeout=timeout)


def as_unprivileged() -> list[str]:
    """A command prefix under which a file's permission bits hold for this user: as root,
    setpriv without the capabilities that read and write any file (still root, so it reaches a
    virtual environment in a private 0700 clone folder, as nobody would not); else nothing.
    Skips the test where setpriv (util-linux) is missing."""
    import shutil

    import pytest

    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("root reads every file, and setpriv (util-linux) is missing to drop that capability")
    drop = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", "--"]


def gone(pid: int) -> bool:
    """Exited with every file closed: each of its threads a zombie or reaped. An exiting process
    loses its command line before it closes its sockets, and its main thread turns zombie
    while the others may still hold them."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                    return False
        except OSError:
            pass
    return True


def wait_for(cond, limit: float = 20.0, what: str = "condition", interval: float = 0.05):
    """Poll `cond` until it returns something truthy (returned) or `limit` seconds pass."""
    import time

    end = time.monotonic() + limit
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(interval)
    raise AssertionError(f"timed out after {limit:.0f}s waiting for {what}")


def imports_in(path: Path, package: str, *, type_checking: bool = True, dynamic: bool = False) -> list[tuple[str, list[str]]]:
    """Every import anywhere in module `path` of `package` (top level, functions, and unless
    `type_checking` is false, `if TYPE_CHECKING:` blocks) as (absolute module, names imported
    from it): `import a.b` gives ("a.b", []), `from ..x import y` in package p.q gives ("p.x", ["y"]).
    With `dynamic`, a call of importlib.import_module or __import__ counts as an import of the
    module it names: ("a.b", []) for a name written out, the package before the first computed
    part of an f-string, (DYNAMIC, []) for a name computed at run time."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if not type_checking:
        for node in ast.walk(tree):
            test = node.test if isinstance(node, ast.If) else None
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
                skipped.update(id(inner) for child in node.body for inner in ast.walk(child))
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = package.split(".")
                module = ".".join(parts[: len(parts) - node.level + 1] + ([module] if module else []))
            out.append((module, [alias.name for alias in node.names]))
        elif dynamic and isinstance(node, ast.Call) and _names_an_importer(node.func):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                name = first.value
                if name.startswith("."):  # import_module(".x", package): relative to this module's package
                    level = len(name) - len(name.lstrip("."))
                    parts = package.split(".")
                    name = ".".join(parts[: len(parts) - level + 1] + ([name.lstrip(".")] if name.lstrip(".") else []))
                out.append((name, []))
            elif isinstance(first, ast.JoinedStr) and first.values:
                out.append((_leading_module(first, package), []))
            else:
                out.append((DYNAMIC, []))
    return out


DYNAMIC = "<a module named at run time>"


def _leading_module(text, package: str) -> str:
    """The package an f-string names before its first computed part: f"clawmem.engine.x.{m}" ->
    "clawmem.engine.x"; f"{__package__}.{m}" or f"{__name__}.{m}" -> a module of this package."""
    import ast

    head = text.values[0]
    if isinstance(head, ast.Constant) and isinstance(head.value, str) and "." in head.value:
        return head.value.rpartition(".")[0]
    if isinstance(head, ast.FormattedValue) and isinstance(head.value, ast.Name) and head.value.id in ("__package__", "__name__"):
        return f"{package}.{DYNAMIC}"
    return DYNAMIC


def _names_an_importer(func) -> bool:
    """importlib.import_module(...), import_module(...) (from importlib), __import__(...)."""
    import ast

    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def search_in_fresh_process(argv: list[str], report: str, timeout: float = 120) -> str:
    """Run `clawmem ARGV` through main() in a fresh interpreter, its stdout kept in `out` and its
    exit code in `code`, then print the expression `report` (which may read `out`, `code` and
    `sys.modules`): what a one-shot command loaded, seen from inside that process. Returns the
    first line printed, with stderr after it when there is no such line."""
    import subprocess

    probe = (
        "import sys, io, contextlib, json\n"
        "from clawmem.tui.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    code = main({argv!r})\n"
        "out = out.getvalue()\n"
        f"print({report})\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=timeout)
    return r.stdout.split("\n")[0] or r.stderr
