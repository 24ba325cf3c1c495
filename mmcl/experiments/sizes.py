"""The sizes every chapter's experiment runs at, named once.

``"tiny"`` (seconds: the tests compute and draw every figure so), ``"default"`` (what the book
runs on a CPU) and ``"full"`` (what ``MMCL_BOOK_FULL=1`` runs, meant for a GPU).  A chapter's
experiment module (``mmcl.experiments.<chapter>``) describes what a size means for it with a small
frozen dataclass, one instance per size in a dict ``BY_SIZE``, and reads it with :func:`pick`::

    @dataclass(frozen=True)
    class Stage1Sizes:
        seeds: int                 # draws, 0..seeds-1
        n_epochs: int = 200        # steps of gradient descent

    BY_SIZE = {"tiny": Stage1Sizes(1, 60), "default": Stage1Sizes(5), "full": Stage1Sizes(20)}

    def sizes(size: str = "default") -> Stage1Sizes:
        return pick(BY_SIZE, size)

Public: :data:`SIZES`, :func:`check_size`, :func:`pick`.
"""
from __future__ import annotations

from typing import Mapping, TypeVar

__all__ = ["SIZES", "check_size", "pick"]

#: The sizes a chapter's experiment (and so each figure) can run at.
SIZES = ("tiny", "default", "full")

T = TypeVar("T")


def check_size(size) -> str:
    """``size`` if it is one of :data:`SIZES`, else a ValueError naming the valid ones."""
    if size not in SIZES:
        raise ValueError(f"size={size!r} is unknown; valid: {', '.join(map(repr, SIZES))}")
    return size


def pick(by_size: Mapping[str, T], size: str) -> T:
    """The entry of ``by_size`` (a dict with exactly the keys of :data:`SIZES`) for ``size``."""
    check_size(size)
    if set(by_size) != set(SIZES):
        raise ValueError(f"by_size must have exactly the keys {SIZES}, got {tuple(by_size)}")
    return by_size[size]
