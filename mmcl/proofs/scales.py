"""What stage 2 leaves: the scales of signal learning and noise memorisation after training, and
what they do downstream (Theorem 4.2's second claim, Lemma C.18, Lemma D.15, App. C.3/D.3).

* :class:`ScaleGap`, :func:`scale_gap` -- single-modal: the signal against the least-memorised
  sample's noise along a run, and the growth of the signal after ``T1`` (Lemma C.18: at most 3x);
* :func:`scaled_config` -- a configuration at another ``n`` with Assumption 4.1's scalings kept
  (the experiment that sweeps ``n`` is ``mmcl.experiments.single_stage2.scale_gap_sweep``);
* :func:`ood_feature_snr` -- the best feature's signal-to-noise ratio on the OOD inputs;
* :class:`Stage2Scales`, :func:`stage2_scales` -- multi-modal: both networks' signal and noise, and
  their growth after ``T1``;
* :func:`growth_from` -- the growth of a quantity from a recorded step on, shared by both.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from mmcl._utils import check_int
from mmcl.dynamics import Trajectory, preactivations
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData

__all__ = ["growth_from", "ScaleGap", "scale_gap", "scaled_config", "ood_feature_snr", "Stage2Scales", "stage2_scales"]


def growth_from(x: torch.Tensor, k: int) -> torch.Tensor:
    """``max_{j >= k} x[..., j] / x[..., k]``: how far a quantity recorded over ``(..., K)`` grows
    after its ``k``-th recorded step."""
    return (x[..., k:] / x[..., k:k + 1]).amax(-1)


# --------------------------------------------------------------------------------------------
# Theorem 4.2's second claim: the scale gap of stage 1 survives, and what it does downstream
# --------------------------------------------------------------------------------------------
@dataclass
class ScaleGap:
    """Signal against noise memorisation along a run (Lemma C.18, Theorem 4.2), on the CPU:
    ``steps (K,)``, ``gamma_max (..., K)`` = ``max_r |gamma_r(t)|``, ``rho_minmax (..., K)`` =
    ``min_i max_r rho_{r,i}(t)`` (how well the least-memorised sample is memorised), ``t1`` and
    ``growth (...)`` = ``max_{t >= t1} gamma_max(t) / gamma_max(t1)`` (Lemma C.18: ``<= 3``)."""

    steps: torch.Tensor
    gamma_max: torch.Tensor
    rho_minmax: torch.Tensor
    t1: int
    growth: torch.Tensor

    @property
    def gap(self) -> torch.Tensor:
        """``rho_minmax / gamma_max``, ``(..., K)``."""
        return self.rho_minmax / self.gamma_max


def scale_gap(traj: Trajectory, t1: int) -> ScaleGap:
    """:class:`ScaleGap` of a run (any mode and engine), with the growth of the signal measured
    from the recorded step ``t1`` on."""
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    idx = (traj.steps == t1).nonzero()
    if idx.numel() != 1:
        raise ValueError(f"t1={t1!r} is not a recorded step of traj")
    k1 = int(idx[0, 0])
    gamma_max = traj.gamma.abs().amax(-1).cpu()
    return ScaleGap(steps=traj.steps.cpu(), gamma_max=gamma_max, rho_minmax=traj.rho.amax(-2).amin(-1).cpu(), t1=t1,
                    growth=growth_from(gamma_max, k1))


def scaled_config(cfg: SyntheticConfig, n: int) -> SyntheticConfig:
    """``cfg`` at ``n`` samples with the rest of Assumption 4.1 where ``cfg`` has it at its own
    ``n`` (Figure 1's ``d = 20 n``, ``M = 0.45 n``): ``d = floor(n d/n_cfg)`` (keeps ``n SNR^2`` and the noise step
    ``eta sigma_xi^2 d/(n m tau)``), ``M = floor((M/n) n)`` and ``sigma0`` scaled by
    ``sqrt(d_cfg/d)`` (keeps ``sigma0 sigma_xi sqrt(d)``, Assumption 4.1(3)).  The sweep over ``n``
    that runs at these configurations is an experiment: ``mmcl.experiments.single_stage2.scale_gap_sweep``."""
    check_config(cfg)
    check_int("n", n, 2)
    d = cfg.d * n // cfg.n
    return cfg.replace(n=n, d=d, M=int(cfg.M / cfg.n * n), sigma0=cfg.init_noise / (cfg.sigma_xi * math.sqrt(d)))


def ood_feature_snr(traj: Trajectory, data: SyntheticData) -> torch.Tensor:
    """The signal-to-noise ratio of the best feature on the OOD inputs at the last recorded step
    (App. C.3): ``max_r |<w_r, nu>| / sd_k(<w_r, zeta_k>)`` over the held-out noise ``zeta_k`` of
    ``data.ood``; ``(...)`` on the CPU.  Small (below 1) means the signal part of every feature
    drowns in its noise part."""
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    if not isinstance(data, SyntheticData) or data.ood is None:
        raise ValueError("data must be a SyntheticData with an OOD set (sample with with_ood=True)")
    ood = data.ood
    g_T, r_T = traj.gamma[..., -1, :], traj.rho[..., -1, :, :]  # (..., m), (..., m, n)
    sig = preactivations(data, g_T, r_T, ood.nu[..., None, :])[..., 0].abs()  # |<w_r, nu>|
    noi = preactivations(data, g_T, r_T, ood.zeta_eval).std(-1)  # spread of <w_r, zeta>
    return (sig / noi).amax(-1).cpu()


# --------------------------------------------------------------------------------------------
# What stage 2 leaves: signal and noise of both networks (Lemma D.15, App. D.3)
# --------------------------------------------------------------------------------------------
@dataclass
class Stage2Scales:
    """Signal learning and noise memorisation of both networks along a multi-modal run, on the CPU:
    ``steps (K,)``; ``gamma_max``, ``gamma_tilde_max (..., K)`` = ``max_r gamma_r(t)``,
    ``max_r gamma~_r(t)`` (App. D.3's ``max_r A_r = Omega~(1)``); ``rho_max``, ``rho_tilde_max (..., K)``
    = ``max_{r,i} |rho_{r,i}(t)|``, ``max_{r,i} |rho~_{r,i}(t)|`` (Lemma D.15 bounds them by
    ``rho_bound = sigma0 sigma_xi sqrt(d)`` on ``[T1, T]``); ``t1``; ``growth`` and ``growth_tilde
    (...)``: ``max_{t >= t1} gamma_max(t) / gamma_max(t1)`` (and for the second network);
    ``rho_growth``, ``rho_tilde_growth (...)``: the same for ``rho_max``."""

    steps: torch.Tensor
    gamma_max: torch.Tensor
    gamma_tilde_max: torch.Tensor
    rho_max: torch.Tensor
    rho_tilde_max: torch.Tensor
    rho_bound: float
    t1: int
    growth: torch.Tensor
    growth_tilde: torch.Tensor
    rho_growth: torch.Tensor
    rho_tilde_growth: torch.Tensor

    @property
    def lead(self) -> torch.Tensor:
        """``gamma_max / rho_max``, ``(..., K)``: how far the signal leads the noise in the first network."""
        return self.gamma_max / self.rho_max

    @property
    def lead_tilde(self) -> torch.Tensor:
        """``gamma_tilde_max / rho_tilde_max``, ``(..., K)``."""
        return self.gamma_tilde_max / self.rho_tilde_max


def stage2_scales(traj: Trajectory, cfg: SyntheticConfig, t1: int) -> Stage2Scales:
    """:class:`Stage2Scales` of a multi-modal run (any engine), with growth measured from the
    recorded step ``t1`` on."""
    if not isinstance(traj, Trajectory) or traj.mode != "multi" or traj.gamma_tilde is None:
        raise ValueError("traj must be a multi-modal Trajectory (mode='multi')")
    check_config(cfg)
    idx = (traj.steps == t1).nonzero()
    if idx.numel() != 1:
        raise ValueError(f"t1={t1!r} is not a recorded step (steps run {int(traj.steps[0])}..{int(traj.steps[-1])})")
    k1 = int(idx[0, 0])

    def growth(x):
        return growth_from(x, k1)

    g, gt = traj.gamma.amax(-1).cpu(), traj.gamma_tilde.amax(-1).cpu()
    r, rt = traj.rho.abs().amax((-1, -2)).cpu(), traj.rho_tilde.abs().amax((-1, -2)).cpu()
    return Stage2Scales(steps=traj.steps.cpu(), gamma_max=g, gamma_tilde_max=gt, rho_max=r, rho_tilde_max=rt,
                        rho_bound=cfg.init_noise, t1=t1, growth=growth(g), growth_tilde=growth(gt),
                        rho_growth=growth(r), rho_tilde_growth=growth(rt))
