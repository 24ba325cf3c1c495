"""Multi-modal learning, stage 1 (Sec. 5.2; Lemmas 5.3, 5.4; App. D.1): synchronisation of the two
networks' signal signs, the loss-derivative band of Lemma D.1 and the noise bounds of Lemma D.9.

Every quantity is read off a multi-modal :class:`~mmcl.dynamics.trajectory.Trajectory` (any engine: only the
coefficients ``gamma``, ``rho``, ``gamma_tilde``, ``rho_tilde`` of Eqs. (11), (14) are used).

**Synchronisation (Lemma D.3).**  Neuron ``r`` of the first network and neuron ``r`` of the second
are paired in the similarities of Eq. (8).  Write the normalised signal preactivations
``u_r(t) = <w_r(t), mu>/||mu||`` and ``v_r(t) = <w~_r(t), mu~>/||mu~||``.  Lemma D.3 says that a
neuron whose two signs agree at initialisation keeps them, and that a neuron whose signs disagree
reaches agreement at some step ``t'``; the paper gives no value for ``t'``.  Ours: while the loss
derivatives are uniform (``l'_i = l'_{i,j} = 1/(M+1)``, Lemma D.1 with ``C_l = 1``), the labels are
balanced and the noise patches are orthogonal to the signal, the positive and the negative terms of
Eqs. (15), (17) combine through ``sigma(x) - sigma(-x) = x`` into the *linear* map::

    u(t+1) = u(t) + kappa v(t),   v(t+1) = v(t) + kappa u(t),
    kappa  = eta M ||mu|| ||mu~|| / (2 m tau (M+1))             (:func:`mmcl.proofs.predictions.pairing_rate`),

whatever the signs.  Its solution (:func:`stage1_signal_prediction`) is
``u(t) = ((1+kappa)^t s + (1-kappa)^t q)/2``, ``v(t) = ((1+kappa)^t s - (1-kappa)^t q)/2`` with
``s = u(0) + v(0)``, ``q = u(0) - v(0)``: the sum grows like Lemma 5.4's ``(1 + 0.48 C_mu eta
||mu||^2/(m tau))^t`` (``kappa`` is that rate with ``M/(2(M+1))`` for ``0.48``), the difference decays.
A neuron that starts with opposite signs therefore synchronises on the sign of ``s`` (the modality
with the larger normalised preactivation wins) at the first step ``t > log|q/s| / log((1+kappa)/(1-kappa))``
(:func:`predicted_sync_step`).

**Loss derivatives (Lemma D.1).**  :func:`loss_derivative_spread` is the smallest ``C_l`` with
``1/(C_l (M+1)) <= l'_i, l'_{i,j} <= C_l/(M+1)`` at each recorded step: stage 1 is where it stays
near 1.

**Noise (Lemma D.9, Sec. 5.2).**  :func:`noise_cases` sorts every pair ``(r, i)`` by the signs of
``<w_r(0), xi_i>`` and ``<w~_r(0), xi~_i>`` into the four cases of Lemma D.9 and checks each case's
claim up to ``T1``; :func:`noise_growth_rate` is the ``1.06 eta sigma_xi^2 d/(n m tau)`` of Eq. (45)
and :func:`lemma54_noise_bound` the explicit bound on ``max Psi(T1)`` in the proof of Lemma 5.4.

Shapes follow :class:`~mmcl.dynamics.trajectory.Trajectory`: for one draw, quantities over time are
``(K, m)`` or ``(K, m, n)`` with ``K = len(traj.steps)``; a batched run adds a leading ``B``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

from mmcl._utils import check_int, check_number
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData
from mmcl.proofs import predictions as _predictions
from mmcl.proofs.predictions import pairing_rate_of
from mmcl.proofs.preactivations import preactivation_history
from mmcl.dynamics import Trajectory

__all__ = ["stage1_signal_prediction", "predicted_sync_step", "Synchronisation",
           "synchronisation", "lemma_d4_lower_bound", "loss_derivative_spread", "loss_derivative_spread_at", "noise_growth_rate",
           "lemma54_noise_bound", "NoiseCases", "noise_cases", "NOISE_CASES", "Stage1End", "stage1_end"]

#: Lemma D.9's four cases, by the initial signs of ``(<w_r(0), xi_i>, <w~_r(0), xi~_i>)``.
NOISE_CASES = {1: "I- & I~- : rho = rho~ = 0",
               2: "I- & I~+ : rho = 0, rho~ <= 0",
               3: "I+ & I~- : rho~ = 0, rho <= 0",
               4: "I+ & I~+ : Psi <= (1 + 1.06 s)^t (Psi(0) + Psi~(0))"}


# --------------------------------------------------------------------------------------------
# Argument handling
# --------------------------------------------------------------------------------------------
def _check_cfg(cfg) -> SyntheticConfig:
    check_config(cfg)
    return cfg


def _check_multi(traj: Trajectory, data: SyntheticData) -> bool:
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if traj.mode != "multi" or traj.gamma_tilde is None:
        raise ValueError(f"synchronisation needs a multi-modal trajectory (mode='multi'), got mode={traj.mode!r}")
    return traj.check_data(data)


# --------------------------------------------------------------------------------------------
# The linear stage-1 map of the signal preactivations (ours, from Eqs. 15, 17 and Lemma D.1)
# --------------------------------------------------------------------------------------------
def _as_kappa(kappa, like: torch.Tensor) -> torch.Tensor:
    k = torch.as_tensor(kappa, dtype=torch.float64, device=like.device)
    if not bool(((k > 0) & (k < 1)).all()):
        raise ValueError(f"kappa must lie in (0, 1) for the stage-1 map to be monotone in each "
                         f"eigendirection, got {k.flatten()[:4].tolist()}; lower lr or raise tau")
    return k


def stage1_signal_prediction(u0: torch.Tensor, v0: torch.Tensor, kappa, steps: torch.Tensor
                             ) -> Tuple[torch.Tensor, torch.Tensor]:
    """The closed-form solution of the linear stage-1 map ``(u, v) -> (u + kappa v, v + kappa u)``.

    ``u0 (..., m)``, ``v0 (..., m)``: normalised initial signal preactivations ``<w_r(0), mu>/||mu||``
    and ``<w~_r(0), mu~>/||mu~||``; ``kappa``: a float or a tensor broadcastable to ``(...)``, in
    ``(0, 1)``; ``steps (K,)``.  Returns ``u (..., K, m)`` and ``v (..., K, m)`` in float64.
    """
    u0, v0 = u0.to(torch.float64), v0.to(torch.float64)
    if u0.shape != v0.shape:
        raise ValueError(f"u0 {tuple(u0.shape)} and v0 {tuple(v0.shape)} must have the same shape")
    k = _as_kappa(kappa, u0)[..., None, None]  # (..., 1, 1)
    t = torch.as_tensor(steps, dtype=torch.float64, device=u0.device)[:, None]  # (K, 1)
    grow, decay = (1 + k) ** t, (1 - k) ** t  # (..., K, 1)
    s, q = (u0 + v0)[..., None, :], (u0 - v0)[..., None, :]
    return (grow * s + decay * q) / 2, (grow * s - decay * q) / 2


def predicted_sync_step(u0: torch.Tensor, v0: torch.Tensor, kappa) -> torch.Tensor:
    """The first step ``t'`` at which the linear stage-1 map gives ``u(t) v(t) > 0`` (ours).

    ``0`` for neurons that start with agreeing signs; for the others the first integer
    ``t > log|q/s| / log((1+kappa)/(1-kappa))`` with ``s = u0 + v0``, ``q = u0 - v0``
    (equivalently ``atanh(min(|u0|,|v0|)/max(|u0|,|v0|)) / atanh(kappa)``); ``inf`` when ``s = 0``.
    ``u0``, ``v0 (..., m)`` -> ``(..., m)`` float64.
    """
    u0, v0 = u0.to(torch.float64), v0.to(torch.float64)
    k = _as_kappa(kappa, u0)[..., None]
    s, q = (u0 + v0).abs(), (u0 - v0).abs()
    x = torch.log(q / s) / torch.log((1 + k) / (1 - k))
    t = torch.floor(x) + 1
    t = torch.where(s == 0, torch.full_like(t, math.inf), t)
    return torch.where(u0 * v0 > 0, torch.zeros_like(t), t)


# --------------------------------------------------------------------------------------------
# Measured synchronisation (Lemma D.3)
# --------------------------------------------------------------------------------------------
@dataclass
class Synchronisation:
    """Sign agreement of the paired neurons along a multi-modal run (Lemma D.3).

    ``steps (K,)``; ``u``, ``v (..., K, m)``: ``<w_r(t), mu>/||mu||`` and ``<w~_r(t), mu~>/||mu~||``;
    ``agree (..., K, m)``: ``u v > 0``, i.e. ``r in (U_+ & U~_+) | (U_- & U~_-)``;
    ``opposite0 (..., m)``: the neurons that start with opposite signs;
    ``sync_step (..., m)``: first recorded step with agreement (0 for neurons agreeing at
    initialisation, ``nan`` if never); ``sign (..., m)``: the common sign at ``sync_step`` (0 if
    never); ``kept (..., m)``: agreement never lost after ``sync_step`` (Lemma D.3 (1)-(2));
    ``kappa (...)``: :func:`~mmcl.proofs.predictions.pairing_rate` of each run; ``predicted_step``, ``predicted_sign (..., m)``:
    the linear stage-1 map's :func:`predicted_sync_step` and ``sign(u0 + v0)``.
    """

    steps: torch.Tensor
    u: torch.Tensor
    v: torch.Tensor
    agree: torch.Tensor
    opposite0: torch.Tensor
    sync_step: torch.Tensor
    sign: torch.Tensor
    kept: torch.Tensor
    kappa: torch.Tensor
    predicted_step: torch.Tensor
    predicted_sign: torch.Tensor

    @property
    def n_opposite(self) -> torch.Tensor:
        """How many neurons start with opposite signs, ``(...)``."""
        return self.opposite0.sum(-1)

    @property
    def synchronised(self) -> torch.Tensor:
        """``(..., m)`` bool: the neuron agrees in sign at some recorded step (at 0 for those that
        start in step)."""
        return ~torch.isnan(self.sync_step)

    @property
    def stalled(self) -> torch.Tensor:
        """``(..., m)`` bool: the neuron starts out of step and never agrees within the run."""
        return self.opposite0 & ~self.synchronised

    @property
    def final_size(self) -> torch.Tensor:
        """``(..., m)``: ``max(|u_r|, |v_r|)`` at the last recorded step."""
        return torch.maximum(self.u[..., -1, :].abs(), self.v[..., -1, :].abs())

    def all_synchronised(self) -> torch.Tensor:
        """``(...)`` bool: every neuron agrees in sign by the last recorded step and stays so."""
        return (self.synchronised & self.kept).all(-1)


def synchronisation(data: SyntheticData, traj: Trajectory) -> Synchronisation:
    """Measure the synchronisation of Lemma D.3 along a multi-modal ``traj`` of ``data`` and set it
    beside the linear stage-1 prediction (:func:`predicted_sync_step`).  ``kappa`` is computed from
    the run's own ``lr``, ``tau`` (``traj.lr``, ``traj.tau``) and the data's ``||mu||``, ``||mu~||``,
    ``m``, ``M``, so batches of different configurations are handled element by element."""
    batched = _check_multi(traj, data)
    a = preactivation_history(traj, data).signal.to(torch.float64)  # (..., K, m)
    b = preactivation_history(traj, data, tilde=True).signal.to(torch.float64)
    dc = data.to(device=a.device, dtype=torch.float64)
    mu_n = torch.linalg.vector_norm(dc.mu, dim=-1)  # (...)
    mut_n = torch.linalg.vector_norm(dc.mu_tilde, dim=-1)
    u, v = a / mu_n[..., None, None], b / mut_n[..., None, None]
    agree = u * v > 0
    K = agree.shape[-2]
    steps = traj.steps.to(device=a.device)
    idx = torch.arange(K, device=a.device)[:, None].expand(agree.shape)
    first = torch.where(agree, idx, torch.full_like(idx, K)).amin(-2)  # (..., m)
    never = first == K
    firstc = first.clamp(max=K - 1)
    sync_step = torch.where(never, torch.full(first.shape, math.nan, dtype=torch.float64, device=a.device),
                            steps[firstc].to(torch.float64))
    sign = torch.where(never, torch.zeros_like(u[..., 0, :]),
                       torch.sign(torch.gather(u, -2, firstc.unsqueeze(-2)).squeeze(-2)))
    after = idx >= first.unsqueeze(-2)
    kept = ~(after & ~agree).any(-2) & ~never
    lr = traj.lr.to(device=a.device, dtype=torch.float64)
    tau = traj.tau.to(device=a.device, dtype=torch.float64)
    kappa = pairing_rate_of(lr, tau, data.M, data.m, mu_n, mut_n)
    u0, v0 = u[..., 0, :], v[..., 0, :]
    return Synchronisation(steps=steps, u=u, v=v, agree=agree, opposite0=u0 * v0 < 0, sync_step=sync_step,
                           sign=sign, kept=kept, kappa=kappa,
                           predicted_step=predicted_sync_step(u0, v0, kappa),
                           predicted_sign=torch.sign(u0 + v0))


def lemma_d4_lower_bound(cfg: SyntheticConfig, a0: torch.Tensor, a0_tilde: torch.Tensor,
                         steps: torch.Tensor) -> torch.Tensor:
    """Lemma D.4, Eq. (43): for a neuron whose signs agree at initialisation,
    ``A_r(t) >= (1 + 0.48 C_mu eta ||mu||^2/(m tau))^t (A_r(0) + A~_r(0)/C_mu) - 1`` with
    ``A_r = |<w_r(t), mu>|`` taken on the side of the initial sign (``A_r(t) = s_r <w_r(t), mu>``,
    ``s_r = sign <w_r(0), mu>``).  ``a0``, ``a0_tilde (..., m)``: the initial ``<w_r(0), mu>`` and
    ``<w~_r(0), mu~>`` (not normalised); ``steps (K,)``.  Returns the bound ``(..., K, m)``, ``nan``
    for neurons that start with opposite signs (the lemma says nothing about them)."""
    cfg = _check_cfg(cfg)
    rate = _predictions.multi_growth_rate(cfg)  # Lemma 5.4's 0.48 C_mu eta ||mu||^2/(m tau)
    a0, a0_tilde = a0.to(torch.float64), a0_tilde.to(torch.float64)
    t = torch.as_tensor(steps, dtype=torch.float64, device=a0.device)[:, None]
    bound = (1 + rate) ** t * (a0.abs() + a0_tilde.abs() / cfg.c_mu)[..., None, :] - 1
    same = (a0 * a0_tilde > 0)[..., None, :]
    return torch.where(same, bound, torch.full_like(bound, math.nan))


# --------------------------------------------------------------------------------------------
# Loss derivatives (Lemma D.1)
# --------------------------------------------------------------------------------------------
def loss_derivative_spread(traj: Trajectory) -> torch.Tensor:
    """The smallest ``C_l`` for which Lemma D.1 (Lemma C.2 for one modality) holds at each recorded
    step: ``max`` over anchors ``i``, negatives ``j`` and both networks of ``max(x, 1/x)`` with
    ``x = (M+1) l'_i`` and ``x = (M+1) l'_{i,j}``.  ``(..., K)``, float64.  Needs a run with
    ``record_derivatives=True``.  It is 1 exactly when every softmax is uniform; the paper's proofs
    use ``C_l = 1.01`` (proof of Lemma D.8)."""
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    if traj.lprime is None or traj.lprime_neg is None:
        raise ValueError("loss_derivative_spread needs the loss derivatives: simulate with record_derivatives=True")
    parts = [traj.lprime[..., None], traj.lprime_neg]
    if traj.lprime_tilde is not None:
        parts += [traj.lprime_tilde[..., None], traj.lprime_tilde_neg]
    M = traj.lprime_neg.shape[-1]
    x = torch.cat([p.to(torch.float64) for p in parts], -1) * (M + 1)  # (..., K, n, *)
    return torch.maximum(x.amax((-1, -2)), 1 / x.amin((-1, -2)))


def loss_derivative_spread_at(data: SyntheticData, mode: str, tau: float, gamma, rho, gamma_tilde=None,
                              rho_tilde=None) -> torch.Tensor:
    """:func:`loss_derivative_spread` at one state given by its coefficients, without a recorded run:
    the similarities of Eqs. (4)/(8) as one ``n x n`` matrix of the features' activations
    (``(1/m) sum_r`` over the signal and the noise patch), the softmax of every anchor over its
    positive and its ``M`` negatives (``data.negatives``), and ``max(x, 1/x)`` of ``x = (M+1) l'``.
    Memory ``O(n^2 + m n)`` instead of the ``O(K n M)`` a run with ``record_derivatives=True`` keeps,
    so it reaches the decisive point (``n = 9,224``).  ``gamma (B.., m)``, ``rho (B.., m, n)``
    (``*_tilde`` for ``mode="multi"``) -> ``(B..)`` float64."""
    from mmcl.dynamics.forward import preactivations

    if mode not in ("single", "multi"):
        raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")
    check_number("tau", tau, 0)
    if mode == "multi" and (gamma_tilde is None or rho_tilde is None):
        raise ValueError("mode='multi' needs gamma_tilde and rho_tilde")
    f64 = torch.float64
    data = data.to(dtype=f64)
    gamma, rho = gamma.to(f64), rho.to(f64)
    m = gamma.shape[-1]
    relu = torch.relu

    def acts(tilde, g, r):
        mu = data.mu_tilde if tilde else data.mu
        xi = data.xi_tilde if tilde else data.xi
        sig = preactivations(data, g, r, mu[..., None, :], tilde)  # (B.., m, 1): <w_r, mu>
        return relu(sig * data.y[..., None, :]), relu(preactivations(data, g, r, xi, tilde))  # (B.., m, n) each

    P, A = acts(False, gamma, rho)
    if mode == "single":
        Ppos = P
        Apos = relu(preactivations(data, gamma, rho, data.xi + data.eps))
        pos = ((P * Ppos + A * Apos).sum(-2) / m)  # (B.., n): Sim(x_i, x_i^+)
        S = (P.transpose(-1, -2) @ P + A.transpose(-1, -2) @ A) / m  # (B.., n, n): Sim(x_i, x_j)
        sims = [(pos, S)]
    else:
        Pt, At = acts(True, gamma_tilde.to(f64), rho_tilde.to(f64))
        S = (P.transpose(-1, -2) @ Pt + A.transpose(-1, -2) @ At) / m  # Sim_h(x_i, x~_j) = Sim_g(x~_j, x_i)
        diag = S.diagonal(dim1=-2, dim2=-1)
        sims = [(diag, S), (diag, S.transpose(-1, -2))]
    M = data.negatives.shape[-1]
    out = None
    for pos, mat in sims:
        neg = torch.gather(mat, -1, data.negatives)  # (B.., n, M)
        logits = torch.cat([pos[..., None], neg], -1) / tau
        x = torch.softmax(logits, -1) * (M + 1)
        v = torch.maximum(x.amax((-1, -2)), 1 / x.amin((-1, -2)))
        out = v if out is None else torch.maximum(out, v)
    return out


# --------------------------------------------------------------------------------------------
# Noise memorisation (Lemma D.9, Lemma 5.4)
# --------------------------------------------------------------------------------------------
def noise_growth_rate(cfg: SyntheticConfig, tilde: bool = False) -> float:
    """``1.06 eta sigma_xi^2 d / (n m tau)``: the per-step rate of the upper bound (45) of Lemma D.9
    on ``Psi_{r,i}(t) = rho_{r,i}(t) + <w_r(0), xi_i>`` (``tilde=True``: ``sigma_xi~^2 d~``)."""
    cfg = _check_cfg(cfg)
    if tilde:
        cfg = cfg.second_modality_noise()
    return 1.06 * _predictions.noise_step_scale(cfg)


def lemma54_noise_bound(cfg: SyntheticConfig, delta: float) -> float:
    """The explicit bound of the proof of Lemma 5.4 on ``max_{r,i} Psi_{r,i}(T1)``:
    ``(1 + 1.06 eta sigma_xi^2 d/(n m tau))^T1 * 2 sqrt(log(8 m n/delta)) sigma0 sigma_xi sqrt(d)``,
    with ``T1`` of Lemma 5.4 (:func:`mmcl.proofs.predictions.t1_multi`) and failure probability ``delta``
    (Lemma B.4 bounds ``max |<w_r(0), xi_i>|`` by the last factor).  The lemma's conclusion
    ``rho(T1) = O~(1/sqrt(n))`` is this number being small."""
    from mmcl.proofs.predictions import t1_multi

    cfg = _check_cfg(cfg)
    check_number("delta", delta, 0, 1)
    init = 2 * math.sqrt(math.log(8 * cfg.m * cfg.n / delta)) * cfg.init_noise
    return (1 + noise_growth_rate(cfg)) ** t1_multi(cfg) * init


@dataclass
class NoiseCases:
    """Lemma D.9 checked pair by pair up to step ``t_max``.

    ``case (..., m, n)`` int64 in 1..4 (see :data:`NOISE_CASES`): by the signs of
    ``<w_r(0), xi_i>`` and ``<w~_r(0), xi~_i>``; ``holds (..., m, n)`` bool: the claim of the pair's
    case held at every recorded step ``<= t_max``; ``psi_ratio (..., K')``: for case 4, the largest
    ``Psi/bound`` (both networks) over the pairs at each recorded step ``<= t_max`` (the bound holds
    where it is ``<= 1``); ``init_abs (..., m, n)``: ``min(|<w_r(0), xi_i>|, |<w~_r(0), xi~_i>|)``,
    the margin a pair's initial signs have against the cross terms of Lemma D.2; ``t_max``.
    """

    case: torch.Tensor
    holds: torch.Tensor
    psi_ratio: torch.Tensor
    init_abs: torch.Tensor
    t_max: int

    def count(self, case: int) -> torch.Tensor:
        """How many pairs fall in ``case``, ``(...)``."""
        return (self.case == _check_case(case)).sum((-1, -2))

    def fraction(self, case: int) -> torch.Tensor:
        """Fraction of the pairs of ``case`` whose claim held, ``(...)`` float64 (nan if none)."""
        sel = self.case == _check_case(case)
        return (self.holds & sel).sum((-1, -2)).to(torch.float64) / sel.sum((-1, -2)).to(torch.float64)


def _check_case(case) -> int:
    if case not in NOISE_CASES:
        raise ValueError(f"case must be one of {sorted(NOISE_CASES)}, got {case!r}")
    return int(case)


def noise_cases(data: SyntheticData, traj: Trajectory, cfg: SyntheticConfig, *,
                t_max: Optional[int] = None, atol: float = 0.0) -> NoiseCases:
    """Check Lemma D.9 on a multi-modal run, for every pair ``(r, i)`` and every recorded step
    ``t <= t_max`` (default: ``floor(T1)`` of Lemma 5.4):

    1. ``i in I_{r,-}(0) & I~_{r,-}(0)``: ``rho_{r,i}(t) = rho~_{r,i}(t) = 0``;
    2. ``i in I_{r,-}(0) & I~_{r,+}(0)``: ``rho_{r,i}(t) = 0`` and ``rho~_{r,i}(t) <= 0``;
    3. ``i in I_{r,+}(0) & I~_{r,-}(0)``: ``rho~_{r,i}(t) = 0`` and ``rho_{r,i}(t) <= 0``;
    4. ``i in I_{r,+}(0) & I~_{r,+}(0)``: Eq. (45), ``Psi_{r,i}(t) <= (1 + 1.06 s)^t (Psi_{r,i}(0) +
       Psi~_{r,i}(0))`` and the same for ``Psi~`` (each network with its own ``s``,
       :func:`noise_growth_rate`).

    "= 0" and "<= 0" are checked with tolerance ``atol`` (0: exact, which is right for the
    ``recursion`` engine, where an inactive pair's update is exactly zero).  ``cfg`` gives the
    constants of Eq. (45) and ``T1``.
    """
    from mmcl.proofs.predictions import t1_multi

    batched = _check_multi(traj, data)
    cfg = _check_cfg(cfg)
    check_number("atol", atol, 0, low_closed=True)
    if t_max is None:
        t_max = int(math.floor(t1_multi(cfg)))
    check_int("t_max", t_max, 0)
    steps = traj.steps
    sel = (steps <= t_max).to(traj.rho.device)
    rho = traj.rho.to(torch.float64)[..., sel, :, :]  # (..., K', m, n)
    rho_t = traj.rho_tilde.to(torch.float64)[..., sel, :, :]
    dc = data.to(device=rho.device, dtype=torch.float64)
    P0 = dc.W0 @ dc.xi.transpose(-1, -2)  # (..., m, n)
    P0t = dc.W0_tilde @ dc.xi_tilde.transpose(-1, -2)
    pos, pos_t = P0 > 0, P0t > 0
    case = torch.where(pos, torch.where(pos_t, 4, 3), torch.where(pos_t, 2, 1)).to(torch.int64)
    zero, zero_t = rho.abs() <= atol, rho_t.abs() <= atol
    nonpos, nonpos_t = rho <= atol, rho_t <= atol
    t = steps[steps <= t_max].to(device=rho.device, dtype=torch.float64)[:, None, None]  # (K', 1, 1)
    start = (P0 + P0t).unsqueeze(-3)  # (..., 1, m, n)
    bound = (1 + noise_growth_rate(cfg)) ** t * start
    bound_t = (1 + noise_growth_rate(cfg, tilde=True)) ** t * start
    psi, psi_t = rho + P0.unsqueeze(-3), rho_t + P0t.unsqueeze(-3)
    ok4 = (psi <= bound) & (psi_t <= bound_t)
    ok = torch.stack([zero & zero_t, zero & nonpos_t, zero_t & nonpos, ok4])  # (4, ..., K', m, n)
    ok = ok.all(-3)  # over time
    holds = torch.gather(ok, 0, (case - 1).unsqueeze(0)).squeeze(0)
    ratio = torch.maximum(psi / bound, psi_t / bound_t)
    c4 = (case == 4).unsqueeze(-3)
    ratio = torch.where(c4, ratio, torch.full_like(ratio, -math.inf)).amax((-1, -2))
    return NoiseCases(case=case, holds=holds, psi_ratio=ratio, init_abs=torch.minimum(P0.abs(), P0t.abs()),
                      t_max=t_max)


# --------------------------------------------------------------------------------------------
# The end of stage 1 (Lemma 5.4), measured against the linear map and Lemma D.4
# --------------------------------------------------------------------------------------------
@dataclass
class Stage1End:
    """The end of multi-modal stage 1 along a run (Lemma 5.4), as :func:`stage1_end` measures it.

    ``t1``: Lemma 5.4's ``T1`` (:func:`mmcl.proofs.predictions.t1_multi`), ``k1 = floor(t1)``;
    ``t1_measured (...)``: the first recorded step with ``max_r gamma_r >= 1``
    (:func:`mmcl.proofs.predictions.measured_t1`); ``steps (K,)``; ``max_gamma (..., K)`` =
    ``max_r gamma_r(t)``; ``spread (..., K)``: :func:`loss_derivative_spread`;
    ``predicted_gamma (..., K)``: ``max_r gamma_r(t)`` under the linear stage-1 map
    (:func:`stage1_signal_prediction` from every neuron's initial preactivations);
    ``signal_side (..., K, m)``: ``A_r(t) = s_r <w_r(t), mu>`` with ``s_r`` the initial sign;
    ``d4_bound (..., K, m)``: :func:`lemma_d4_lower_bound` (``nan`` for the neurons that start out
    of step); ``first_violation``: per draw, the first recorded step with ``A_r(t) < bound`` for
    some neuron (``None`` if never).  Everything stays on the run's device.
    """

    t1: float
    k1: int
    t1_measured: torch.Tensor
    steps: torch.Tensor
    max_gamma: torch.Tensor
    spread: torch.Tensor
    predicted_gamma: torch.Tensor
    signal_side: torch.Tensor
    d4_bound: torch.Tensor
    first_violation: list

    @property
    def d4_best(self) -> torch.Tensor:
        """Lemma D.4's bound for the best neuron that starts in step, ``(..., K)`` (``-inf`` where
        no neuron starts in step)."""
        return torch.nan_to_num(self.d4_bound, nan=-math.inf).amax(-1)


def stage1_end(syn: Synchronisation, traj: Trajectory, cfg: SyntheticConfig) -> Stage1End:
    """Measure the end of stage 1 on a multi-modal ``traj`` recorded with ``record_derivatives=True``
    and its :func:`synchronisation` ``syn``: the lemma's ``T1`` against the measured one, the spread
    of the loss derivatives (Lemma D.1), and the signal against the linear stage-1 map and the lower
    bound (43) of Lemma D.4.  ``cfg`` is the run's configuration (it gives ``T1`` and the constants
    of Eq. 43)."""
    from mmcl.proofs.predictions import measured_t1, t1_multi

    cfg = _check_cfg(cfg)
    if not isinstance(syn, Synchronisation):
        raise ValueError(f"syn must be a Synchronisation, got {type(syn).__name__}")
    if not isinstance(traj, Trajectory) or traj.mode != "multi":
        raise ValueError("traj must be the multi-modal Trajectory syn was measured on")
    if tuple(syn.u.shape[-2:]) != (traj.steps.shape[0], traj.gamma.shape[-1]):
        raise ValueError(f"syn (K, m = {tuple(syn.u.shape[-2:])}) was not measured on traj "
                         f"(K = {traj.steps.shape[0]}, m = {traj.gamma.shape[-1]})")
    T1 = t1_multi(cfg)
    a_hist = syn.u * cfg.mu_norm  # <w_r(t), mu>
    bound = lemma_d4_lower_bound(cfg, a_hist[..., 0, :], syn.v[..., 0, :] * cfg.mu_tilde_norm, syn.steps)
    A = a_hist * torch.sign(a_hist[..., :1, :])  # A_r(t) on the side of the initial sign
    violated = (A < bound) & ~torch.isnan(bound)
    flat = violated.reshape((-1,) + violated.shape[-2:])
    first_violation = [int(syn.steps[v.any(-1)].min()) if v.any() else None for v in flat]
    # the linear map's prediction of gamma_r(t) = <w_r(t), mu> - <w_r(0), mu> for every neuron
    pu, _ = stage1_signal_prediction(syn.u[..., 0, :], syn.v[..., 0, :], syn.kappa, syn.steps)
    pred_gamma = ((pu - pu[..., :1, :]) * cfg.mu_norm).amax(-1)
    return Stage1End(t1=T1, k1=int(math.floor(T1)), t1_measured=measured_t1(traj, level=1.0), steps=syn.steps,
                     max_gamma=traj.gamma.amax(-1), spread=loss_derivative_spread(traj), predicted_gamma=pred_gamma,
                     signal_side=A, d4_bound=bound, first_violation=first_violation)
