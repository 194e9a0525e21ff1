"""The installed package has layers without cycles: files → journal → index/store → search →
engine → fronts. A module that imports another which (directly or not) imports it back makes
the order of the layers a matter of chance, so this test parses every module of the package
and fails on any cycle.

Imports inside functions count too: deferring an import keeps start-up cheap, it does not
change which module depends on which, so a cycle through a lazy import is still a cycle.
Imports under `if TYPE_CHECKING:` do not count: they never run, and naming a type in an
annotation does not make one module need the other. A `from package import name` counts as
an import of the submodule when `name` is one."""

from __future__ import annotations

from pathlib import Path

import clawmem.engine
import clawmem.mcp
import clawmem.themes
import clawmem.tui
from helpers import imports_in

PACKAGES = {pkg.__name__: Path(pkg.__file__).parent for pkg in (clawmem.engine, clawmem.tui, clawmem.mcp, clawmem.themes)}


def modules(packages: dict[str, Path]) -> dict[str, tuple[Path, bool]]:
    """Every module of the packages: dotted name -> (file, is a package's __init__)."""
    out = {}
    for name, root in packages.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            out[".".join([name, *parts])] = (path, is_package)
    return out


def imports_of(name: str, known: dict[str, tuple[Path, bool]]) -> set[str]:
    """The modules of `known` that module `name` imports anywhere in its file."""
    path, is_package = known[name]
    found: set[str] = set()
    for module, names in imports_in(path, name if is_package else name.rpartition(".")[0], type_checking=False):
        # `from package import submodule` depends on the submodule, not on the package's __init__
        found.update({f"{module}.{n}" if f"{module}.{n}" in known else module for n in names} or {module})
    out = set()
    for module in found:
        while module and module not in known:  # `import a.b.c` of a name inside: its module
            module = module.rpartition(".")[0]
        if module and module != name:
            out.add(module)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def graph_of(packages: dict[str, Path]) -> dict[str, set[str]]:
    known = modules(packages)
    return {name: imports_of(name, known) for name in known}


def test_the_parser_finds_a_cycle_through_any_kind_of_import(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "low.py").write_text("import os\n")
    (pkg / "sub" / "deep.py").write_text("from .. import low\n")
    ways = ["def f():\n    from . import top\n",  # lazy, relative
            "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    import pkg.top\n",
            "import pkg.top\n", "from .top import X\n"]
    for way in ways:
        (pkg / "mid.py").write_text(way)
        (pkg / "top.py").write_text("from .sub import deep\nfrom . import mid\n")
        assert cycles(graph_of({"pkg": pkg})) == [["pkg.mid", "pkg.top"]], way
    (pkg / "mid.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.top import X\n")
    assert cycles(graph_of({"pkg": pkg})) == []  # a type named for the checker only
    (pkg / "mid.py").write_text("from . import low\nfrom .sub.deep import low as again\n")
    graph = graph_of({"pkg": pkg})
    assert graph["pkg.mid"] == {"pkg.low", "pkg.sub.deep"} and graph["pkg.sub.deep"] == {"pkg.low"}
    assert cycles(graph) == []


def test_the_package_has_no_import_cycle():
    graph = graph_of(PACKAGES)
    assert len(graph) > 60 and "clawmem.engine.files.journal" in graph["clawmem.engine.consolidate.promote"]
    assert cycles(graph) == []
