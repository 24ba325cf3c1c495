"""The book's API page, generated from the package: every public module's ``automodule``.

Nothing is listed by hand: :func:`public_modules` walks ``mmcl`` (a module or package whose name,
or a parent's, starts with an underscore is private and stays out), and :func:`api_markdown` writes
one section per top-level package, in the order of the layers (a package after every package it
imports), each module with the ``automodule`` options its ``__all__`` asks for.  The Sphinx
extension (:mod:`mmcl.booksupport.sphinx_ext`) writes it to ``_build/generated/api.md`` before the
sources are read, and ``book/api.md`` includes it, so a new module is on the page at the next
build.

What a module documents (:func:`members`):

* a module without ``__all__``: its docstring only;
* a module with ``__all__``: ``:members:``, the names of its ``__all__`` that carry a docstring
  (autodoc's rule);
* a package whose ``__all__`` re-exports its submodules' names documents only its own, unless its
  docstring says its names are *documented under this package* (a facade, such as
  ``mmcl.experiments.sweep``): then it documents its classes and functions, and its submodules
  leave them out (``:exclude-members:``), so that each is documented once, under the name users
  import.  Constants stay with the module that defines them, where their ``#:`` comment is.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

__all__ = ["public_modules", "members", "api_markdown"]

_FACADE = re.compile(r"documented\s+under\)?\s+this\s+package")


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def public_modules(package: str = "mmcl") -> List[str]:
    """Every public module of ``package`` (the package itself first), in ``pkgutil`` order."""
    pkg = importlib.import_module(package)
    out = [package]
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        if not _is_private(info.name):
            out.append(info.name)
    return out


def _documents_reexports(module) -> bool:
    return hasattr(module, "__path__") and bool(_FACADE.search(module.__doc__ or ""))


def _reexported(module) -> Dict[str, str]:
    """The names of a package's ``__all__`` bound to an object of one of its public submodules'
    ``__all__``: name -> that submodule (a name from a private module is the package's to document)."""
    out = {}
    if not hasattr(module, "__path__"):
        return out
    prefix = module.__name__ + "."
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        owner = getattr(obj, "__module__", None)
        if isinstance(owner, str) and owner.startswith(prefix):
            if not _is_private(owner):
                out[name] = owner
            continue
        for sub, mod in _loaded_submodules(module.__name__):  # constants: where their object is
            if name in getattr(mod, "__all__", ()) and getattr(mod, name, None) is obj:
                out[name] = sub
                break
    return out


def _loaded_submodules(package: str):
    pkg = importlib.import_module(package)
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        if not _is_private(info.name):
            yield info.name, importlib.import_module(info.name)


def members(module_name: str) -> Tuple[Optional[List[str]], List[str]]:
    """What ``module_name``'s ``automodule`` documents: ``(None, [])`` for its docstring only, else
    ``(names, excluded)``: the names of its ``__all__`` it documents and those it leaves to
    another module (module docstring)."""
    module = importlib.import_module(module_name)
    names = list(getattr(module, "__all__", None) or [])
    if not hasattr(module, "__all__"):
        return None, []
    excluded = set()
    if hasattr(module, "__path__") and not _documents_reexports(module):
        excluded |= set(_reexported(module))  # documented in the submodules that define them
    parts = module_name.split(".")
    for i in range(2, len(parts)):  # a facade above documents the classes and functions it re-exports
        above = importlib.import_module(".".join(parts[:i]))
        if not _documents_reexports(above):
            continue
        for name, owner in _reexported(above).items():
            obj = getattr(above, name)
            if (owner == module_name or owner.startswith(module_name + ".")) and name in names \
                    and (inspect.isclass(obj) or inspect.isroutine(obj)):
                excluded.add(name)
    return [n for n in names if n not in excluded], [n for n in names if n in excluded]


def _top_level_order(modules: List[str]) -> List[str]:
    """The top-level packages and modules of ``mmcl`` (``mmcl.model``, ``mmcl.cache``, ...), each
    after every one it imports (the layers), ties in alphabetical order."""
    tops = sorted({".".join(m.split(".")[:2]) for m in modules if m != "mmcl"})
    imports: Dict[str, set] = {t: set() for t in tops}
    for m in modules:
        if m == "mmcl":
            continue
        top = ".".join(m.split(".")[:2])
        spec = importlib.util.find_spec(m)
        for node in ast.walk(ast.parse(Path(spec.origin).read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                other = ".".join(t.split(".")[:2])
                if other in imports and other != top:
                    imports[top].add(other)
    depth: Dict[str, int] = {}

    def level(t: str, seen=()) -> int:
        if t not in depth:
            depth[t] = 1 + max((level(o, seen + (t,)) for o in imports[t] if o not in seen), default=0)
        return depth[t]

    return sorted(tops, key=lambda t: (level(t), t))


def _automodule(module: str) -> List[str]:
    names, excluded = members(module)
    lines = [f".. automodule:: {module}"]
    if names:
        lines.append("   :members:")
        if excluded:
            lines.append(f"   :exclude-members: {', '.join(excluded)}")
    return lines + [""]


def api_markdown(package: str = "mmcl") -> str:
    """The API page's body (MyST markdown): one section per top-level package or module of
    ``package``, in the layers' order, a subsection per subpackage, and an ``automodule`` for every
    public module (:func:`public_modules`), with the options :func:`members` gives."""
    modules = public_modules(package)
    out = []
    for top in _top_level_order(modules):
        group = [m for m in modules if m == top or m.startswith(top + ".")]
        blocks: Dict[str, List[str]] = {}
        for m in group:  # a subpackage's modules under its own heading
            parts = m.split(".")
            key = top
            for i in range(len(parts), 2, -1):
                head = ".".join(parts[:i])
                if head != top and hasattr(importlib.import_module(head), "__path__"):
                    key = head
                    break
            blocks.setdefault(key, []).extend(_automodule(m))
        for key, lines in blocks.items():
            out.append(f"{'##' if key == top else '###'} `{key}`\n")
            out.append("```{eval-rst}\n" + "\n".join(lines).rstrip() + "\n```\n")
    return "\n".join(out)
