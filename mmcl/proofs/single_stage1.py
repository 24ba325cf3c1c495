"""Diagnostics of the proofs' first stage, evaluated along a simulated run (Sec. 5.1, App. C.1).

The proofs of Lemmas 5.2 and 5.4 track a few derived quantities of the weights rather than the
weights themselves.  This module computes them from a :class:`~mmcl.dynamics.trajectory.Trajectory` (any
engine: only the coefficients ``gamma``, ``rho`` of Eq. (11) are used, through
:func:`mmcl.dynamics.forward.preactivations`, so a run of the ``recursion`` engine suffices):

* the preactivations and sign sets that every stage uses (``preactivation_history``, ``sign_sets``,
  ``count_changes``, ``ever_changed``, ``signal_sign_agreement``, ``without_cross_terms``) live in
  :mod:`mmcl.proofs.preactivations`;
* :func:`rho_on_negative_init` -- ``max |rho_{r,i}(t)|`` over ``i in I_{r,-}(0)`` (Lemma C.7: zero);
* :func:`psi` -- ``Psi_{r,i}(t) = rho_{r,i}(t) + <w_r(0), xi_i>`` (App. C.1.2) and
  :func:`positive_noise_memorization`, its average over the neurons that start positive on
  ``xi_i`` (the quantity of the proof of Lemma 5.2, bounded below by ``(1 + 0.96 s)^t 0.2 sigma0
  sigma_xi sqrt(d)``);
* :func:`noise_totals` -- ``B_{r,+}(t)``, ``B_{r,-}(t)`` of Sec. 5.1, and :func:`b_coefficients`,
  the exact split of their one-step growth into ``s (a B_same - b B_other)`` with measured ``a``,
  ``b`` (Sec. 5.1 says ``a ~ 1``, ``b ~ 1/2``);
  :func:`mmcl.proofs.predictions.b_dynamics_prediction` gives the values for uniform loss derivatives;
* :func:`init_noise_totals` -- ``B_{r,+}(0)``, ``B_{r,-}(0)`` from the initial weights alone, with
  Lemma C.10's check ``|<w_r(0), xi_i>| > C B_{r,+-}(0)/n`` pair by pair; :func:`lemma_c9_bound`
  (Lemma C.9's ``sigma0 sigma_xi sqrt(dn) (1 + sqrt(log(1/delta)/2))``) and :func:`b_init_mean`
  (the mean ``n_+ sigma0 sigma_xi sqrt(d)/sqrt(2 pi)``, which grows like ``n``, not ``sqrt(n)``);
* :func:`fit_growth_rate` -- the per-step rate ``r`` of a log-linear fit ``v(t) ~ C (1 + r)^t``;
* the chapter's summaries, one per claim: :func:`recursion_vs_gd` (Lemma 5.1: the recursion is
  gradient descent), :func:`noise_growth` (Lemma 5.2: growth of ``N_i``, its rates and ``T1``),
  :func:`sign_set_report` (Lemmas C.3 and C.7) and :func:`b_coefficient_medians` (Sec. 5.1: ``a``,
  ``b`` and ``b/a``);
* rates the appendix uses: :func:`b_minus_upper_rate` (``1.05 s``, with
  ``s = eta sigma_xi^2 d/(n m tau)`` :func:`mmcl.proofs.predictions.noise_step_scale`) and :func:`signal_upper_rate_single`
  (``0.52 eta ||mu||^2/(m tau)``); the noise lower rate ``0.96 s`` is
  :func:`mmcl.proofs.predictions.single_growth_rate`.

Shapes: for one draw, quantities over time carry ``K`` (the recorded steps, ``traj.steps``) first:
``signal (K, m)``, ``noise (K, m, n)``; a batched trajectory adds a leading ``B``, exactly as
:class:`~mmcl.dynamics.trajectory.Trajectory` does.  All functions take ``tilde=True`` to use the second
network of a multi-modal run (``gamma_tilde``, ``rho_tilde``, ``mu~``, ``xi~``, ``W0~``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import torch

from mmcl._utils import check_number
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData
from mmcl.dynamics import Trajectory, simulate
from mmcl.model.decomposition import Decomposition, decompose
from mmcl.model.losses import relu as relu_
from mmcl.proofs import predictions as _predictions
from mmcl.proofs.predictions import noise_step_scale
from mmcl.proofs.preactivations import (PreactivationHistory, check_run as _check, ever_changed, preactivation_history,
                                        sign_sets)

__all__ = ["rho_on_negative_init", "psi",
           "positive_noise_memorization", "NoiseTotals", "noise_totals", "BCoefficients", "b_coefficients",
           "GrowthFit", "fit_growth_rate", "cross_term_bound", "b_minus_upper_rate",
           "signal_upper_rate_single", "RecursionCheck", "recursion_vs_gd", "NoiseGrowth", "noise_growth",
           "SignSetReport", "sign_set_report", "CoefficientMedians", "b_coefficient_medians",
           "lemma_c9_bound", "b_init_mean", "InitNoiseTotals", "init_noise_totals"]


def rho_on_negative_init(traj: Trajectory, data: SyntheticData, *, tilde: bool = False,
                         history: Optional[PreactivationHistory] = None) -> torch.Tensor:
    """Lemma C.7: ``max |rho_{r,i}(t)|`` over the pairs with ``i in I_{r,-}(0)`` (the sample's noise
    starts on the inactive side of neuron ``r``), at every recorded step: ``(..., K)``.  The lemma
    says it is identically 0: such a pair never receives a ``rho`` update while it stays inactive,
    because the update (13) carries ``sigma'(<w_r(t), xi_i>)``."""
    gamma, rho, batched = _check(traj, data, tilde)
    if history is None:
        data_c = data.to(device=gamma.device, dtype=gamma.dtype)
        W0, xi = (data_c.W0_tilde, data_c.xi_tilde) if tilde else (data_c.W0, data_c.xi)
        neg0 = (W0 @ xi.transpose(-1, -2)) < 0  # (B.., m, n)
    else:
        neg0 = history.noise.narrow(-3, 0, 1).squeeze(-3) < 0
    neg0 = neg0.unsqueeze(-3)  # broadcast over K
    return torch.where(neg0, rho.abs(), torch.zeros_like(rho)).amax((-1, -2))


# --------------------------------------------------------------------------------------------
# Noise memorisation of the stage-1 proof (App. C.1.2-C.1.3)
# --------------------------------------------------------------------------------------------
def psi(traj: Trajectory, data: SyntheticData, *, tilde: bool = False) -> torch.Tensor:
    """``Psi_{r,i}(t) = rho_{r,i}(t) + <w_r(0), xi_i>`` for every pair, ``(..., K, m, n)`` (App. C.1.2,
    where ``Psi`` is used for ``y_i = 1`` and ``Phi`` for ``y_i = -1``, both on ``i in I_{r,+}``).
    Lemma C.11 (22) bounds it below by ``(1 + 0.96 s)^t Psi_{r,i}(0)`` on those pairs, where
    ``s`` is :func:`mmcl.proofs.predictions.noise_step_scale`."""
    gamma, rho, batched = _check(traj, data, tilde)
    data_c = data.to(device=gamma.device, dtype=gamma.dtype)
    W0, xi = (data_c.W0_tilde, data_c.xi_tilde) if tilde else (data_c.W0, data_c.xi)
    P0 = W0 @ xi.transpose(-1, -2)  # (B.., m, n)
    return rho + P0.unsqueeze(-3)


def positive_noise_memorization(traj: Trajectory, data: SyntheticData, *, tilde: bool = False) -> torch.Tensor:
    """``N_i(t) = (1/m) sum_{r : <w_r(0), xi_i> > 0} Psi_{r,i}(t)`` for every sample, ``(..., K, n)``.

    This is the quantity of the proof of Lemma 5.2 (App. C.1.3, with Lemma C.12): it is bounded
    below by ``(1 + 0.96 s)^t N_i(0)`` and ``N_i(0) >= 0.2 sigma0 sigma_xi sqrt(d)``, so it reaches
    3 within the ``T1`` of Lemma 5.2.  The sum is over the neurons that start positive on ``xi_i``
    (the appendix's per-sample ``U_+(0)``), divided by all ``m`` neurons.
    """
    p = psi(traj, data, tilde=tilde)
    pos0 = (p.narrow(-3, 0, 1) > 0)  # rho(0) = 0, so Psi(0) = <w_r(0), xi_i>
    m = p.shape[-2]
    return torch.where(pos0, p, torch.zeros_like(p)).sum(-2) / m


@dataclass
class NoiseTotals:
    """``B_{r,+}(t)`` and ``B_{r,-}(t)`` of Sec. 5.1, ``(..., K, m)`` each, and ``steps (K,)``:
    ``B_{r,+-}(t) = sum_{i : y_i = +-1} (rho_{r,i}(t) + <w_r(0), xi_i>) 1[i in I_{r,+}(t)]``."""

    steps: torch.Tensor
    B_plus: torch.Tensor
    B_minus: torch.Tensor


def noise_totals(traj: Trajectory, data: SyntheticData, *, tilde: bool = False,
                 history: Optional[PreactivationHistory] = None) -> NoiseTotals:
    """The total noise memorisation ``B_{r,+}``, ``B_{r,-}`` of each neuron over the samples of each
    label that are active for it (Sec. 5.1; App. C.1.2).  ``I_{r,+}(t)`` is taken from the exact
    preactivations ``<w_r(t), xi_i>`` (pass ``history`` to reuse them)."""
    gamma, rho, batched = _check(traj, data, tilde)
    h = history if history is not None else preactivation_history(traj, data, tilde=tilde)
    p = psi(traj, data, tilde=tilde)
    active = h.noise > 0
    y = data.y.to(device=p.device)
    ypos = (y > 0).unsqueeze(-2).unsqueeze(-3)  # (B.., 1, 1, n)
    contrib = torch.where(active, p, torch.zeros_like(p))
    return NoiseTotals(steps=traj.steps,
                       B_plus=torch.where(ypos, contrib, torch.zeros_like(p)).sum(-1),
                       B_minus=torch.where(~ypos, contrib, torch.zeros_like(p)).sum(-1))


# --------------------------------------------------------------------------------------------
# Lemmas C.9 and C.10: the noise totals at initialisation
# --------------------------------------------------------------------------------------------
def lemma_c9_bound(cfg: SyntheticConfig, delta: float) -> float:
    """Lemma C.9's bound on ``B_{r,+}(0)`` and ``B_{r,-}(0)``:
    ``sigma0 sigma_xi sqrt(d n) (1 + sqrt(log(1/delta)/2))`` (``delta`` in ``(0, 1)``)."""
    cfg = _cfg(cfg)
    check_number("delta", delta, 0, 1)
    return cfg.sigma0 * cfg.sigma_xi * math.sqrt(cfg.d * cfg.n) * (1 + math.sqrt(math.log(1 / delta) / 2))


def b_init_mean(cfg: SyntheticConfig) -> float:
    """The mean of ``B_{r,+}(0) = sum_{i: y_i = 1} relu(<w_r(0), xi_i>)`` (and of ``B_{r,-}(0)``) with
    balanced labels: ``n/2`` terms, each the mean ``sigma0 sigma_xi sqrt(d)/sqrt(2 pi)`` of the positive
    part of an ``N(0, (sigma0 sigma_xi sqrt d)^2)`` variable.  It grows like ``n``; Lemma C.9's bound
    (:func:`lemma_c9_bound`) like ``sqrt(n)``, so the bound fails in mean from ``n`` of about
    ``8 pi (1 + sqrt(log(1/delta)/2))^2`` (108 at ``delta = 0.1``) on."""
    cfg = _cfg(cfg)
    if not cfg.balanced:
        raise ValueError("b_init_mean needs cfg.balanced=True (n/2 samples of each label)")
    return cfg.n / 2 * cfg.init_noise / math.sqrt(2 * math.pi)


@dataclass
class InitNoiseTotals:
    """The noise totals at initialisation and Lemma C.10's check, per draw (``B..`` leading).

    ``B_plus``, ``B_minus (B.., m)``: ``sum_{i: y_i = +-1} relu(<w_r(0), xi_i>)``; ``threshold
    (B.., m)``: ``C max(B_{r,+}(0), B_{r,-}(0))/n``; ``c10_holds (B.., m, n)``: whether
    ``|<w_r(0), xi_i>|`` exceeds it (both of Lemma C.10's inequalities); ``c10_fraction (B..)``:
    the share of pairs ``(r, i)`` where it does (the lemma says all, with probability ``1 - delta``);
    ``constant``: the ``C`` used."""

    B_plus: torch.Tensor
    B_minus: torch.Tensor
    threshold: torch.Tensor
    c10_holds: torch.Tensor
    c10_fraction: torch.Tensor
    constant: float


def init_noise_totals(data: SyntheticData, constant: Optional[float] = None, *, tilde: bool = False) -> InitNoiseTotals:
    """``B_{r,+}(0)``, ``B_{r,-}(0)`` and Lemma C.10's check from the initial weights of ``data``
    (:class:`InitNoiseTotals`, float64 on the CPU).  ``constant``: Lemma C.10's ``C`` (default: the
    ``202 C_l`` the proof of Lemma C.11 takes, ``C_l = 1.01``;
    :data:`mmcl.proofs.assumptions.C10_CONSTANT`).  ``tilde=True``: the second modality's."""
    from mmcl.proofs.assumptions import AssumptionConfig, C10_CONSTANT

    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if constant is None:
        constant = C10_CONSTANT * AssumptionConfig().c_ell
    check_number("constant", constant, 0)
    W0, xi = (data.W0_tilde, data.xi_tilde) if tilde else (data.W0, data.xi)
    if W0 is None:
        raise ValueError("tilde=True needs the second modality (data.W0_tilde is None)")
    P = (W0 @ xi.transpose(-1, -2)).double().cpu()  # (B.., m, n): <w_r(0), xi_i>
    ypos = (data.y > 0).cpu().unsqueeze(-2)  # (B.., 1, n)
    act = P.clamp_min(0)
    bp = torch.where(ypos, act, torch.zeros_like(act)).sum(-1)
    bm = torch.where(~ypos, act, torch.zeros_like(act)).sum(-1)
    thr = constant * torch.maximum(bp, bm) / data.n
    holds = P.abs() > thr.unsqueeze(-1)
    return InitNoiseTotals(B_plus=bp, B_minus=bm, threshold=thr, c10_holds=holds,
                           c10_fraction=holds.double().mean((-1, -2)), constant=float(constant))


# --------------------------------------------------------------------------------------------
# Rates of the appendix and fits
# --------------------------------------------------------------------------------------------
def _cfg(cfg) -> SyntheticConfig:
    check_config(cfg)
    return cfg


def cross_term_bound(cfg: SyntheticConfig, delta: float) -> float:
    """Lemma C.1 (and its multi-modal twin, Lemma D.2): with probability ``1 - delta`` the cross
    terms ``sum_{k != i} rho_{r,k} <xi_k, xi_i>/||xi_k||^2`` (and ``<xi_i, mu>``'s) differ from the
    coefficient they perturb by at most ``5 sqrt(log(6 n^2/delta)/d) n`` times the coefficients'
    size, ``O~(n/sqrt(d))``; returns that factor."""
    cfg = _cfg(cfg)
    check_number("delta", delta, 0, 1)
    return 5 * math.sqrt(math.log(6 * cfg.n ** 2 / delta) / cfg.d) * cfg.n


def b_minus_upper_rate(cfg: SyntheticConfig) -> float:
    """Proof of Lemma C.11: ``B_{r,-}(t) <= (1 + 1.05 s)^t B_{r,-}(0)``; returns ``1.05 s``."""
    return 1.05 * noise_step_scale(cfg)


def signal_upper_rate_single(cfg: SyntheticConfig) -> float:
    """Proof of Lemma 5.2 (App. C.1.3): ``max_r A_r(t) <= (1 + 0.52 eta ||mu||^2/(m tau))^t max_r A_r(0)``
    with ``A_r = gamma_r + <w_r(0), mu>`` on ``U_+(0)``; returns ``0.52 eta ||mu||^2/(m tau)``."""
    return 0.52 * _predictions.signal_step_scale(_cfg(cfg))


@dataclass
class BCoefficients:
    """The two terms of the summed update (13) behind the ``B`` dynamics of Sec. 5.1, per neuron.

    For a label class ``c`` (``+`` or ``-``) and the other class ``c'``, summing (13) over the
    samples of class ``c`` that are active for neuron ``r`` gives exactly
    ``sum_{i : y_i = c} (rho_{r,i}(t+1) - rho_{r,i}(t)) = s (pos_c(t) - neg_c(t))`` with
    ``s`` = :func:`~mmcl.proofs.predictions.noise_step_scale` and (``P = <w_r, xi>``, ``Q = <w_r, xi + eps>``)::

        pos_c = sum_{i : y_i = c, P_ri > 0} (1 - l'_i) sigma(Q_ri) ||xi_i||^2 / (sigma_xi^2 d)
        neg_c = sum_{i : y_i = c, P_ri > 0} sum_{j in N_i} l'_{i,j} sigma(P_rj) ||xi_i||^2 / (sigma_xi^2 d)

    Sec. 5.1 approximates ``pos_c ~ a B_c`` and ``neg_c ~ b B_c'`` with ``a = 1``, ``b = 1/2``.  Fields
    (``(..., K, m)`` each): ``pos_plus``, ``pos_minus``, ``neg_plus``, ``neg_minus``, the totals
    ``B_plus``, ``B_minus`` (:func:`noise_totals`), and the measured coefficients
    ``a_plus = pos_plus / B_plus``, ``b_plus = neg_plus / B_minus`` (and ``a_minus``, ``b_minus``),
    ``nan`` where the denominator is 0.  ``steps (K,)``.
    """

    steps: torch.Tensor
    pos_plus: torch.Tensor
    pos_minus: torch.Tensor
    neg_plus: torch.Tensor
    neg_minus: torch.Tensor
    B_plus: torch.Tensor
    B_minus: torch.Tensor

    @staticmethod
    def _ratio(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
        return torch.where(den > 0, num / torch.where(den > 0, den, torch.ones_like(den)),
                           torch.full_like(num, float("nan")))

    @property
    def a_plus(self) -> torch.Tensor:
        return self._ratio(self.pos_plus, self.B_plus)

    @property
    def a_minus(self) -> torch.Tensor:
        return self._ratio(self.pos_minus, self.B_minus)

    @property
    def b_plus(self) -> torch.Tensor:
        return self._ratio(self.neg_plus, self.B_minus)

    @property
    def b_minus(self) -> torch.Tensor:
        return self._ratio(self.neg_minus, self.B_plus)


def b_coefficients(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig, *,
                   history: Optional[PreactivationHistory] = None) -> BCoefficients:
    """Split the summed ``rho`` update (13) of each neuron and label class into its positive and
    negative terms and relate them to ``B_{r,+}``, ``B_{r,-}`` (Sec. 5.1): see :class:`BCoefficients`.

    Single-modal runs recorded with ``record_derivatives=True`` (the ``l'`` of Eq. 8 are needed).
    ``history`` must have ``noise_aug`` (``preactivation_history(..., with_augmented=True)``)."""
    cfg = _cfg(cfg)
    gamma, rho, batched = _check(traj, data, False)
    if traj.mode != "single":
        raise ValueError(f"b_coefficients is for single-modal runs (Sec. 5.1), got mode={traj.mode!r}")
    if traj.lprime is None or traj.lprime_neg is None:
        raise ValueError("b_coefficients needs the loss derivatives: simulate with record_derivatives=True")
    h = history if history is not None else preactivation_history(traj, data, with_augmented=True)
    if h.noise_aug is None:
        raise ValueError("history must include noise_aug: preactivation_history(..., with_augmented=True)")
    dt, dev = h.noise.dtype, h.noise.device
    data_c = data.to(device=dev, dtype=dt)
    P, Q = h.noise, h.noise_aug  # (..., K, m, n)
    act = (P > 0).to(dt)
    scale = (data_c.xi * data_c.xi).sum(-1) / (cfg.sigma_xi ** 2 * cfg.d)  # (B.., n)
    scale = scale[:, None, None, :] if batched else scale
    lp = traj.lprime.to(device=dev, dtype=dt)[..., None, :]  # (..., K, 1, n)
    pos_i = (1 - lp) * relu_(Q) * act * scale  # (..., K, m, n)
    neg_idx = data_c.negatives if not batched else data_c.negatives[:, None]
    lpn = traj.lprime_neg.to(device=dev, dtype=dt)  # (..., K, n, M)
    idx = neg_idx.expand(lpn.shape)
    L = torch.zeros(lpn.shape[:-1] + (lpn.shape[-2],), dtype=dt, device=dev).scatter_(-1, idx, lpn)  # L[i, j]
    neg_i = (relu_(P) @ L.transpose(-1, -2)) * act * scale  # sum_j l'_{ij} sigma(P_rj), (..., K, m, n)
    ypos = (data_c.y > 0)
    ypos = ypos[:, None, None, :] if batched else ypos
    z = torch.zeros_like(pos_i)
    tot = noise_totals(traj, data, history=h)
    return BCoefficients(steps=traj.steps,
                         pos_plus=torch.where(ypos, pos_i, z).sum(-1), pos_minus=torch.where(~ypos, pos_i, z).sum(-1),
                         neg_plus=torch.where(ypos, neg_i, z).sum(-1), neg_minus=torch.where(~ypos, neg_i, z).sum(-1),
                         B_plus=tot.B_plus, B_minus=tot.B_minus)


@dataclass
class GrowthFit:
    """``values ~ C (1 + rate)^t`` on a window: ``rate`` per step, ``log_c``, the window of steps
    ``[t_start, t_stop]`` and the coefficient of determination ``r2`` of the log-linear fit.
    Leading dimensions of the fitted values (e.g. a batch) are kept: tensors ``(...)``."""

    rate: torch.Tensor
    log_c: torch.Tensor
    r2: torch.Tensor
    t_start: int
    t_stop: int


def fit_growth_rate(values: torch.Tensor, steps: torch.Tensor, t_start: int, t_stop: int) -> GrowthFit:
    """Least-squares fit of ``log values(t) = log C + t log(1 + rate)`` over the recorded steps with
    ``t_start <= t <= t_stop``; ``values (..., K)``, ``steps (K,)``.  All fitted values must be > 0
    (a ValueError says where they are not).  Used to compare the measured growth of noise
    memorisation with the ``0.96 eta sigma_xi^2 d/(n m tau)`` of Lemma 5.2."""
    if not isinstance(values, torch.Tensor) or values.dim() < 1 or values.shape[-1] != steps.shape[0]:
        raise ValueError(f"values must be (..., K) with K={steps.shape[0]} = len(steps)")
    if not t_start < t_stop:
        raise ValueError(f"need t_start < t_stop, got {t_start} and {t_stop}")
    sel = (steps >= t_start) & (steps <= t_stop)
    if int(sel.sum()) < 2:
        raise ValueError(f"fewer than 2 recorded steps in [{t_start}, {t_stop}]")
    v = values[..., sel.to(values.device)].to(torch.float64)
    if not bool((v > 0).all()):
        raise ValueError(f"fit_growth_rate: values must be > 0 on [{t_start}, {t_stop}] (min {float(v.min()):.3g})")
    t = steps[sel].to(device=v.device, dtype=torch.float64)
    lv = v.log()
    tm, lm = t.mean(), lv.mean(-1, keepdim=True)
    slope = ((t - tm) * (lv - lm)).sum(-1) / ((t - tm) ** 2).sum()
    icpt = lm[..., 0] - slope * tm
    pred = icpt[..., None] + slope[..., None] * t
    ss_res = ((lv - pred) ** 2).sum(-1)
    ss_tot = ((lv - lm) ** 2).sum(-1)
    r2 = 1 - ss_res / ss_tot.clamp_min(1e-300)
    return GrowthFit(rate=torch.expm1(slope), log_c=icpt, r2=r2, t_start=int(t_start), t_stop=int(t_stop))


# --------------------------------------------------------------------------------------------
# The stage-1 chapter's summaries, one per claim
# --------------------------------------------------------------------------------------------
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
    cfg = _cfg(cfg)
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


@dataclass
class NoiseGrowth:
    """Lemma 5.2 along a single-modal run (:func:`noise_growth`); tensors on the CPU.

    * ``steps (K,)``; ``N (..., K, n)`` the average memorisation ``N_i(t)`` of each sample
      (:func:`positive_noise_memorization`) and ``N_med (..., K)`` its median over the samples;
    * ``fit`` the log-linear fit of ``N_med`` on the window (:func:`fit_growth_rate`);
    * ``rate_lemma`` = ``0.96 s`` (:func:`mmcl.proofs.predictions.single_growth_rate`), ``step_scale``
      = ``s`` (:func:`~mmcl.proofs.predictions.noise_step_scale`), and ``rate_ab (...)`` = ``(a - b) s``, the rate the ``B``
      dynamics of Sec. 5.1 give a typical sample, with ``a``, ``b`` the medians over the neurons of
      the ``+`` class's coefficients at ``coefficient_step`` (:func:`b_coefficients`);
    * ``T1`` the formula of Lemma 5.2 (:func:`mmcl.proofs.predictions.t1_single`) and ``t1_measured
      (...)`` the first step with ``min_i max_r rho_{r,i} >= level``
      (:func:`mmcl.proofs.predictions.measured_t1`);
    * ``gamma_max (..., K)`` = ``max_r |gamma_r|`` and ``rho_min_max (..., K)`` = ``min_i max_r rho_{r,i}``.
    """

    steps: torch.Tensor
    N: torch.Tensor
    N_med: torch.Tensor
    fit: GrowthFit
    rate_lemma: float
    step_scale: float
    rate_ab: torch.Tensor
    T1: float
    t1_measured: torch.Tensor
    gamma_max: torch.Tensor
    rho_min_max: torch.Tensor


def noise_growth(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig, *,
                 coefficients: Optional[BCoefficients] = None, history: Optional[PreactivationHistory] = None,
                 window: tuple = (1, 20), coefficient_step: int = 0, level: float = 1.0) -> NoiseGrowth:
    """How noise memorisation grows in stage 1 against Lemma 5.2 (App. C.1.3, Lemmas C.11, C.12):
    the average ``N_i(t)`` (:func:`positive_noise_memorization`), its measured geometric rate over the steps
    ``window`` (inclusive), the lemma's guaranteed rate ``0.96 s``, the rate ``(a - b) s`` of the
    class totals' dynamics (Sec. 5.1) with ``a``, ``b`` measured at the recorded index
    ``coefficient_step``, and the formula's and the measured ``T1``: see :class:`NoiseGrowth`.

    ``traj`` is a single-modal run recorded at every step with ``record_derivatives=True``; pass
    ``coefficients`` (from :func:`b_coefficients`) or ``history`` (with ``noise_aug``) to reuse them."""
    cfg = _cfg(cfg)
    _check(traj, data, False)
    if not (isinstance(window, tuple) and len(window) == 2):
        raise ValueError(f"window must be a (t_start, t_stop) tuple, got {window!r}")
    bc = coefficients if coefficients is not None else b_coefficients(traj, data, cfg, history=history)
    N = positive_noise_memorization(traj, data).cpu()  # (..., K, n)
    N_med = N.median(-1).values
    fit = fit_growth_rate(N_med, traj.steps, *window)
    s = noise_step_scale(cfg)
    a0 = bc.a_plus[..., coefficient_step, :].nanmedian(-1).values.cpu()
    b0 = bc.b_plus[..., coefficient_step, :].nanmedian(-1).values.cpu()
    return NoiseGrowth(steps=traj.steps.cpu(), N=N, N_med=N_med, fit=fit,
                       rate_lemma=_predictions.single_growth_rate(cfg), step_scale=s, rate_ab=(a0 - b0) * s,
                       T1=_predictions.t1_single(cfg),
                       t1_measured=_predictions.measured_t1(traj, level=level).cpu(),
                       gamma_max=traj.gamma.abs().amax(-1).cpu(), rho_min_max=traj.rho.amax(-2).amin(-1).cpu())


@dataclass
class SignSetReport:
    """Lemmas C.3 and C.7 along a run (:func:`sign_set_report`); tensors on the CPU, ``...`` the
    batch of a batched run.

    * ``flipped (..., m)``: the neurons that ever leave ``U_+(0)`` or ``U_-(0)`` (Lemma C.3: none);
    * ``neg_init (..., K)``: :func:`rho_on_negative_init` (Lemma C.7: zero);
    * ``left (...)``: how many pairs ``(r, i)`` start in ``I_{r,-}(0)`` and leave it at some step
      (Lemma C.7: none);
    * ``rho_max (...)``: the largest ``rho_{r,i}(t)`` of the run, to scale ``neg_init``;
    * ``signal (..., K, m)`` = ``<w_r(t), mu>``, ``signal0 (..., m)`` = ``<w_r(0), mu>`` and
      ``cross_mu (..., K, m)`` = ``<w_r(t), mu> - <w_r(0), mu> - gamma_r(t)``, the cross terms of
      ``<w_r(t), mu>`` through Eq. (11) (the noise vectors' components along ``mu``);
    * ``steps (K,)``.
    """

    steps: torch.Tensor
    flipped: torch.Tensor
    neg_init: torch.Tensor
    left: torch.Tensor
    rho_max: torch.Tensor
    signal: torch.Tensor
    signal0: torch.Tensor
    cross_mu: torch.Tensor


def sign_set_report(traj: Trajectory, data: SyntheticData, *,
                    history: Optional[PreactivationHistory] = None) -> SignSetReport:
    """Test the sign-pattern claims of Lemma C.3 (``U_+(t) = U_+(0)``, ``U_-(t) = U_-(0)``) and Lemma
    C.7 (``I_{r,-}(t) = I_{r,-}(0)`` and ``rho_{r,i}(t) = 0`` on ``I_{r,-}(0)``) along ``traj`` (first
    network), with the cross terms of ``<w_r(t), mu>`` that break Lemma C.3 at finite ``d``: see
    :class:`SignSetReport`.  Pass ``history`` (from :func:`~mmcl.proofs.preactivations.preactivation_history`) to reuse it; on
    :func:`~mmcl.proofs.preactivations.without_cross_terms` data every claim holds exactly."""
    gamma, rho, batched = _check(traj, data, False)
    h = history if history is not None else preactivation_history(traj, data)
    ss = sign_sets(traj, data, history=h)
    flipped = ever_changed(ss.U_plus, -2) | ever_changed(ss.U_minus, -2)  # (..., m)
    left = ss.I_minus.narrow(-3, 0, 1) & ~ss.I_minus  # pairs that started in I_{r,-}(0) and left it
    signal0 = (data.W0 @ data.mu[..., None])[..., 0].cpu()  # <w_r(0), mu>, (..., m)
    signal = h.signal.cpu()
    return SignSetReport(steps=traj.steps.cpu(), flipped=flipped.cpu(),
                         neg_init=rho_on_negative_init(traj, data, history=h).cpu(),
                         left=left.any(-3).flatten(-2).sum(-1).cpu(), rho_max=rho.amax((-3, -2, -1)).cpu(),
                         signal=signal, signal0=signal0, cross_mu=signal - signal0[..., None, :] - gamma.cpu())


@dataclass
class CoefficientMedians:
    """The medians over neurons, both label classes and the draws of a batch, at each recorded step
    ``steps (K,)``, of the coefficients of :class:`BCoefficients`: ``a (K,)``, ``b (K,)`` and of the
    ratio ``ratio (K,)`` = ``b/a`` (taken neuron by neuron, then the median)."""

    steps: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    ratio: torch.Tensor


def b_coefficient_medians(coefficients: BCoefficients) -> CoefficientMedians:
    """Sec. 5.1's self and cross coefficients ``a``, ``b`` of the ``B`` dynamics and their ratio,
    summarised at each step by the median over the neurons of both classes (and the draws of a
    batch), ignoring the ``nan`` of empty totals: see :class:`CoefficientMedians`.  Sec. 5.1 says
    ``b/a ~ 1/2``; :func:`~mmcl.proofs.predictions.b_dynamics_prediction` gives ``a``, ``b`` for uniform loss derivatives."""
    if not isinstance(coefficients, BCoefficients):
        raise ValueError(f"coefficients must be a BCoefficients (from b_coefficients), got "
                         f"{type(coefficients).__name__}")
    a = torch.cat([coefficients.a_plus, coefficients.a_minus], -1).cpu()  # (..., K, 2m): both classes
    b = torch.cat([coefficients.b_plus, coefficients.b_minus], -1).cpu()

    def med(v):  # (K,): over the draws, neurons and classes
        return v.movedim(-2, 0).flatten(1).nanmedian(-1).values

    return CoefficientMedians(steps=coefficients.steps.cpu(), a=med(a), b=med(b), ratio=med(b / a))
