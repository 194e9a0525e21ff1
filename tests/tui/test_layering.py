"""The app depends on its panes, never the other way round: the panes (and the palette, the
dialogs, the messages) do not import tui/app.py, not even for type checking; they read the app
through the PaneHost protocol, which the app satisfies, and post messages for the rest."""

from __future__ import annotations

import ast
from pathlib import Path

import clawmem.tui
from clawmem.tui.host import PaneHost
from helpers import DYNAMIC, imports_in
from test_import_cycles import cycles

TUI = Path(clawmem.tui.__file__).parent
APP = "clawmem.tui.app"
ENTRY_POINTS = {"app.py", "cli.py", "__main__.py"}  # the app itself and what starts it


def modules() -> list[Path]:
    """Every module of the app's parts: tui/*.py but the entry points, and tui/widgets/*.py."""
    found = [p for p in sorted(TUI.glob("*.py")) if p.name not in ENTRY_POINTS] + sorted((TUI / "widgets").glob("*.py"))
    assert any(p.name == "search_pane.py" for p in found) and any(p.name == "commands.py" for p in found)
    return found


def package_of(path: Path) -> str:
    return "clawmem.tui" if path.parent == TUI else "clawmem.tui." + path.parent.name


def imported(path: Path, package: str) -> set[str]:
    """Every module `path` (in `package`) imports anywhere: top level, functions, `if TYPE_CHECKING:`;
    made absolute; `from X import y` counts as both X and X.y, since y may be a module."""
    out: set[str] = set()
    for module, names in imports_in(path, package):
        out.add(module)
        out.update(f"{module}.{name}" for name in names)
    return out


def names_app(module: str) -> bool:
    return module in (APP, "tui.app") or module.startswith((APP + ".", "tui.app."))


def test_the_import_parser_sees_each_way_of_importing_the_app(tmp_path):
    ways = ["from ..app import ClawmemApp", "from .. import app", "import clawmem.tui.app",
            "from clawmem.tui.app import ClawmemApp", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..app import X",
            "def f():\n    from ..app import main"]
    probe = tmp_path / "probe.py"
    for way in ways:
        probe.write_text(way + "\n")
        assert any(names_app(m) for m in imported(probe, "clawmem.tui.widgets")), way
    probe.write_text("from ..messages import OpenFile\nfrom .. import keys, host\nfrom .dialogs import HelpScreen\n")
    assert not any(names_app(m) for m in imported(probe, "clawmem.tui.widgets"))


def tui_graph(root: Path = TUI, name: str = "clawmem.tui") -> dict[str, set[str]]:
    """tui's modules and the tui modules each imports, counting every import: top level, inside
    functions and under TYPE_CHECKING (a type named for the checker still ties the modules)."""
    known: dict[str, tuple[Path, str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        package = ".".join([name, *parts[:-1]])
        if parts[-1] == "__init__":
            parts.pop()
        known[".".join([name, *parts])] = (path, package)
    graph = {}
    for module, (path, package) in known.items():
        out = set()
        for imported_module, names in imports_in(path, package):
            for target in [f"{imported_module}.{n}" for n in names] + [imported_module]:
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    out.add(target)
                    break
        graph[module] = out
    return graph


def test_the_app_has_no_circle():
    """The tab list imports the panes; nothing a pane imports leads back to it (issue 45 found
    tabs -> panes -> widgets/pane.py -> host.py -> settings.py -> tabs, through a type)."""
    graph = tui_graph()
    assert "clawmem.tui.widgets.search_pane" in graph["clawmem.tui.tabs"]
    assert cycles(graph) == []


def test_the_circle_check_sees_a_circle_through_a_type(tmp_path):
    root = tmp_path / "tui"
    (root / "widgets").mkdir(parents=True)
    for f in ("__init__.py", "widgets/__init__.py", "settings.py"):
        (root / f).write_text("")
    (root / "tabs.py").write_text("from .widgets.pane import Pane\n")
    (root / "widgets" / "pane.py").write_text("from ..host import PaneHost\n")
    (root / "host.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .settings import UISettings\n")
    assert cycles(tui_graph(root)) == []
    (root / "settings.py").write_text("def check():\n    from .tabs import KNOWN_IDS\n")
    assert cycles(tui_graph(root)) == [["clawmem.tui.host", "clawmem.tui.settings", "clawmem.tui.tabs", "clawmem.tui.widgets.pane"]]


def test_no_pane_imports_the_app():
    offenders = {p.relative_to(TUI).as_posix(): sorted(m for m in imported(p, package_of(p)) if names_app(m)) for p in modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


def protocol_members() -> set[str]:
    methods = {name for name, value in vars(PaneHost).items() if callable(value) and not name.startswith("_")}
    return set(PaneHost.__annotations__) | methods


def test_the_app_satisfies_the_protocol(ws, make_app):
    app = make_app(ws)
    assert isinstance(app, PaneHost)
    missing = [m for m in sorted(protocol_members()) if not hasattr(app, m)]
    assert missing == []
    assert not isinstance(object(), PaneHost)


def test_the_panes_read_only_what_the_protocol_offers():
    """What a pane reads through `self.host.X` is in PaneHost: a read the protocol lacks would
    type-check against nothing and fail only at run time."""
    members = protocol_members()
    used: dict[str, set[str]] = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "host"
                    and isinstance(node.value.value, ast.Name) and node.value.value.id == "self"):
                used.setdefault(node.attr, set()).add(path.name)
    assert {"engine", "settings", "shorten", "clock"} <= set(used)  # the panes do read through it
    assert {name: sorted(files) for name, files in used.items() if name not in members} == {}


# ------------------------------------------------------------------ the fronts use only clawmem.engine

import clawmem.engine  # noqa: E402
import clawmem.mcp  # noqa: E402

ENGINE = "clawmem.engine"
FRONTS = {"clawmem.tui": TUI, "clawmem.mcp": Path(clawmem.mcp.__file__).parent}


def front_modules() -> list[tuple[Path, str]]:
    """Every module of every front (the app, its widgets, the CLI package, serve, the MCP server)
    with the package it is in."""
    out = []
    for name, root in FRONTS.items():
        for path in sorted(root.rglob("*.py")):
            parent = path.parent.relative_to(root).parts
            out.append((path, ".".join([name, *parent])))
    assert any(p.name == "server.py" for p, _ in out) and any(p.name == "serve.py" for p, _ in out)
    return out


def engine_reaches(path: Path, package: str) -> list[str]:
    """The imports of `path` that go past clawmem.engine's public face: `import clawmem.engine.x`,
    `from clawmem.engine.x import y`, or `from clawmem.engine import z` where z is a name
    clawmem.engine does not export (a submodule reached through the package)."""
    public = set(clawmem.engine.__all__)
    bad = []
    for module, names in imports_in(path, package, dynamic=True):
        if module.startswith(ENGINE + ".") or module == DYNAMIC:
            bad.append(module)
        elif module == ENGINE:
            bad += [f"{ENGINE}.{name}" for name in names if name not in public]
    return bad


def test_the_import_parser_sees_each_way_of_reaching_past_the_engine(tmp_path):
    probe = tmp_path / "probe.py"
    ways = ["import clawmem.engine.index.store", "from clawmem.engine.index.store import Store", "from clawmem.engine import store",
            "from clawmem.engine import journal as j", "def f():\n    from clawmem.engine.api import Engine",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from clawmem.engine.config import Config",
            "import importlib\nimportlib.import_module('clawmem.engine.index.store')", "def f(n):\n    __import__(n)"]
    for way in ways:
        probe.write_text(way + "\n")
        assert engine_reaches(probe, "clawmem.tui.widgets"), way
    probe.write_text("import clawmem.engine\nfrom clawmem.engine import Engine, SearchResults, events as ev, human\n"
                     "from ..messages import OpenFile\nfrom . import base\n")
    assert engine_reaches(probe, "clawmem.tui.widgets") == []


def test_the_fronts_import_the_engine_only_through_its_public_face():
    offenders = {p.relative_to(p.parents[1] if pkg.count(".") > 1 else p.parent).as_posix(): engine_reaches(p, pkg)
                 for p, pkg in front_modules()}
    assert {k: sorted(set(v)) for k, v in offenders.items() if v} == {}


def test_every_name_the_engine_exports_resolves():
    missing = [name for name in clawmem.engine.__all__ if not hasattr(clawmem.engine, name)]
    assert missing == []
