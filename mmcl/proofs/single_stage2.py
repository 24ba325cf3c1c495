"""The second stage of the single-modal proof, evaluated along a run (Sec. 5.1; Lemmas C.14-C.18).

After stage 1 the appendix proves that the loss converges by comparing the iterates with one
fixed matrix, the *comparator*

    w*_r = w_r(0) + lam * sum_i xi_i / ||xi_i||^2,        lam = 2 tau log(2M/eps)      (App. C.2)

(every neuron moves by the same amount along every noise vector).  With
``F_0(W, x_i) = Sim_h(x_i, x_i+)/tau`` and ``F_j(W, x_i) = Sim_h(x_i, x_j)/tau`` (``j in N_i``),
``nabla F`` the stop-gradient gradient of Eq. (7) and ``L = log(2M/eps)``, the chain is:

* Lemma C.16 (margins): ``<nabla F_0(W(t), x_i), W*> >= 2 L`` and ``<nabla F_j(W(t), x_i), W*> <= L``
  for ``t`` in ``[T1, T*]``;
* Lemma C.14 (gradient bound): ``||nabla L_S(W(t))||_F^2 <= O(max(||mu||^2, sigma_xi^2 d)) L_S(W(t))``;
* Lemma C.17 (one step): ``||W(t) - W*||_F^2 - ||W(t+1) - W*||_F^2 >= eta L_S(W(t)) - eta eps``;
* Lemma C.18 (telescoping): for ``T1 <= t <= T``,
  ``(1/(t - T1 + 1)) sum_{s=T1}^t L_S(W(s)) <= ||W(T1) - W*||_F^2 / (eta (t - T1 + 1)) + eps``.

What we took from the paper: the comparator's form (``W(0)`` plus a common multiple of
``sum_i xi_i/||xi_i||^2``), its coefficient ``2 tau log(2M/eps)``, the thresholds ``2L``/``L`` of
Lemma C.16 and the inequalities of Lemmas C.17-C.18, with ``W(t+1) = W(t) - eta nabla L_S(W(t))``
(Eq. 7 is exactly this step for the stop-gradient loss of Eq. 6).  What we had to choose:

* ``eps`` -- the lemmas hold for any target; :class:`ComparatorConfig` makes it a parameter;
* the coefficient ``lam`` -- kept as ``scale * tau * log(2M/eps)`` with ``scale = 2`` (the paper's)
  by default; because every quantity here is affine (margins, one-step decrease) or quadratic
  (distance) in ``lam``, the results also carry the slopes in ``lam``, so that a chapter can ask
  for which ``lam`` an inequality holds;
* ``nabla F_j`` under the stop-gradient -- the gradient through the first argument only (the
  second is detached), as in the proof of Lemma C.16; then ``<nabla F_j(W), W> = F_j(W)`` (Eqs.
  32-33), which the tests check;
* the paper's Lemma C.17 prints ``||W(t+1) - W*||`` without the square; we read it squared, as the
  proof computes it.

Nothing here forms a weight matrix: ``W(t) - W*`` lies in ``span{mu, xi_1, ..., xi_n}`` with
coefficients ``(gamma_r, rho_{r,i} - lam)`` in the basis of Eq. (11), so every norm and inner
product is a quadratic form in the basis' Gram matrix, exact for every engine.  The one-step
quantities need consecutive recorded steps (``simulate(..., record_every=1)``, the default).

Shapes: one draw gives ``(K,)`` over the recorded steps (``(K-1,)`` for one-step quantities),
``(K, n)`` and ``(K, n, M)`` for the margins; a batched run adds a leading ``B``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData
from mmcl.model.decomposition import decomposition_basis
from mmcl.dynamics import Trajectory, preactivations
from mmcl.model.losses import relu

__all__ = ["ComparatorConfig", "Telescoping", "telescoping", "Margins", "comparator_margins",
           "lemma_c18_horizon", "ComparatorChain", "comparator_chain"]


@dataclass(frozen=True)
class ComparatorConfig:
    """The comparator ``W*`` of App. C.2: ``w*_r = w_r(0) + scale * tau * log(2M/eps) * sum_i xi_i/||xi_i||^2``."""

    epsilon: float = 0.05  # target loss eps of Lemmas C.16-C.18 (ours: the lemmas hold for any eps > 0)
    scale: float = 2.0  # the factor 2 of 2 tau log(2M/eps) (the paper's)

    def __post_init__(self) -> None:
        for name in ("epsilon", "scale"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < math.inf):
                raise ValueError(f"ComparatorConfig.{name} must be a finite number > 0, got {v!r}")

    def level(self, cfg: SyntheticConfig) -> float:
        """``L = log(2M/eps)``, the margin unit of Lemma C.16; needs ``eps < 2M`` so that ``L > 0``."""
        check_config(cfg)
        if not self.epsilon < 2 * cfg.M:
            raise ValueError(f"ComparatorConfig.epsilon={self.epsilon} must be < 2M={2 * cfg.M} so that "
                             f"log(2M/eps) > 0")
        return math.log(2 * cfg.M / self.epsilon)

    def coefficient(self, cfg: SyntheticConfig) -> float:
        """``lam = scale * tau * log(2M/eps)``, the common coefficient of every ``xi_i/||xi_i||^2`` in ``W*``."""
        return self.scale * cfg.tau * self.level(cfg)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------
def _check(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig, ccfg: ComparatorConfig):
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    if traj.mode != "single":
        raise ValueError(f"the comparator of Lemma C.18 is for the single-modal loss; got mode={traj.mode!r}")
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    return check_stage2_run(traj, data, cfg, ccfg)


def check_stage2_run(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig, ccfg: ComparatorConfig) -> bool:
    """The checks both stage-2 modules share (``cfg``, ``ccfg``, and that ``traj`` is a run on ``data``);
    returns whether the run is batched."""
    check_config(cfg)
    if not isinstance(ccfg, ComparatorConfig):
        raise ValueError(f"ccfg must be a ComparatorConfig, got {type(ccfg).__name__}")
    batched = traj.check_data(data)
    if cfg.M != data.M:
        raise ValueError(f"data (M={data.M}) and cfg (M={cfg.M}) disagree on the number of negatives")
    return batched


def check_consecutive(traj: Trajectory) -> None:
    s = traj.steps
    if s.shape[0] < 2 or not bool((s[1:] - s[:-1] == 1).all()):
        raise ValueError("one-step quantities need consecutive recorded steps: simulate with record_every=1")


def _per_batch(x: torch.Tensor, batched: bool, extra: int) -> torch.Tensor:
    """A per-batch tensor ``(B,)`` (or scalar) reshaped to broadcast against ``(B, K, *extra)``."""
    return x.reshape((-1,) + (1,) * (1 + extra)) if batched else x


# --------------------------------------------------------------------------------------------
# Distance, one-step decrease, telescoping
# --------------------------------------------------------------------------------------------
@dataclass
class Telescoping:
    """Lemmas C.14, C.17 and C.18 along a run, for the comparator with coefficient ``lam``.

    * ``steps (K,)``, ``loss (..., K)`` -- ``L_S(W(t))`` at the recorded steps;
    * ``distance_sq (..., K)`` -- ``||W(t) - W*||_F^2``; ``distance_sq_slope``/``distance_sq_curv``:
      its first and second derivative in ``lam`` (it is quadratic in ``lam``);
    * ``decrease (..., K-1)`` -- ``||W(t) - W*||^2 - ||W(t+1) - W*||^2``, the left side of Lemma C.17,
      and ``decrease_slope (..., K-1)``, its derivative in ``lam`` (it is affine in ``lam``);
    * ``grad_norm_sq (..., K-1)`` -- ``||nabla L_S(W(t))||_F^2``, with ``nabla L_S(W(t)) =
      (W(t) - W(t+1))/eta`` (Lemma C.14);
    * ``inner (..., K-1)`` -- ``<nabla L_S(W(t)), W(t) - W*>``, so that
      ``decrease = 2 eta inner - eta^2 grad_norm_sq``;
    * ``eta (...)``, ``lam``, ``epsilon``, ``level = log(2M/eps)``.
    """

    steps: torch.Tensor
    loss: torch.Tensor
    distance_sq: torch.Tensor
    distance_sq_slope: torch.Tensor
    distance_sq_curv: torch.Tensor
    decrease: torch.Tensor
    decrease_slope: torch.Tensor
    grad_norm_sq: torch.Tensor
    inner: torch.Tensor
    eta: torch.Tensor
    lam: float
    epsilon: float
    level: float

    def _eta(self) -> torch.Tensor:
        return self.eta[..., None] if self.eta.dim() else self.eta

    def c17_slack(self, lam=None) -> torch.Tensor:
        """``decrease - eta (L_S(W(t)) - eps)`` for ``t = steps[:-1]``, ``(..., K-1)``; Lemma C.17 says
        ``>= 0`` on ``[T1, T*]``.  ``lam`` (default: the comparator's) evaluates another comparator
        of the same form, using that the decrease is affine in ``lam``."""
        dec = self.decrease if lam is None else self.decrease + (lam - self.lam) * self.decrease_slope
        return dec - self._eta() * (self.loss[..., :-1] - self.epsilon)

    def c17_feasible_lam(self, k_start: int = 0) -> tuple:
        """The interval ``[lo, hi]`` of comparator coefficients ``lam`` for which Lemma C.17's one-step
        inequality holds at every step ``steps[k]``, ``k >= k_start`` (pooled over a batch); the
        inequality is affine in ``lam``.  ``lo > hi`` means no comparator of this form works there."""
        if not 0 <= k_start < self.decrease.shape[-1]:
            raise ValueError(f"k_start={k_start} must be in [0, {self.decrease.shape[-1] - 1}]")
        s0 = self.c17_slack(0.0)[..., k_start:].flatten()  # slack at lam = 0
        sl = self.decrease_slope[..., k_start:].flatten()
        lo, hi = -math.inf, math.inf
        up, dn = sl > 0, sl < 0
        if bool(up.any()):
            lo = float((-s0[up] / sl[up]).max())
        if bool(dn.any()):
            hi = float((-s0[dn] / sl[dn]).min())
        if bool(((sl == 0) & (s0 < 0)).any()):
            return math.inf, -math.inf
        return lo, hi

    def c14_ratio(self) -> torch.Tensor:
        """``||nabla L_S(W(t))||_F^2 / L_S(W(t))``, ``(..., K-1)``; Lemma C.14 bounds it by
        ``O(max(||mu||^2, sigma_xi^2 d))``, and the last step of Lemma C.17 needs
        ``eta * ratio <= 1``."""
        return self.grad_norm_sq / self.loss[..., :-1]

    def distance_sq_at(self, lam: float) -> torch.Tensor:
        """``||W(t) - W*(lam)||_F^2`` for another coefficient ``lam``, ``(..., K)``."""
        dl = lam - self.lam
        return self.distance_sq + dl * self.distance_sq_slope + 0.5 * dl * dl * self.distance_sq_curv

    def _start(self, t1: int) -> int:
        idx = (self.steps == t1).nonzero()
        if idx.numel() != 1:
            raise ValueError(f"t1={t1} is not a recorded step (steps run {int(self.steps[0])}..{int(self.steps[-1])})")
        return int(idx[0, 0])

    def averaged_loss(self, t1: int) -> torch.Tensor:
        """``(1/(t - T1 + 1)) sum_{s=T1}^t L_S(W(s))`` for ``t = T1..T``, ``(..., K - k1)`` where
        ``steps[k1] = t1``: the left side of Lemma C.18."""
        k1 = self._start(t1)
        L = self.loss[..., k1:]
        count = torch.arange(1, L.shape[-1] + 1, dtype=L.dtype, device=L.device)
        return L.cumsum(-1) / count

    def averaged_bound(self, t1: int, lam=None) -> torch.Tensor:
        """``||W(T1) - W*||_F^2 / (eta (t - T1 + 1)) + eps`` for ``t = T1..T``, ``(..., K - k1)``: the
        right side of Lemma C.18 (for another ``lam`` if given)."""
        k1 = self._start(t1)
        D = (self.distance_sq if lam is None else self.distance_sq_at(lam))[..., k1]
        count = torch.arange(1, self.loss.shape[-1] - k1 + 1, dtype=D.dtype, device=D.device)
        return D[..., None] / (self._eta() * count) + self.epsilon


def telescoping(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig,
                ccfg: ComparatorConfig = ComparatorConfig()) -> Telescoping:
    """Evaluate the distance to the comparator ``W*`` and the one-step quantities of Lemmas C.14 and
    C.17 along a single-modal run (any engine; every recorded step must be consecutive).  Computed
    in float64 from the coefficients of Eq. (11): ``W(t) - W* = sum_r e_r (gamma_r mu/||mu||^2 +
    sum_i (rho_{r,i} - lam) xi_i/||xi_i||^2)``."""
    batched = _check(traj, data, cfg, ccfg)
    check_consecutive(traj)
    f64 = torch.float64
    dev = traj.gamma.device
    data = data.to(device=dev, dtype=f64)
    u = torch.zeros(data.n + 1, dtype=f64, device=dev)
    u[1:] = 1.0  # W* - W(0) = lam * (0, 1, ..., 1) in the basis, for every neuron
    loss = traj.loss.to(f64).index_select(-1, traj.steps.to(traj.loss.device))  # L_S at the recorded steps
    return telescoping_core(traj.gamma, traj.rho, data.mu, data.xi, u, loss, traj, cfg, ccfg, batched)


def telescoping_core(gamma, rho, mu, xi, u, loss, traj: Trajectory, cfg: SyntheticConfig, ccfg: ComparatorConfig,
                      batched: bool) -> Telescoping:
    """The quantities of :class:`Telescoping` for one network with coefficients ``gamma (..., K, m)``,
    ``rho (..., K, m, n)`` in the basis of ``mu``, ``xi`` (float64), a comparator ``W* = W(0) + lam
    * U`` whose per-neuron coordinates ``U`` in that basis are ``u``: ``(n+1,)`` (the same for every
    neuron, the single-modal ``W*``) or ``(B.., m, n+1)`` (one direction per neuron, e.g. the signs
    ``theta_r`` of the multi-modal ``W*`` of Lemma D.12), and the network's own loss ``(..., K)`` at
    the recorded steps.  Shared by :func:`telescoping` and :mod:`mmcl.proofs.multi_stage2`."""
    lam = ccfg.coefficient(cfg)
    f64 = torch.float64
    dev = gamma.device
    basis = decomposition_basis(mu, xi)  # (B.., d, n+1)
    gram = basis.transpose(-1, -2) @ basis  # (B.., n+1, n+1)
    if batched:
        gram = gram[:, None]  # broadcast over K
    coef = torch.cat([gamma.to(f64)[..., None], rho.to(f64)], -1)  # (..., K, m, n+1)
    shared = u.dim() == 1
    if not shared and batched:
        u = u[:, None]  # (B, 1, m, n+1): broadcast over K
    diff = coef - lam * u  # W(t) - W*
    Gd = diff @ gram  # (..., K, m, n+1)
    m = coef.shape[-2]
    dist = (Gd * diff).sum((-1, -2))
    dist_slope = -2 * (Gd * u).sum((-1, -2))  # d/dlam of sum_r diff_r G diff_r
    if shared:
        Gu = gram @ u  # (B.., 1?, n+1)
        uGu = (u * Gu).sum(-1)  # (B.., [1])
        dist_curv = 2 * m * uGu * torch.ones_like(dist)
    else:
        dist_curv = 2 * ((u @ gram) * u).sum((-1, -2)) * torch.ones_like(dist)
    step = coef[..., 1:, :, :] - coef[..., :-1, :, :]  # W(t+1) - W(t)
    Gs = step @ gram
    step_sq = (Gs * step).sum((-1, -2))
    cross = (Gs * diff[..., :-1, :, :]).sum((-1, -2))  # <W(t+1) - W(t), W(t) - W*>
    eta = traj.lr.to(f64) if traj.lr is not None else torch.tensor(cfg.lr, dtype=f64)
    eta_b = _per_batch(eta, batched, 0)
    # ||W(t) - W*||^2 - ||W(t+1) - W*||^2 = -2 <step, W(t) - W*> - ||step||^2
    decrease = -2 * cross - step_sq
    decrease_slope = 2 * (Gs * u).sum((-1, -2))  # d/dlam of -2 <step, diff>
    return Telescoping(steps=traj.steps, loss=loss, distance_sq=dist, distance_sq_slope=dist_slope,
                       distance_sq_curv=dist_curv, decrease=decrease, decrease_slope=decrease_slope,
                       grad_norm_sq=step_sq / eta_b ** 2, inner=-cross / eta_b, eta=eta, lam=lam,
                       epsilon=ccfg.epsilon, level=ccfg.level(cfg))


def lemma_c18_horizon(distance_sq_t1: float, cfg: SyntheticConfig,
                      ccfg: ComparatorConfig = ComparatorConfig()) -> float:
    """Lemma C.18's horizon ``T - T1 = floor(||W(T1) - W*||_F^2 / (eta eps))``: the number of steps
    after ``T1`` within which the averaged bound guarantees an iterate with loss ``<= 2 eps``."""
    if not distance_sq_t1 >= 0:
        raise ValueError(f"distance_sq_t1 must be >= 0, got {distance_sq_t1!r}")
    return float(math.floor(distance_sq_t1 / (cfg.lr * ccfg.epsilon)))


# --------------------------------------------------------------------------------------------
# Lemma C.16: the margins of the comparator
# --------------------------------------------------------------------------------------------
@dataclass
class Margins:
    """Lemma C.16 along a run: ``pos (..., K, n)`` = ``<nabla F_0(W(t), x_i), W*>``, ``neg (..., K, n, M)``
    = ``<nabla F_j(W(t), x_i), W*>`` for the ``M`` negatives ``j in N_i`` (in the order of
    ``data.negatives``); both are affine in the comparator's coefficient ``lam``, and ``pos_slope``,
    ``neg_slope`` are their derivatives in ``lam``.  ``level = log(2M/eps)``: the lemma says
    ``pos >= 2 level`` and ``neg <= level`` on ``[T1, T*]``."""

    steps: torch.Tensor
    pos: torch.Tensor
    neg: torch.Tensor
    pos_slope: torch.Tensor
    neg_slope: torch.Tensor
    lam: float
    level: float

    def at(self, lam: float) -> tuple:
        """``(pos, neg)`` for the comparator with coefficient ``lam`` instead."""
        dl = lam - self.lam
        return self.pos + dl * self.pos_slope, self.neg + dl * self.neg_slope

    def feasible_lam(self, k_start: int = 0) -> tuple:
        """The interval ``[lo, hi]`` of coefficients ``lam`` for which both inequalities of Lemma C.16
        hold at every recorded step ``k >= k_start`` (pooled over the batch and all samples);
        ``lo > hi`` means no comparator of this form satisfies the lemma there.  Entries whose slope
        is 0 must hold as they are (else the interval is empty)."""
        two_l, one_l = 2 * self.level, self.level
        p0 = self.pos - self.lam * self.pos_slope  # value at lam = 0
        n0 = self.neg - self.lam * self.neg_slope
        sel = (slice(None),) * (self.pos.dim() - 2) + (slice(k_start, None),)
        p0, ps = p0[sel].flatten(), self.pos_slope[sel].flatten()
        sel_n = (slice(None),) * (self.neg.dim() - 3) + (slice(k_start, None),)
        n0, ns = n0[sel_n].flatten(), self.neg_slope[sel_n].flatten()
        lo, hi = -math.inf, math.inf
        # p0 + lam ps >= 2L
        up = ps > 0
        if bool(up.any()):
            lo = max(lo, float(((two_l - p0[up]) / ps[up]).max()))
        dn = ps < 0
        if bool(dn.any()):
            hi = min(hi, float(((two_l - p0[dn]) / ps[dn]).min()))
        if bool(((ps == 0) & (p0 < two_l)).any()):
            return math.inf, -math.inf
        # n0 + lam ns <= L
        up = ns > 0
        if bool(up.any()):
            hi = min(hi, float(((one_l - n0[up]) / ns[up]).min()))
        dn = ns < 0
        if bool(dn.any()):
            lo = max(lo, float(((one_l - n0[dn]) / ns[dn]).max()))
        if bool(((ns == 0) & (n0 > one_l)).any()):
            return math.inf, -math.inf
        return lo, hi


def comparator_margins(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig,
                       ccfg: ComparatorConfig = ComparatorConfig()) -> Margins:
    """``<nabla F_j(W(t), x_i), W*>`` of Lemma C.16 at every recorded step, from the coefficients.

    For neuron ``r`` (``sigma'`` = ``1[. > 0]``, stop-gradient on the second argument)::

        <nabla_{w_r} F_0(W, x_i), w*_r> = (1/(m tau)) [sigma'(<w_r, y_i mu>) sigma(<w_r, y_i mu>) <w*_r, y_i mu>
                                                      + sigma'(<w_r, xi_i>) sigma(<w_r, xi_i + eps_i>) <w*_r, xi_i>]
        <nabla_{w_r} F_j(W, x_i), w*_r> = (1/(m tau)) [sigma'(<w_r, y_i mu>) sigma(<w_r, y_j mu>) <w*_r, y_i mu>
                                                      + sigma'(<w_r, xi_i>) sigma(<w_r, xi_j>) <w*_r, xi_i>]

    summed over ``r``, with ``<w*_r, v> = <w_r(0), v> + lam <sum_k xi_k/||xi_k||^2, v>``.  Memory
    ``O(K n^2)`` per draw."""
    batched = _check(traj, data, cfg, ccfg)
    lam = ccfg.coefficient(cfg)
    f64 = torch.float64
    dev = traj.gamma.device
    data = data.to(device=dev, dtype=f64)
    g = traj.gamma.to(f64)
    rho = traj.rho.to(f64)
    gt, rt = (g.transpose(0, 1), rho.transpose(0, 1)) if batched else (g, rho)  # time before batch
    a = preactivations(data, gt, rt, data.mu[..., None, :])[..., 0]  # (K, B.., m)
    P = preactivations(data, gt, rt, data.xi)  # (K, B.., m, n)
    Q = preactivations(data, gt, rt, data.xi + data.eps)
    if batched:
        a, P, Q = a.transpose(0, 1), P.transpose(0, 1), Q.transpose(0, 1)  # (B, K, ...)
    y = data.y[..., None, :]  # (B.., 1, n): broadcast over K
    S = (data.xi / (data.xi * data.xi).sum(-1, keepdim=True)).sum(-2)  # sum_k xi_k/||xi_k||^2, (B.., d)
    s_mu = (S * data.mu).sum(-1)  # (B..,)
    s_xi = (data.xi @ S[..., None])[..., 0]  # (B.., n)
    A0 = data.W0 @ data.mu[..., None]  # (B.., m, 1): <w_r(0), mu>
    P0 = data.W0 @ data.xi.transpose(-1, -2)  # (B.., m, n)
    if batched:
        A0, P0, s_mu, s_xi = A0[:, None], P0[:, None], s_mu[:, None, None, None], s_xi[:, None, None, :]
    else:
        s_xi = s_xi[None, None, :]
    m = a.shape[-1]
    tau = float(cfg.tau)
    # signal preactivations of the anchors: y_i a_r, (..., K, m, n)
    ya = y[..., None, :] * a[..., :, None]
    d_sig = (ya > 0).to(f64)  # sigma'(<w_r, y_i mu>)
    wmu0 = y[..., None, :] * A0  # <w*_r, y_i mu> at lam = 0: y_i <w_r(0), mu>
    wmu1 = y[..., None, :] * s_mu * torch.ones_like(ya)  # its slope in lam: y_i <S, mu>
    d_noise = (P > 0).to(f64)
    # positive pair
    pos_sig = d_sig * relu(ya)
    pos_noise = d_noise * relu(Q)
    pos0 = (pos_sig * wmu0 + pos_noise * P0).sum(-2) / (m * tau)
    pos1 = (pos_sig * wmu1 + pos_noise * s_xi).sum(-2) / (m * tau)
    # negatives: the signal part pairs anchor i's sigma' with sigma(<w_r, y_j mu>) = relu(-y_i a_r) for
    # an opposite-label j; written for general labels through y_j
    neg = data.negatives
    yj = torch.gather(data.y, -1, neg.flatten(-2)).reshape(neg.shape)  # (B.., n, M)
    # sum_r d_sig[r,i] * wmu[r,i] * relu(y_j a_r): split by the sign of y_j
    rel_p, rel_m = relu(a), relu(-a)  # (..., K, m)
    X0 = d_sig * wmu0
    X1 = d_sig * wmu1
    sig0_p = (X0 * rel_p[..., None]).sum(-2)  # (..., K, n): if y_j = +1
    sig0_m = (X0 * rel_m[..., None]).sum(-2)
    sig1_p = (X1 * rel_p[..., None]).sum(-2)
    sig1_m = (X1 * rel_m[..., None]).sum(-2)
    yj_b = yj[..., None, :, :] if batched else yj[None]  # (..., 1, n, M)
    sig_neg0 = torch.where(yj_b > 0, sig0_p[..., None], sig0_m[..., None])
    sig_neg1 = torch.where(yj_b > 0, sig1_p[..., None], sig1_m[..., None])
    # noise part: N[i, j] = sum_r sigma'(P_ri) <w*_r, xi_i> sigma(P_rj)
    relP = relu(P)
    N0 = (d_noise * P0).transpose(-1, -2) @ relP  # (..., K, n, n)
    N1 = (d_noise * s_xi).transpose(-1, -2) @ relP
    idx = (neg[:, None] if batched else neg[None]).expand(N0.shape[:-1] + (neg.shape[-1],))
    neg0 = (sig_neg0 + torch.gather(N0, -1, idx)) / (m * tau)
    neg1 = (sig_neg1 + torch.gather(N1, -1, idx)) / (m * tau)
    return Margins(steps=traj.steps, pos=pos0 + lam * pos1, neg=neg0 + lam * neg1, pos_slope=pos1,
                   neg_slope=neg1, lam=lam, level=ccfg.level(cfg))


# --------------------------------------------------------------------------------------------
# The chain of App. C.2 on [T1, T], as the book reads it
# --------------------------------------------------------------------------------------------
@dataclass
class ComparatorChain:
    """The links of App. C.2 (Lemmas C.14-C.18) along a single-modal run, from its stage-2 start
    ``t1`` on, on the CPU.  Shapes as in :class:`Telescoping` and :class:`Margins` (a batched run
    has a leading ``B``).

    * ``telescoping``, ``margins`` -- :func:`telescoping` and :func:`comparator_margins` of the run;
    * ``act_pos (..., K, n)`` -- ``(1/m) sum_r 1[<w_r, xi_i> > 0] sigma(<w_r, xi_i + eps_i>)``, the
      quantity behind the positive margin of Lemma C.16;
    * ``pos_ratio (..., K, n)`` = ``pos / (2L)`` and ``neg_ratio (..., K, n, M)`` = ``neg / L``:
      Lemma C.16 needs ``pos_ratio >= 1`` and ``neg_ratio <= 1``;
    * ``feasible16`` -- :meth:`Margins.feasible_lam` from ``t1`` on (``lo > hi``: no comparator works);
    * ``init_share`` -- ``sigma0 sigma_xi sqrt(d) / lam``, the typical ``<w_r(0), xi_i>`` against ``lam``;
    * ``feasible17`` -- :meth:`Telescoping.c17_feasible_lam` from ``t1`` on; ``factor17`` its lower
      end as the factor ``lo / (tau L)`` in ``lam = factor tau L`` (the paper's factor is 2);
    * ``slack (..., K-1)`` -- Lemma C.17's slack with the paper's comparator, ``slack_at`` with the
      smallest one that works (``lam = 1.001 lo``);
    * ``c14 (..., K-1)`` -- ``eta ||nabla L_S||^2 / L_S`` (Lemma C.14; Lemma C.17 needs ``<= 1``);
    * ``avg_loss``, ``avg_bound (..., K - t1)`` -- the two sides of Lemma C.18 from ``t1`` on;
    * ``horizon`` -- :func:`lemma_c18_horizon` of every draw, a list.
    """

    t1: int
    telescoping: Telescoping
    margins: Margins
    act_pos: torch.Tensor
    pos_ratio: torch.Tensor
    neg_ratio: torch.Tensor
    feasible16: tuple
    init_share: float
    feasible17: tuple
    factor17: float
    slack: torch.Tensor
    slack_at: torch.Tensor
    c14: torch.Tensor
    avg_loss: torch.Tensor
    avg_bound: torch.Tensor
    horizon: list

    @property
    def epsilon(self) -> float:
        """The target loss ``eps`` of the comparator."""
        return self.telescoping.epsilon

    @property
    def level(self) -> float:
        """``L = log(2M/eps)``."""
        return self.telescoping.level


def comparator_chain(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig, ccfg: ComparatorConfig,
                     t1: int) -> ComparatorChain:
    """Evaluate every link of App. C.2 along a single-modal run from step ``t1`` (the start of stage
    2, Lemma 5.2's ``T1``) on: the margins of Lemma C.16 (:func:`comparator_margins`) with the
    activations behind them, the gradient bound of Lemma C.14, the one-step inequality of Lemma
    C.17 with the paper's comparator and with the smallest comparator of the same form that
    satisfies it, and both sides of Lemma C.18 (:func:`telescoping`).  The run must record every
    step (``record_every=1``)."""
    from mmcl.proofs.preactivations import preactivation_history

    tel = telescoping(traj, data, cfg, ccfg)
    k1 = tel._start(t1)
    mg = comparator_margins(traj, data, cfg, ccfg)
    level = ccfg.level(cfg)
    hist = preactivation_history(traj, data, with_augmented=True)
    act_pos = (torch.relu(hist.noise_aug) * (hist.noise > 0)).mean(-2).cpu()
    lo17, hi17 = tel.c17_feasible_lam(k1)
    return ComparatorChain(
        t1=t1, telescoping=tel, margins=mg, act_pos=act_pos,
        pos_ratio=(mg.pos / (2 * level)).cpu(), neg_ratio=(mg.neg / level).cpu(),
        feasible16=mg.feasible_lam(k1), init_share=cfg.init_noise / tel.lam, feasible17=(lo17, hi17),
        factor17=lo17 / (cfg.tau * level), slack=tel.c17_slack().cpu(), slack_at=tel.c17_slack(lo17 * 1.001).cpu(),
        c14=(cfg.lr * tel.c14_ratio()).cpu(), avg_loss=tel.averaged_loss(t1).cpu(),
        avg_bound=tel.averaged_bound(t1).cpu(),
        horizon=[lemma_c18_horizon(float(v), cfg, ccfg) for v in tel.distance_sq[..., k1].reshape(-1)])
