"""The sweep over ``n`` of the chapter "Inside the theorems' regime", at the scalings of
:mod:`mmcl.experiments.theorems_regime.scalings`.

**The sweep** (:func:`~mmcl.experiments.theorems_regime.run_regime_sweep`): span draws
(``sample_synthetic(cfg, seed, span=True)``, cost independent of ``d``), batched over seeds, both
modes, the recursion, recorded at ``floor(T1)`` of Lemma 5.2 / 5.4
(:func:`mmcl.proofs.predictions.t1_formula`) and at the end, with the end of stage 1 recorded at
every step (``t1_every=1``); both downstream protocols on the final state
(:func:`mmcl.downstream.evaluation.evaluate_all`).  The per-seed quantities
(``QUANTITIES``) are fitted against ``n`` with
:func:`mmcl.fits.loglog_fit`.

Public: every name in ``__all__``, importable from (and documented under) :mod:`mmcl.experiments.theorems_regime`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Sequence

import torch

from mmcl._utils import check_int
from mmcl.downstream.evaluation import evaluate_all
from mmcl.dynamics import MODES, simulate
from mmcl.fits import LogLogFit, loglog_fit
from mmcl.experiments.theorems_regime.scalings import RegimeScaling, check_n, regime_config
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import sample_synthetic_batch
from mmcl.proofs.predictions import measured_t1, t1_formula

__all__ = ["MODES", "QUANTITIES", "RegimeSize", "RegimeSweep", "run_regime_sweep"]


#: The per-seed quantities of :class:`RegimeSize` (in each mode), each with what it is.
QUANTITIES = {
    "gamma_T1": "max_r |gamma_r| up to floor(T1)",
    "gamma_T": "max_r |gamma_r| at the end",
    "rho_T1": "max_{r,i} rho_{r,i} up to floor(T1)",
    "rho_minmax_T1": "min_i max_r rho_{r,i} at floor(T1)",
    "t1": "measured end of stage 1 (measured_t1, level 1)",
    "loss": "training loss at the end",
    "loss0": "training loss at step 0",
    "err_adapt": "OOD test error, adapt head",
    "err_transfer": "OOD test error, transfer head",
    "feature_snr": "best feature's |<w_r, nu>| / sd <w_r, zeta> at the end",
}


@dataclass
class RegimeSize:
    """One ``n`` of the sweep: its ``cfg``, ``seeds``, Lemma 5.2's and 5.4's ``T1`` (``t1_formula[mode]``)
    and ``values[mode][q]`` a ``(S,)`` float64 tensor per quantity ``q`` of ``QUANTITIES``."""

    n: int
    cfg: SyntheticConfig
    seeds: List[int]
    t1_formula: Dict[str, float]
    values: Dict[str, Dict[str, torch.Tensor]]


@dataclass
class RegimeSweep:
    """The sweep over ``n`` (:func:`run_regime_sweep`): ``sizes``, ``by_n[n]`` a :class:`RegimeSize`,
    the ``scaling`` and the seconds each size took (``seconds[n]``)."""

    sizes: List[int]
    by_n: Dict[int, RegimeSize]
    scaling: RegimeScaling
    seconds: Dict[int, float] = field(default_factory=dict)

    def values(self, mode: str, q: str) -> List[torch.Tensor]:
        """The per-seed values of ``q`` in ``mode`` at every size, in order."""
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")
        if q not in QUANTITIES:
            raise ValueError(f"q={q!r} is unknown; valid: {', '.join(QUANTITIES)}")
        return [self.by_n[n].values[mode][q] for n in self.sizes]

    def scaled(self, mode: str, q: str, power: float = 0.5) -> List[torch.Tensor]:
        """``q * n^power`` per seed at every size (``gamma * sqrt(n)``, ``rho * sqrt(n)``)."""
        return [v * n ** power for v, n in zip(self.values(mode, q), self.sizes)]

    def fit(self, mode: str, q: str, power: float = 0.0, **kw) -> LogLogFit:
        """:func:`~mmcl.fits.loglog_fit` of ``q * n^power`` against ``n``."""
        return loglog_fit(self.sizes, self.scaled(mode, q, power), **kw)

    def mean(self, mode: str, q: str) -> List[float]:
        """The mean over seeds of ``q`` at every size."""
        return [float(v[~torch.isnan(v)].mean()) if bool((~torch.isnan(v)).any()) else math.nan
                for v in self.values(mode, q)]


def _size_run(n: int, seeds: Sequence[int], scaling: RegimeScaling, device, dtype) -> RegimeSize:
    from mmcl.proofs.scales import ood_feature_snr

    cfg = regime_config(n, scaling)
    data = sample_synthetic_batch(cfg, seeds, span=True, dtype=dtype, device=device)
    f64 = torch.float64
    t1f, vals = {}, {}
    for mode in MODES:
        t1f[mode] = t1_formula(cfg, mode)
        k1 = max(1, min(cfg.n_epochs, math.floor(t1f[mode])))
        traj = simulate(cfg, data, mode, "recursion", record_every=k1, t1_every=1)
        upto = traj.steps <= k1  # steps 0, k1 (and the end)
        g, r = traj.gamma.to(f64), traj.rho.to(f64)  # (S, K, m), (S, K, m, n)
        ev = evaluate_all(traj.last(), data)
        vals[mode] = {
            "gamma_T1": g[:, upto].abs().amax((-1, -2)),
            "gamma_T": g[:, -1].abs().amax(-1),
            "rho_T1": r[:, upto].amax((-1, -2, -3)),
            "rho_minmax_T1": r[:, int(upto.sum()) - 1].amax(-2).amin(-1),
            "t1": measured_t1(traj).to(f64),
            "loss": traj.loss[:, -1].to(f64),
            "loss0": traj.loss[:, 0].to(f64),
            "err_adapt": 1 - ev["adapt"].accuracy[:, -1].to(f64),
            "err_transfer": 1 - ev["transfer"].accuracy[:, -1].to(f64),
            "feature_snr": ood_feature_snr(traj, data).to(f64),
        }
        vals[mode] = {k: v.cpu() for k, v in vals[mode].items()}
    return RegimeSize(n=n, cfg=cfg, seeds=list(seeds), t1_formula=t1f, values=vals)


def run_regime_sweep(sizes: Sequence[int], seeds: Mapping[int, int], scaling: RegimeScaling = RegimeScaling(), *,
                     device="cpu", dtype="float32") -> RegimeSweep:
    """Both modes at every ``n`` of ``sizes`` with ``seeds[n]`` seeds (``0..seeds[n]-1``), span draws
    batched over seeds, the recursion: see the module docstring and :class:`RegimeSize`.  float32
    is the default (the quantities agree with float64 to the digits the book prints; the tests check
    one size)."""
    import time

    if not isinstance(scaling, RegimeScaling):
        raise ValueError(f"scaling must be a RegimeScaling, got {type(scaling).__name__}")
    sizes = [check_n(n) for n in sizes]
    if len(sizes) < 2 or len(set(sizes)) != len(sizes):
        raise ValueError(f"sizes must hold at least 2 distinct values of n, got {sizes}")
    if not isinstance(seeds, Mapping) or set(seeds) != set(sizes):
        raise ValueError(f"seeds must map every n of sizes {sizes} to a number of seeds")
    by_n, secs = {}, {}
    for n in sizes:
        t0 = time.perf_counter()
        by_n[n] = _size_run(n, range(check_int(f"seeds[{n}]", seeds[n])), scaling, device, dtype)
        secs[n] = time.perf_counter() - t0
    return RegimeSweep(sizes=sizes, by_n=by_n, scaling=scaling, seconds=secs)
