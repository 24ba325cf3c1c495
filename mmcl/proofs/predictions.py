"""Closed-form predictions of the paper's lemmas, for comparison with simulations.

Each function names the lemma it evaluates; the constants (0.96, 0.48, 20, 2.66, ...) are the
paper's.  ``cfg`` is a :class:`~mmcl.model.config.SyntheticConfig`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from mmcl.model.config import SyntheticConfig, check_config
from mmcl.dynamics.trajectory import Trajectory
from mmcl.dynamics.engines import t1_statistic

__all__ = ["b_dynamics_prediction", "pairing_rate", "pairing_rate_of", "noise_step_scale", "signal_step_scale", "single_growth_rate", "multi_growth_rate", "t1_single", "t1_multi", "t1_formula",
           "measured_t1", "C_MU_THRESHOLD", "Stage1Race", "stage1_race"]

C_MU_THRESHOLD = 2.66  # Assumption 4.1(7): C_mu = ||mu~||/||mu|| >= 2.66 (our reading of the extracted text)


def noise_step_scale(cfg: SyntheticConfig) -> float:
    """``s = eta sigma_xi^2 d / (n m tau)``: the factor of the ``rho`` update (13) once ``||xi_i||^2``
    is replaced by its mean ``sigma_xi^2 d`` (Sec. 5.1, the ``B`` dynamics).  Every noise rate of the
    appendix is a constant times ``s``."""
    check_config(cfg)
    return cfg.lr * cfg.sigma_xi ** 2 * cfg.d / (cfg.n * cfg.m * cfg.tau)


def signal_step_scale(cfg: SyntheticConfig) -> float:
    """``eta ||mu||^2 / (m tau)``: the factor of the ``gamma`` update (12); every signal rate of the
    appendix is a constant times it (``0.52`` single-modal, ``0.48 C_mu`` multi-modal)."""
    check_config(cfg)
    return cfg.lr * cfg.mu_norm ** 2 / (cfg.m * cfg.tau)


def single_growth_rate(cfg: SyntheticConfig) -> float:
    """Sec. 5.1 / Lemma 5.2: noise memorisation grows at least like ``(1 + r)^t`` with
    ``r = 0.96 eta sigma_xi^2 d / (n m tau)``; returns ``r``."""
    return 0.96 * noise_step_scale(cfg)


def multi_growth_rate(cfg: SyntheticConfig) -> float:
    """Lemma 5.4: signal learning grows like ``(1 + r)^t`` with ``r = 0.48 C_mu eta ||mu||^2 / (m tau)``."""
    return 0.48 * cfg.c_mu * signal_step_scale(cfg)


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
        stat, at = t1_statistic(traj.mode, traj.gamma, traj.rho), traj.steps  # (..., K)
    reached = stat >= level
    first = reached.to(torch.int64).argmax(-1)
    steps = at.to(stat.device)[first].to(torch.float64)
    return torch.where(reached.any(-1), steps, torch.full_like(steps, float("nan")))


def b_dynamics_prediction(cfg: SyntheticConfig) -> tuple:
    """``(a, b)`` predicted for ``B_same(t+1) - B_same(t) ~ s (a B_same(t) - b B_other(t))`` when
    every loss derivative sits at its uniform value ``l'_i = l'_{i,j} = 1/(M+1)`` (stage 1, Lemma C.2):

    * ``a = M/(M+1)``: the weight ``1 - l'_i`` of the positive term of (13);
    * ``b = M/(2(M+1))``: a sample ``i`` of label ``+1`` meets ``M`` of the ``n/2`` opposite-label
      samples as negatives, each with weight ``1/(M+1)``; summing over the about ``n/4`` samples of
      its class that are active for ``r`` (the random sign of the initialisation: the ``1/2`` of
      Sec. 5.1) gives ``(n/4) (2M/n) / (M+1) = M/(2(M+1))``.

    Sec. 5.1 writes ``(1, 1/2)``, the ``M -> infinity`` limit.  (Assumes balanced labels.)"""
    check_config(cfg)
    return cfg.M / (cfg.M + 1), cfg.M / (2 * (cfg.M + 1))


def pairing_rate(cfg: SyntheticConfig) -> float:
    """``kappa = eta M ||mu|| ||mu~|| / (2 m tau (M + 1))``: the per-step rate of the linear stage-1
    map of the normalised signal preactivations (:mod:`mmcl.proofs.multi_stage1`; ours).

    It is Lemma 5.4's rate ``0.48 C_mu eta ||mu||^2/(m tau)`` with the lemma's lower constant 0.48
    replaced by its exact value ``M/(2(M+1))`` at uniform loss derivatives and balanced labels."""
    check_config(cfg)
    return pairing_rate_of(cfg.lr, cfg.tau, cfg.M, cfg.m, cfg.mu_norm, cfg.mu_tilde_norm)


def pairing_rate_of(lr, tau, M: int, m: int, mu_norm, mu_tilde_norm):
    """:func:`pairing_rate` from its ingredients (numbers, or tensors of one shape)."""
    return lr * M * mu_norm * mu_tilde_norm / (2.0 * m * tau * (M + 1))


# --------------------------------------------------------------------------------------------
# The race of stage 1 in closed form (ours, from Lemmas 5.1 and 5.3 at uniform loss derivatives)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stage1Race:
    """The closed-form race of stage 1 (:func:`stage1_race`) for one configuration and mode.

    ``signal_rate``, ``noise_rate``: the per-step growth rates ``r`` of the signal and of the noise
    preactivations (each grows like ``x0 (1 + r)^t``); ``signal_init``, ``noise_init``: their initial
    sizes ``x0``; ``level``: the preactivation at which the loss saturates; ``signal_step``,
    ``noise_step``: the steps at which each reaches ``level``; ``winner``: ``"signal"`` or
    ``"noise"``, the one that reaches it first (``"noise"`` on a tie)."""

    mode: str
    signal_rate: float
    noise_rate: float
    signal_init: float
    noise_init: float
    level: float
    signal_step: float
    noise_step: float
    winner: str

    @property
    def rate_ratio(self) -> float:
        """``signal_rate / noise_rate``: ``n SNR^2`` (single), ``C_mu n SNR^2`` (multi, equal noise in both modalities)."""
        return self.signal_rate / self.noise_rate

    @property
    def head_start(self) -> float:
        """``noise_init / signal_init``: ``1/SNR`` (single), ``1/(sqrt(C_mu) SNR)`` (multi, equal noise)."""
        return self.noise_init / self.signal_init


def _crossing(level: float, x0: float, rate: float) -> float:
    return 0.0 if x0 >= level else math.log(level / x0) / math.log1p(rate)


def stage1_race(cfg: SyntheticConfig, mode: str) -> Stage1Race:
    r"""Which feature wins stage 1, in closed form: the signal ``mu`` or the noise ``xi_i``.

    Ours, from the updates of Lemma 5.1 (``mode="single"``, Eqs. 12-13) and Lemma 5.3
    (``mode="multi"``) under four simplifications of stage 1: every loss derivative sits at its
    initial value ``l'_i = l'_{i,j} = 1/(M+1)`` (Lemmas C.2, D.1 with ``C_l = 1``), the cross terms
    ``<xi_i, xi_k>``, ``<xi_i, mu>`` are dropped
    (:func:`mmcl.proofs.preactivations.without_cross_terms`), the labels are balanced, and
    ``||xi_i||^2`` is replaced by its mean ``sigma_xi^2 d``.  Write ``a = M/(M+1)`` (the weight
    ``1 - l'_i`` of the positive term, :func:`mmcl.proofs.predictions.b_dynamics_prediction`).

    *Signal.*  With hard negatives the negative term of Eq. (12) vanishes, and a neuron's signal
    preactivation is pushed by the ``n/2`` samples of its sign:
    ``<w_r, mu>(t+1) = <w_r, mu>(t) (1 + kappa)`` with ``kappa = a eta ||mu||^2/(2 m tau)``, the rate of
    :func:`mmcl.proofs.predictions.pairing_rate` with the network paired with itself.  Multi-modal
    (Lemma 5.3), the normalised preactivations ``u = <w_r, mu>/||mu||``, ``v = <w~_r, mu~>/||mu~||``
    follow ``u + kappa v``, ``v + kappa u`` with ``kappa = a eta ||mu|| ||mu~||/(2 m tau)``
    (:func:`~mmcl.proofs.multi_stage1.stage1_signal_prediction`): their sum grows at ``kappa``.

    *Noise.*  For an active pair (``<w_r, xi_i> > 0``) Eq. (13) reads exactly
    ``Psi_{r,i}(t+1) = Psi_{r,i}(t) + a s (Psi_{r,i}(t) - mean_{j in N_i} sigma(Psi_{r,j}(t)))``
    with ``s = eta sigma_xi^2 d/(n m tau)`` (:func:`mmcl.proofs.predictions.noise_step_scale`) and
    ``sigma_eps`` neglected.  A pair far above the mean of its negatives grows at ``a s`` (the
    ``0.96 s`` of Lemma 5.2 with its exact constant), but the similarity margin is carried by all
    of a sample's active pairs; summed over a class they follow the class totals of Sec. 5.1,
    ``B_c -> B_c + s (a B_c - b B_c')`` with ``b = M/(2(M+1))``, whose balanced mode
    ``B_+ + B_-`` grows at ``(a - b) s``: the noise rate.  (The mode ``B_+ - B_-`` grows at
    ``(a + b) s`` but starts about ``sqrt(n)`` times smaller.)  Multi-modal, a pair is driven by
    the partner's ``<w~_r, xi~_i>`` and grows only where both are active; the normalised totals
    grow at ``(a - b) sqrt(s s~)`` (``s~`` with ``sigma_xi~``, ``d~``).  Since ``a - b = b``, the
    rate ratio is ``n SNR^2`` exactly (single) and ``C_mu n SNR^2`` (multi, equal noise).

    *Sizes and the finish line.*  The initial sizes are the root-mean-square initial
    preactivations: ``sigma0 ||mu||`` and ``sigma0 sigma_xi sqrt(d)`` (single; the noise starts
    ahead by ``1/SNR``), and in multi mode the geometric means over the two networks of the growing
    mode ``(u + v)/2``, ``sigma0 sqrt(||mu|| ||mu~||/2)`` and ``sigma0 sqrt(sigma_xi sqrt(d) sigma_xi~
    sqrt(d~)/2)``.  The loss leaves its uniform stage when a similarity margin reaches
    ``tau log M`` (then ``l'_i`` has risen from ``1/(M+1)`` to 1/2); with half of the neurons
    active at preactivation ``x`` a feature puts ``x^2/2`` into the similarity, so the level is
    ``L = sqrt(2 tau log M)``.  Each feature reaches it at
    ``T = log(L/x0) / log(1 + r)`` (0 if ``x0 >= L``), as in Lemmas 5.2/5.4 (``t1_single``,
    ``t1_multi``) with their constants 20, 0.96, 0.48 replaced by these; the winner is the earlier.

    In the small-rate limit the signal wins iff ``r_signal/r_noise > log(L/x0_signal)/log(L/x0_noise)``:
    single-modal, ``n SNR^2 > 1 + log(1/SNR)/log(L/(sigma0 sigma_xi sqrt d))``; multi-modal (equal
    noise in both modalities), ``C_mu n SNR^2 > 1 + log(1/(sqrt(C_mu) SNR))/log(L/x0_noise)``, a
    function of the product ``C_mu n SNR^2`` alone at fixed ``n``.  Checked against one step of
    :func:`mmcl.dynamics.reference.reference_step` and against simulated races in
    ``tests/test_predictions_race.py``; the book's section "The race in closed form" (chapter
    "Phase diagrams") compares it with the sweeps.

    Returns a :class:`Stage1Race`.  Needs rates in ``(0, 1)`` (else the linear stage overshoots in
    one step) and ``M >= 2`` (a positive level)."""
    check_config(cfg)
    if mode not in ("single", "multi"):
        raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")
    if cfg.M < 2:
        raise ValueError(f"stage1_race needs M >= 2 for a positive level sqrt(2 tau log M), got M={cfg.M}")
    a, b = b_dynamics_prediction(cfg)
    s = noise_step_scale(cfg)
    if mode == "single":
        signal_rate = pairing_rate(cfg.replace(mu_tilde_norm=cfg.mu_norm))  # the network is its own partner
        noise_rate = (a - b) * s
        signal_init = cfg.sigma0 * cfg.mu_norm
        noise_init = cfg.init_noise
    else:
        s_tilde = noise_step_scale(cfg.second_modality_noise())
        signal_rate = pairing_rate(cfg)
        noise_rate = (a - b) * math.sqrt(s * s_tilde)
        signal_init = cfg.sigma0 * math.sqrt(cfg.mu_norm * cfg.mu_tilde_norm / 2)
        noise_init = math.sqrt(cfg.init_noise * cfg.sigma0 * cfg.sigma_xi_tilde * math.sqrt(cfg.d_tilde) / 2)
    for name, r in (("signal", signal_rate), ("noise", noise_rate)):
        if not 0 < r < 1:
            raise ValueError(f"the {name} rate {r:.3g} must lie in (0, 1) for the linear stage 1; lower lr or "
                             f"raise tau")
    level = math.sqrt(2 * cfg.tau * math.log(cfg.M))
    t_sig, t_noise = _crossing(level, signal_init, signal_rate), _crossing(level, noise_init, noise_rate)
    return Stage1Race(mode=mode, signal_rate=signal_rate, noise_rate=noise_rate, signal_init=signal_init,
                      noise_init=noise_init, level=level, signal_step=t_sig, noise_step=t_noise,
                      winner="signal" if t_sig < t_noise else "noise")
