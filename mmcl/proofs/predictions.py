"""Closed-form predictions of the paper's lemmas, for comparison with simulations.

Each function names the lemma it evaluates; the constants (0.96, 0.48, 20, 2.66, ...) are the
paper's.  ``cfg`` is a :class:`~mmcl.model.config.SyntheticConfig`.
"""
from __future__ import annotations

import math

import torch

from mmcl.model.config import SyntheticConfig
from mmcl.dynamics.trajectory import Trajectory
from mmcl.dynamics.engines import _t1_stat

__all__ = ["single_growth_rate", "multi_growth_rate", "t1_single", "t1_multi", "t1_formula",
           "measured_t1", "C_MU_THRESHOLD"]

C_MU_THRESHOLD = 2.66  # Assumption 4.1(7): C_mu = ||mu~||/||mu|| >= 2.66 (our reading of the extracted text)


def single_growth_rate(cfg: SyntheticConfig) -> float:
    """Sec. 5.1 / Lemma 5.2: noise memorisation grows at least like ``(1 + r)^t`` with
    ``r = 0.96 eta sigma_xi^2 d / (n m tau)``; returns ``r``."""
    return 0.96 * cfg.lr * cfg.sigma_xi ** 2 * cfg.d / (cfg.n * cfg.m * cfg.tau)


def multi_growth_rate(cfg: SyntheticConfig) -> float:
    """Lemma 5.4: signal learning grows like ``(1 + r)^t`` with ``r = 0.48 C_mu eta ||mu||^2 / (m tau)``."""
    return 0.48 * cfg.c_mu * cfg.lr * cfg.mu_norm ** 2 / (cfg.m * cfg.tau)


def t1_single(cfg: SyntheticConfig) -> float:
    """Lemma 5.2: ``T1 = log(20/(sigma0 sigma_xi sqrt d)) / log(1 + 0.96 eta sigma_xi^2 d/(n m tau))``."""
    return math.log(20.0 / cfg.init_noise) / math.log1p(single_growth_rate(cfg))


def t1_multi(cfg: SyntheticConfig) -> float:
    """Lemma 5.4: ``T1 = log(20/(sigma0 ||mu||)) / log(1 + 0.48 C_mu eta ||mu||^2/(m tau))``."""
    return math.log(20.0 / (cfg.sigma0 * cfg.mu_norm)) / math.log1p(multi_growth_rate(cfg))


def t1_formula(cfg: SyntheticConfig, mode: str) -> float:
    """:func:`t1_single` or :func:`t1_multi` by ``mode``."""
    if mode == "single":
        return t1_single(cfg)
    if mode == "multi":
        return t1_multi(cfg)
    raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")


def measured_t1(traj: Trajectory, level: float = 1.0) -> torch.Tensor:
    """The first recorded step at which stage 1 has ended, by our operational definition of the
    lemmas' ``Omega(1)``: single mode (Lemma 5.2), ``min_i max_r rho_{r,i} >= level``; multi mode
    (Lemma 5.4), ``max_r gamma_r >= level``.  ``nan`` where the level is never reached.

    From ``traj.t1_stat`` at ``traj.t1_steps`` where the run recorded it
    (``simulate(..., t1_every=k)``), else from the recorded states at ``traj.steps``.

    Returns a 0-d tensor for one draw, ``(B,)`` for a batch."""
    if not level > 0:
        raise ValueError(f"level must be > 0, got {level!r}")
    if traj.t1_stat is not None:
        stat, at = traj.t1_stat, traj.t1_steps
    else:
        stat, at = _t1_stat(traj.mode, traj.gamma, traj.rho), traj.steps  # (..., K)
    reached = stat >= level
    first = reached.to(torch.int64).argmax(-1)
    steps = at.to(stat.device)[first].to(torch.float64)
    return torch.where(reached.any(-1), steps, torch.full_like(steps, float("nan")))
