"""The layout, checked on the source: every import (function-local ones included) of every
module goes one way between rooms, no two files import each other even by a detour, no file is
longer than a reader can hold without saying why, generic rooms reach benchmarks only through
the registry, and no generic module compares against a benchmark's name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sweepbench.benchmarks import registry

PACKAGE = Path(__file__).resolve().parents[1] / "sweepbench"

BASE = {"errors", "ids", "memo", "model_json", "wire"}
# room -> rooms it may import (a room may always import itself)
ALLOWED = {
    "errors": set(),
    "ids": set(),
    "memo": set(),
    "model_json": set(),
    "wire": set(),
    "__init__": set(),
    "config": BASE,
    "datasets": BASE,
    "tools": BASE | {"datasets"},
    "simulator": BASE | {"datasets", "tools"},
    "judge": BASE | {"datasets"},
    "client": BASE | {"config"},
    "store": BASE,
    "results": BASE | {"config", "store"},
    "devserver": BASE,
    "providers": BASE | {"config"},  # provider/model names to endpoints, the prices table
    # the registry, the protocol, the catalog and the doubles' glue; one benchmark's package
    "benchmarks.core": BASE | {"datasets", "tools", "simulator", "judge", "config"},
    "benchmarks.package": BASE | {"datasets", "tools", "simulator", "judge", "config",
                                  "benchmarks.core"},
    "runner": BASE | {"datasets", "tools", "simulator", "judge", "config", "client", "store",
                      "results", "devserver", "benchmarks.core"},
    "view": BASE | {"config", "store", "results", "judge"},
    # the sweep on Ray: the runner's episode code in workers, the store behind one driver
    "scaleout": BASE | {"datasets", "tools", "simulator", "judge", "config", "client",
                        "store", "results", "devserver", "runner", "benchmarks.core"},
    "cli": BASE | {"scaleout", "datasets", "tools", "simulator", "judge", "config", "client", "store",
                   "results", "devserver", "runner", "benchmarks.core", "view", "__init__",
                   "providers"},
    "launch": {"cli"},  # the console script: the CLI, imported under a Ctrl-C handler
    "__main__": {"launch"},  # python -m sweepbench: the console script
}
BENCHMARK_PACKAGES = {p.name for p in (PACKAGE / "benchmarks").iterdir()
                      if (p / "__init__.py").is_file()}


def room_of(module: str) -> str:
    """``sweepbench.client.facade`` -> ``client``; a benchmark's own code -> its package."""
    parts = module.split(".")
    if parts == ["sweepbench"]:
        return "__init__"
    head = parts[1]
    if head == "benchmarks":
        if len(parts) > 2 and parts[2] in BENCHMARK_PACKAGES:
            return f"benchmarks.package:{parts[2]}"
        return "benchmarks.core"
    return head


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import"
            mod = node.module or ""
            # "from sweepbench.benchmarks import vitabench" imports a submodule
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m == "sweepbench" or m.startswith("sweepbench.")]


def _resolve(target: str) -> str:
    """The module an import names (``from pkg import name`` may name a function)."""
    parts = target.split(".")
    while parts:
        candidate = PACKAGE.parent.joinpath(*parts)
        if candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    raise AssertionError(f"no module for {target}")


SOURCES = sorted(PACKAGE.rglob("*.py"))


def arrow_problems(module: str, source: str) -> list[str]:
    """Imports in ``source`` (the text of ``module``) that go against the layout."""
    src = room_of(module)
    allowed = ALLOWED["benchmarks.package" if src.startswith("benchmarks.package") else src]
    problems = []
    for line, target in imports(source):
        dst = room_of(_resolve(target))
        if dst != src and dst not in allowed:
            problems.append(f"{module}:{line}: {src} -> {dst} ({target})")
    return problems


def test_every_import_points_one_way():
    problems = [p for path in SOURCES
                for p in arrow_problems(module_name(path), path.read_text(encoding="utf-8"))]
    assert not problems, "imports against the layout's arrows:\n" + "\n".join(problems)


def test_the_check_reports_backward_arrows_and_reaching_into_a_benchmark():
    assert arrow_problems("sweepbench.tools.x", "from sweepbench.runner import client")
    assert arrow_problems("sweepbench.results.x", "def f():\n    import sweepbench.judge.rubric")
    assert arrow_problems("sweepbench.runner.x", "from sweepbench.benchmarks.t1 import metrics")
    assert not arrow_problems("sweepbench.runner.x", "from sweepbench.benchmarks import registry")
    assert not arrow_problems("sweepbench.benchmarks.t1.x", "from sweepbench.judge import likert")


def _names_compared(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants used in comparisons, as dict keys, or in membership tests."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                elts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                out += [(e.lineno, e.value) for e in elts
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        elif isinstance(node, ast.Dict):
            out += [(k.lineno, k.value) for k in node.keys
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue):
            v = node.pattern.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append((v.lineno, v.value))
    return out


@pytest.mark.parametrize("path", [p for p in SOURCES
                                  if not room_of(module_name(p)).startswith("benchmarks.package")],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_string_dispatch_on_a_benchmark_name(path):
    names = set(registry.names())
    hits = [f"line {line}: {value!r}" for line, value in _names_compared(ast.parse(path.read_text()))
            if value in names]
    assert not hits, f"{path.name} compares against benchmark names: {hits}"


MAX_LINES = 600
LONG_REASON = "Longer than 600 lines:"


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the modules of this package it imports (function-local imports included)."""
    return {module: {_resolve(target) for _, target in imports(text)} - {module}
            for module, text in sources.items()}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that reach each other through imports (Tarjan's strongly
    connected components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_two_files_import_each_other_even_by_a_detour():
    graph = import_graph({module_name(p): p.read_text(encoding="utf-8") for p in SOURCES})
    circles = import_circles(graph)
    assert not circles, "import circles between files:\n" + "\n".join(
        " <-> ".join(group) for group in circles)


def test_the_circle_check_finds_direct_and_roundabout_circles():
    assert import_circles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def too_long(path_text: str) -> bool:
    """Over ``MAX_LINES`` lines without a reason in the module docstring."""
    if path_text.count("\n") + (not path_text.endswith("\n")) <= MAX_LINES:
        return False
    doc = ast.get_docstring(ast.parse(path_text)) or ""
    return LONG_REASON not in " ".join(doc.split())


def test_no_file_is_over_600_lines_without_saying_why():
    long = [f"{p.relative_to(PACKAGE)}: {len(p.read_text().splitlines())} lines" for p in SOURCES
            if too_long(p.read_text(encoding="utf-8"))]
    assert not long, (f"files over {MAX_LINES} lines whose docstring does not say "
                      f"{LONG_REASON!r} and why:\n" + "\n".join(long))


def test_the_length_check_counts_lines_and_reads_the_reason():
    body = "x = 1\n" * MAX_LINES
    assert not too_long('"""Short."""\n' + "x = 1\n" * (MAX_LINES - 1))
    assert too_long('"""Short."""\n' + body)
    assert not too_long(f'"""A table.\n\n{LONG_REASON} one table, read top to bottom."""\n' + body)
