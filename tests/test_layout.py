"""The package's layout: layers that import one way only, and no module hidden by a function."""
import ast
import re
import importlib
import pkgutil
from pathlib import Path

import mmcl

ROOT = Path(mmcl.__file__).resolve().parent

# the layers, lowest first; a module may import its own layer and the ones below, never above
LAYERS = [
    {"mmcl._utils", "mmcl.cache", "mmcl.codepath", "mmcl.fits"},
    {"mmcl.model"},
    {"mmcl.dynamics"},
    {"mmcl.proofs", "mmcl.downstream"},
    {"mmcl.experiments", "mmcl.wider"},
    {"mmcl.figures"},
    {"mmcl.booksupport", "mmcl.commands", "mmcl.cli"},
]


def _layer(module: str) -> int:
    for i, layer in enumerate(LAYERS):
        if any(module == top or module.startswith(top + ".") for top in layer):
            return i
    raise AssertionError(f"{module} belongs to no layer of tests/test_layout.py")


def _modules():
    for info in pkgutil.walk_packages([str(ROOT)], prefix="mmcl."):
        yield info.name


def _imports(module: str):
    """Every ``mmcl...`` module a module imports, at its top or inside a function."""
    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("mmcl"):
            yield node.module
            for alias in node.names:  # `from mmcl.proofs import single_stage1`
                if importlib.util.find_spec(node.module).submodule_search_locations is not None:
                    sub = f"{node.module}.{alias.name}"
                    if importlib.util.find_spec(sub) is not None:
                        yield sub
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("mmcl"))


def test_every_module_imports_only_its_layer_and_those_below():
    upward = []
    for module in _modules():
        for target in _imports(module):
            if target == "mmcl":
                continue
            if _layer(target) > _layer(module):
                upward.append(f"{module} imports {target}")
    assert not upward, "imports that point up the layers: " + "; ".join(sorted(set(upward)))


def test_no_module_is_hidden_by_a_name_of_its_package():
    hidden = []
    for module in _modules():
        mod = importlib.import_module(module)
        parent, _, leaf = module.rpartition(".")
        if getattr(importlib.import_module(parent), leaf) is not mod:
            hidden.append(module)
    assert not hidden, f"modules shadowed by another object of the same name in their package: {hidden}"


def test_public_names_stay_importable_from_mmcl():
    for name in ("SyntheticConfig", "SyntheticData", "sample_synthetic", "simulate", "Trajectory", "decompose",
                 "evaluate", "sweep"):
        assert callable(getattr(mmcl, name)), name
        assert name in mmcl.__all__, name
    assert mmcl.sweep.__module__ == "mmcl.experiments.sweep.runner"
    assert mmcl.evaluate.__module__ == "mmcl.downstream.evaluation"


def test_importing_a_low_layer_loads_no_experiment():
    """``import mmcl.model`` (which runs mmcl/__init__) must not load the experiments layer."""
    import subprocess
    import sys

    code = "import sys, mmcl.model; print(sorted(m for m in sys.modules if m.startswith('mmcl.experiments')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def _module_edges():
    """module -> the mmcl modules it imports (at its top or inside a function).  ``from P import X``
    points at the submodule ``P.X`` when ``X`` is one, else at the package ``P`` (whose __init__ runs)."""
    edges = {}
    for module in _modules():
        spec = importlib.util.find_spec(module)
        tree = ast.parse(Path(spec.origin).read_text())
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("mmcl"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    is_pkg = importlib.util.find_spec(node.module).submodule_search_locations is not None
                    out.add(sub if is_pkg and importlib.util.find_spec(sub) is not None else node.module)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name.startswith("mmcl"))
        edges[module] = {t for t in out if t != module and t != "mmcl"}
    return edges


def _cycles(edges):
    """Every strongly connected set of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_cycles_are_found():
    """The search itself: a planted cycle is found, a chain is not."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycle_inside_mmcl():
    """No module reaches itself through imports, function-level imports included, inside any layer.
    A package's __init__ importing its own submodules is no cycle unless a submodule imports a name
    of that __init__ back."""
    edges = _module_edges()
    cycles = _cycles(edges)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_api_page_documents_every_public_module():
    """The API page is generated from the package at every build (mmcl.booksupport.api_page, written
    by the Sphinx extension to the file book/api.md includes): an ``automodule`` for every module that
    is not private (no leading underscore), once, and for nothing else, so that a new module is
    documented without an edit of the page."""
    from mmcl.booksupport import sphinx_ext
    from mmcl.booksupport.api_page import api_markdown, public_modules

    page = api_markdown()
    documented = re.findall(r"automodule:: (mmcl[\w.]*)", page)
    assert len(documented) == len(set(documented)), "a module is documented twice"
    public = {m for m in _modules() if not any(part.startswith("_") for part in m.split("."))}
    assert set(public_modules()) == public | {"mmcl"}
    missing = sorted(public - set(documented))
    assert not missing, f"modules missing from the generated API page: {missing}"
    stale = sorted(set(documented) - public)
    assert not stale, f"the API page documents modules that are private or do not exist: {stale}"
    api = (ROOT.parent / "book" / "api.md").read_text()
    assert f"{{include}} ../{sphinx_ext.GENERATED_API.as_posix()}" in api
    assert "automodule" not in api, "book/api.md lists modules by hand; the generated page lists them all"


def test_the_api_page_documents_a_facades_names_once():
    """A package that says its names are documented under it (mmcl.experiments.sweep, ...) documents
    its classes and functions; its modules leave them out, so that each is described once."""
    import inspect

    from mmcl.booksupport.api_page import members

    facades = [m for m in _modules() if m in ("mmcl.experiments.sweep", "mmcl.experiments.theorems_regime",
                                              "mmcl.figures")]
    assert len(facades) == 3
    for facade in facades:
        pkg = importlib.import_module(facade)
        names, _ = members(facade)
        assert names == list(pkg.__all__), facade
        routines = {n for n in pkg.__all__ if inspect.isclass(getattr(pkg, n)) or inspect.isroutine(getattr(pkg, n))}
        for sub in _modules():
            if sub.startswith(facade + "."):
                documented, excluded = members(sub)
                assert not set(documented or ()) & routines, f"{sub} documents again what {facade} does"
    # a package that only gathers its modules' names leaves them to the modules
    assert members("mmcl.dynamics") == ([], list(importlib.import_module("mmcl.dynamics").__all__))
    assert "simulate" in members("mmcl.dynamics.engines")[0]
    assert "DERIVED" in members("mmcl.experiments.sweep.grid")[0]  # a constant stays with its #: comment


def test_the_readme_lists_the_layers_of_this_test():
    """README.md's *Architecture* table numbers the layers; they must be LAYERS above, package for
    package, so that what it says a module may import is what this test enforces."""
    text = (ROOT.parent / "README.md").read_text()
    section = text.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", section, flags=re.M)
    assert rows, "README.md's Architecture section has no table numbering the layers"
    readme = {}
    for layer, packages in rows:
        readme.setdefault(int(layer), set()).update(re.findall(r"`(mmcl[\w.]*)`", packages))
    assert sorted(readme) == list(range(len(LAYERS))), f"README's layers: {sorted(readme)}"
    assert [readme[i] for i in range(len(LAYERS))] == LAYERS, "README's layer table and LAYERS disagree"
    numbers = [int(layer) for layer, _ in rows]
    assert numbers == sorted(numbers), "README's table lists the layers from the bottom up"


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_crossings(module: str, source: str):
    """``(module, name)`` for each underscore name that ``source`` (the text of ``module``) takes from
    another mmcl module: ``from mmcl.x import _name``, or ``x._name`` (``mmcl.x._name``) where ``x``
    is an mmcl module it imported.  A private *module* (``from mmcl import _utils``) is no crossing:
    its public names are its interface."""
    tree = ast.parse(source)
    bound = {}  # local name -> the mmcl module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("mmcl"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if _is_module(sub):
                    bound[alias.asname or alias.name] = sub
                elif _private(alias.name) and node.module != module:
                    found.append((node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("mmcl"):
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain, base = [], node
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in bound):
            continue
        home = bound[base.id]
        for attr in reversed(chain):  # walk down the modules; the first other attribute is the name
            if _is_module(f"{home}.{attr}"):
                home = f"{home}.{attr}"
                continue
            if _private(attr) and home != module:
                found.append((home, attr))
            break
    return sorted(set(found))


def test_private_crossings_are_found():
    """The search itself: a planted import and a planted attribute are found, public names are not."""
    planted = ("from mmcl.dynamics.kernel import _Plant, Contrast\n"
               "from mmcl.proofs import single_stage2 as s2\n"
               "import mmcl.wider.agd\n"
               "s2._hidden(1); mmcl.wider.agd._deep; s2.telescoping_core; s2.ComparatorConfig._private\n"
               "from mmcl import _utils\n")
    assert _private_crossings("mmcl.figures.fake", planted) == [
        ("mmcl.dynamics.kernel", "_Plant"), ("mmcl.proofs.single_stage2", "_hidden"), ("mmcl.wider.agd", "_deep")]
    # a module's own private names are its business
    assert _private_crossings("mmcl.dynamics.kernel", "from mmcl.dynamics.kernel import _x\n") == []


def test_no_module_takes_a_private_name_of_another():
    """A name another module of mmcl uses is part of its home's interface, so it is spelt without the
    leading underscore; an underscore name stays inside the module that defines it."""
    crossings = []
    for module in _modules():
        source = Path(importlib.util.find_spec(module).origin).read_text()
        crossings += [f"{module} takes {name} from {home}" for home, name in _private_crossings(module, source)]
    assert not crossings, "private names used across modules: " + "; ".join(crossings)


#: The longest a library file may be: past it a file holds more than one idea.
MAX_LINES = 500
#: Files over MAX_LINES for now, each with why.
LONG_FILES: dict = {}  # path -> why it may stay long for now (figures/phase_diagrams.py is split)


def _long_files(root: Path, limit: int):
    """``(path relative to root, lines)`` of every .py file under ``root`` longer than ``limit`` lines."""
    out = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text().splitlines())
        if n > limit:
            out.append((path.relative_to(root).as_posix(), n))
    return out


def test_long_files_are_found(tmp_path):
    """The count itself: a planted file one line over the limit is found, one at the limit is not."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * 11)
    (tmp_path / "short.py").write_text("x = 1\n" * 10)
    assert _long_files(tmp_path, 10) == [("pkg/long.py", 11)]


def test_no_library_file_exceeds_the_limit():
    """No .py file of mmcl/ is longer than MAX_LINES lines (one idea per file), apart from LONG_FILES."""
    long = [f"{p} ({n} lines)" for p, n in _long_files(ROOT, MAX_LINES) if p not in LONG_FILES]
    assert not long, f"library files over {MAX_LINES} lines (split them by idea): " + ", ".join(long)
    stale = [p for p in LONG_FILES if p not in {q for q, _ in _long_files(ROOT, MAX_LINES)}]
    assert not stale, f"LONG_FILES lists files that are no longer over {MAX_LINES} lines: {stale}"


def test_every_computing_module_is_in_the_cache_key():
    """A module of the layers below the drawing (layers 0 to 4) decides cached values, so the cache's
    code version hashes it: a new top-level module there must be named in mmcl.cache.COMPUTING."""
    from mmcl.cache import COMPUTING

    drawing = LAYERS.index({"mmcl.figures"})
    missing = sorted(m for m in _modules() if _layer(m) < drawing and m.split(".")[1] not in COMPUTING
                     and f"{m.split('.')[1]}.py" not in COMPUTING)
    assert not missing, f"modules below the drawing that the cache key leaves out (mmcl.cache.COMPUTING): {missing}"
