"""ARCHITECTURE.md's invariants, each held here (the layering of fronts and engine, import
cycles and import costs have their own tests, named on that page).

A newcomer reads the folder names and knows where a concern lives; these tests keep that
true as the code grows: the root stays small, the lower folders never reach up, search never
writes, each database has one owner, and every error a front sees has one base."""

from __future__ import annotations

import ast
import errno
import inspect
import re
from pathlib import Path

import pytest

import clawmem.engine
from clawmem.engine import ClawmemError
from clawmem.engine.errors import raises_clawmem_errors
from helpers import DYNAMIC, imports_in

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


def engine_imports(name: str, path: Path | None = None) -> set[str]:
    """The clawmem.engine modules `name` imports anywhere (functions too; not TYPE_CHECKING
    blocks, which never run); `from pkg import x` counts as pkg.x when x is a module. `path`:
    read that file as if it were module `name` (the probes below)."""
    own, package = MODULES[name]
    path = path or own
    out = set()
    for module, names in imports_in(path, package, type_checking=False, dynamic=True):
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


# ------------------------------------------------------------------ the layers: arrows only point down

# ARCHITECTURE.md's order, lowest first: the root vocabulary, files/, consolidate/ (the rules about
# memory files and their recall log: it builds on files/ and the root only, and search records
# recalls into it, the fleet checks team notes with its contradiction rule), embeddings/, index/,
# search/, fleet/, agent/, then the engine that wires them (api.py, __init__.py).
LAYERS = [None, "files", "consolidate", "embeddings", "index", "search", "fleet", "agent", "engine"]
# the one upward arrow the page names: config writes its own file with files/fsutil
ALLOWED_UP = {("clawmem.engine.config", "clawmem.engine.files.fsutil")}


def layer(module: str) -> int:
    if module in ("clawmem.engine", "clawmem.engine.api"):
        return LAYERS.index("engine")
    return LAYERS.index(folder_of(module))


def upward(name: str, path: Path | None = None) -> list[str]:
    """The engine modules `name` imports from a layer above its own (module level or inside a
    function), but the allowed arrow."""
    return sorted(i for i in engine_imports(name, path) if layer(i) > layer(name) and (name, i) not in ALLOWED_UP)


def test_the_layers_cover_every_engine_folder():
    assert set(FOLDERS) == set(LAYERS) - {None, "engine"}
    page = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    order = re.search(r"^Layers, lowest first: (.+)$", page, re.M)
    assert order, "ARCHITECTURE.md states the order of the layers"
    assert [w.strip(" `./") for w in order.group(1).split("<")] == ["root", *LAYERS[1:]]


def test_no_import_points_up_the_layers():
    assert {m: r for m in MODULES if (r := upward(m))} == {}


def probe_file(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of `module`'s file with one import added inside a function."""
    own, _ = MODULES[module]
    probe = tmp_path / own.name
    probe.write_text(own.read_text(encoding="utf-8") + f"\n\ndef _probe():\n    {line}\n", encoding="utf-8")
    return probe


def test_the_layer_check_sees_an_arrow_up_even_inside_a_function(tmp_path):
    """The ten arrows issue 45 found, each put back as a probe: each is caught."""
    ups = [("clawmem.engine.index.watcher", "from ..fleet.push import push_quietly", "clawmem.engine.fleet.push"),
           ("clawmem.engine.index.watcher", "from ..agent import tools", "clawmem.engine.agent.tools"),
           ("clawmem.engine.index.health", "from ..search.searcher import Searcher", "clawmem.engine.search.searcher"),
           ("clawmem.engine.index.indexer", "from ..search.background import BACKGROUND", "clawmem.engine.search.background"),
           ("clawmem.engine.embeddings.cache", "from ..index.store import move_aside", "clawmem.engine.index.store"),
           ("clawmem.engine.embeddings.remote", "import clawmem.engine.index.chunking", "clawmem.engine.index.chunking"),
           ("clawmem.engine.consolidate.recall", "from ..search import searcher", "clawmem.engine.search.searcher"),
           ("clawmem.engine.search.searcher", "from ..fleet import search", "clawmem.engine.fleet.search"),
           ("clawmem.engine.files.memfile", "from ..consolidate import promote", "clawmem.engine.consolidate.promote"),
           ("clawmem.engine.text", "from .index import store", "clawmem.engine.index.store")]
    for module, line, target in ups:
        assert upward(module, probe_file(tmp_path, module, line)) == [target], line
    # an arrow down is no finding
    assert upward("clawmem.engine.search.searcher", probe_file(tmp_path, "clawmem.engine.search.searcher", "from ..consolidate import recall")) == []


# fleet/ by concern, lowest first (ARCHITECTURE.md's fleet row): within the folder, too, every
# arrow points down. client.py is the face tests and benchmarks import from: it re-exports, so
# it sits on top; server.py (`fleet up`) needs only FleetError.
FLEET_ORDER = ["connection", "schema", "push", "admin", "notes", "search", "server", "client"]


def fleet_upward(name: str, path: Path | None = None) -> list[str]:
    """The fleet modules `name` imports that FLEET_ORDER puts at or above its own place."""
    rank = {f"clawmem.engine.fleet.{m}": i for i, m in enumerate(FLEET_ORDER)}
    return sorted(i for i in engine_imports(name, path) if i in rank and rank[i] >= rank[name])


def test_the_fleet_modules_import_one_way():
    fleet = sorted(m for m in MODULES if folder_of(m) == "fleet" and m != "clawmem.engine.fleet")
    assert fleet == sorted(f"clawmem.engine.fleet.{m}" for m in FLEET_ORDER)  # a new fleet module takes a place here
    assert {m: r for m in fleet if (r := fleet_upward(m))} == {}
    # the face defines nothing: what a test patches there is not what the code reads
    import ast

    face = ast.parse((ENGINE / "fleet" / "client.py").read_text(encoding="utf-8"))
    assert all(isinstance(n, (ast.ImportFrom, ast.Expr)) or (isinstance(n, ast.Assign) and n.targets[0].id == "__all__")
               for n in face.body)


def test_the_fleet_order_check_sees_an_arrow_up(tmp_path):
    ups = [("clawmem.engine.fleet.connection", "from .schema import SCHEMA", "clawmem.engine.fleet.schema"),
           ("clawmem.engine.fleet.schema", "from . import push", "clawmem.engine.fleet.push"),
           ("clawmem.engine.fleet.notes", "from .search import client", "clawmem.engine.fleet.search"),
           ("clawmem.engine.fleet.push", "from .client import push", "clawmem.engine.fleet.client")]
    for module, line, target in ups:
        assert fleet_upward(module, probe_file(tmp_path, module, line)) == [target], line
    assert fleet_upward("clawmem.engine.fleet.search", probe_file(tmp_path, "clawmem.engine.fleet.search", "from . import push")) == []


def test_the_root_vocabulary_and_files_import_nothing_from_the_folders_above():
    lower = [m for m in MODULES if (folder_of(m) is None and m not in ("clawmem.engine", "clawmem.engine.api")) or folder_of(m) == "files"]
    assert "clawmem.engine.files.memfile" in lower and "clawmem.engine.config" in lower
    reaching = {m: sorted(i for i in engine_imports(m) if folder_of(i) in ABOVE_FILES) for m in lower}
    assert {m: r for m, r in reaching.items() if r} == {}
    assert root_into_files() == {"clawmem.engine.config": ["clawmem.engine.files.fsutil"]}  # "the one exception"


def root_into_files(extra: dict[str, Path] | None = None) -> dict[str, list[str]]:
    """Each root module's imports of files/ (the page allows one: config -> files/fsutil)."""
    extra = extra or {}
    root = [m for m in MODULES if folder_of(m) is None and m not in ("clawmem.engine", "clawmem.engine.api")]
    found = {m: sorted(i for i in engine_imports(m, extra.get(m)) if folder_of(i) == "files") for m in root}
    return {m: r for m, r in found.items() if r}


def test_a_second_root_import_of_files_is_seen(tmp_path):
    probe = probe_file(tmp_path, "clawmem.engine.results", "from .files import memfile")
    assert root_into_files({"clawmem.engine.results": probe}) == {
        "clawmem.engine.config": ["clawmem.engine.files.fsutil"], "clawmem.engine.results": ["clawmem.engine.files.memfile"]}


def test_consolidation_builds_on_files_and_the_root_only():
    mods = [m for m in MODULES if folder_of(m) == "consolidate"]
    assert mods
    reaching = {m: sorted(i for i in engine_imports(m) if folder_of(i) not in (None, "files", "consolidate")) for m in mods}
    assert {m: r for m, r in reaching.items() if r} == {}


def store_writers() -> set[str]:
    """The Store methods that write the index file: those whose SQL inserts, updates, deletes,
    creates, drops or alters (a `temp.` table lives in the connection, not the file), and those
    that call one of them."""
    import ast

    tree = ast.parse((ENGINE / "index" / "store.py").read_text(encoding="utf-8"))
    store = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Store")
    write_sql = re.compile(r"^\s*(insert|update|delete|replace|create|drop|alter|vacuum|reindex|pragma\s+\w+\s*=)\b", re.I | re.M)
    methods = {f.name: f for f in store.body if isinstance(f, ast.FunctionDef)}
    writes = {name for name, f in methods.items()
              if any(isinstance(c, ast.Constant) and isinstance(c.value, str) and write_sql.search(c.value) and "temp." not in c.value
                     for c in ast.walk(f))}
    calls = {name: {c.func.attr for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                    and isinstance(c.func.value, ast.Name) and c.func.value.id == "self"} for name, f in methods.items()}
    while more := {n for n, called in calls.items() if called & writes} - writes:
        writes |= more
    return writes


FILE_WRITES = {"write_text", "write_bytes", "touch", "unlink", "rmdir", "mkdir", "symlink_to", "hardlink_to", "chmod"}
OS_WRITES = {"open", "remove", "unlink", "rename", "replace", "rmdir", "mkdir", "makedirs", "truncate", "chmod", "link", "symlink"}


def writes_in(source: str, writers: set[str]) -> list[str]:
    """What `source` does that writes: a call of a Store writer (`x.delete_file_rows(...)`), an
    open() with a mode that writes, a Path write, an os or shutil call that changes a file."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            if mode is not None and not (isinstance(mode, ast.Constant) and isinstance(mode.value, str) and not set(mode.value) & set("wax+")):
                found.append("open(…, write mode)")
        elif isinstance(f, ast.Attribute):
            owner = f.value.id if isinstance(f.value, ast.Name) else None
            if owner in ("os", "shutil") and (owner == "shutil" or f.attr in OS_WRITES):
                found.append(f"{owner}.{f.attr}")
            elif f.attr in writers or f.attr in FILE_WRITES:
                found.append(f".{f.attr}()")
    return found


def test_search_never_writes_the_index_or_a_memory_file():
    writer_modules = {"clawmem.engine.index.indexer", "clawmem.engine.index.jobs", "clawmem.engine.index.watcher", "clawmem.engine.files.memfile"}
    mods = [m for m in MODULES if folder_of(m) == "search"]
    assert len(mods) > 5
    reaching = {m: sorted(engine_imports(m) & writer_modules) for m in mods}
    assert {m: r for m, r in reaching.items() if r} == {}
    writers = store_writers()
    assert {"delete_file_rows", "insert_chunk", "put_vectors", "set_meta"} <= writers
    assert not {"vocabulary", "word_count", "ranked", "get_meta"} & writers  # reads (the vocabulary is a temp table)
    found = {m: w for m in mods if (w := writes_in(MODULES[m][0].read_text(encoding="utf-8"), writers))}
    assert found == {}


def test_the_search_write_check_sees_each_way_of_writing():
    writers = store_writers()
    for probe in ("store.delete_file_rows(path)", "st.set_meta('k', 'v')", "open(path, 'w')", "open(p, mode='a')", "open(p, 'r+b')",
                  "open(p, how)", "Path(p).write_text('x')", "os.replace(a, b)", "shutil.rmtree(d)", "p.unlink()"):
        assert writes_in(probe, writers), probe
    for fine in ("open(p)", "open(p, 'rb')", "store.ranked(q)", "text.replace('a', 'b')", "os.path.join(a, b)", "store.get_meta('k')"):
        assert writes_in(fine, writers) == [], fine


def test_every_error_the_engine_exports_derives_from_clawmem_error():
    errors = {name: getattr(clawmem.engine, name) for name in clawmem.engine.__all__ if name != "events"}
    errors = {n: e for n, e in errors.items() if inspect.isclass(e) and issubclass(e, BaseException)}
    assert len(errors) >= 10  # the fronts catch these by name
    assert [n for n, e in errors.items() if not issubclass(e, ClawmemError)] == []


# the built-in errors a front would have to catch by kind; each raise of one in the engine is
# either caught inside the engine, the system's own error re-stated (an OSError, which crosses the
# face as a StorageError of its kind: test_the_systems_errors_cross_the_face_as_clawmem_errors),
# listed here with why, or a ClawmemError subclass instead
BUILTIN_ERRORS = {"ValueError", "OSError", "RuntimeError", "PermissionError", "FileNotFoundError", "KeyError", "LookupError", "IOError"}
CAUGHT_INSIDE = {
    ("index/indexer.py", "PermissionError"),  # open_writer: the EACCES SQLite would give, said before it opens the file
    ("index/watcher.py", "RuntimeError"),  # the watch loop's fault: caught two lines below, reported by the syncer
    ("index/store.py", "FileNotFoundError"),  # Store() of a missing index: every reader checks for the file first
}


def builtin_raises(source: str) -> list[str]:
    """`raise ValueError(...)` and the like in `source`: the built-in errors named in BUILTIN_ERRORS."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN_ERRORS:
                out.append(exc.id)
    return out


def test_the_engine_raises_its_own_errors_across_the_face():
    """A refusal the engine words for a person is a ClawmemError (BadValue for a value it does
    not take, still a ValueError for older callers), so the fronts catch one class."""
    found = {(rel, name) for rel, src in engine_sources().items() for name in builtin_raises(src)}
    assert found - CAUGHT_INSIDE == set()


def test_the_raise_check_sees_a_bare_builtin_error():
    for way in ("raise ValueError('bad')", "raise OSError(5, 'x')", "if x:\n    raise RuntimeError", "raise KeyError(k) from None"):
        assert builtin_raises(way), way
    for fine in ("raise BadValue('bad')", "raise", "raise exc", "raise ConfigError('x') from None", "raise SystemExit(2)"):
        assert builtin_raises(fine) == [], fine


def objects_with_io() -> list[type]:
    """The face's objects whose methods read or write files, folders or sockets: Engine, its
    sub-faces, and what its methods hand a front to call on (an edit session, the watcher, the
    journal)."""
    from clawmem.engine import EditSession, api
    from clawmem.engine.files.journal import Journal
    from clawmem.engine.index.watcher import Syncer

    return [api.Engine, api.Fleet, api.Models, api.AgentTools, EditSession, Syncer, Journal]


def unwrapped_methods(cls: type) -> list[str]:
    """`cls`'s own public methods and properties that would let the system's OSError cross as
    itself (not wrapped by errors.raises_clawmem_errors)."""
    found = []
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        attr = getattr(attr, "__func__", None) or getattr(attr, "fget", None) or getattr(attr, "func", None) or attr
        if inspect.isfunction(attr) and not hasattr(attr, "__wrapped__"):
            found.append(f"{cls.__name__}.{name}")
    return found


def test_the_systems_errors_cross_the_face_as_clawmem_errors():
    """A front catches ClawmemError alone: the system's own OSError (permission denied, disk
    full, a file gone) crosses every method of the face as a StorageError of the same kind."""
    assert [m for cls in objects_with_io() for m in unwrapped_methods(cls)] == []


def test_the_wrapping_check_sees_a_method_left_bare():
    from clawmem.engine import Engine

    for way in ({"read": lambda self: open("/nonexistent")}, {"size": property(lambda self: 0)},
                {"stat": staticmethod(lambda p: None)}):
        probe = type("Engine", (Engine,), way)
        assert unwrapped_methods(probe) == [f"Engine.{next(iter(way))}"], way
    assert unwrapped_methods(raises_clawmem_errors(type("Engine", (Engine,), {"read": lambda self: None}))) == []


def test_a_system_error_crosses_as_its_own_kind_and_a_clawmem_error(tmp_path):
    """A workspace asked for below a regular file: creating it fails with the system's
    NotADirectoryError, errno and file name kept, and a front catching ClawmemError catches it."""
    from clawmem.engine import ClawmemError, Engine, StorageError

    (tmp_path / "afile").write_text("x\n")
    eng = Engine.open(workspace=str(tmp_path / "afile" / "ws"), overrides={"provider": "none"})
    with pytest.raises(ClawmemError) as caught:
        eng.create_workspace()
    exc = caught.value
    assert isinstance(exc, StorageError) and isinstance(exc, NotADirectoryError)
    assert exc.errno == errno.ENOTDIR and exc.filename == str(tmp_path / "afile" / "ws")
    assert str(exc) == f"[Errno {errno.ENOTDIR}] Not a directory: '{tmp_path / 'afile' / 'ws'}'"


def test_every_engine_folder_is_named_in_architecture_md():
    page = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert len(FOLDERS) >= 7
    assert [f for f in FOLDERS if f"engine/{f}/" not in page] == []
    root = [p.name for p in ENGINE.glob("*.py") if p.name != "__init__.py"]
    assert [name for name in root if not re.search(rf"`{re.escape(name)}`", page)] == []


# the files that may run SQL, and on what: the index (store), and one private database each
SQL_OWNERS = {"index/store.py": "the index", "files/journal.py": "the journal", "embeddings/cache.py": "the embedding cache",
              "consolidate/recall.py": "the recall log", "fleet/connection.py": "PostgreSQL", "fleet/schema.py": "PostgreSQL",
              "fleet/push.py": "PostgreSQL and its push state", "fleet/admin.py": "PostgreSQL", "fleet/notes.py": "PostgreSQL",
              "fleet/search.py": "PostgreSQL", "fleet/server.py": "PostgreSQL"}


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


# ------------------------------------------------------------------ the public face is narrow

FRONTS = {"clawmem.tui": REPO / "tui", "clawmem.mcp": REPO / "mcp_server"}


def test_the_public_face_is_narrow():
    """`clawmem.engine.__all__` is the face the fronts may use: Engine, Config, the result types,
    the events, the errors a front acts on, `human` (text for people). Helpers are reached
    through the object that owns them (engine.fleet, engine.models, engine.tools, Config)."""
    names = clawmem.engine.__all__
    assert len(names) == len(set(names))
    assert len(names) <= 35, sorted(names)


def front_engine_imports(fronts: dict[str, Path] = FRONTS, base: Path = REPO) -> dict[str, list[str]]:
    """Each front module's imports of the engine that go past its face."""
    public = set(clawmem.engine.__all__)
    out = {}
    for name, root in fronts.items():
        for path in sorted(root.rglob("*.py")):
            package = ".".join([name, *path.parent.relative_to(root).parts])
            bad = []
            for module, names in imports_in(path, package, dynamic=True):
                if module.startswith("clawmem.engine.") or module == DYNAMIC:  # importlib with a computed name could reach anything
                    bad.append(module)
                elif module == "clawmem.engine":
                    bad += [n for n in names if n not in public]
            out[path.relative_to(base).as_posix()] = bad
    return out


def test_the_fronts_import_only_the_face():
    found = front_engine_imports()
    assert len(found) > 30 and "mcp_server/server.py" in found and "tui/cli/fleet.py" in found
    assert {path: bad for path, bad in found.items() if bad} == {}


def test_the_face_check_sees_a_helper_reached_past_the_face(tmp_path):
    probe = tmp_path / "tui" / "cli" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("def f():\n    from clawmem.engine import Engine, run_daemon\n    from clawmem.engine.index.watcher import Syncer\n")
    found = front_engine_imports({"clawmem.tui": tmp_path / "tui"}, tmp_path)
    assert found == {"tui/cli/probe.py": ["run_daemon", "clawmem.engine.index.watcher"]}
    # through importlib: a name written out, one built from the engine's, one computed
    probe.write_text("import importlib\n\ndef f(name):\n    importlib.import_module('clawmem.engine.index.store')\n"
                     "    importlib.import_module(f'clawmem.engine.index.{name}')\n    __import__(name)\n"
                     "    importlib.import_module(f'{__package__}.search')\n")
    found = front_engine_imports({"clawmem.tui": tmp_path / "tui"}, tmp_path)
    assert found == {"tui/cli/probe.py": ["clawmem.engine.index.store", "clawmem.engine.index", DYNAMIC]}


def face_classes() -> dict[str, type]:
    """The classes a front calls methods on: `Engine`, its sub-faces (`engine.fleet`, `engine.models`,
    `engine.tools`) and every class `clawmem.engine` exports."""
    from clawmem.engine import api

    out = {c.__name__: c for c in (api.Fleet, api.Models, api.AgentTools)}
    out.update({n: o for n in clawmem.engine.__all__ if inspect.isclass(o := getattr(clawmem.engine, n))})
    return out


def open_keywords(cls: type) -> list[str]:
    """`cls`'s public methods (static and class methods too, inherited ones too) that take `**kw`:
    a front cannot see from the signature what such a method accepts."""
    found = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        fn = inspect.getattr_static(cls, name)
        fn = getattr(fn, "__func__", fn)  # staticmethod, classmethod
        if inspect.isfunction(fn) and any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values()):
            found.append(f"{cls.__name__}.{name}")
    return found


def test_no_face_method_takes_open_keywords():
    classes = face_classes()
    assert {"Engine", "Fleet", "Models", "AgentTools", "Config", "EditSession"} <= set(classes)
    assert [m for c in classes.values() for m in open_keywords(c)] == []


def test_the_keyword_check_sees_kw_on_any_kind_of_method():
    from clawmem.engine import Engine

    for way in ({"index": lambda self, **kw: None}, {"all_agents": staticmethod(lambda **kw: [])},
                {"open": classmethod(lambda cls, *, workspace=None, **overrides: None)}):
        probe = type("Engine", (Engine,), way)
        assert open_keywords(probe) == [f"Engine.{next(iter(way))}"], way
    assert open_keywords(type("Engine", (Engine,), {"_private": lambda self, **kw: None, "more": lambda self, *a, k=1: None})) == []


def forwarded_keywords(face, *callees, leave_out: tuple[str, ...] = ()) -> dict[str, tuple]:
    """Where `face`'s keyword-only parameters and those of the callees it forwards them to differ:
    {name: (face's default, callee's)}, a missing one as MISSING."""
    def keywords(fn) -> dict:
        return {n: p.default for n, p in inspect.signature(fn).parameters.items() if p.kind is p.KEYWORD_ONLY}

    mine, theirs = keywords(face), {}
    for callee in callees:
        theirs.update(keywords(callee))
    for name in leave_out:
        theirs.pop(name)
    return {n: (mine.get(n, "MISSING"), theirs.get(n, "MISSING")) for n in mine.keys() | theirs.keys()
            if mine.get(n, "MISSING") != theirs.get(n, "MISSING")}


def face_forwards():
    from clawmem.engine import Engine, SearchRequest, api
    from clawmem.engine.agent import context, tools
    from clawmem.engine.consolidate import promote
    from clawmem.engine.fleet import client
    from clawmem.engine.index.jobs import IndexJobs

    return [(Engine.search, (SearchRequest.__init__,), ("agents",)),  # only a fleet search reads agents
            (Engine.index, (IndexJobs.index,), ()), (Engine.run_index, (IndexJobs.run_index, IndexJobs.index), ()),
            (Engine.context, (context.session_context,), ()), (Engine.promotion_candidates, (promote.preview,), ()),
            (Engine.promote, (promote.apply,), ()), (api.Fleet.grant, (client.grant,), ()),
            (api.Fleet.revoke, (client.revoke,), ()), (api.AgentTools.search, (tools.memory_search,), ())]


def test_the_face_forwards_every_keyword_of_what_it_calls_with_the_same_default():
    """The face names its keywords rather than taking `**kw`; these say the same as the parts they
    are passed to, so a keyword a part gains or a default it changes is seen here."""
    assert {f.__qualname__: d for f, callees, out in face_forwards() if (d := forwarded_keywords(f, *callees, leave_out=out))} == {}


def test_the_forwarding_check_sees_a_keyword_left_out_or_a_default_changed():
    from clawmem.engine import Engine
    from clawmem.engine.index.jobs import IndexJobs

    def index(self, *, force=False, reason="cli", backfill_sessions=True, should_stop=None, lock_timeout=60.0):
        pass

    assert forwarded_keywords(index, IndexJobs.index) == {"paths": ("MISSING", None)}
    index.__kwdefaults__["reason"] = "app"
    assert forwarded_keywords(index, IndexJobs.index) == {"paths": ("MISSING", None), "reason": ("app", "cli")}
    assert forwarded_keywords(Engine.index, IndexJobs.index) == {}


def test_text_for_people_is_one_face_and_the_editor_shares_its_hidden_characters():
    from clawmem.engine import human
    from clawmem.tui.widgets.file_editor import _HIDDEN

    assert human.printable("a\x1bb") == "a^[b"
    for ch in "\x1b\u200b\u202e\ufeff\r\x7f\x9b":  # each hidden character, and a stray CR in an editor line
        assert _HIDDEN.fullmatch(ch), repr(ch)
    for ch in "\tA é":
        assert not _HIDDEN.fullmatch(ch)


def test_json_escapes_every_hidden_character_and_leaves_other_text_alone():
    """json_visible looks for its characters in a set before compiling their class (a search's
    JSON rarely holds one): the set and the class must name the same code points."""
    import json

    from clawmem.engine import text

    cls = re.compile(text._HIDDEN_OUTSIDE_ASCII)
    assert {chr(c) for c in range(0x110000) if cls.match(chr(c))} == text._HIDDEN_OUTSIDE_ASCII_CHARS
    hidden = "".join(sorted(text._HIDDEN_OUTSIDE_ASCII_CHARS))
    shown = text.json_visible(json.dumps({"s": f"a{hidden}b ’ é 中"}, ensure_ascii=False))
    assert shown.isascii() is False and not text._HIDDEN_OUTSIDE_ASCII_CHARS & set(shown)
    assert json.loads(shown) == {"s": f"a{hidden}b ’ é 中"}
    plain = json.dumps({"s": "a ’ é 中 \u2027 \u2070"}, ensure_ascii=False)
    assert text.json_visible(plain) is plain


SQLITE_MODULES = {"sqlite3", "sqlean", "sqlite3.dbapi2", "sqlean.dbapi2"}
# the openers the page names: files/fsutil.open_database for the index, the embedding cache, the
# journal and the recall log; the fleet's push state (PushState) opens its own file, since it
# relies on implicit transactions (`with conn:`), which the autocommit opener does not give
OPENERS = {("files/fsutil.py", "open_database"), ("fleet/*.py", "PushState.__init__")}


def sqlite_openers(source: str) -> list[str]:
    """Where `source` opens an SQLite database: the enclosing function's qualified name of each
    connect() of a name bound to a SQLite driver (import sqlite3 [as x], from sqlite3 import
    connect [as c], x = sqlite_driver(...), or a module's `db` driver imported from the store)."""
    import ast

    tree = ast.parse(source)
    drivers, connects = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            drivers |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name in SQLITE_MODULES}
        elif isinstance(node, ast.ImportFrom):
            if node.module in SQLITE_MODULES:
                connects |= {a.asname or a.name for a in node.names if a.name == "connect"}
                drivers |= {a.asname or a.name for a in node.names if a.name == "dbapi2"}
            drivers |= {a.asname or a.name for a in node.names if a.name == "db" and (node.module or "").endswith("store")}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            if (f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)) == "sqlite_driver":
                drivers |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    found = []

    def visit(node, where):
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{where}.{child.name}" if where else child.name
            if isinstance(child, ast.Call):
                f = child.func
                if (isinstance(f, ast.Name) and f.id in connects) or (
                        isinstance(f, ast.Attribute) and f.attr == "connect" and isinstance(f.value, ast.Name) and f.value.id in drivers):
                    found.append(where or "<module>")
            visit(child, inner)

    visit(tree, "")
    return found


def stray_openers(files: dict[str, str]) -> dict[str, list[str]]:
    """Each file's SQLite openers that are not the ones the page names."""
    from fnmatch import fnmatch

    out = {}
    for rel, source in files.items():
        stray = [w for w in sqlite_openers(source) if not any(fnmatch(rel, f) and w == fn for f, fn in OPENERS)]
        if stray:
            out[rel] = stray
    return out


def engine_sources() -> dict[str, str]:
    return {p.relative_to(ENGINE).as_posix(): p.read_text(encoding="utf-8") for p in ENGINE.rglob("*.py")}


def test_one_opener_for_the_private_databases():
    """The index, the embedding cache, the journal and the recall log are opened by
    files/fsutil.open_database (the driver each needs, autocommit, any thread); a caller that
    handles a failure of any of them catches fsutil.database_errors()."""
    from clawmem.engine.files.fsutil import database_errors, open_database

    sources = engine_sources()
    assert sqlite_openers(sources["files/fsutil.py"]) == ["open_database"]
    assert any(w == "PushState.__init__" for rel, src in sources.items() if rel.startswith("fleet/") for w in sqlite_openers(src))
    assert stray_openers(sources) == {}
    page = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert "`files/fsutil.open_database`" in page and "`PushState`" in page  # both openers named on the page
    conn = open_database(":memory:", timeout=1.0)
    try:
        conn.execute("select nonsense from nowhere")
    except database_errors() as exc:
        assert "nowhere" in str(exc)
    else:
        raise AssertionError("no error raised")
    finally:
        conn.close()


def test_the_opener_check_sees_a_second_opener():
    ways = ["from sqlite3 import connect\ndef f(p):\n    return connect(p)\n",
            "from sqlite3 import connect as c\nconn = c('x.db')\n",
            "import sqlite3\nclass Log:\n    def __init__(self, p):\n        self.conn = sqlite3.connect(p)\n",
            "import sqlean as s\ns.connect('x')\n",
            "from ..files.fsutil import sqlite_driver\ndb = sqlite_driver(True)\ndef f():\n    db.connect('x')\n",
            "from ..index.store import db\ndef f():\n    db.connect('x')\n"]
    for way in ways:
        assert stray_openers({"search/probe.py": way}), way
    # the fleet's push state may open its file, elsewhere in fleet/ nothing may
    push = "from ..index.store import db\nclass PushState:\n    def __init__(self, p):\n        self.conn = db.connect(p)\n"
    assert stray_openers({"fleet/push.py": push}) == {} and stray_openers({"index/push.py": push})
    assert stray_openers({"fleet/push.py": push.replace("PushState", "Other")})


# ------------------------------------------------------------------ the engine never imports a front's toolkit

FRONT_ONLY = ("textual", "rich", "clawmem.tui", "clawmem.mcp", "mcp")


def front_toolkit_imports(path: Path, package: str) -> list[str]:
    """What module `path` imports (anywhere, TYPE_CHECKING too, importlib too) of textual, rich,
    a front or the MCP SDK."""
    return sorted({m for m, _ in imports_in(path, package, dynamic=True) if m.startswith(FRONT_ONLY) and
                   any(m == f or m.startswith(f + ".") for f in FRONT_ONLY)})


def test_no_engine_module_imports_textual_rich_or_a_front():
    """Every module of the engine, read whole: not only the few a test process happens to load."""
    assert len(MODULES) > 60
    found = {m: r for m, (path, package) in MODULES.items() if (r := front_toolkit_imports(path, package))}
    assert found == {}


def test_the_toolkit_check_sees_rich_anywhere_in_the_engine(tmp_path):
    own, package = MODULES["clawmem.engine.consolidate.promote"]
    probe = tmp_path / "promote.py"
    probe.write_text("import rich.text\n" + own.read_text(encoding="utf-8"))
    assert front_toolkit_imports(probe, package) == ["rich.text"]
    probe.write_text(own.read_text(encoding="utf-8") + "\ndef f():\n    from textual.app import App\n    import importlib\n"
                     "    importlib.import_module('clawmem.tui.present')\n")
    assert front_toolkit_imports(probe, package) == ["clawmem.tui.present", "textual.app"]
    probe.write_text("import richtext\nimport mcpx\n")
    assert front_toolkit_imports(probe, package) == []


# ------------------------------------------------------------------ fronts never set the engine's state

def engine_assignments(source: str) -> list[str]:
    """Assignments in `source` to an attribute of an engine (`eng.x = …`, `self.host.engine.x = …`,
    `app.engine.x += …`, `setattr(engine, …)`): a front asks the engine through its methods."""
    import ast

    def names_engine(node) -> bool:
        return (isinstance(node, ast.Name) and node.id in ("engine", "eng")) or (isinstance(node, ast.Attribute) and node.attr == "engine")

    found = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        found += [ast.unparse(t) for t in targets if isinstance(t, ast.Attribute) and names_engine(t.value)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args and names_engine(node.args[0]):
            found.append(f"setattr({ast.unparse(node.args[0])}, …)")
    return found


def test_no_front_assigns_an_engine_attribute():
    """The fronts, and the engine's own parts that are handed an Engine (the watcher's Syncer, the
    agent tools, promotion, the fleet): only api.py sets an Engine's attributes."""
    found = {}
    for root in (*FRONTS.values(), ENGINE):
        for path in sorted(root.rglob("*.py")):
            if path == ENGINE / "api.py":
                continue
            if hits := engine_assignments(path.read_text(encoding="utf-8")):
                found[path.relative_to(REPO).as_posix()] = hits
    assert found == {}


def test_the_assignment_check_sees_each_way_of_setting_engine_state():
    for probe, hit in (("eng.sync_hook = spawn", "eng.sync_hook"), ("self.host.engine.persistent = False", "self.host.engine.persistent"),
                       ("app.engine.generation += 1", "app.engine.generation"), ("setattr(engine, 'cfg', c)", "setattr(engine, …)")):
        assert engine_assignments(probe) == [hit], probe
    assert engine_assignments("self.engine = engine\nengine.cfg.ui = table\nx = eng.search(q)") == []
    watcher = (ENGINE / "index" / "watcher.py").read_text(encoding="utf-8")  # the watcher is read too, and caught the same way
    assert engine_assignments(watcher) == []
    assert engine_assignments(watcher + "\n\ndef _probe(self):\n    self.engine.sync_hook = self.request\n") == ["self.engine.sync_hook"]
