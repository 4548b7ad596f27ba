"""The layout of scrapy_websim.core: no Scrapy, and each package imports only the ones below it.

Read from the source (ast), so a function-level import counts too. The table is the layering the
README's "Architecture" section describes; a new import across packages either fits it or changes
it here on purpose.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "scrapy_websim" / "core"

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


def _part(module: str) -> str:
    """``scrapy_websim.core.page.text`` -> ``page``; the core package itself -> ``""``."""
    parts = module.split(".")[2:]
    return parts[0] if parts else ""


def _modules():
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE.parent.parent).with_suffix("")
        name = ".".join(rel.parts)
        yield path, name[: -len(".__init__")] if name.endswith(".__init__") else name


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


MODULES = list(_modules())


def test_every_part_of_core_is_in_the_table():
    parts = {_part(name) for _, name in MODULES} - {""}
    assert parts == set(ALLOWED)


@pytest.mark.parametrize("path,module", MODULES, ids=[m for _, m in MODULES])
def test_core_imports_follow_the_layers(path, module):
    own = _part(module)
    for target in _imports(path, module):
        top = target.split(".")[0]
        assert top not in NOT_IN_CORE, f"{module} imports {target}: core/ stays free of Scrapy"
        if not target.startswith("scrapy_websim."):
            continue
        assert target.startswith("scrapy_websim.core"), f"{module} imports {target} from outside core/"
        other = _part(target)
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
    # One interpreter for all: the layer table above already rules out cycles between packages.
    subprocess.run([sys.executable, "-c", code], check=True, cwd=CORE.parent.parent)
