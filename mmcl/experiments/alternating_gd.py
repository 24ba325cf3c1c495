"""The experiment of the chapter :ref:`Alternating gradient descent on the factorisation
<sec-alternating-gd>`: its sizes and its cached runs.  The drawings are in
:mod:`mmcl.figures.alternating_gd`; the computations are those of :mod:`mmcl.wider.agd`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`AGDSizes`: draws, condition numbers, steps, AGD steps on ``P~``);
* :func:`init_curves` -- the two initialisations on rank-5 test matrices
  (:func:`mmcl.wider.agd.runs_on_test_matrices`);
* :func:`condition_result` -- iterations against the condition number
  (:func:`mmcl.wider.agd.condition_scan`);
* :func:`step_result` -- iterations against the step (:func:`mmcl.wider.agd.step_scan`);
* :func:`ptilde_result` -- AGD on the normalised co-occurrence matrices ``P~`` of two worlds of
  :mod:`mmcl.wider.graphs` (:func:`mmcl.wider.agd.excess_trajectory`).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Dict, Tuple

import torch

from mmcl.experiments.sizes import pick
from mmcl.wider import agd
from mmcl.wider import factorisation as fz
from mmcl.wider import graphs

__all__ = ["AGDSizes", "BY_SIZE", "sizes", "init_curves", "condition_result", "step_result", "ptilde_result"]


@dataclass(frozen=True)
class AGDSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) per setting (the step scan
    uses the first 3), the condition numbers ``kappas`` of the scan, the steps ``eta sigma_1`` of
    the step scan (``step_scales``) and the number of AGD steps on ``P~`` (``n_steps``)."""

    seeds: int
    kappas: Tuple[float, ...] = (2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
    step_scales: Tuple[float, ...] = (0.05, 0.1, 0.2, 0.5, 1.0)
    n_steps: int = 150


#: The chapter runs 5 draws (20 with MMCL_BOOK_FULL=1); "tiny" (for the tests) fewer of everything.
BY_SIZE: Dict[str, AGDSizes] = {"tiny": AGDSizes(seeds=2, kappas=(2.0, 4.0), step_scales=(0.5, 1.0), n_steps=40),
                                "default": AGDSizes(seeds=5), "full": AGDSizes(seeds=20)}


def sizes(size: str = "default") -> AGDSizes:
    """The :class:`AGDSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


@functools.lru_cache(maxsize=6)
def init_curves(init: str, size: str = "default", device: str = "cpu") -> list:
    """``sizes(size).seeds`` runs of :func:`mmcl.wider.agd.agd` from ``init`` on rank-5
    ``100 x 100`` test matrices with ``sigma_1/sigma_5 = 10``, width 10, to ``1e-6`` (CPU whatever
    ``device``)."""
    return agd.runs_on_test_matrices(range(sizes(size).seeds), init, m=100, n=100, r=5, d=10, kappa=10.0, tol=1e-6)


@functools.lru_cache(maxsize=3)
def condition_result(size: str = "default", device: str = "cpu") -> agd.ConditionScan:
    """Iterations to ``1e-6`` against ``kappa`` in ``sizes(size).kappas``, ``sizes(size).seeds``
    draws, both inits (:func:`mmcl.wider.agd.condition_scan`, batched on ``device``)."""
    s = sizes(size)
    return agd.condition_scan(s.kappas, range(s.seeds), m=100, n=100, r=5, d=10, tol=1e-6,
                              max_iter=20000, device=device, progress=True)


@functools.lru_cache(maxsize=3)
def step_result(size: str = "default", device: str = "cpu") -> agd.StepScan:
    """Iterations to ``1e-6`` at ``kappa = 8`` against the steps ``sizes(size).step_scales / sigma_1``,
    the first three seeds (:func:`mmcl.wider.agd.step_scan` on ``device``)."""
    s = sizes(size)
    return agd.step_scan(s.step_scales, list(range(s.seeds))[:3], kappa=8.0, max_iter=20000, device=device)


@functools.lru_cache(maxsize=3)
def ptilde_result(size: str = "default", device: str = "cpu") -> dict:
    """AGD on ``P~`` of two worlds (CPU): the default :class:`mmcl.wider.graphs.JointConfig` and one
    with Dirichlet concentration 0.3, seed 0, width ``k = C``, ``sizes(size).n_steps`` steps from
    both inits.

    Returns a dict: ``worlds`` (name -> config), ``problems`` (name -> ``(P~, s)``, ``s`` its
    singular values), ``traj`` ((name, init) -> :func:`mmcl.wider.agd.excess_trajectory`),
    ``n_steps``."""
    worlds = {"default world": graphs.JointConfig(),
              "concentration 0.3": dataclasses.replace(graphs.JointConfig(), concentration=0.3)}
    n_steps = sizes(size).n_steps
    traj, problems = {}, {}
    for wname, wcfg in worlds.items():
        Pt = fz.normalised_cooccurrence(graphs.sample_joint(wcfg, seed=0).P)
        _, s, _ = torch.linalg.svd(Pt, full_matrices=False)
        problems[wname] = (Pt, s)
        for init in agd.INITS:
            traj[wname, init] = agd.excess_trajectory(Pt, wcfg.n_classes, init, n_steps, seed=0)
    return dict(worlds=worlds, problems=problems, traj=traj, n_steps=n_steps)
