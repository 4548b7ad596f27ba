"""The layout of scrapy_websim: no import circle, the parts import downwards, core/ has no Scrapy.

Read from the source (ast), so a function-level import counts too. The tables are the layering
docs/architecture.md describes; a new import across parts either fits them or changes them here
on purpose.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "scrapy_websim"
CORE = PACKAGE / "core"

#: The package's parts from the top down ("__init__" is the package itself: ``scrapy_websim.Addon``).
#: A part imports only the parts below it.
LAYERS = ("testing", "cli", "commands", "__init__", "distributed", "spiders", "crawler", "render", "result",
          "config", "config_values", "core")
#: The imports that go up, each with why (module -> module it imports).
UPWARD = {
    # the render and capture spider middlewares and the failure middleware live in render/ and send
    # websim's events with the PageItem of crawler/
    ("scrapy_websim.render.middlewares", "scrapy_websim.crawler.events"): "render middlewares send the events",
    ("scrapy_websim.render.middlewares", "scrapy_websim.crawler.items"): "render middlewares send PageItem",
    # WEBSIM_REDIS_URL: the add-on wires scrapy-redis's scheduler on the job's queue
    ("scrapy_websim.crawler.addon", "scrapy_websim.distributed.job"): "the add-on wires a distributed job",
}

#: What each part of core/ may import from core/ (besides itself).
ALLOWED = {
    "types": set(),
    "params": set(),
    "fingerprints": {"types"},
    "page": {"params", "types", "fingerprints"},
    "rules": {"page", "params", "types"},
    "urls": {"params", "types", "fingerprints"},
    "match": {"params", "types", "fingerprints", "page", "rules", "urls"},
    "features": {"page", "rules", "urls", "fingerprints", "params", "types"},
    "store": {"match", "types"},
    "served": {"features", "page", "types"},
}
NOT_IN_CORE = ("scrapy", "twisted", "playwright", "scrapy_playwright")


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(REPO).with_suffix("").parts)
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def _modules(root: Path):
    for path in sorted(root.rglob("*.py")):
        yield path, _module_name(path)


ALL_MODULES = dict((name, path) for path, name in _modules(PACKAGE))
MODULES = list(_modules(CORE))


def _core_part(module: str) -> str:
    """``scrapy_websim.core.page.text`` -> ``page``; the core package itself -> ``""``."""
    parts = module.split(".")[2:]
    return parts[0] if parts else ""


def _part(module: str) -> str:
    """``scrapy_websim.crawler.addon`` -> ``crawler``; the package itself -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path, module: str):
    """Absolute names of everything ``path`` imports (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            yield target
            yield from (f"{target}.{alias.name}" for alias in node.names)  # "from . import x"


def _dispatched(module: str):
    """The modules ``scrapy_websim.cli`` imports by name (one per command)."""
    if module == "scrapy_websim.cli":
        from scrapy_websim.commands import DEFAULT, SUBCOMMANDS

        yield from (f"scrapy_websim.commands.{name}" for name in (DEFAULT, *SUBCOMMANDS))


def _imported_modules(path: Path, module: str):
    """The package's modules ``path`` imports: for ``from m import name``, the module ``m.name`` if
    there is one, else the nearest module of ``m``."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [f"{target}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in ALL_MODULES:
                target = target.rpartition(".")[0]
            if target:
                yield target


def _graph():
    """Module -> the package's modules it imports."""
    return {name: ((set(_imported_modules(path, name)) | set(_dispatched(name))) & ALL_MODULES.keys()) - {name}
            for name, path in ALL_MODULES.items()}


GRAPH = _graph()


def _circles(graph):
    """Every group of modules that import each other, directly or not (Tarjan's strongly connected
    components of more than one module, and a module that imports itself)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
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
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_in_the_package():
    assert _circles(GRAPH) == []


def test_a_circle_would_be_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


def test_every_part_of_the_package_is_in_the_layers():
    assert {_part(name) for name in ALL_MODULES} == set(LAYERS)


@pytest.mark.parametrize("module", sorted(ALL_MODULES))
def test_parts_import_downwards(module):
    own = LAYERS.index(_part(module))
    for target in sorted(GRAPH[module]):
        other = LAYERS.index(_part(target))
        if other < own:
            assert (module, target) in UPWARD, (
                f"{module} imports {target}: {_part(module)} may import only the parts below it ({LAYERS[own + 1:]})")


def test_the_upward_imports_are_still_there():
    for module, target in UPWARD:
        assert target in GRAPH[module], f"{module} no longer imports {target}: drop it from UPWARD"


def _defined(path: Path):
    """The names a module's top level defines (functions, classes, assignments, names of its ``if``s)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, (ast.Assign, ast.AnnAssign)):
                for target in sub.targets if isinstance(sub, ast.Assign) else [sub.target]:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


DEFINED = {name: _defined(path) for name, path in ALL_MODULES.items()}
SOURCES = sorted(path for folder in ("scrapy_websim", "tests", "bench", "scripts")
                 for path in (REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(REPO)) for p in SOURCES])
def test_one_import_path_per_name(path):
    """A name of the package is imported from the module that defines it, never through another
    module that imports it; the package's own documented names (``scrapy_websim.Addon``) are for
    users and the docs, not for the package's modules."""
    module = _module_name(path) if PACKAGE in path.parents else ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if target not in ALL_MODULES or target == "scrapy_websim" and module == "":
            continue
        for alias in node.names:
            if f"{target}.{alias.name}" not in ALL_MODULES and alias.name != "__version__":
                assert alias.name in DEFINED[target], f"line {node.lineno}: {alias.name} is not defined in {target}"


@pytest.mark.parametrize("module", sorted(set(ALL_MODULES) - {"scrapy_websim"}))
def test_all_names_only_what_the_module_defines(module):
    for node in ast.parse(ALL_MODULES[module].read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            listed = [element.value for element in node.value.elts]
            assert set(listed) <= DEFINED[module], f"__all__ of {module} lists {set(listed) - DEFINED[module]}"


def test_no_function_is_too_complex():
    """radon's cyclomatic complexity (scripts/complexity.py): none above 15, at most 5 % above 10."""
    pytest.importorskip("radon")
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import complexity
    finally:
        sys.path.remove(str(REPO / "scripts"))
    found = complexity.functions()
    assert [where for c, where in found if c > complexity.MAX] == []
    assert sum(1 for c, _ in found if c > complexity.HIGH) <= complexity.HIGH_SHARE * len(found)


def test_every_part_of_core_is_in_the_table():
    parts = {_core_part(name) for _, name in MODULES} - {""}
    assert parts == set(ALLOWED)


@pytest.mark.parametrize("path,module", MODULES, ids=[m for _, m in MODULES])
def test_core_imports_follow_the_layers(path, module):
    own = _core_part(module)
    for target in _imports(path, module):
        top = target.split(".")[0]
        assert top not in NOT_IN_CORE, f"{module} imports {target}: core/ stays free of Scrapy"
        if not target.startswith("scrapy_websim."):
            continue
        assert target.startswith("scrapy_websim.core"), f"{module} imports {target} from outside core/"
        other = _core_part(target)
        if other and own and other != own:
            assert other in ALLOWED[own], f"{module} imports {target}: {own} may import only {sorted(ALLOWED[own])}"


def test_each_core_module_imports_alone_without_scrapy():
    names = [name for _, name in MODULES]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {NOT_IN_CORE!r})\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
