"""The grader's packages by job, imported one way: a module imports only from its own package or from the
packages below it (lazily inside a function or not), and no modules import each other in a cycle; what the move
into packages could break (the fingerprint over every package, modules named in strings) is checked too."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

# Lowest first. The modules at grader/'s top (cli, and the public paths grader.cases, grader.notebook and grader.variant)
# stand above them all.
LAYERS = ["core", "problem", "sandbox", "grading", "explain", "render", "commands", "instructor"]
PACKAGE = ROOT / "grader"


def module_name(path: Path) -> str:
    return ".".join(("grader", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")


def imports(path: Path) -> set[str]:
    """The grader modules ``path`` imports, wherever in it the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("grader")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grader") and not node.level:
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    return {name if name in modules else name.rsplit(".", 1)[0] for name in found} & modules


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS)


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) - {module_name(p)} for p in PACKAGE.rglob("*.py")}


def test_every_module_lies_in_a_layer_and_imports_only_downwards():
    edges = graph()
    top = sorted(m for m in edges if layer(m) == len(LAYERS) and m != "grader")
    assert top == ["grader.cases", "grader.cli", "grader.notebook", "grader.variant"], top
    upward = [f"{m} imports {d}" for m, deps in sorted(edges.items()) for d in sorted(deps) if layer(d) > layer(m)]
    assert not upward, "\n".join(upward)


def test_no_modules_import_each_other_in_a_cycle():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(module: str, path: list[str]) -> list[str] | None:
        state[module] = 1
        for dep in sorted(edges[module]):
            if state.get(dep) == 1:
                return path + [module, dep]
            if dep not in state and (cycle := walk(dep, path + [module])):
                return cycle
        state[module] = 2
        return None

    for module in sorted(edges):
        if module not in state:
            cycle = walk(module, [])
            assert cycle is None, " -> ".join(cycle[cycle.index(cycle[-1]):])


def test_the_layer_check_sees_an_upward_import(tmp_path):
    """The check itself: a module of the core that imports the engine is caught."""
    path = tmp_path / "core_module.py"
    path.write_text("def f():\n    from grader.grading.engine import grade\n")
    assert imports(path) == {"grader.grading.engine"}
    assert layer("grader.grading.engine") > layer("grader.core.kinds")


def test_every_subcommand_names_a_function_that_exists():
    """`grade <subcommand>` imports its module only when it runs: each one it names must be there."""
    import importlib

    from grader import cli

    for name, command in cli.COMMANDS.items():
        module, function = getattr(command, "target", (cli.__name__, command.__name__))
        assert callable(getattr(importlib.import_module(module), function, None)), name


def test_the_fingerprint_covers_every_package(tmp_path):
    """A change to any grader source, in any package, is another fingerprint: nothing cached or kept from
    before it (outputs, compiled programs, a zygote) is used after it."""
    import importlib.util
    import shutil

    shutil.copytree(PACKAGE, tmp_path / "grader", ignore=shutil.ignore_patterns("__pycache__"))

    def fingerprint() -> str:  # the copy's own fingerprint module, which hashes the copy
        spec = importlib.util.spec_from_file_location("copied_fingerprint", tmp_path / "grader" / "sandbox" / "fingerprint.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.fingerprint()

    before = fingerprint()
    with open(tmp_path / "grader" / "explain" / "relations" / "__init__.py", "a") as f:
        f.write("\n# a change in another package\n")
    assert fingerprint() != before


def test_every_module_the_grader_starts_by_name_exists():
    """`python -m grader...` and `from grader... import` written in strings (the fallback worker start, the
    zygote, Gradescope's scripts) name modules that exist."""
    import re

    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    named = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        named |= set(re.findall(r'"-m", "(grader[\w.]*)"', text)) | set(re.findall(r"-m (grader[\w.]+)", text))
        named |= {m for m in re.findall(r"from (grader[\w.]*) import", text)}
    assert named and named <= modules | {"grader"}, sorted(named - modules)
