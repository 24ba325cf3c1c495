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
  Lemma C.10's check ``|<w_r(0), xi_i>| > C B_{r,+-}(0)/n`` pair by pair;
* the chapter's summaries, one per claim: :func:`noise_growth` (Lemma 5.2: growth of ``N_i``, its
  rates and ``T1``, fitted by :func:`mmcl.fits.fit_growth_rate`), :func:`sign_set_report` (Lemmas
  C.3 and C.7) and :func:`b_coefficient_medians` (Sec. 5.1: ``a``, ``b`` and ``b/a``).

Elsewhere: the appendix's closed forms (Lemma C.1's :func:`~mmcl.proofs.predictions.cross_term_bound`,
Lemma C.9's :func:`~mmcl.proofs.predictions.lemma_c9_bound` and
:func:`~mmcl.proofs.predictions.b_init_mean`, the rates
:func:`~mmcl.proofs.predictions.b_minus_upper_rate` and
:func:`~mmcl.proofs.predictions.signal_upper_rate_single`) are in :mod:`mmcl.proofs.predictions`
(importable from here too); Lemma 5.1 checked on a run (the recursion against gradient descent) is
:func:`mmcl.experiments.single_stage1.recursion_vs_gd`.

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
from mmcl.dynamics import Trajectory
from mmcl.fits import GrowthFit, fit_growth_rate
from mmcl.model.losses import relu as relu_
from mmcl.proofs import predictions as _predictions
from mmcl.proofs.predictions import noise_step_scale
# the appendix's closed forms, once here: their home is mmcl.proofs.predictions
from mmcl.proofs.predictions import (b_init_mean, b_minus_upper_rate, cross_term_bound,  # noqa: F401
                                     lemma_c9_bound, signal_upper_rate_single)
from mmcl.proofs.preactivations import (PreactivationHistory, check_run as _check, ever_changed, preactivation_history,
                                        sign_sets)

__all__ = ["rho_on_negative_init", "psi",
           "positive_noise_memorization", "NoiseTotals", "noise_totals", "BCoefficients", "b_coefficients",
           "NoiseGrowth", "noise_growth", "SignSetReport", "sign_set_report", "CoefficientMedians",
           "b_coefficient_medians", "InitNoiseTotals", "init_noise_totals"]


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
# Lemma C.10: the noise totals at initialisation
# --------------------------------------------------------------------------------------------
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
    check_config(cfg)
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


# --------------------------------------------------------------------------------------------
# The stage-1 chapter's summaries, one per claim
# --------------------------------------------------------------------------------------------
@dataclass
class NoiseGrowth:
    """Lemma 5.2 along a single-modal run (:func:`noise_growth`); tensors on the CPU.

    * ``steps (K,)``; ``N (..., K, n)`` the average memorisation ``N_i(t)`` of each sample
      (:func:`positive_noise_memorization`) and ``N_med (..., K)`` its median over the samples;
    * ``fit`` the log-linear fit of ``N_med`` on the window (:func:`~mmcl.fits.fit_growth_rate`);
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
    check_config(cfg)
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
