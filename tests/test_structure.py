"""The package's shape, as docs/ARCHITECTURE.md states it: layers that import only downwards, no import cycles, no
lab importing another, modules and functions a newcomer can read without scrolling through a thousand lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "uncertainty_lab"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
LABS = ("cascade", "orchestration", "search")
#: the front layer: may import anything; nothing below may import it
FRONT = ("widgets", "cli", "tour", "classroom", "hub")


def _is_generator(path: Path) -> bool:
    """The data generators (``datasets/build_*.py``): long tables of invented text, exempt from the size limits."""
    return path.parent.name == "datasets" and path.name.startswith("build_")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every module of the package that ``name`` imports, at module level or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        else:
            continue
        found.update(c for c in candidates if c in MODULES and c != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _area(module: str) -> str:
    """The top-level area a module belongs to: ``cascade``, ``hawkes``, ``cli``, ..."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _hand_written() -> list[str]:
    return [m for m, p in MODULES.items() if not _is_generator(p)]


@pytest.mark.parametrize("module", _hand_written())
def test_module_is_short(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module} has {lines} lines (> {MAX_MODULE_LINES}): split it by job"


@pytest.mark.parametrize("module", _hand_written())
def test_functions_are_short(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    long = [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"{module}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_no_import_cycles_between_modules():
    """Package ``__init__`` modules re-export their package, so edges into them are left out; every other import
    (module level or inside a function) counts."""
    graph = {m: {t for t in targets if MODULES[t].name != "__init__.py"} for m, targets in GRAPH.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_downwards(module):
    area = _area(module)
    targets = {_area(t) for t in GRAPH[module]}
    if area in LABS:
        others = sorted(targets & (set(LABS) - {area}))
        assert not others, f"{module} (a lab) imports the labs {others}; labs import the core, never each other"
    if area not in LABS and area not in FRONT:
        labs = sorted(targets & set(LABS))
        assert not labs, f"{module} (core) imports the labs {labs}; the core never imports a lab"
    if area not in FRONT:
        front = sorted(targets & set(FRONT))
        assert not front, f"{module} imports {front}, which sit above it (widgets, cli, tour, classroom, hub)"


@pytest.mark.parametrize("lab", LABS)
def test_labs_do_not_import_hawkes_for_a_table(lab):
    users = [m for m in MODULES if _area(m) == lab and any(t.startswith("uncertainty_lab.hawkes.table") for t in GRAPH[m])]
    assert not users, f"{users} import the Hawkes package for a table; use uncertainty_lab.table"


@pytest.mark.parametrize("lab", LABS)
def test_every_lab_has_the_same_shape(lab):
    """docs/ARCHITECTURE.md: config.py, record.py, run.py, experiment.py, result.py, figures.py in every lab."""
    for name in ("config", "record", "run", "experiment", "result", "figures"):
        assert (PACKAGE / lab / f"{name}.py").is_file(), f"uncertainty_lab/{lab}/{name}.py is missing"


def test_template_plugins_import_only_the_core():
    template = PACKAGE.parent / "plugins" / "template" / "ul_plugin_template"
    for path in template.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("uncertainty_lab"):
                assert _area(node.module) not in LABS, f"{path.name} imports the lab module {node.module}"
