"""The verdicts of the stage chapters (3 to 5) re-taken inside the regime (the chapter "Inside the
theorems' regime"), at the scalings of :mod:`mmcl.experiments.theorems_regime.scalings`.

**The verdicts** (:func:`~mmcl.experiments.theorems_regime.revisit_verdicts`): every-step runs at a
few sizes, measured by the same functions the stage chapters use (:mod:`mmcl.proofs.single_stage1`,
:mod:`mmcl.proofs.single_stage2`, :mod:`mmcl.proofs.multi_stage1`), kept as per-size summaries
(:class:`~mmcl.experiments.theorems_regime.SizeVerdicts`).

Public: every name in ``__all__``, importable from (and documented under) :mod:`mmcl.experiments.theorems_regime`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_int
from mmcl.dynamics import Trajectory, simulate
from mmcl.experiments.theorems_regime.scalings import RegimeScaling, check_n, regime_config
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import sample_synthetic_batch
from mmcl.proofs import multi_stage1 as _ms1
from mmcl.proofs import predictions as _pred
from mmcl.proofs import single_stage1 as _ss1
from mmcl.proofs import single_stage2 as _ss2

__all__ = ["stage_slice", "SizeVerdicts", "revisit_verdicts"]


def stage_slice(traj: Trajectory, start: int, stop: Optional[int] = None) -> Trajectory:
    """The part of a run recorded at every step with ``start <= step <= stop`` (``stop``: the end):
    the states (and loss derivatives) narrowed, ``loss`` kept whole (functions index it by step).
    The comparator chain of stage 2 (:func:`mmcl.proofs.single_stage2.comparator_chain`) needs only
    ``[T1, T]``, and its cost grows with the number of recorded steps."""
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    stop = int(traj.steps[-1]) if stop is None else stop
    check_int("start", start, 0)
    check_int("stop", stop, 0)
    return traj.between(start, stop)


@dataclass
class SizeVerdicts:
    """The stage chapters' verdicts at one ``n`` (per seed where a tensor), as their functions measure them.

    :ref:`sec-single-stage1` (:mod:`mmcl.proofs.single_stage1`, ``noise_growth`` and ``sign_set_report``):
    ``rate_ratio`` measured rate of the median ``N_i`` (steps 1-20) over Lemma 5.2's ``0.96 s``;
    ``rate_ab_ratio`` ``(a - b) s`` over ``0.96 s``; ``frac_bound`` the fraction of samples with
    ``N_i(t) >= (1 + 0.96 s)^t N_i(0)`` at ``t = 1, 5, 20``; ``N_max`` the largest ``N_i`` of the run
    (the proof needs 3); ``t1_single`` measured ``T1`` and ``T1_single`` the formula's;
    ``flipped`` neurons leaving ``U_+``/``U_-`` per seed, ``neg_init_ratio`` max ``|rho|`` on
    ``I_{r,-}(0)`` over max ``rho``, ``left_fraction`` the share of the pairs starting in ``I_{r,-}(0)``
    that leave it.

    :ref:`sec-single-stage2` (:func:`mmcl.proofs.single_stage2.comparator_chain` on ``[T1, T]``, ``eps = 0.05``):
    ``feasible16`` the ``lambda`` interval of Lemma C.16 (empty when ``lo > hi``), ``factor17`` the
    factor Lemma C.17 needs (paper: 2), ``c17_fail`` the share of steps of ``[T1, T)`` where C.17 fails
    with the paper's factor, ``loss_T`` the final loss.

    :ref:`sec-multimodal` (:mod:`mmcl.proofs.multi_stage1`): ``opposite`` and ``stalled`` neuron counts (Lemma
    D.3), ``spread0`` and ``spread_T1`` the loss-derivative spread ``C_l`` at 0 and ``floor(T1)``
    (Lemma D.1; the proof of Lemma D.8 takes 1.01), ``d4_violation`` the first step where Lemma
    D.4's lower bound fails (``nan``: never) and ``T1_multi``; ``cases`` the share of pairs for which
    each case of Lemma D.9 held (``(S, 4)``); ``rho_T1`` max ``rho`` at ``floor(T1)`` and
    ``noise_bound`` the proof's explicit bound on it (:func:`mmcl.proofs.multi_stage1.lemma54_noise_bound`)."""

    n: int
    cfg: SyntheticConfig
    rate_ratio: torch.Tensor
    rate_ab_ratio: torch.Tensor
    frac_bound: List[float]
    N_max: float
    t1_single: torch.Tensor
    T1_single: float
    flipped: torch.Tensor
    neg_init_ratio: torch.Tensor
    left_fraction: torch.Tensor
    feasible16: Tuple[float, float]
    factor17: float
    c17_fail: float
    loss_T: torch.Tensor
    opposite: int
    stalled: int
    spread0: torch.Tensor
    spread_T1: torch.Tensor
    d4_violation: torch.Tensor
    T1_multi: float
    cases: torch.Tensor
    rho_T1: torch.Tensor
    noise_bound: float


def _verdicts_at(n: int, seeds, scaling: RegimeScaling, device, dtype, chain: bool) -> SizeVerdicts:
    cfg = regime_config(n, scaling)
    for mode, t1 in (("single", _pred.t1_single(cfg)), ("multi", _pred.t1_multi(cfg))):
        if not t1 < cfg.n_epochs - 1:
            raise ValueError(f"at n = {n} the {mode}-modal T1 of the paper's formula is {t1:.1f} steps, beyond "
                             f"RegimeScaling.n_epochs = {cfg.n_epochs}: the stage-2 verdicts need a run past T1; "
                             f"raise n_epochs above {math.ceil(t1) + 1} (or RegimeScaling.step)")
    data = sample_synthetic_batch(cfg, seeds, span=True, dtype=dtype, device=device)
    # the chapter "Single-modal learning, stage 1" (sec-single-stage1)
    traj = simulate(cfg, data, "single", "recursion", record_derivatives=True)
    hist = _ss1.preactivation_history(traj, data, with_augmented=True)
    bc = _ss1.b_coefficients(traj, data, cfg, history=hist)
    growth = _ss1.noise_growth(traj, data, cfg, coefficients=bc, window=(1, 20))
    N = growth.N
    frac = [float((N[:, k] >= (1 + growth.rate_lemma) ** k * N[:, 0]).double().mean()) for k in (1, 5, 20)]
    signs = _ss1.sign_set_report(traj, data, history=hist)
    P0 = (data.W0 @ data.xi.transpose(-1, -2)).cpu()  # (S, m, n): the pairs starting in I_{r,-}(0)
    left_frac = signs.left.double() / (P0 < 0).flatten(1).sum(-1).double()
    del hist, bc
    # the chapter "Single-modal learning, stage 2" (sec-single-stage2), on [T1, T]
    T1s = growth.T1
    k1s = math.ceil(T1s)  # < n_epochs: checked above
    if chain:
        ch = _ss2.comparator_chain(stage_slice(traj, k1s), data, cfg, _ss2.ComparatorConfig(epsilon=0.05), k1s)
        feas, f17, fail17 = ch.feasible16, ch.factor17, float((ch.slack < 0).double().mean())
        del ch
    else:
        feas, f17, fail17 = (math.nan, math.nan), math.nan, math.nan
    loss_T = traj.loss[:, -1].double().cpu()
    del traj
    # the chapter "Multi-modal learning" (sec-multimodal)
    multi = simulate(cfg, data, "multi", "recursion", record_derivatives=True)
    syn = _ms1.synchronisation(data, multi)
    end = _ms1.stage1_end(syn, multi, cfg)
    cases = _ms1.noise_cases(data, multi, cfg)
    frac_cases = torch.stack([cases.fraction(c).double().cpu() for c in (1, 2, 3, 4)], -1)
    k1 = end.k1
    return SizeVerdicts(
        n=n, cfg=cfg, rate_ratio=(growth.fit.rate / growth.rate_lemma).double(),
        rate_ab_ratio=(growth.rate_ab / growth.rate_lemma).double(), frac_bound=frac, N_max=float(N.max()),
        t1_single=growth.t1_measured.double(), T1_single=T1s, flipped=signs.flipped.sum(-1),
        neg_init_ratio=(signs.neg_init.amax(-1) / signs.rho_max).double(), left_fraction=left_frac,
        feasible16=tuple(feas), factor17=f17, c17_fail=fail17, loss_T=loss_T,
        opposite=int(syn.opposite0.sum()), stalled=int(syn.stalled.sum()),
        spread0=end.spread[:, 0].double().cpu(), spread_T1=end.spread[:, k1].double().cpu(),
        d4_violation=torch.tensor([math.nan if v is None else float(v) for v in end.first_violation], dtype=torch.float64),
        T1_multi=end.t1, cases=frac_cases, rho_T1=multi.rho[:, k1].amax((-1, -2)).double().cpu(),
        noise_bound=_ms1.lemma54_noise_bound(cfg, scaling.delta))


def revisit_verdicts(sizes: Sequence[int], seeds: Mapping[int, int], scaling: RegimeScaling = RegimeScaling(), *,
                     chain_sizes: Optional[Sequence[int]] = None, device="cpu",
                     dtype="float64") -> Dict[int, SizeVerdicts]:
    """The stage chapters' verdicts at each ``n`` of ``sizes`` (``seeds[n]`` seeds), from every-step
    runs of both modes with the loss derivatives recorded: see :class:`SizeVerdicts`.  The comparator
    chain of the chapter :ref:`sec-single-stage2` is evaluated at ``chain_sizes`` only (default: all; it costs
    ``O(T n^2 m)`` memory per seed), elsewhere its fields are ``nan``.  float64, as the stage chapters."""
    if not isinstance(scaling, RegimeScaling):
        raise ValueError(f"scaling must be a RegimeScaling, got {type(scaling).__name__}")
    sizes = [check_n(n) for n in sizes]
    if not sizes:
        raise ValueError("sizes must hold at least one n")
    if not isinstance(seeds, Mapping) or not set(sizes) <= set(seeds):
        raise ValueError(f"seeds must map every n of sizes {sizes} to a number of seeds")
    chain_sizes = set(sizes if chain_sizes is None else chain_sizes)
    return {n: _verdicts_at(n, range(check_int(f"seeds[{n}]", seeds[n])), scaling, device, dtype, n in chain_sizes)
            for n in sizes}
