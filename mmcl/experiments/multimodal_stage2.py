"""The experiment of the chapter :ref:`Multi-modal learning, stage 2 <sec-multimodal-stage2>`:
its sizes, its configuration and its cached runs.  The drawings are in
:mod:`mmcl.figures.multimodal_stage2`; the computations are those of :mod:`mmcl.proofs.multi_stage2`
(the comparators of Lemma D.12 and the chain of App. D.2) on the synchronisation of
:mod:`mmcl.proofs.multi_stage1`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`MultiStage2Sizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`stage2_run` -- the multi-modal run the chapter and its three figures share
  (:class:`MultiStage2Run`);
* :func:`chains` -- App. D.2 along that run with the paper's signs and with the signs at ``T1``
  (:class:`Stage2Chains`), with target :data:`EPSILON`;
* :func:`one_step` -- Lemma D.14 along that run, for both choices of signs (:class:`OneStep`);
* :func:`scales` -- what stage 2 leaves (:func:`mmcl.proofs.scales.stage2_scales`).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Dict, List

import torch

from mmcl.dynamics import Trajectory, simulate
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.proofs import scales as scales_
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic_batch
from mmcl.proofs import multi_stage1 as sync
from mmcl.proofs import multi_stage2 as ms2
from mmcl.proofs.predictions import t1_multi
from mmcl.proofs.single_stage2 import ComparatorConfig

__all__ = ["MultiStage2Sizes", "BY_SIZE", "sizes", "config", "EPSILON", "MultiStage2Run", "stage2_run",
           "Stage2Chains", "chains", "scales", "OneStep", "one_step", "VARIANTS", "MultiStage2Variant",
           "variants"]


@dataclass(frozen=True)
class MultiStage2Sizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) and ``n_epochs`` steps of
    gradient descent (``"tiny"`` stops after 110: stage 2 starts at ``T1 = 87``)."""

    seeds: int
    n_epochs: int = 200
    variant_seeds: int = 2


#: The chapter runs 5 seeds (20 with MMCL_BOOK_FULL=1) and the :data:`VARIANTS` on 2 (5); "tiny" is
#: for the tests (the variants on one seed).
BY_SIZE: Dict[str, MultiStage2Sizes] = {"tiny": MultiStage2Sizes(seeds=1, n_epochs=110, variant_seeds=1),
                                        "default": MultiStage2Sizes(seeds=5, variant_seeds=2),
                                        "full": MultiStage2Sizes(seeds=20, variant_seeds=5)}

#: the target ``eps`` of the comparators (the chapter's ``ComparatorConfig(epsilon=0.01)``)
EPSILON = 0.01


def sizes(size: str = "default") -> MultiStage2Sizes:
    """The :class:`MultiStage2Sizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The chapter's configuration: the Figure 1 settings (``tau = 0.1``, ``sigma0 = 0.01``,
    ``M = 45`` are ours); ``tiny``: 110 steps instead of 200."""
    return figure1_config(n_epochs=sizes(size).n_epochs)


@dataclass
class MultiStage2Run:
    """The chapter's run: ``cfg`` (the Figure 1 settings), the ``seeds``, their stacked ``data``
    (float64), the multi-modal recursion ``traj`` with every step and the loss derivatives recorded,
    its :func:`~mmcl.proofs.multi_stage1.synchronisation` ``syn``, ``t1`` (Lemma 5.4's ``T1``
    rounded up: stage 2 starts there), ``T`` (the number of steps) and ``single``, the single-modal
    recursion on the same draws (first and last states), for contrast."""

    cfg: SyntheticConfig
    seeds: List[int]
    data: SyntheticData
    traj: Trajectory
    syn: sync.Synchronisation
    t1: int
    T: int
    single: Trajectory


@functools.lru_cache(maxsize=2)
def stage2_run(size: str = "default", device: str = "cpu") -> MultiStage2Run:
    """The multi-modal run of :func:`config` at the seeds of ``size`` (cached)."""
    cfg = config(size)
    seeds = list(range(sizes(size).seeds))
    data = sample_synthetic_batch(cfg, seeds, dtype=torch.float64).to(device=device)
    traj = simulate(cfg, data, "multi", "recursion", record_derivatives=True)  # every step: the one-step lemmas
    single = simulate(cfg, data, "single", "recursion", record_every=cfg.n_epochs)
    return MultiStage2Run(cfg=cfg, seeds=seeds, data=data, traj=traj, syn=sync.synchronisation(data, traj),
                          t1=math.ceil(t1_multi(cfg)), T=cfg.n_epochs, single=single)


@dataclass
class Stage2Chains:
    """App. D.2 along :func:`stage2_run` for both choices of the comparators' signs: ``paper``
    (``theta`` at initialisation, Lemma D.12) and ``at_t1`` (``theta`` read at ``T1``, ours), each a
    :class:`~mmcl.proofs.multi_stage2.MultiComparatorChain`; ``signs`` and ``signs_t1`` the
    :class:`~mmcl.proofs.multi_stage2.ComparatorSigns` behind them, ``ccfg`` the comparator
    configuration."""

    ccfg: ComparatorConfig
    signs: ms2.ComparatorSigns
    signs_t1: ms2.ComparatorSigns
    paper: ms2.MultiComparatorChain
    at_t1: ms2.MultiComparatorChain

    @property
    def lam(self) -> float:
        """The paper's comparator coefficient ``lambda = 2 tau log(2M/eps)`` (Lemma D.12)."""
        return float(self.paper.telescoping.first.lam)

    @property
    def level(self) -> float:
        """The margin unit ``L = log(2M/eps)`` of Lemma D.13."""
        return float(self.paper.level)


@functools.lru_cache(maxsize=2)
def chains(size: str = "default", device: str = "cpu") -> Stage2Chains:
    """:func:`mmcl.proofs.multi_stage2.multi_comparator_chain` of :func:`stage2_run` with target
    :data:`EPSILON`, with the paper's signs and with the signs at ``T1`` (cached)."""
    r = stage2_run(size, device)
    ccfg = ComparatorConfig(epsilon=EPSILON)
    signs, signs_t1 = ms2.comparator_signs(r.syn, r.t1), ms2.comparator_signs(r.syn, r.t1, step=r.t1)
    return Stage2Chains(ccfg=ccfg, signs=signs, signs_t1=signs_t1,
                        paper=ms2.multi_comparator_chain(r.traj, r.data, r.cfg, ccfg, r.t1),
                        at_t1=ms2.multi_comparator_chain(r.traj, r.data, r.cfg, ccfg, r.t1, signs=signs_t1))


@dataclass
class OneStep:
    """Lemma D.14's one-step inequality along :func:`stage2_run` for one choice of the comparators'
    ``signs`` (``"paper's signs"`` or ``"signs at T1"``): ``both`` the share of the steps of
    ``[T1, T)`` (over every seed) at which it holds for the two networks together,
    ``seeds_holding`` / ``seeds_failing`` how many of the ``seeds`` satisfy it at every step / at
    none, ``first`` and ``second`` the shares at which each network's own inequality (the proof
    derives one per network) holds, and ``factor``, ``factor_first``, ``factor_second`` the
    smallest factor in ``lambda = factor tau L`` (the paper's is 2) that makes the sum, the first
    network's and the second network's inequality hold at every step."""

    signs: str
    both: float
    seeds_holding: int
    seeds_failing: int
    seeds: int
    first: float
    second: float
    factor: float
    factor_first: float
    factor_second: float

    def __str__(self) -> str:
        return (f"Lemma D.14, {self.signs}: holds at {self.both:.0%} of the steps of [T1, T) "
                f"(at every step on {self.seeds_holding} of {self.seeds} seeds, at none on "
                f"{self.seeds_failing}); needs the factor {self.factor:.2f} in lambda = factor tau L "
                f"(paper: 2)\n  each network alone: W at {self.first:.0%}, W~ at {self.second:.0%} "
                f"of the steps; factors needed {self.factor_first:.2f} (W), "
                f"{self.factor_second:.2f} (W~)")


def _one_step(chain: ms2.MultiComparatorChain, signs: str, tau: float, t1: int) -> OneStep:
    sl = chain.slack[:, t1:]
    unit = tau * chain.level  # lambda = factor * tau * L
    return OneStep(
        signs=signs, both=float((sl >= 0).double().mean()), seeds_holding=int((sl >= 0).all(-1).sum()),
        seeds_failing=int((sl < 0).all(-1).sum()), seeds=int(sl.shape[0]),
        first=float((chain.slack_first[:, t1:] >= 0).double().mean()),
        second=float((chain.slack_second[:, t1:] >= 0).double().mean()), factor=float(chain.factor14),
        factor_first=float(chain.telescoping.first.c17_feasible_lam(t1)[0]) / unit,
        factor_second=float(chain.telescoping.second.c17_feasible_lam(t1)[0]) / unit)


@functools.lru_cache(maxsize=2)
def one_step(size: str = "default", device: str = "cpu") -> Dict[str, OneStep]:
    """Lemma D.14 along :func:`stage2_run` (:class:`OneStep`), with the paper's signs and with the
    signs at ``T1`` (keys ``"paper's signs"``, ``"signs at T1"``; cached)."""
    r, ch = stage2_run(size, device), chains(size, device)
    return {name: _one_step(c, name, r.cfg.tau, r.t1)
            for name, c in (("paper's signs", ch.paper), ("signs at T1", ch.at_t1))}


@functools.lru_cache(maxsize=2)
def scales(size: str = "default", device: str = "cpu") -> scales_.Stage2Scales:
    """:func:`mmcl.proofs.scales.stage2_scales` of :func:`stage2_run` from its ``T1`` on
    (cached): ``max_r gamma_r`` and ``max_{r,i} |rho_{r,i}|`` of both networks along training."""
    r = stage2_run(size, device)
    return scales_.stage2_scales(r.traj, r.cfg, r.t1)


#: The departures from :func:`config` at which :func:`variants` reruns App. D.2's chain with the
#: paper's signs: a smaller temperature, a larger initialisation and fewer negatives, each over the
#: chapter's 200 steps (a larger temperature would need about twice as many: T1 is 170 at tau = 0.2).
VARIANTS: Dict[str, dict] = {"tau = 0.05": dict(tau=0.05), "sigma0 = 0.02": dict(sigma0=0.02), "M = 20": dict(M=20)}


@dataclass
class MultiStage2Variant:
    """App. D.2's chain with the paper's signs at one of :data:`VARIANTS` (:func:`variants`): ``cfg``,
    ``t1``; ``seeds_holding``, ``seeds_failing`` how many seeds satisfy Lemma D.14's one-step
    inequality at every step of ``[T1, T)`` and at none; ``factor`` the factor it needs instead of 2
    (over all seeds); ``second_share`` the share of the steps at which the second network's
    inequality holds; ``pos_second`` the largest positive-margin ratio of Lemma D.13 in the second
    network (>= 1 asked); ``d12`` ``||W(T1) - W*||_F`` over ``sqrt(m)/||mu||`` per seed (both
    networks); ``avg54`` the largest of Lemma 5.4's four averages at ``T1`` (>= 3 in its proof);
    ``noise_t1`` the smallest over seeds and networks of ``max_{r,i} |rho_{r,i}(T1)|``, against
    ``rho_bound = sigma0 sigma_xi sqrt(d)`` (Lemma D.15)."""

    cfg: SyntheticConfig
    t1: int
    seeds_holding: int
    seeds_failing: int
    factor: float
    second_share: float
    pos_second: float
    d12: torch.Tensor
    avg54: float
    noise_t1: float
    rho_bound: float


@functools.lru_cache(maxsize=2)
def variants(size: str = "default", device: str = "cpu") -> Dict[str, MultiStage2Variant]:
    """:func:`mmcl.proofs.multi_stage2.multi_comparator_chain` with the paper's signs at each of
    :data:`VARIANTS`, on the ``variant_seeds`` of ``size`` (cached): does the chapter's verdict on
    Lemmas D.13-D.15 hinge on our tau, sigma0, M?"""
    base = config(size)
    seeds = list(range(sizes(size).variant_seeds))
    ccfg = ComparatorConfig(epsilon=EPSILON)
    out = {}
    for name, change in VARIANTS.items():
        c = replace(base, **change)
        data = sample_synthetic_batch(c, seeds, dtype=torch.float64).to(device=device)
        traj = simulate(c, data, "multi", "recursion", record_derivatives=True)
        syn, t1 = sync.synchronisation(data, traj), math.ceil(t1_multi(c))
        ch = ms2.multi_comparator_chain(traj, data, c, ccfg, t1)
        sl = ch.slack[:, t1:]
        noise = torch.stack([traj.rho[:, t1].abs().amax((-1, -2)), traj.rho_tilde[:, t1].abs().amax((-1, -2))])
        out[name] = MultiStage2Variant(
            cfg=c, t1=t1, seeds_holding=int((sl >= 0).all(-1).sum()), seeds_failing=int((sl < 0).all(-1).sum()),
            factor=float(ch.factor14), second_share=float((ch.slack_second[:, t1:] >= 0).double().mean()),
            pos_second=float(ch.pos_ratio[1].max()),
            d12=torch.cat([(ch.distance_t1[k] / ch.d12_scale[k]).reshape(-1).cpu() for k in (0, 1)]),
            avg54=float(ms2.lemma54_averages(syn, c, t1).max()), noise_t1=float(noise.min()),
            rho_bound=c.init_noise)
    return out
