"""The import graph shows the design: results below, pipelines beside renderers, no cycle.

Every module of the package belongs to a top-level unit (a subpackage or a top-level module);
`LAYERS` lists the units from the bottom up. A unit may import units of lower layers and, in
its own layer, units it does not form a cycle with; never a unit of a higher layer, and
`pipelines` and `report` never import each other (renderers only read results). Every import
counts, the lazy ones inside functions too, so a cycle cannot hide behind a local import. A
new unit must be placed in the table (the test says so), which is where a newcomer reads the
structure.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import boundary_audit

PACKAGE = Path(boundary_audit.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("_spawn",),  # the spawn lock: imports nothing of the package
    ("supervisor", "errors", "taxonomy", "_data", "__init__", "record"),  # the vocabulary
    ("_subprocess", "finding", "metrics", "progress"),  # processes, findings, computations
    ("config", "source", "static", "services"),  # stages that need no sandbox
    ("sandbox",),
    ("transports",),
    ("tasks", "probes"),
    ("adapters",),
    ("harness", "llm", "observe"),  # real harnesses, model endpoints, black-box observation
    ("results",),  # frozen reports and their summaries
    ("pipelines", "report"),  # one library call per command | pure renderers: siblings
    ("commands", "schemas", "usage_doc", "fleet"),
    ("cli", "__main__"),
)
SIBLINGS_APART = {("pipelines", "report"), ("report", "pipelines")}
IGNORED = {"_bundled"}  # scanned specimens, not our code


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _units(package: Path = PACKAGE) -> set[str]:
    found = set()
    for entry in package.iterdir():
        if entry.name in IGNORED or entry.name.startswith("__pycache__"):
            continue
        if entry.is_dir() and (entry / "__init__.py").exists():
            found.add(entry.name)
        elif entry.suffix == ".py":
            found.add(entry.stem)
    return found


def _edges(package: Path = PACKAGE) -> dict[str, set[tuple[str, str]]]:
    """unit -> {(imported unit, where)} for every import of the package's own modules."""
    units = _units(package)
    edges: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent)
        if rel.parts[1] in IGNORED:
            continue
        module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        source = _unit(module)
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "boundary_audit":
                    targets = [a.name if a.name in units else "__init__" for a in node.names]
                elif node.module.startswith("boundary_audit."):
                    targets = [_unit(node.module)]
            elif isinstance(node, ast.Import):
                targets = [
                    _unit(a.name) for a in node.names if a.name.startswith("boundary_audit.")
                ]
            for target in targets:
                if target != source:
                    edges[source].add((target, f"{rel}:{node.lineno}"))
    return edges


def _layer() -> dict[str, int]:
    return {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def test_every_unit_has_a_layer() -> None:
    missing = sorted(_units() - set(_layer()))
    assert missing == [], f"place these units in LAYERS: {missing}"


def _upward(edges: dict[str, set[tuple[str, str]]]) -> list[str]:
    layer = _layer()
    return sorted(
        f"{where}: {src} (layer {layer[src]}) imports {dst} (layer {layer[dst]})"
        for src, targets in edges.items()
        for dst, where in targets
        if layer.get(dst, -1) > layer.get(src, -1) or (src, dst) in SIBLINGS_APART
    )


def test_no_import_runs_upward() -> None:
    assert _upward(_edges()) == []


def test_no_cycle_between_units() -> None:
    graph = {src: {dst for dst, _ in targets} for src, targets in _edges().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_checker_sees_lazy_upward_and_sibling_imports(tmp_path: Path) -> None:
    """A planted package: a lazy upward import and a renderer reading a pipeline are caught."""
    pkg = tmp_path / "boundary_audit"
    for unit in ("results", "pipelines", "report"):
        (pkg / unit).mkdir(parents=True)
        (pkg / unit / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "results" / "x.py").write_text(
        "def f():\n    from boundary_audit.pipelines import probe\n    return probe\n"
    )
    (pkg / "report" / "y.py").write_text("import boundary_audit.pipelines.scan\n")
    (pkg / "pipelines" / "z.py").write_text("from boundary_audit import results\n")
    assert _upward(_edges(pkg)) == [
        "boundary_audit/report/y.py:1: report (layer 10) imports pipelines (layer 10)",
        "boundary_audit/results/x.py:2: results (layer 9) imports pipelines (layer 10)",
    ]
