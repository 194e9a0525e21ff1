"""ARCHITECTURE.md's invariants, each held here (the layering of fronts and engine, import
cycles and import costs have their own tests, named on that page).

A newcomer reads the folder names and knows where a concern lives; these tests keep that
true as the code grows: the root stays small, the lower folders never reach up, search never
writes, each database has one owner, and every error a front sees has one base."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import clawmem.engine
from clawmem.engine import ClawmemError
from helpers import imports_in

ENGINE = Path(clawmem.engine.__file__).parent
REPO = Path(__file__).resolve().parents[1]
FOLDERS = sorted(p.name for p in ENGINE.iterdir() if (p / "__init__.py").is_file())
ABOVE_FILES = {"index", "search", "embeddings", "agent", "consolidate", "fleet"}


def engine_modules() -> dict[str, tuple[Path, str]]:
    """dotted name under clawmem.engine -> (file, the package its relative imports start from)."""
    out = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = list(path.relative_to(ENGINE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            package = ".".join(["clawmem.engine", *parts])
        else:
            package = ".".join(["clawmem.engine", *parts[:-1]])
        out[".".join(["clawmem.engine", *parts])] = (path, package)
    return out


MODULES = engine_modules()


def engine_imports(name: str) -> set[str]:
    """The clawmem.engine modules `name` imports anywhere (functions too; not TYPE_CHECKING
    blocks, which never run); `from pkg import x` counts as pkg.x when x is a module."""
    path, package = MODULES[name]
    out = set()
    for module, names in imports_in(path, package, type_checking=False):
        if not module.startswith("clawmem.engine"):
            continue
        subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
        out.update(subs or [module])
    return out


def folder_of(module: str) -> str | None:
    """The engine folder a module lives in (None for the root's modules)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 or (len(parts) == 3 and parts[2] in FOLDERS) else None


def test_the_engine_root_holds_at_most_a_dozen_modules():
    root = sorted(p.name for p in ENGINE.glob("*.py"))
    assert len(root) <= 12, root


def test_the_parser_sees_a_folder_reached_from_the_root():
    assert "clawmem.engine.files.fsutil" in engine_imports("clawmem.engine.config")  # config writes its file with it
    assert folder_of("clawmem.engine.files.fsutil") == "files" and folder_of("clawmem.engine.config") is None
    assert folder_of("clawmem.engine.search") == "search"


def test_the_root_vocabulary_and_files_import_nothing_from_the_folders_above():
    lower = [m for m in MODULES if (folder_of(m) is None and m not in ("clawmem.engine", "clawmem.engine.api")) or folder_of(m) == "files"]
    assert "clawmem.engine.files.memfile" in lower and "clawmem.engine.config" in lower
    reaching = {m: sorted(i for i in engine_imports(m) if folder_of(i) in ABOVE_FILES) for m in lower}
    assert {m: r for m, r in reaching.items() if r} == {}


def test_consolidation_builds_on_files_and_the_root_only():
    mods = [m for m in MODULES if folder_of(m) == "consolidate"]
    assert mods
    reaching = {m: sorted(i for i in engine_imports(m) if folder_of(i) not in (None, "files", "consolidate")) for m in mods}
    assert {m: r for m, r in reaching.items() if r} == {}


def test_search_never_writes_the_index_or_a_memory_file():
    writers = {"clawmem.engine.index.indexer", "clawmem.engine.index.jobs", "clawmem.engine.index.watcher", "clawmem.engine.files.memfile"}
    mods = [m for m in MODULES if folder_of(m) == "search"]
    assert len(mods) > 5
    reaching = {m: sorted(engine_imports(m) & writers) for m in mods}
    assert {m: r for m, r in reaching.items() if r} == {}


def test_every_error_the_engine_exports_derives_from_clawmem_error():
    errors = {name: getattr(clawmem.engine, name) for name in clawmem.engine.__all__ if name != "events"}
    errors = {n: e for n, e in errors.items() if inspect.isclass(e) and issubclass(e, BaseException)}
    assert len(errors) >= 10  # the fronts catch these by name
    assert [n for n, e in errors.items() if not issubclass(e, ClawmemError)] == []


def test_every_engine_folder_is_named_in_architecture_md():
    page = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert len(FOLDERS) >= 7
    assert [f for f in FOLDERS if f"engine/{f}/" not in page] == []
    root = [p.name for p in ENGINE.glob("*.py") if p.name != "__init__.py"]
    assert [name for name in root if not re.search(rf"`{re.escape(name)}`", page)] == []


# the files that may run SQL, and on what: the index (store), and one private database each
SQL_OWNERS = {"index/store.py": "the index", "files/journal.py": "the journal", "embeddings/cache.py": "the embedding cache",
              "consolidate/recall.py": "the recall log", "fleet/client.py": "PostgreSQL and its push state", "fleet/server.py": "PostgreSQL"}


def test_only_the_store_runs_sql_on_the_index():
    runs_sql = re.compile(r"\.execute(many|script)?\(")
    offenders = sorted(p.relative_to(ENGINE).as_posix() for p in ENGINE.rglob("*.py")
                       if p.relative_to(ENGINE).as_posix() not in SQL_OWNERS and runs_sql.search(p.read_text(encoding="utf-8")))
    assert offenders == []
    # the other owners reach the index only through the store's named methods
    reaching = sorted(p.relative_to(ENGINE).as_posix() for p in ENGINE.rglob("*.py")
                      if p.relative_to(ENGINE).as_posix() != "index/store.py" and re.search(r"\b(store|st|new)\.conn\b", p.read_text(encoding="utf-8")))
    assert reaching == []


def test_the_sql_test_sees_a_statement_outside_the_store():
    probe = 'rows = store.conn.execute("select 1")\n'
    assert re.search(r"\.execute(many|script)?\(", probe) and re.search(r"\b(store|st|new)\.conn\b", probe)
