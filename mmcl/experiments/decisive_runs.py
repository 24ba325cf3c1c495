"""The experiment of the chapter "The decisive runs" (``book/13_decisive_runs.md``): its sizes and
its cached runs.  The computations are those of :mod:`mmcl.experiments.theorems_regime.decisive`
(re-exported by :mod:`mmcl.experiments.theorems_regime`); the drawings are in
:mod:`mmcl.figures.decisive_runs`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`DecisiveSizes`, one per size in ``BY_SIZE``);
* :func:`decisive_sweep` -- :func:`~mmcl.experiments.theorems_regime.run_decisive_sweep` at the
  size's ``n`` and seeds, cached per ``(size, device)``;
* :func:`decisive_chains_by_n` -- :func:`~mmcl.experiments.theorems_regime.decisive_chains` at the
  size's ``chain_sizes`` (cached);
* :func:`decisive_point` -- one seed at the size's decisive ``n`` (``9,224`` at the default size,
  multi-modal), cached;
* :func:`premises_by_n` -- the failing premises at the sweep's ``n`` and at the decisive ones
  (``N_DECISIVE`` and ``10^4``, evaluated only).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List, Mapping, Tuple

from mmcl.experiments.sizes import pick
from mmcl.experiments.theorems_regime import (N_DECISIVE, DecisiveChains, DecisiveRun, DecisiveSweep,
                                              decisive_chains, decisive_conditions, decisive_config, run_decisive,
                                              run_decisive_sweep)

__all__ = ["DecisiveSizes", "BY_SIZE", "sizes", "decisive_sweep", "decisive_chains_by_n", "decisive_point",
           "premises_by_n",
           "PREMISE_SIZES"]

#: The ``n`` at which the premises are evaluated besides the sweep's: the first at which 4a holds and 10^4.
PREMISE_SIZES = (N_DECISIVE, 10000)


@dataclass(frozen=True)
class DecisiveSizes:
    """What a size means for this chapter: the seeds at each ``n`` of the sweep (``sweep_seeds``,
    ``n -> seeds``), the ``n`` at which App. C.2/D.2 are re-taken on every-step runs
    (``chain_sizes``, memory ``O(T n^2 M)``) and their seeds (``chain_seeds``), and the decisive
    point: one seed at ``point_n`` in ``point_modes`` (``point_n = 0``: the sweep's largest ``n``)."""

    sweep_seeds: Mapping[int, int]
    chain_sizes: Tuple[int, ...]
    chain_seeds: int
    point_n: int = 0
    point_modes: Tuple[str, ...] = ()


#: The chapter's sizes.  ``default``: the sweep stops at ``n = 1000`` (about 35 s of CPU), and the
#: decisive point is one multi-modal seed at ``n = 9,224``, the first ``n`` where every premise of
#: Theorem 4.3 (2) a computation can reach holds (about 4.5 minutes of CPU in float32 on one thread);
#: ``full`` adds ``n = 9,224`` and ``10^4`` to the sweep, both modes.
BY_SIZE: Dict[str, DecisiveSizes] = {
    "tiny": DecisiveSizes(sweep_seeds={40: 2, 60: 2}, chain_sizes=(40,), chain_seeds=1, point_n=80,
                          point_modes=("multi",)),
    "default": DecisiveSizes(sweep_seeds={100: 6, 178: 6, 316: 4, 562: 3, 1000: 2}, chain_sizes=(100,),
                             chain_seeds=2, point_n=N_DECISIVE, point_modes=("multi",)),
    "full": DecisiveSizes(sweep_seeds={100: 10, 316: 10, 1000: 5, 3162: 3, N_DECISIVE: 1, 10000: 2},
                          chain_sizes=(100, 200), chain_seeds=3),
}


def sizes(size: str = "default") -> DecisiveSizes:
    """The :class:`DecisiveSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


@functools.lru_cache(maxsize=3)
def decisive_sweep(size: str = "default", device: str = "cpu") -> DecisiveSweep:
    """The decisive runs at the ``sweep_seeds`` of :func:`sizes` (cached)."""
    return run_decisive_sweep(dict(sizes(size).sweep_seeds), device=device)


@functools.lru_cache(maxsize=3)
def decisive_chains_by_n(size: str = "default", device: str = "cpu") -> Dict[int, DecisiveChains]:
    """App. C.2/D.2 at the ``chain_sizes`` of :func:`sizes` (cached)."""
    s = sizes(size)
    return {n: decisive_chains(n, s.chain_seeds, device=device) for n in s.chain_sizes}


@functools.lru_cache(maxsize=3)
def decisive_point(size: str = "default", device: str = "cpu") -> DecisiveRun:
    """The decisive point of :func:`sizes`: one seed at ``point_n`` in ``point_modes`` (cached), or,
    where ``point_n`` is 0, the sweep's run at its largest ``n``."""
    s = sizes(size)
    if not s.point_n:
        sweep = decisive_sweep(size, device)
        return sweep.by_n[sweep.sizes[-1]]
    return run_decisive(s.point_n, 1, device=device, modes=s.point_modes)


def premises_by_n(size: str = "default") -> Dict[int, List[str]]:
    """The keys of the failing premises (:func:`~mmcl.experiments.theorems_regime.decisive_conditions`)
    at every ``n`` of the sweep and at :data:`PREMISE_SIZES`."""
    ns = sorted(set(sizes(size).sweep_seeds) | set(PREMISE_SIZES))
    return {n: [c.key for c in decisive_conditions(decisive_config(n)) if not c.holds] for n in ns}
