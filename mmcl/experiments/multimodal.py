"""The experiment of the chapter :ref:`Multi-modal learning <sec-multimodal>`: its sizes, its
configuration and its cached runs.  The drawings are in :mod:`mmcl.figures.multimodal`; the
diagnostics it computes are those of :mod:`mmcl.proofs.multi_stage1` (synchronisation, the end of
stage 1, the noise cases of Lemma D.9).

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`MultimodalSizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`multimodal_runs` -- both recursions on the chapter's seeds and the synchronisation of the
  multi-modal one (:class:`MultimodalRuns`);
* :func:`stage1_end` -- the end of stage 1 (Lemma 5.4) of those runs;
* :func:`noise_cases` -- the noise cases of Lemma D.9 of those runs, up to ``floor(T1)``;
* :func:`sync_summary` -- what the synchronisation of those runs comes to, in numbers that print
  themselves (:class:`SyncSummary`);
* :func:`variants` -- stage 1 at other values of our unstated tau and sigma0 (:data:`VARIANTS`,
  :class:`MultimodalVariant`).

The run functions are cached per ``(size, device)``: the chapter and its three figures share them.

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
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic_batch
from mmcl.proofs import multi_stage1 as sync
from mmcl.proofs.predictions import t1_multi

__all__ = ["MultimodalSizes", "BY_SIZE", "sizes", "config", "MultimodalRuns", "multimodal_runs", "stage1_end",
           "noise_cases", "VARIANTS", "MultimodalVariant", "variants", "SyncSummary", "sync_summary", "SyncExample", "sync_examples"]


@dataclass(frozen=True)
class MultimodalSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) and, for ``"tiny"``, a
    shorter run (``n_epochs`` steps)."""

    seeds: int
    n_epochs: int = 200
    variant_seeds: int = 2


#: The chapter runs 5 seeds (20 with MMCL_BOOK_FULL=1) and the :data:`VARIANTS` on 2 (5); "tiny" (for
#: the tests) also stops after 100 steps (Lemma 5.4's T1 is 86) and runs the variants on one seed.
BY_SIZE: Dict[str, MultimodalSizes] = {"tiny": MultimodalSizes(seeds=1, n_epochs=100, variant_seeds=1),
                                       "default": MultimodalSizes(seeds=5, variant_seeds=2),
                                       "full": MultimodalSizes(seeds=20, variant_seeds=5)}


def sizes(size: str = "default") -> MultimodalSizes:
    """The :class:`MultimodalSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The chapter's configuration: the Figure 1 settings (tau = 0.1, sigma0 = 0.01, M = 45 are
    ours); ``tiny`` stops after 100 steps instead of 200."""
    return figure1_config(n_epochs=sizes(size).n_epochs)


@dataclass
class MultimodalRuns:
    """The chapter's runs: ``cfg`` (the Figure 1 settings), the ``seeds`` and their stacked ``data``
    (float64); the multi-modal recursion ``multi`` (loss derivatives recorded), the single-modal
    recursion ``single`` on the same draws, and ``syn``, the
    :func:`~mmcl.proofs.multi_stage1.synchronisation` of ``multi``."""

    cfg: SyntheticConfig
    seeds: List[int]
    data: SyntheticData
    multi: Trajectory
    single: Trajectory
    syn: sync.Synchronisation


@functools.lru_cache(maxsize=2)
def multimodal_runs(size: str = "default", device: str = "cpu") -> MultimodalRuns:
    """Both recursions at :func:`config` with the seeds of ``size`` (cached)."""
    cfg = config(size)
    seeds = list(range(sizes(size).seeds))
    data = sample_synthetic_batch(cfg, seeds, dtype=torch.float64, device=device)
    multi = simulate(cfg, data, "multi", "recursion", record_derivatives=True)
    single = simulate(cfg, data, "single", "recursion")
    return MultimodalRuns(cfg=cfg, seeds=seeds, data=data, multi=multi, single=single,
                          syn=sync.synchronisation(data, multi))


@functools.lru_cache(maxsize=2)
def stage1_end(size: str = "default", device: str = "cpu") -> sync.Stage1End:
    """:func:`mmcl.proofs.multi_stage1.stage1_end` of :func:`multimodal_runs` (cached)."""
    r = multimodal_runs(size, device)
    return sync.stage1_end(r.syn, r.multi, r.cfg)


@functools.lru_cache(maxsize=2)
def noise_cases(size: str = "default", device: str = "cpu") -> sync.NoiseCases:
    """:func:`mmcl.proofs.multi_stage1.noise_cases` of :func:`multimodal_runs` up to ``floor(T1)`` (cached)."""
    r = multimodal_runs(size, device)
    return sync.noise_cases(r.data, r.multi, r.cfg)


@dataclass(frozen=True)
class SyncSummary:
    """Lemma D.3 and our proposition on a set of runs (:func:`sync_summary`): ``kappa`` the pairing
    rate of the linear map and ``rate`` Lemma 5.4's ``0.48 C_mu eta |mu|^2/(m tau)``; ``n_opposite``
    the neurons out of step at ``t = 0`` per seed and ``m`` the width; ``opposite``/``synced`` how
    many of them there are / end in step; ``kept`` whether every neuron in step stays in step;
    ``stalled`` the ``(seed, neuron, u0, v0, uT, vT)`` of those that never synchronise;
    ``size_in_step`` the median ``max(|u_r|, |v_r|)`` at the end over the neurons in step and
    ``size_stalled`` the largest over the stalled ones (``nan`` if none); ``t_median``/``t_max`` the
    measured ``t'``; ``sign_right`` the share of out-of-step neurons whose winning side the
    proposition names (a stalled one counts as a miss); ``err_median``/``err_p90`` the median and
    90th percentile of ``|measured - predicted t'|`` over those that synchronise."""

    kappa: float
    rate: float
    n_opposite: List[int]
    m: int
    opposite: int
    synced: int
    kept: bool
    stalled: List[tuple]
    size_in_step: float
    size_stalled: float
    t_median: float
    t_max: float
    sign_right: float
    err_median: float
    err_p90: float

    def __str__(self) -> str:
        lines = [
            f"kappa = {self.kappa:.4f}; Lemma 5.4's rate 0.48 C_mu eta |mu|^2/(m tau) = "
            f"{self.rate:.4f}",
            f"out of step at t = 0: {min(self.n_opposite)} to {max(self.n_opposite)} neurons "
            f"per seed (expected m/2 = {self.m // 2})",
            f"in step by the end: {self.synced} of {self.opposite}; "
            f"every neuron in step stays in step: {self.kept}",
        ]
        for b, r, u0, v0, uT, vT in self.stalled:
            lines.append(f"  stalled: seed {b}, r = {r}: (u, v) = ({u0:+.4f}, {v0:+.4f}) "
                         f"-> ({uT:+.4f}, {vT:+.4f})")
        stalled = (f", at most {self.size_stalled:.4f} stalled" if self.stalled else "")
        lines += [
            f"max(|u_r|, |v_r|) at the end: median {self.size_in_step:.3f} in step" + stalled,
            f"measured t': median {self.t_median:.0f}, max {self.t_max:.0f} steps",
            f"winning side predicted for {self.sign_right:.0%}",
            f"|measured - predicted t'|: median {self.err_median:.0f}, "
            f"90th percentile {self.err_p90:.0f} steps",
        ]
        return "\n".join(lines)


def sync_summary(runs: MultimodalRuns) -> SyncSummary:
    """The :class:`SyncSummary` of ``runs`` (:func:`multimodal_runs`): what the chapter prints of
    the synchronisation of its multi-modal runs."""
    from mmcl.proofs.predictions import multi_growth_rate, pairing_rate

    if not isinstance(runs, MultimodalRuns):
        raise ValueError(f"runs must be a MultimodalRuns (multimodal_runs), got {type(runs).__name__}")
    syn, cfg = runs.syn, runs.cfg
    opp = syn.opposite0
    synced, stalled = opp & syn.synchronised, syn.stalled
    err = (syn.sync_step - syn.predicted_step)[synced].abs()
    rows = [(runs.seeds[b], r, float(syn.u[b, 0, r]), float(syn.v[b, 0, r]), float(syn.u[b, -1, r]),
             float(syn.v[b, -1, r])) for b, r in stalled.nonzero().tolist()]
    return SyncSummary(
        kappa=float(pairing_rate(cfg)), rate=float(multi_growth_rate(cfg)),
        n_opposite=[int(v) for v in syn.n_opposite.reshape(-1)], m=cfg.m,
        opposite=int(opp.sum()), synced=int(synced.sum()),
        kept=bool(syn.kept[syn.synchronised].all()), stalled=rows,
        size_in_step=float(syn.final_size[syn.synchronised].median()),
        size_stalled=float(syn.final_size[stalled].max()) if rows else math.nan,
        t_median=float(syn.sync_step[synced].median()), t_max=float(syn.sync_step[synced].max()),
        sign_right=float((syn.sign == syn.predicted_sign)[opp].double().mean()),
        err_median=float(err.median()), err_p90=float(err.quantile(0.9)))


#: The departures from :func:`config` at which :func:`variants` reruns stage 1: a smaller and a larger
#: temperature, and a smaller initialisation (item 3a of Assumption 4.1 holds there).  M = 45 stays:
#: it is close to its largest value n/2 = 50, so item 4c (M >= 100 C_l - 1) cannot be met at n = 100.
VARIANTS: Dict[str, dict] = {"tau = 0.05": dict(tau=0.05), "tau = 0.5": dict(tau=0.5),
                             "sigma0 = 0.003": dict(sigma0=0.003)}


@dataclass
class MultimodalVariant:
    """Stage 1 of the multi-modal recursion at one of :data:`VARIANTS` (:func:`variants`), run to
    ``floor(T1)``: ``cfg``, ``t1`` (Lemma 5.4's ``T1`` there) and, per seed, ``spread0`` (the
    spread ``C_l`` of the loss derivatives at t = 0), ``first_violation`` (the first step at which
    Lemma D.4's lower bound (43) exceeds the measured ``A_r(t)``; inf if none), ``max_gamma_t1``
    (``max_r gamma_r`` at ``floor(T1)``), ``rho_t1`` (``max_{r,i} rho_{r,i}`` there), ``cases``
    ``(3, seeds)`` the share of the pairs of Lemma D.9's cases (1)-(3) whose claim held, and
    ``lost`` the number of neurons that reach step and fall out of it again before ``floor(T1)``."""

    cfg: SyntheticConfig
    t1: float
    spread0: torch.Tensor
    first_violation: torch.Tensor
    max_gamma_t1: torch.Tensor
    rho_t1: torch.Tensor
    cases: torch.Tensor
    lost: torch.Tensor


@functools.lru_cache(maxsize=2)
def variants(size: str = "default", device: str = "cpu") -> Dict[str, MultimodalVariant]:
    """The multi-modal recursion at each of :data:`VARIANTS` on the ``variant_seeds`` of ``size``,
    to ``floor(T1)`` (cached), with :func:`~mmcl.proofs.multi_stage1.stage1_end` and
    :func:`~mmcl.proofs.multi_stage1.noise_cases`: do the chapter's stage-1 findings hinge on our
    tau and sigma0?"""
    base = config(size)
    seeds = list(range(sizes(size).variant_seeds))
    out = {}
    for name, change in VARIANTS.items():
        c = replace(base, **change)
        t1 = t1_multi(c)
        k1 = math.floor(t1)
        c = replace(c, n_epochs=k1 + 1)
        data = sample_synthetic_batch(c, seeds, dtype=torch.float64, device=device)
        multi = simulate(c, data, "multi", "recursion", record_derivatives=True)
        syn = sync.synchronisation(data, multi)
        end = sync.stage1_end(syn, multi, c)
        cases = sync.noise_cases(data, multi, c)
        lost = (~syn.kept & syn.synchronised).flatten(1).sum(-1)
        out[name] = MultimodalVariant(
            cfg=c, t1=t1, spread0=end.spread[:, 0].cpu(),
            first_violation=torch.tensor([math.inf if v is None else v for v in end.first_violation], dtype=torch.float64),
            max_gamma_t1=end.max_gamma[:, k1].cpu(), rho_t1=multi.rho[:, k1].amax((-1, -2)).cpu(),
            cases=torch.stack([cases.fraction(k) for k in (1, 2, 3)]).cpu(), lost=lost.cpu())
    return out


@dataclass(frozen=True)
class SyncExample:
    """One neuron of the figure ``ch5-synchronisation``: draw ``b``, neuron ``r``, its measured
    synchronisation step ``sync_step``, the steps shown, ``u_r`` and ``v_r`` over them and the linear
    stage-1 map's ``pu``, ``pv`` (:func:`mmcl.proofs.multi_stage1.stage1_signal_prediction`), all
    divided by ``scale``, the larger of ``|u_r(0)|`` and ``|v_r(0)|``."""

    b: int
    r: int
    sync_step: int
    steps: torch.Tensor
    u: torch.Tensor
    v: torch.Tensor
    pu: torch.Tensor
    pv: torch.Tensor


def sync_examples(syn: sync.Synchronisation, targets=(3, 10, 25)) -> List[SyncExample]:
    """Lemma D.3 on three neurons: for each of ``targets``, the out-of-step neuron (any draw) whose
    winning side is predicted right and whose predicted synchronisation step is nearest, shown up to
    2.5 times its measured step plus 8 (at most 60), with the linear stage-1 map beside it."""
    m = syn.u.shape[-1]
    right = (syn.sign == syn.predicted_sign) & syn.opposite0
    out = []
    for target in targets:
        gap = torch.where(right, (syn.predicted_step - target).abs(), torch.full_like(syn.predicted_step, math.inf))
        b, r = divmod(int(gap.argmin()), m)
        T = int(min(2.5 * float(syn.sync_step[b, r]) + 8, 60))
        steps = syn.steps[:T + 1]
        scale = float(max(syn.u[b, 0, r].abs(), syn.v[b, 0, r].abs()))
        pu, pv = sync.stage1_signal_prediction(syn.u[b, 0, r:r + 1], syn.v[b, 0, r:r + 1], syn.kappa[b], steps)
        out.append(SyncExample(b=b, r=r, sync_step=int(syn.sync_step[b, r]), steps=steps.cpu(),
                               u=syn.u[b, :T + 1, r].cpu() / scale, v=syn.v[b, :T + 1, r].cpu() / scale,
                               pu=pu[:, 0].cpu() / scale, pv=pv[:, 0].cpu() / scale))
    return out
