"""The experiment of the chapter "Multi-modal learning, stage 2" (``book/06_multimodal_stage2.md``):
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
* :func:`scales` -- what stage 2 leaves (:func:`mmcl.proofs.scales.stage2_scales`).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
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
           "Stage2Chains", "chains", "scales"]


@dataclass(frozen=True)
class MultiStage2Sizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) and ``n_epochs`` steps of
    gradient descent (``"tiny"`` stops after 110: stage 2 starts at ``T1 = 87``)."""

    seeds: int
    n_epochs: int = 200


#: The chapter runs 5 seeds (20 with MMCL_BOOK_FULL=1); "tiny" is for the tests.
BY_SIZE: Dict[str, MultiStage2Sizes] = {"tiny": MultiStage2Sizes(seeds=1, n_epochs=110),
                                        "default": MultiStage2Sizes(seeds=5), "full": MultiStage2Sizes(seeds=20)}

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


@functools.lru_cache(maxsize=2)
def scales(size: str = "default", device: str = "cpu") -> scales_.Stage2Scales:
    """:func:`mmcl.proofs.scales.stage2_scales` of :func:`stage2_run` from its ``T1`` on
    (cached): ``max_r gamma_r`` and ``max_{r,i} |rho_{r,i}|`` of both networks along training."""
    r = stage2_run(size, device)
    return scales_.stage2_scales(r.traj, r.cfg, r.t1)
