"""The experiment of the chapter "The downstream theorems" (``book/07_downstream.md``): its sizes,
its configuration and its cached run.  The drawings are in :mod:`mmcl.figures.downstream`; the
computation is :func:`mmcl.downstream.response.run_downstream` (both modes trained once per seed,
scored on OOD sets whose signal ``nu`` turns away from ``mu``).

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`DownstreamSizes`: the seeds and the angles of ``nu``);
* :func:`config` -- the chapter's configuration (the Figure 1 setting);
* :data:`PAPER`, :data:`TILTED` -- the two directions of ``nu`` the chapter and its figures show;
* :func:`downstream_result` -- the run the chapter and its three figures share.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, Tuple

from mmcl.downstream.response import DownstreamResult, run_downstream
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.config import SyntheticConfig

__all__ = ["PAPER", "TILTED", "DownstreamSizes", "BY_SIZE", "sizes", "config", "downstream_result"]

#: ``cos(nu, mu)`` of the paper's ``nu = 2 e1`` (Sec. 6): ``<nu, mu> = 10``
PAPER = 1.0
#: ``cos(nu, mu)`` of a ``nu`` of the same norm that meets Sec. 3.3's condition:
#: ``<nu, mu> = 0.5 < ||mu||^2/sqrt(d) = 0.56``
TILTED = 0.05


@dataclass(frozen=True)
class DownstreamSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1), the ``angles``
    ``cos(nu, mu)`` of the OOD sets, and, for ``"tiny"``, a smaller problem: ``n_epochs`` steps,
    ``d = d~ = d`` and ``n_heldout`` held-out samples (0: Figure 1's ``d = d~ = 2000`` and 1000)."""

    seeds: int
    angles: Tuple[float, ...]
    n_epochs: int = 200
    d: int = 0
    n_heldout: int = 0


_ANGLES = (PAPER, 0.5, 0.2, TILTED, 0.0)
#: The chapter shows 5 seeds (20 with MMCL_BOOK_FULL=1) at five angles; "tiny" is for the tests.
BY_SIZE: Dict[str, DownstreamSizes] = {
    "tiny": DownstreamSizes(seeds=1, angles=(PAPER, TILTED), n_epochs=20, d=500, n_heldout=200),
    "default": DownstreamSizes(seeds=5, angles=_ANGLES), "full": DownstreamSizes(seeds=20, angles=_ANGLES)}


def sizes(size: str = "default") -> DownstreamSizes:
    """The :class:`DownstreamSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 setting (``nu_cos`` is set per OOD set by the experiment); ``tiny`` trains 20
    epochs in ``d = d~ = 500`` and scores 200 held-out samples."""
    s = sizes(size)
    return figure1_config(n_epochs=s.n_epochs, d=s.d, n_heldout=s.n_heldout)


@functools.lru_cache(maxsize=2)
def downstream_result(size: str = "default", device: str = "cpu") -> DownstreamResult:
    """:func:`mmcl.downstream.response.run_downstream` at :func:`config` with the seeds and angles
    of ``size`` (cached)."""
    s = sizes(size)
    return run_downstream(config(size), range(s.seeds), s.angles, device=device)
