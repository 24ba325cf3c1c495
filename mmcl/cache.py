"""A small on-disk cache for expensive, deterministic results (sweeps, ColoredMNIST runs).

Entries are keyed by a hash of ``namespace``, the parameters (anything JSON-serialisable), the
*code version* (a hash of the ``.py`` files of the layers that compute, :data:`COMPUTING`, so
that a change of code that computes invalidates old entries while an edit of a drawing, a caption
or the book's support code keeps them) and the CPU *code path* that computes
(:func:`mmcl.codepath.current`: a run under AVX2 is never served to a process under AVX-512, whose
last digits differ, so re-executing the book under another code path recomputes everything).  The folder is ``$MMCL_CACHE_DIR`` if set, else
``<repo>/_build/cache`` (the checkout holding ``_toc.yml``); ``MMCL_CACHE=0`` disables it.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Callable, TypeVar

from mmcl._utils import repo_root
from mmcl.codepath import current as code_path

__all__ = ["cache_dir", "code_version", "cache_key", "load_or_compute", "cache_enabled", "COMPUTING", "source_hash"]

#: The parts of the package whose code decides a cached value: everything but the drawing
#: (``figures``), the book's support (``booksupport``) and the command line (``commands``, ``cli.py``).
COMPUTING = ("_utils.py", "cache.py", "codepath.py", "fits.py", "__init__.py", "model", "dynamics", "proofs",
             "downstream", "experiments", "wider")

T = TypeVar("T")


def cache_dir() -> Path:
    return Path(os.environ.get("MMCL_CACHE_DIR") or repo_root() / "_build" / "cache")


def cache_enabled() -> bool:
    return os.environ.get("MMCL_CACHE", "1") not in ("0", "false", "False", "")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """:func:`source_hash` of this package, computed once per process."""
    return source_hash(Path(__file__).parent)


def source_hash(root) -> str:
    """sha256 (16 hex digits) of the sources of the computing layers (:data:`COMPUTING`) of the
    package at ``root``."""
    root = Path(root)
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root)
        if rel.parts[0] not in COMPUTING:
            continue
        h.update(str(rel).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_key(namespace: str, params: Any) -> str:
    """Hex key of ``namespace``, ``params`` (JSON-serialisable, keys sorted), the code version and
    the CPU code path."""
    blob = json.dumps({"ns": namespace, "params": params, "code": code_version(), "path": code_path()},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def load_or_compute(namespace: str, params: Any, compute: Callable[[], T]) -> T:
    """Return the cached value for ``(namespace, params)`` or compute, store and return it.

    Values are pickled; writes are atomic, so concurrent runs never see half a file."""
    if not cache_enabled():
        return compute()
    folder = cache_dir() / namespace
    path = folder / f"{cache_key(namespace, params)}.pkl"
    if path.exists():
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError):
            path.unlink(missing_ok=True)  # a corrupt entry is recomputed
    value = compute()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(value, f)
    os.replace(tmp, path)
    return value
