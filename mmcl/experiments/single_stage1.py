"""The experiment of the chapter :ref:`Single-modal learning, stage 1 <sec-single-stage1>`:
its sizes, its configuration and its cached runs.  The drawings are in
:mod:`mmcl.figures.single_stage1`, the diagnostics it computes in :mod:`mmcl.proofs.single_stage1`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`Stage1Sizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`recursion_vs_gd` -- Lemma 5.1 on one draw: the recursion against gradient descent
  (:class:`RecursionCheck`), and :func:`recursion_check`, it on seed 0 in float64;
* :func:`stage1_runs` -- the batched runs that three figures and the chapter share.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict

import torch

from mmcl.dynamics import Trajectory, simulate
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData, sample_synthetic, sample_synthetic_batch
from mmcl.model.decomposition import Decomposition, decompose
from mmcl.proofs import preactivations
from mmcl.proofs import single_stage1 as stage1

__all__ = ["Stage1Sizes", "BY_SIZE", "sizes", "config", "RecursionCheck", "recursion_vs_gd", "recursion_check",
           "stage1_runs", "BDynamicsLines", "b_dynamics_lines"]

_F64 = torch.float64


@dataclass(frozen=True)
class Stage1Sizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) and, for ``"tiny"``, a
    shorter run (``n_epochs`` steps) with fewer OOD samples (``n_ood``), which these runs do not use."""

    seeds: int
    n_epochs: int = 200
    n_ood: int = 0  # 0: the Figure 1 defaults (200 test and 1000 held-out samples)


#: The chapter runs 5 seeds (20 with MMCL_BOOK_FULL=1); "tiny" is for the tests.
BY_SIZE: Dict[str, Stage1Sizes] = {"tiny": Stage1Sizes(seeds=1, n_epochs=60, n_ood=20),
                                   "default": Stage1Sizes(seeds=5), "full": Stage1Sizes(seeds=20)}


def sizes(size: str = "default") -> Stage1Sizes:
    """The :class:`Stage1Sizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The chapter's configuration: the Figure 1 settings (``tiny``: 60 steps instead of 200, and
    20 OOD samples instead of 200 and 1000, which the chapter does not use)."""
    s = sizes(size)
    return figure1_config(n_epochs=s.n_epochs, n_ood=s.n_ood)


@dataclass
class RecursionCheck:
    """Lemma 5.1 checked on one draw (:func:`recursion_vs_gd`): ``gd`` (the ``gd`` engine, weights
    kept at ``steps``), ``rec`` (the ``recursion`` engine, every step), ``dec`` (the least-squares
    decomposition of ``gd``'s ``W(t) - W(0)`` on ``mu``, ``xi_i``), ``steps (K,)`` the steps of
    ``gd``, and the largest differences over them: ``err_gamma``, ``err_rho`` (``dec`` against ``rec``)
    and ``err_loss`` (the two losses, at every step of ``gd``)."""

    gd: Trajectory
    rec: Trajectory
    dec: Decomposition
    steps: torch.Tensor
    err_gamma: float
    err_rho: float
    err_loss: float


def recursion_vs_gd(cfg: SyntheticConfig, data: SyntheticData, *, record_every: int = 10) -> RecursionCheck:
    """Lemma 5.1 (the paper's Eqs. 12 and 13) on one draw: run gradient descent with the closed-form
    update of Eq. (7), keeping its weights every ``record_every`` steps, and the coefficient
    recursion alone; decompose the weights of gradient descent by least squares
    (:func:`mmcl.model.decomposition.decompose`, which knows nothing about the recursion) and compare
    the coefficients and the losses: see :class:`RecursionCheck`.  Use float64 data to see round-off.

    ``data`` is one draw (not a batch) of the single-modal model; ``cfg.n_epochs`` steps are run."""
    check_config(cfg)
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if data.batched:
        raise ValueError("recursion_vs_gd takes one draw, got a batch: pass data[b]")
    gd = simulate(cfg, data, "single", "gd", keep_weights=True, record_every=record_every)
    rec = simulate(cfg, data, "single", "recursion")
    dec = decompose(gd.weights - data.W0, data.mu, data.xi)
    k = gd.steps
    return RecursionCheck(gd=gd, rec=rec, dec=dec, steps=k,
                          err_gamma=float((dec.gamma - rec.gamma[k]).abs().max()),
                          err_rho=float((dec.rho - rec.rho[k]).abs().max()),
                          err_loss=float((gd.loss - rec.loss).abs().max()))


@functools.lru_cache(maxsize=2)
def recursion_check(size: str = "default", device: str = "cpu") -> RecursionCheck:
    """Lemma 5.1 on seed 0 in float64, as the chapter runs it."""
    cfg = config(size)
    data0 = sample_synthetic(cfg, seed=0, dtype=_F64, device=device)
    return recursion_vs_gd(cfg, data0, record_every=10)


@functools.lru_cache(maxsize=2)
def stage1_runs(size: str = "default", device: str = "cpu") -> dict:
    """The chapter's batched runs (cached: three figures share them): the seeds of ``size``, the
    recursion on the Figure 1 data and on its copy without cross terms
    (:func:`~mmcl.proofs.preactivations.without_cross_terms`), and their summaries.  Keys ``data``
    (the float64 draws of the seeds, stacked), ``traj`` (the recursion on them, loss derivatives
    recorded), ``coefficients`` (:func:`~mmcl.proofs.single_stage1.b_coefficients` of ``traj``), ``cfg``,
    ``growth`` (:class:`~mmcl.proofs.single_stage1.NoiseGrowth`), ``reports`` (name ->
    :class:`~mmcl.proofs.single_stage1.SignSetReport`, names as in the chapter) and ``medians``
    (:class:`~mmcl.proofs.single_stage1.CoefficientMedians`)."""
    cfg = config(size)
    data = sample_synthetic_batch(cfg, range(sizes(size).seeds), dtype=_F64).to(device=device)
    traj = simulate(cfg, data, "single", "recursion", record_derivatives=True)
    hist = preactivations.preactivation_history(traj, data, with_augmented=True)
    bc = stage1.b_coefficients(traj, data, cfg, history=hist)
    clean = preactivations.without_cross_terms(data)
    traj_c = simulate(cfg, clean, "single", "recursion", record_derivatives=True)
    reports = {"Figure 1 data": stage1.sign_set_report(traj, data, history=hist),
               "orthogonal noise": stage1.sign_set_report(traj_c, clean)}
    return dict(cfg=cfg, growth=stage1.noise_growth(traj, data, cfg, coefficients=bc), reports=reports,
                medians=stage1.b_coefficient_medians(bc), data=data, traj=traj, coefficients=bc)


@dataclass(frozen=True)
class BDynamicsLines:
    """The reference lines of the figure ``stage1-b-dynamics``: ``self_share``, the self
    coefficient ``a = M/(M+1)`` at uniform loss derivatives
    (:func:`mmcl.proofs.predictions.b_dynamics_prediction`), and Lemma 5.2's ``t1``
    (:func:`mmcl.proofs.predictions.t1_single`)."""

    self_share: float
    t1: float


def b_dynamics_lines(cfg: SyntheticConfig) -> BDynamicsLines:
    """:class:`BDynamicsLines` at ``cfg``."""
    from mmcl.proofs.predictions import b_dynamics_prediction, t1_single

    return BDynamicsLines(self_share=float(b_dynamics_prediction(cfg)[0]), t1=float(t1_single(cfg)))
