"""The experiment of the chapter :ref:`Side by side <sec-side-by-side>`: Figure 1 with error
bars, its sensitivity to the constants the paper leaves unstated, and to the downstream protocol.
Its sizes, its configuration and its cached runs; a thin module over :mod:`mmcl.experiments.figure1`
(:func:`~mmcl.experiments.figure1.run_figure1`, :func:`~mmcl.experiments.figure1.sensitivity_sweep`,
:func:`~mmcl.experiments.figure1.compare_protocols`), which computes.  The drawings are in
:mod:`mmcl.figures.side_by_side` (Figure 1 itself in :func:`mmcl.figures.figure1.draw_figure1`).

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`SideBySideSizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 setting);
* :func:`figure1_result` -- Figure 1's runs, OOD accuracy every :data:`EVAL_EVERY` steps;
* :func:`sensitivity_result` -- ``tau``, ``sigma0`` and ``M`` varied one at a time (:class:`Sensitivity`);
* :func:`protocols_result` -- the downstream protocol variants on the final features.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List, Tuple

import torch

from mmcl.experiments.figure1 import (Figure1Result, ProtocolComparison, compare_protocols, run_figure1,
                                      sensitivity_sweep)
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.config import SyntheticConfig

__all__ = ["SideBySideSizes", "BY_SIZE", "sizes", "config", "EVAL_EVERY", "figure1_result", "Sensitivity",
           "sensitivity_result", "protocols_result"]

#: Figure 1's OOD accuracy is scored every 20 steps
EVAL_EVERY = 20


@dataclass(frozen=True)
class SideBySideSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) of Figure 1 and of the
    protocol comparison; ``sweep_seeds`` draws of each one-constant-at-a-time variation, over the
    values ``sweep_grid`` (``(name, values)`` pairs, in order; :attr:`grid` is the same as a dict);
    and, for ``"tiny"``, a smaller problem: ``n_epochs`` steps, ``d = d~ = d`` and ``n_heldout``
    held-out samples (0: Figure 1's ``d = d~ = 2000`` and 1000)."""

    seeds: int
    sweep_seeds: int
    sweep_grid: Tuple[Tuple[str, Tuple], ...]
    n_epochs: int = 200
    d: int = 0
    n_heldout: int = 0

    @property
    def grid(self) -> Dict[str, list]:
        """The values of each unstated constant, name -> list (a new dict each time)."""
        return {name: list(values) for name, values in self.sweep_grid}


# the values of each unstated constant (the same at the default and full sizes)
_GRID = (("tau", (0.03, 0.1, 0.3, 1.0)), ("sigma0", (0.001, 0.003, 0.01, 0.03, 0.1)), ("M", (5, 20, 45)))
#: The sizes. Figure 1 and the protocol comparison use 5 seeds (20 with MMCL_BOOK_FULL=1); each variation of a
#: constant: 3 seeds (10 with MMCL_BOOK_FULL=1); "tiny" is for the tests.
BY_SIZE: Dict[str, SideBySideSizes] = {
    "tiny": SideBySideSizes(seeds=2, sweep_seeds=2,
                            sweep_grid=(("tau", (0.1, 1.0)), ("sigma0", (0.001, 0.1)), ("M", (5, 45))),
                            n_epochs=20, d=500, n_heldout=200),
    "default": SideBySideSizes(seeds=5, sweep_seeds=3, sweep_grid=_GRID),
    "full": SideBySideSizes(seeds=20, sweep_seeds=10, sweep_grid=_GRID)}


def sizes(size: str = "default") -> SideBySideSizes:
    """The :class:`SideBySideSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 setting (the paper's, plus our ``tau``, ``sigma0``, ``M``);
    ``tiny`` (for the tests) trains 20 epochs instead of 200 in ``d = d~ = 500`` and scores on 200
    held-out samples instead of 1000."""
    s = sizes(size)
    return figure1_config(n_epochs=s.n_epochs, d=s.d, n_heldout=s.n_heldout)


@functools.lru_cache(maxsize=2)
def figure1_result(size: str = "default", device: str = "cpu") -> Figure1Result:
    """Figure 1's runs with the seeds of ``size``, OOD accuracy every :data:`EVAL_EVERY` steps (cached)."""
    return run_figure1(config(size), seeds=range(sizes(size).seeds), device=device, eval_every=EVAL_EVERY)


@dataclass
class Sensitivity:
    """One sensitivity sweep: the ``base`` configuration, the ``seeds``, the ``grid`` (name ->
    values) and ``sweep``, name -> mode -> metric -> ``(values, seeds)`` tensor
    (:func:`mmcl.experiments.figure1.sensitivity_sweep`)."""

    base: SyntheticConfig
    seeds: List[int]
    grid: Dict[str, list]
    sweep: Dict[str, Dict[str, Dict[str, torch.Tensor]]]

    def table(self) -> str:
        """One line per varied value: the final loss and the OOD accuracy under both protocols
        (``adapt``, ``transfer``), single- against multi-modal, each the mean over the seeds."""
        lines = [f"{'':<13}{'loss single':>12}{'multi':>7} | {'adapt single':>12}{'multi':>6}"
                 f" | {'transfer single':>15}{'multi':>6}"]
        for name, values in self.grid.items():
            s_, m_ = self.sweep[name]["single"], self.sweep[name]["multi"]
            for k, v in enumerate(values):
                lines.append(f"{f'{name}={v}':<13}{s_['loss'][k].mean():>12.3f}{m_['loss'][k].mean():>7.3f}"
                             f" | {s_['adapt'][k].mean():>12.2f}{m_['adapt'][k].mean():>6.2f}"
                             f" | {s_['transfer'][k].mean():>15.2f}{m_['transfer'][k].mean():>6.2f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


@functools.lru_cache(maxsize=2)
def sensitivity_result(size: str = "default", device: str = "cpu") -> Sensitivity:
    """``tau``, ``sigma0`` and ``M`` varied one at a time around :func:`config` (the
    ``grid`` and ``sweep_seeds`` of :func:`sizes`), both modes, final step only (cached)."""
    s = sizes(size)
    base, seeds, grid = config(size), list(range(s.sweep_seeds)), s.grid
    return Sensitivity(base=base, seeds=seeds, grid=grid,
                       sweep=sensitivity_sweep(grid, seeds, base=base, device=device))


@functools.lru_cache(maxsize=2)
def protocols_result(size: str = "default", device: str = "cpu") -> ProtocolComparison:
    """The downstream protocol variants on the final features of the seeds of Figure 1
    (:func:`mmcl.experiments.figure1.compare_protocols`, cached)."""
    return compare_protocols(config(size), range(sizes(size).seeds), device=device)
