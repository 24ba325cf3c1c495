"""The experiment of the chapter :ref:`Inside the theorems' regime <sec-theorems-regime>`: its
sizes, its two scalings and its cached runs.  The computations are those of the package
(:mod:`mmcl.experiments.theorems_regime`); the drawings are in :mod:`mmcl.figures.theorems_regime`.

* :func:`~mmcl.experiments.theorems_regime.sizes` -- what each size of
  :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`~mmcl.experiments.theorems_regime.RegimeSizes`, one per size in
  ``BY_SIZE``);
* ``SCALING`` and
  ``CONTROL_SCALING`` -- the chapter's scaling and the
  control's, with ``d`` raised to what Lemma B.2 asks;
* :func:`~mmcl.experiments.theorems_regime.regime_conditions` -- Assumption 4.1 at the sweep's
  sizes; :func:`~mmcl.experiments.theorems_regime.regime_sweep`,
  :func:`~mmcl.experiments.theorems_regime.regime_control` and
  :func:`~mmcl.experiments.theorems_regime.regime_verdicts` -- the sweep over ``n``, the control
  and the stage chapters' verdicts, each computed once per ``(size, device)``.

Public: every name in ``__all__``, importable from (and documented under) :mod:`mmcl.experiments.theorems_regime`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Dict, Mapping, Tuple

from mmcl.experiments.sizes import pick
from mmcl.experiments.theorems_regime.scalings import RegimeScaling, conditions_by_n
from mmcl.experiments.theorems_regime.sweep import RegimeSweep, run_regime_sweep
from mmcl.experiments.theorems_regime.verdicts import SizeVerdicts, revisit_verdicts

__all__ = ["RegimeSizes", "BY_SIZE", "sizes", "SCALING", "CONTROL_SCALING", "regime_conditions", "regime_sweep",
           "regime_control", "regime_verdicts"]

#: The chapter's scaling, ``d = n^2 log(6 n^2/delta)``
#: (see :class:`~mmcl.experiments.theorems_regime.RegimeScaling`).
SCALING = RegimeScaling()
#: The control's scaling, with ``d`` raised to what Lemma B.2 asks (``d_rule="b2"``).
CONTROL_SCALING = RegimeScaling(d_rule="b2")


@dataclass(frozen=True)
class RegimeSizes:
    """What a size means for this chapter: the seeds at each ``n`` of the sweep (``sweep_seeds``,
    ``n -> seeds``; its sizes are the sweep's ``n``), of the verdicts of the stage chapters (the
    proof walk, :ref:`sec-single-stage1` to :ref:`sec-multimodal`; ``verdict_seeds``: every-step
    runs with loss derivatives) and of the control at Lemma B.2's dimension (``control_seeds``:
    span draws take it up to ``n = 316``), the ``n`` at which the comparator chain of the chapter
    :ref:`sec-single-stage2` is evaluated (``chain_sizes``: its memory is ``O(T n^2 m)`` a seed) and
    the steps every run takes (``n_epochs``: the scaling's 200, but 150 at ``"tiny"``, past the
    formula ``T1`` at its ``n``, 133 at ``n = 20``, as the verdicts need)."""

    sweep_seeds: Mapping[int, int]
    verdict_seeds: Mapping[int, int]
    chain_sizes: Tuple[int, ...]
    control_seeds: Mapping[int, int]
    n_epochs: int = 200


#: The chapter's sizes: fewer seeds at the largest ``n``, where a run costs most; "tiny" is for the tests.
BY_SIZE: Dict[str, RegimeSizes] = {
    "tiny": RegimeSizes(sweep_seeds={20: 2, 40: 2, 60: 2}, verdict_seeds={20: 1, 40: 1}, chain_sizes=(20,),
                        control_seeds={20: 1, 40: 1}, n_epochs=150),
    "default": RegimeSizes(sweep_seeds={100: 10, 178: 10, 316: 10, 562: 4, 1000: 2},
                           verdict_seeds={100: 3, 178: 3, 316: 3}, chain_sizes=(100, 178),
                           control_seeds={100: 3, 316: 3}),
    "full": RegimeSizes(sweep_seeds={100: 20, 178: 20, 316: 20, 562: 20, 1000: 10, 1778: 5, 3162: 3},
                        verdict_seeds={100: 10, 178: 10, 316: 5, 562: 3, 1000: 2}, chain_sizes=(100, 178, 316),
                        control_seeds={100: 10, 178: 10, 316: 10}),
}


def sizes(size: str = "default") -> RegimeSizes:
    """The :class:`RegimeSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def _scaling(size: str, base: RegimeScaling) -> RegimeScaling:
    n_epochs = sizes(size).n_epochs
    return replace(base, n_epochs=n_epochs) if n_epochs != base.n_epochs else base


@functools.lru_cache(maxsize=3)
def regime_sweep(size: str = "default", device: str = "cpu") -> RegimeSweep:
    """The chapter's sweep over ``n`` at ``SCALING`` with the ``sweep_seeds`` of :func:`sizes`
    (:func:`run_regime_sweep`, cached)."""
    seeds = sizes(size).sweep_seeds
    return run_regime_sweep(sorted(seeds), seeds, _scaling(size, SCALING), device=device)


@functools.lru_cache(maxsize=3)
def regime_control(size: str = "default", device: str = "cpu") -> RegimeSweep:
    """The same sweep at ``CONTROL_SCALING`` (``d`` as Lemma B.2 asks) with the
    ``control_seeds`` of :func:`sizes` (cached)."""
    seeds = sizes(size).control_seeds
    return run_regime_sweep(sorted(seeds), seeds, _scaling(size, CONTROL_SCALING), device=device)


@functools.lru_cache(maxsize=3)
def regime_verdicts(size: str = "default", device: str = "cpu") -> Dict[int, SizeVerdicts]:
    """The proof walk's verdicts (chapters 03-05, :func:`revisit_verdicts`) with the ``verdict_seeds`` of
    :func:`sizes`, the comparator chain at its ``chain_sizes`` (cached)."""
    s = sizes(size)
    seeds = s.verdict_seeds
    return revisit_verdicts(sorted(seeds), seeds, _scaling(size, SCALING), chain_sizes=s.chain_sizes, device=device)


def regime_conditions(size: str = "default") -> dict:
    """:func:`conditions_by_n` at the sweep's sizes (``delta = 0.1``)."""
    return conditions_by_n(sorted(sizes(size).sweep_seeds), _scaling(size, SCALING))
