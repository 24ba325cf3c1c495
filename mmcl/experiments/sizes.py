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

Most chapters run the Figure 1 setting, smaller at ``"tiny"``: :func:`figure1_config` applies a
size's departures from it.

Public: :data:`SIZES`, :func:`check_size`, :func:`pick`, :func:`figure1_config`.
"""
from __future__ import annotations

from typing import Mapping, Optional, TypeVar

from mmcl.model.config import SyntheticConfig

__all__ = ["SIZES", "check_size", "pick", "figure1_config"]

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


def figure1_config(*, n_epochs: Optional[int] = None, d: Optional[int] = None, n_ood: Optional[int] = None,
                   n_heldout: Optional[int] = None) -> SyntheticConfig:
    """The Figure 1 setting (``SyntheticConfig()``: the paper's, plus our ``tau``, ``sigma0``, ``M``)
    with a size's departures: ``n_epochs`` steps, ``d = d~ = d``, ``n_ood`` test and held-out OOD
    samples, or ``n_heldout`` held-out ones.  ``None`` (or 0) keeps the setting's value."""
    changes = {}
    if n_epochs:
        changes["n_epochs"] = n_epochs
    if d:
        changes.update(d=d, d_tilde=d)
    if n_ood:
        changes.update(n_test=n_ood, n_heldout=n_ood)
    if n_heldout:
        changes["n_heldout"] = n_heldout
    return SyntheticConfig().replace(**changes)
