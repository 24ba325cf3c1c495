"""The experiment of the chapter :ref:`Single-modal learning, stage 2 <sec-single-stage2>`:
its sizes, its configuration and its cached runs.  The drawings are in
:mod:`mmcl.figures.single_stage2`; the diagnostics it computes are those of
:mod:`mmcl.proofs.single_stage2` (the comparator chain of App. C.2, the scale gap of Theorem 4.2)
and :mod:`mmcl.downstream.evaluation`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`Stage2Sizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`stage2_run` -- the single-modal recursion on the chapter's seeds, every step recorded
  (:class:`Stage2Run`);
* :func:`comparator_chain` -- App. C.2's chain on that run, with target :data:`EPSILON`;
* :func:`scale_gap_sweep` -- the end of training against ``n`` (:class:`ScaleGapSweep`), for any
  configuration, values of ``n`` and seeds; :func:`n_sweep` runs it at the chapter's sizes;
* :func:`downstream` -- the downstream error of both networks on the run's draws
  (:class:`Stage2Downstream`);
* :func:`chain_summary` -- the comparator chain's verdict link by link, in numbers that print
  themselves (:class:`ChainSummary`);
* :func:`variants` -- App. C.2's links 1 and 3 at other values of our unstated constants (tau,
  sigma0, M), on :data:`VARIANTS` (:class:`Stage2Variant`).

The run functions are cached per ``(size, device)``: the chapter and its four figures share them.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Dict, List, Tuple

import torch

from mmcl.dynamics import Trajectory, simulate
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.proofs import scales
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic_batch
from mmcl.proofs import single_stage2 as cv
from mmcl.proofs.predictions import t1_single

__all__ = ["Stage2Sizes", "BY_SIZE", "sizes", "config", "EPSILON", "Stage2Run", "stage2_run", "comparator_chain",
           "ScaleGapSweep", "scale_gap_sweep", "n_sweep", "Stage2Downstream", "downstream", "VARIANTS",
           "Stage2Variant", "variants", "ChainSummary", "chain_summary", "scale_gap_result"]


@dataclass(frozen=True)
class Stage2Sizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) of the main run, the values
    ``sweep_n`` of ``n`` of the sweep over ``n`` with ``sweep_seeds`` draws at each, and, for
    ``"tiny"``, a shorter run (``n_epochs`` steps)."""

    seeds: int
    sweep_n: Tuple[int, ...]
    sweep_seeds: int
    n_epochs: int = 200
    variant_seeds: int = 2


#: The chapter runs 5 seeds and n = 50, 100, 200 with 2 seeds each (20 seeds, and n up to 800 with 5
#: seeds, with MMCL_BOOK_FULL=1), and the :data:`VARIANTS` on 2 seeds (5); "tiny" (for the tests)
#: also stops after 150 steps (stage 2 starts at T1 = 101) and runs the variants on one seed.
BY_SIZE: Dict[str, Stage2Sizes] = {
    "tiny": Stage2Sizes(seeds=1, sweep_n=(20, 40), sweep_seeds=1, n_epochs=150, variant_seeds=1),
    "default": Stage2Sizes(seeds=5, sweep_n=(50, 100, 200), sweep_seeds=2, variant_seeds=2),
    "full": Stage2Sizes(seeds=20, sweep_n=(50, 100, 200, 400, 800), sweep_seeds=5, variant_seeds=5),
}

#: the target loss of the comparator (the chapter's ``ComparatorConfig(epsilon=0.05)``)
EPSILON = 0.05


def sizes(size: str = "default") -> Stage2Sizes:
    """The :class:`Stage2Sizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The chapter's configuration: the Figure 1 settings (tau = 0.1, sigma0 = 0.01, M = 45 are
    ours); ``tiny`` stops after 150 steps instead of 200."""
    return figure1_config(n_epochs=sizes(size).n_epochs)


@dataclass
class Stage2Run:
    """The chapter's main run: ``cfg`` (the Figure 1 settings), the ``seeds``, their stacked ``data``
    (float64), the single-modal recursion ``traj`` with every step recorded, ``t1`` (Lemma 5.2's
    ``T1``, rounded up: stage 2 starts there) and ``T`` (the number of steps)."""

    cfg: SyntheticConfig
    seeds: List[int]
    data: SyntheticData
    traj: Trajectory
    t1: int
    T: int


@functools.lru_cache(maxsize=2)
def stage2_run(size: str = "default", device: str = "cpu") -> Stage2Run:
    """The single-modal run of :func:`config` at the seeds of ``size`` (cached)."""
    cfg = config(size)
    seeds = list(range(sizes(size).seeds))
    f64 = torch.float64
    data = sample_synthetic_batch(cfg, seeds, dtype=f64).to(device=device)
    traj = simulate(cfg, data, "single", "recursion")  # every step recorded: the one-step lemmas need it
    return Stage2Run(cfg=cfg, seeds=seeds, data=data, traj=traj, t1=math.ceil(t1_single(cfg)), T=cfg.n_epochs)


@functools.lru_cache(maxsize=2)
def comparator_chain(size: str = "default", device: str = "cpu") -> cv.ComparatorChain:
    """:func:`mmcl.proofs.single_stage2.comparator_chain` of :func:`stage2_run` with target
    :data:`EPSILON` (cached)."""
    r = stage2_run(size, device)
    return cv.comparator_chain(r.traj, r.data, r.cfg, cv.ComparatorConfig(epsilon=EPSILON), r.t1)


@dataclass(frozen=True)
class ChainSummary:
    """App. C.2's chain along a run, link by link (:func:`chain_summary`), over every seed and
    every step of ``[T1, T]``: ``level`` ``L = log(2M/eps)`` and ``lam`` the paper's ``lambda =
    2 tau L``; ``dist_sq`` the range of ``||W(T1) - W*||_F^2`` and ``horizon`` that of Lemma
    C.18's ``T - T1``; link 1: ``pos_ratio`` the range of ``<grad F_0, W*>/(2L)`` and ``pos_held``
    the share of ``(i, t)`` with it ``>= 1``, ``activation`` the range of the average activation
    behind it, ``neg_max`` the largest ``<grad F_j, W*>/L`` and ``neg_held`` the share ``<= 1``,
    ``feasible16`` the lambdas meeting both; link 2: ``c14_eta`` the largest ``eta ||grad L||^2 /
    L`` and ``c14`` the largest ``||grad L||^2 / L``; link 3: ``slack_held`` the share of steps at
    which it holds with the paper's lambda, ``feasible17`` the lambdas meeting it and ``factor``
    the factor (in ``lambda = factor tau L``) they start at; Lemma C.18: ``avg_held`` whether the
    averaged bound holds everywhere, ``avg_loss`` the largest average loss and ``avg_bound`` the
    smallest bound at ``T``."""

    epsilon: float
    level: float
    lam: float
    dist_sq: Tuple[float, float]
    horizon: Tuple[float, float]
    pos_ratio: Tuple[float, float]
    pos_held: float
    activation: Tuple[float, float]
    neg_max: float
    neg_held: float
    feasible16: Tuple[float, float]
    c14_eta: float
    c14: float
    slack_held: float
    feasible17: Tuple[float, float]
    factor: float
    avg_held: bool
    avg_loss: float
    avg_bound: float

    def __str__(self) -> str:
        lo16, hi16 = self.feasible16
        lo17, hi17 = self.feasible17
        empty = "empty" if lo16 > hi16 else "non-empty"
        return "\n".join([
            f"epsilon = {self.epsilon}, L = log(2M/eps) = {self.level:.2f}, "
            f"lambda = 2 tau L = {self.lam:.3f}",
            f"||W(T1) - W*||_F^2 = {self.dist_sq[0]:.2f} .. {self.dist_sq[1]:.2f}",
            f"   Lemma C.18's horizon T - T1 = {self.horizon[0]:.0f} .. "
            f"{self.horizon[1]:.0f} steps",
            f"link 1, positive: <grad F_0, W*>/(2L) = {self.pos_ratio[0]:.2f} .. "
            f"{self.pos_ratio[1]:.2f}; holds for {self.pos_held:.1%} of (i, t)",
            f"   average activation behind it: {self.activation[0]:.2f} .. "
            f"{self.activation[1]:.2f} (the proof needs >= 2)",
            f"link 1, negatives: <grad F_j, W*>/L up to {self.neg_max:.2f}; "
            f"holds for {self.neg_held:.1%} of (i, j, t)",
            f"   lambdas meeting link 1: [{lo16:.2f}, {hi16:.2f}] ({empty})",
            f"link 2: eta ||grad L||^2 / L <= {self.c14_eta:.3f} (the proof needs <= 1); "
            f"||grad L||^2 / L <= {self.c14:.2f}",
            f"link 3 with the paper's lambda: holds at {self.slack_held:.0%} of the steps",
            f"   lambdas meeting link 3: [{lo17:.2f}, {hi17}]",
            f"   a factor >= {self.factor:.2f} instead of 2 in lambda = factor tau L",
            f"Lemma C.18's averaged bound holds everywhere: {self.avg_held}",
            f"   at T the average loss is {self.avg_loss:.4f}, the bound {self.avg_bound:.2f}",
        ])


def chain_summary(chain: cv.ComparatorChain, cfg: SyntheticConfig) -> ChainSummary:
    """The :class:`ChainSummary` of ``chain`` (:func:`mmcl.proofs.single_stage2.comparator_chain`
    of a run at ``cfg``) on ``[T1, T]``: what the chapter prints of App. C.2's chain."""
    if not isinstance(chain, cv.ComparatorChain):
        raise ValueError(f"chain must be a ComparatorChain (mmcl.proofs.single_stage2.comparator_chain), "
                         f"got {type(chain).__name__}")
    t1, tel = chain.t1, chain.telescoping
    pos, act, neg = chain.pos_ratio[:, t1:], chain.act_pos[:, t1:], chain.neg_ratio[:, t1:]
    dist = tel.distance_sq[:, t1]
    (lo16, hi16), (lo17, hi17) = chain.feasible16, chain.feasible17
    return ChainSummary(
        epsilon=chain.epsilon, level=chain.level, lam=tel.lam,
        dist_sq=(float(dist.min()), float(dist.max())),
        horizon=(float(min(chain.horizon)), float(max(chain.horizon))),
        pos_ratio=(float(pos.min()), float(pos.max())), pos_held=float((pos >= 1).double().mean()),
        activation=(float(act.min()), float(act.max())),
        neg_max=float(neg.max()), neg_held=float((neg <= 1).double().mean()),
        feasible16=(float(lo16), float(hi16)),
        c14_eta=float(chain.c14.max()), c14=float(tel.c14_ratio().max()),
        slack_held=float((chain.slack[:, t1:] >= 0).double().mean()),
        feasible17=(float(lo17), float(hi17)), factor=float(lo17 / (cfg.tau * chain.level)),
        avg_held=bool((chain.avg_loss <= chain.avg_bound).all()),
        avg_loss=float(chain.avg_loss[:, -1].max()), avg_bound=float(chain.avg_bound[:, -1].min()))


# --------------------------------------------------------------------------------------------
# Theorem 4.2's scaling: the end of training against n
# --------------------------------------------------------------------------------------------
@dataclass
class ScaleGapSweep:
    """End of training against ``n`` (:func:`scale_gap_sweep`): ``sizes``; ``by_n[n]`` a dict of
    CPU tensors over the seeds, ``gamma`` (``max_r |gamma_r(T)|``), ``rho`` (``min_i max_r
    rho_{r,i}(T)``), ``loss`` (``L_S(W(T))``), and the floats ``snr2n`` (``n SNR^2``) and
    ``init_noise`` (``sigma0 sigma_xi sqrt(d)``); ``gamma_mean (len(sizes),)`` the seed means of
    ``gamma`` and ``slope`` the least-squares slope of ``log gamma_mean`` against ``log n``
    (``O~(1/sqrt(n))`` would be ``-0.5``)."""

    sizes: tuple
    by_n: dict
    gamma_mean: torch.Tensor
    slope: float


def scale_gap_sweep(cfg: SyntheticConfig, sizes, seeds, *, device="cpu") -> ScaleGapSweep:
    """Single-modal recursion runs (float64, ``cfg.n_epochs`` steps, first and last states) at every
    ``n`` of ``sizes`` with :func:`~mmcl.proofs.scales.scaled_config`, one per seed: is the
    signal ``O~(1/sqrt(n))`` at the end of training while every sample stays memorised (Theorem
    4.2)?  (``sizes`` here are values of ``n``, not the sizes of :func:`n_sweep`.)"""
    sizes = tuple(sizes)
    seeds = list(seeds)
    if len(sizes) < 2 or not seeds:
        raise ValueError(f"sizes needs at least two values of n and seeds at least one seed, got {sizes!r}, {seeds!r}")
    f64 = torch.float64
    T = cfg.n_epochs
    by_n = {}
    for n in sizes:
        c = scales.scaled_config(cfg, n)
        dd = sample_synthetic_batch(c, seeds, dtype=f64, with_ood=False)
        tr = simulate(c, dd.to(device=device), "single", "recursion", record_every=T)
        by_n[n] = dict(gamma=tr.gamma.abs().amax(-1)[:, -1].cpu(), rho=tr.rho.amax(-2).amin(-1)[:, -1].cpu(),
                       loss=tr.loss[:, -1].cpu(), snr2n=c.n_snr2, init_noise=c.init_noise)
    ns = torch.tensor(sizes, dtype=f64)
    g_mean = torch.stack([by_n[n]["gamma"].mean() for n in sizes])
    slope = float(torch.linalg.lstsq(torch.stack([torch.ones_like(ns), ns.log()], -1), g_mean.log()[:, None]).solution[1])
    return ScaleGapSweep(sizes=sizes, by_n=by_n, gamma_mean=g_mean, slope=slope)


@functools.lru_cache(maxsize=2)
def n_sweep(size: str = "default", device: str = "cpu") -> ScaleGapSweep:
    """:func:`scale_gap_sweep` of :func:`config` over the ``sweep_n`` of ``size`` with its
    ``sweep_seeds`` seeds (:class:`Stage2Sizes`), cached."""
    s = sizes(size)
    return scale_gap_sweep(config(size), s.sweep_n, range(s.sweep_seeds), device=device)


# --------------------------------------------------------------------------------------------
# Downstream after training
# --------------------------------------------------------------------------------------------
@dataclass
class Stage2Downstream:
    """Downstream after training (Theorem 4.2 against 4.3), on the main run's draws: ``traj_multi``
    (the multi-modal recursion, first and last states), ``ev[mode][protocol]`` the
    :class:`~mmcl.downstream.evaluation.Evaluation` (single-modal every 10 steps, multi-modal at
    the end), ``err[mode][protocol]`` the OOD test error at the end per seed, ``feature_snr[mode]``
    :func:`mmcl.proofs.scales.ood_feature_snr` per seed."""

    traj_multi: Trajectory
    ev: Dict[str, dict]
    err: Dict[str, dict]
    feature_snr: Dict[str, torch.Tensor]


@functools.lru_cache(maxsize=2)
def downstream(size: str = "default", device: str = "cpu") -> Stage2Downstream:
    """:class:`Stage2Downstream` of :func:`stage2_run` (cached)."""
    from mmcl.downstream.evaluation import evaluate_all

    r = stage2_run(size, device)
    traj_multi = simulate(r.cfg, r.data, "multi", "recursion", record_every=r.T)
    ev = {"single": evaluate_all(r.traj, r.data, every=10), "multi": evaluate_all(traj_multi.last(), r.data)}
    feature_snr = {mode: scales.ood_feature_snr(tr, r.data) for mode, tr in (("single", r.traj), ("multi", traj_multi))}
    err = {mode: {p: (1 - e.accuracy[:, -1]).cpu() for p, e in evs.items()} for mode, evs in ev.items()}
    return Stage2Downstream(traj_multi=traj_multi, ev=ev, err=err, feature_snr=feature_snr)


# --------------------------------------------------------------------------------------------
# The comparator chain at other values of our unstated constants
# --------------------------------------------------------------------------------------------
#: The departures from :func:`config` at which :func:`variants` evaluates links 1 and 3: a larger and
#: a smaller temperature, a smaller initialisation (item 3a of Assumption 4.1 holds there) and fewer
#: negatives.  Each runs ``T1 + 100`` steps, the same 100 steps of stage 2 as the main run.  At
#: tau = 0.5 the step size is five times ours, which keeps the per-step growth
#: ``eta sigma_xi^2 d/(n m tau)`` and so stage 1 at about 100 steps (with our eta it lasts about 500,
#: and links 1 and 3 come out the same on seeds 0-1: factor 1.51-1.52 against 1.50-1.52 here).
VARIANTS: Dict[str, dict] = {"tau = 0.5": dict(tau=0.5, lr=0.05), "tau = 0.05": dict(tau=0.05),
                             "sigma0 = 0.003": dict(sigma0=0.003), "M = 20": dict(M=20)}


@dataclass
class Stage2Variant:
    """Links 1 and 3 of App. C.2 at one of :data:`VARIANTS` (:func:`variants`), per seed: ``cfg``;
    ``link1_gap`` the smallest lambda link 1's positive margins need minus the largest its negative
    ones allow (> 0: no lambda satisfies link 1); ``act_max`` the largest average activation behind
    the positive margin on ``[T1, T]`` (the proof needs >= 2); ``link3_share`` the share of the steps
    of ``[T1, T)`` at which link 3 holds with the paper's ``lambda = 2 tau L``; ``factor`` the factor
    link 3 needs instead of 2."""

    cfg: SyntheticConfig
    link1_gap: torch.Tensor
    act_max: torch.Tensor
    link3_share: torch.Tensor
    factor: torch.Tensor


def _chain_at(cfg: SyntheticConfig, seed: int, device: str) -> cv.ComparatorChain:
    data = sample_synthetic_batch(cfg, [seed], dtype=torch.float64).to(device=device)
    traj = simulate(cfg, data, "single", "recursion")
    return cv.comparator_chain(traj, data, cfg, cv.ComparatorConfig(epsilon=EPSILON), math.ceil(t1_single(cfg)))


@functools.lru_cache(maxsize=2)
def variants(size: str = "default", device: str = "cpu") -> Dict[str, Stage2Variant]:
    """:func:`mmcl.proofs.single_stage2.comparator_chain` at each of :data:`VARIANTS` (``T1 + 100``
    steps), seed by seed (the feasible ranges of lambda are per run), on the ``variant_seeds`` of
    ``size`` (cached): does the chapter's verdict on links 1 and 3 hinge on our tau, sigma0, M?"""
    base = config(size)
    out = {}
    for name, change in VARIANTS.items():
        c = replace(base, **change)
        c = replace(c, n_epochs=math.ceil(t1_single(c)) + 100)
        chains = [_chain_at(c, seed, device) for seed in range(sizes(size).variant_seeds)]
        rows = []
        for ch in chains:
            (lo16, hi16), (lo17, _) = ch.feasible16, ch.feasible17
            rows.append([lo16 - hi16, float(ch.act_pos[:, ch.t1:].max()),
                         float((ch.slack[:, ch.t1:] >= 0).double().mean()), ch.factor17])
        v = torch.tensor(rows, dtype=torch.float64).T
        out[name] = Stage2Variant(cfg=c, link1_gap=v[0], act_max=v[1], link3_share=v[2], factor=v[3])
    return out


def scale_gap_result(size: str = "default", device: str = "cpu") -> scales.ScaleGap:
    """What stage 2 leaves of stage 1's scales on the chapter's run
    (:func:`mmcl.proofs.scales.scale_gap` of :func:`stage2_run` from its ``T1``): the figure
    ``stage2-scale-gap``."""
    r = stage2_run(size, device)
    return scales.scale_gap(r.traj, r.t1)
