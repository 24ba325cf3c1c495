"""The second stage of the multi-modal proof, evaluated along a run (App. D.2; Lemmas D.11-D.15).

The appendix proves convergence of the multi-modal loss ``L(W, W~) = L_S(W) + L_S(W~)`` (Eq. 9:
the first term anchored at ``x_i`` with positive ``x~_i``, the second anchored at ``x~_i`` with
positive ``x_i``) as it does for the single-modal one (:mod:`mmcl.proofs.single_stage2`): both
networks are compared with fixed matrices, the *comparators* of Lemma D.12::

    w*_r  = w_r(0)  + lam * theta_r  * mu /||mu||^2,      theta_r  = sign(<w_r(0), mu>),
    w~*_r = w~_r(0) + lam * theta~_r * mu~/||mu~||^2,     theta~_r = sign(<w~_r(0), mu~>),
    lam = 2 tau log(2M/eps),

which move every neuron along its own modality's signal, on the side of its initial sign (the
single-modal comparator moves every neuron along every training noise vector).  With ``F_0(W,
x_i) = Sim_{h,g}(x_i, x~_i)/tau``, ``F_j(W, x_i) = Sim_{h,g}(x_i, x~_j)/tau`` and their mirror
images ``F~_0(W~, x~_i)``, ``F~_j(W~, x~_i)`` anchored at ``x~_i``, each differentiated in its own
network only (the stop-gradient of Eq. 8), and ``L = log(2M/eps)``, the chain is:

* Lemma D.11 (gradient bound): ``||nabla L_S(W(t))||_F^2 <= O(max(||mu||^2, sigma_xi^2 d)) L_S(W(t))``,
  and the same for ``W~``;
* Lemma D.13 (margins): ``<nabla F_0(W(t), x_i), W*> >= 2 L`` and ``<nabla F_j(W(t), x_i), W*> <= L``,
  and the same for ``W~`` with ``F~``, for ``t`` in ``[T1, T*]``;
* Lemma D.14 (one step): ``D(t) - D(t+1) >= eta L(W(t), W~(t)) - 2 eta eps`` with
  ``D(t) = ||W(t) - W*||_F^2 + ||W~(t) - W~*||_F^2``;
* Lemma D.15 (telescoping): for ``T1 <= t <= T = T1 + floor(D(T1)/(eta eps))``,
  ``(1/(t - T1 + 1)) sum_{s=T1}^t L(W(s), W~(s)) <= D(T1)/(eta (t - T1 + 1)) + 2 eps``; and
  ``max_{r,i} |rho_{r,i}(t)|``, ``max_{r,i} |rho~_{r,i}(t)| <= sigma0 sigma_xi sqrt(d)`` on ``[T1, T]``.
  Lemma D.12 itself bounds the start: ``||W(T1) - W*||_F <= O~(m^{1/2}/||mu||)`` and
  ``||W~(T1) - W~*||_F <= O~(m^{1/2}/||mu~||)``.

What we took from the paper: the comparators' form and signs ``theta_r``, ``theta~_r`` (from the
initial signal preactivations), the coefficient ``2 tau log(2M/eps)``, the thresholds ``2L``/``L`` of
Lemma D.13, the inequalities of Lemmas D.12, D.14 and D.15 and the network-by-network step
``W(t+1) = W(t) - eta nabla L_S(W(t))``, ``W~(t+1) = W~(t) - eta nabla L_S(W~(t))`` (Eq. 10: the
stop-gradient makes each network see only the term anchored in its own modality).  What we had to
choose (the extracted text garbles the equations):

* ``eps`` and the factor 2 in ``lam`` -- parameters, through
  :class:`~mmcl.proofs.single_stage2.ComparatorConfig` (the same ``lam`` for both networks, as the
  paper writes it);
* the signs -- the paper's are the initial ones; :func:`comparator_signs` also gives the signs at
  any recorded step (e.g. ``T1``), because a neuron whose two halves start out of step has one
  half flipped by the synchronisation of Lemma D.3, and for that half the paper's ``theta`` points
  against the signal it learns;
* the fourth inequality of Lemma D.13 is printed ``<nabla F_j(W~(t), x_j), W~*>``; we read it, by
  symmetry with the first network and with the loss it is used for, as ``<nabla F~_j(W~(t), x~_i),
  W~*>``: anchor ``x~_i``, negative ``x_j``, ``j in N_i``;
* the per-network losses ``L_S(W(t))``, ``L_S(W~(t))`` are read off the recorded loss derivatives
  (``L_i = -log l'_i``: the positive's softmax weight), so the one-step quantities of each network
  need ``simulate(..., record_derivatives=True)``; their sum is the recorded loss, which the tests
  check.

As in :mod:`mmcl.proofs.single_stage2`, nothing forms a weight matrix: ``W(t) - W*`` has
coordinates ``(gamma_r - lam theta_r, rho_{r,i})`` in the basis of Eq. (11) (and ``W~(t) - W~*``
the same in the basis of Eq. 14), so every norm and inner product is a quadratic form in the
basis' Gram matrix (:func:`mmcl.proofs.single_stage2.telescoping`'s machinery, with a direction per
neuron), exact for every engine; the margins are affine in ``lam`` and returned as
:class:`~mmcl.proofs.single_stage2.Margins`.

Shapes: one draw gives ``(K,)`` over the recorded steps (``(K-1,)`` for one-step quantities),
``(K, n)`` and ``(K, n, M)`` for the margins; a batched run adds a leading ``B``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData
from mmcl.model.losses import relu
from mmcl.dynamics import Trajectory
from mmcl.proofs import single_stage2 as _s2
from mmcl.proofs.single_stage2 import ComparatorConfig, Margins, Telescoping
from mmcl.proofs.preactivations import preactivation_history
from mmcl.proofs.multi_stage1 import Synchronisation

__all__ = ["ComparatorSigns", "comparator_signs", "lemma54_averages", "MultiTelescoping", "multi_telescoping",
           "multi_comparator_margins", "MultiComparatorChain", "multi_comparator_chain"]


# --------------------------------------------------------------------------------------------
# Argument handling
# --------------------------------------------------------------------------------------------
def _check(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig, ccfg: ComparatorConfig) -> bool:
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    if traj.mode != "multi" or traj.gamma_tilde is None:
        raise ValueError(f"the comparators of Lemma D.12 are for the multi-modal loss; got mode={traj.mode!r}")
    if not isinstance(data, SyntheticData) or not data.has_tilde:
        raise ValueError("data must be a SyntheticData with the second modality (the run's own data)")
    return _s2.check_stage2_run(traj, data, cfg, ccfg)


def _signs(signs, data: SyntheticData) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(theta, theta~)`` in float64 on the data's device: the paper's initial signs if ``signs`` is
    None, else the given pair (``(..., m)`` each, entries +-1)."""
    dc = data.to(dtype=torch.float64)
    if signs is None:
        return (torch.sign(dc.W0 @ dc.mu[..., None])[..., 0],
                torch.sign(dc.W0_tilde @ dc.mu_tilde[..., None])[..., 0])
    if isinstance(signs, ComparatorSigns):
        signs = (signs.theta, signs.theta_tilde)
    if not isinstance(signs, (tuple, list)) or len(signs) != 2:
        raise ValueError("signs must be None (the paper's initial signs), a ComparatorSigns or a pair "
                         "(theta, theta_tilde) of tensors")
    out = []
    shape = dc.W0.shape[:-1]
    for name, s in zip(("theta", "theta_tilde"), signs):
        if not isinstance(s, torch.Tensor) or tuple(s.shape) != tuple(shape):
            raise ValueError(f"signs: {name} must be a tensor of shape {tuple(shape)}, got "
                             f"{getattr(s, 'shape', type(s).__name__)}")
        s = s.to(device=dc.W0.device, dtype=torch.float64)
        if not bool((s.abs() == 1).all()):
            raise ValueError(f"signs: every entry of {name} must be +1 or -1")
        out.append(s)
    return out[0], out[1]


# --------------------------------------------------------------------------------------------
# The signs theta_r, theta~_r of Lemma D.12, against the synchronisation of Lemma D.3
# --------------------------------------------------------------------------------------------
@dataclass
class ComparatorSigns:
    """The signs of the comparators and who won the synchronisation (Lemmas D.3, D.12).

    * ``theta``, ``theta_tilde (..., m)`` -- the signs used: ``sign(<w_r(t0), mu>)``,
      ``sign(<w~_r(t0), mu~>)`` at the recorded step ``step`` (``0``: the paper's);
    * ``won_first``, ``won_second (..., m)`` -- neurons that start out of step and synchronise on
      the sign of the first (second) modality's initial preactivation;
    * ``agree_t1``, ``agree_tilde_t1 (..., m)`` -- ``theta_r`` equals ``sign(<w_r(t1), mu>)`` (and
      the same for the second network) at the recorded step ``t1``.
    """

    step: int
    t1: int
    theta: torch.Tensor
    theta_tilde: torch.Tensor
    won_first: torch.Tensor
    won_second: torch.Tensor
    agree_t1: torch.Tensor
    agree_tilde_t1: torch.Tensor


def _index(steps: torch.Tensor, t: int, name: str) -> int:
    idx = (steps == t).nonzero()
    if idx.numel() != 1:
        raise ValueError(f"{name}={t!r} is not a recorded step (steps run {int(steps[0])}..{int(steps[-1])})")
    return int(idx[0, 0])


def comparator_signs(syn: Synchronisation, t1: int, step: int = 0) -> ComparatorSigns:
    """The comparator signs of Lemma D.12 read at the recorded step ``step`` (the paper: 0) of the
    :func:`~mmcl.proofs.multi_stage1.synchronisation` ``syn`` of a run, and how they sit against
    the signal signs at the start ``t1`` of stage 2.

    A neuron that starts out of step synchronises on the sign of one modality (Lemma D.3); if the
    second modality wins, ``<w_r, mu>`` changes sign, so the paper's ``theta_r = sign(<w_r(0), mu>)``
    is the opposite of the sign that neuron carries from then on (and symmetrically for
    ``theta~_r`` when the first wins)."""
    if not isinstance(syn, Synchronisation):
        raise ValueError(f"syn must be a Synchronisation, got {type(syn).__name__}")
    k0 = _index(syn.steps, step, "step")
    k1 = _index(syn.steps, t1, "t1")
    u, v = syn.u, syn.v  # (..., K, m)
    theta, theta_t = torch.sign(u[..., k0, :]), torch.sign(v[..., k0, :])
    ended = syn.opposite0 & syn.synchronised
    won_first = ended & (syn.sign == torch.sign(u[..., 0, :]))
    won_second = ended & (syn.sign == torch.sign(v[..., 0, :]))
    return ComparatorSigns(step=step, t1=t1, theta=theta, theta_tilde=theta_t, won_first=won_first,
                           won_second=won_second, agree_t1=theta == torch.sign(u[..., k1, :]),
                           agree_tilde_t1=theta_t == torch.sign(v[..., k1, :]))


def lemma54_averages(syn: Synchronisation, cfg: SyntheticConfig, t: int) -> torch.Tensor:
    """The four averages that the proof of Lemma D.13 takes from the end of stage 1 (App. D.1, after
    Lemma D.10: each "reaches 3 within T1 iterations"), at the recorded step ``t``:
    ``(1/m) sum_{r in U_s(0) & U~_s(0)} A_r(t)`` and the same with ``A~_r(t)``, for ``s = +, -``,
    where ``A_r(t) = s <w_r(t), mu>``, ``A~_r(t) = s <w~_r(t), mu~>`` (the signal on the side of the
    common initial sign, as in :func:`mmcl.proofs.multi_stage1.lemma_d4_lower_bound`).  Returns
    ``(..., 2, 2)``: ``[network (first, second), sign (+, -)]``.  The lower bound ``I1 >= 4L`` of
    the positive margin needs the second network's averages (for the first network's margin) and
    the first's (for the second's) to be at least 2."""
    if not isinstance(syn, Synchronisation):
        raise ValueError(f"syn must be a Synchronisation, got {type(syn).__name__}")
    check_config(cfg)
    k = _index(syn.steps, t, "t")
    m = syn.u.shape[-1]
    u0, v0 = syn.u[..., 0, :], syn.v[..., 0, :]
    a, b = syn.u[..., k, :] * cfg.mu_norm, syn.v[..., k, :] * cfg.mu_tilde_norm
    out = []
    for x in (a, b):
        row = []
        for s in (1.0, -1.0):
            same = ((torch.sign(u0) == s) & (torch.sign(v0) == s)).to(x.dtype)
            row.append((s * x * same).sum(-1) / m)
        out.append(torch.stack(row, -1))
    return torch.stack(out, -2)


# --------------------------------------------------------------------------------------------
# Lemmas D.11, D.14, D.15: distance, one-step decrease, telescoping, for both networks
# --------------------------------------------------------------------------------------------
@dataclass
class MultiTelescoping:
    """Lemmas D.11, D.14 and D.15 along a multi-modal run.

    * ``first``, ``second`` -- :class:`~mmcl.proofs.single_stage2.Telescoping` of each network
      against its own comparator, with its own loss ``L_S(W)``, ``L_S(W~)`` and target ``eps``:
      ``first.c17_slack()`` is the per-network inequality ``||W(t) - W*||^2 - ||W(t+1) - W*||^2 >=
      eta L_S(W(t)) - eta eps`` inside the proof of Lemma D.14, ``first.c14_ratio()`` Lemma D.11's ratio;
    * ``combined`` -- the sums over both networks (distance ``D(t)``, decrease, slopes, squared
      gradient norms, inner products) with the loss ``L = L_S(W) + L_S(W~)`` and target ``2 eps``:
      ``combined.c17_slack()`` is Lemma D.14's slack, ``combined.averaged_loss(t1)`` and
      ``combined.averaged_bound(t1)`` the two sides of Lemma D.15.
    """

    first: Telescoping
    second: Telescoping
    combined: Telescoping

    @property
    def epsilon(self) -> float:
        """The target ``eps`` of the comparators (the combined target is ``2 eps``)."""
        return self.first.epsilon


def _direction(theta: torch.Tensor, n: int) -> torch.Tensor:
    """Per-neuron coordinates ``(theta_r, 0, ..., 0)`` of ``(W* - W(0))/lam`` in the basis of Eq. (11)."""
    u = torch.zeros(theta.shape + (n + 1,), dtype=torch.float64, device=theta.device)
    u[..., 0] = theta
    return u


def _direction_losses(traj: Trajectory) -> Tuple[torch.Tensor, torch.Tensor]:
    if traj.lprime is None or traj.lprime_tilde is None:
        raise ValueError("the per-network losses L_S(W), L_S(W~) are read off the loss derivatives: "
                         "simulate with record_derivatives=True")
    f64 = torch.float64
    return -traj.lprime.to(f64).log().mean(-1), -traj.lprime_tilde.to(f64).log().mean(-1)


def multi_telescoping(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig,
                      ccfg: ComparatorConfig = ComparatorConfig(), signs=None) -> MultiTelescoping:
    """The distances to the comparators of Lemma D.12 and the one-step quantities of Lemmas D.11 and
    D.14 along a multi-modal run (any engine; every step recorded, ``record_every=1``, with the loss
    derivatives, ``record_derivatives=True``).  ``signs``: ``None`` for the paper's
    ``theta_r = sign(<w_r(0), mu>)``, ``theta~_r = sign(<w~_r(0), mu~>)``, or a
    :class:`ComparatorSigns` / a pair ``(theta, theta_tilde)`` of ``(..., m)`` tensors of +-1.
    Computed in float64 from the coefficients of Eqs. (11) and (14) by the machinery of
    :func:`mmcl.proofs.single_stage2.telescoping`."""
    batched = _check(traj, data, cfg, ccfg)
    _s2.check_consecutive(traj)
    f64 = torch.float64
    dev = traj.gamma.device
    dc = data.to(device=dev, dtype=f64)
    theta, theta_t = _signs(signs, dc)
    loss1, loss2 = _direction_losses(traj)
    first = _s2.telescoping_core(traj.gamma, traj.rho, dc.mu, dc.xi, _direction(theta, dc.n), loss1.to(dev),
                                  traj, cfg, ccfg, batched)
    second = _s2.telescoping_core(traj.gamma_tilde, traj.rho_tilde, dc.mu_tilde, dc.xi_tilde,
                                   _direction(theta_t, dc.n), loss2.to(dev), traj, cfg, ccfg, batched)
    fields = ("distance_sq", "distance_sq_slope", "distance_sq_curv", "decrease", "decrease_slope", "grad_norm_sq",
              "inner")
    combined = Telescoping(steps=traj.steps, loss=first.loss + second.loss,
                           **{f: getattr(first, f) + getattr(second, f) for f in fields},
                           eta=first.eta, lam=first.lam, epsilon=2 * ccfg.epsilon, level=first.level)
    return MultiTelescoping(first=first, second=second, combined=combined)


# --------------------------------------------------------------------------------------------
# Lemma D.13: the margins of the comparators
# --------------------------------------------------------------------------------------------
def _margins_one(y, yj, neg, a, P, b, Q, A0, P0, c, theta, m: int, tau: float, batched: bool):
    """``(pos0, pos1, neg0, neg1)`` of one network: its margins at ``lam = 0`` and their slopes in
    ``lam``.  ``a``/``P``: this network's signal and noise preactivations ``(..., K, m)``/``(..., K, m,
    n)``; ``b``/``Q``: the other network's (the stop-gradient side); ``A0 (..., m)``, ``P0 (..., m, n)``:
    ``<w_r(0), mu>``, ``<w_r(0), xi_i>``; ``c (..., n)``: ``<mu, xi_i>/||mu||^2``; ``theta (..., m)``."""
    f64 = torch.float64
    t = (lambda x: x[:, None]) if batched else (lambda x: x)  # broadcast a per-draw tensor over K
    yb = t(y[..., None, :])  # (..., 1, 1, n)
    ya = yb * a[..., :, None]  # y_i <w_r, mu>, (..., K, m, n)
    d_sig = (ya > 0).to(f64)  # sigma'(<w_r, y_i mu>)
    th = t(theta[..., :, None])  # (..., 1, m, 1)
    w0 = yb * t(A0[..., :, None])  # <w*_r, y_i mu> at lam = 0: y_i <w_r(0), mu>
    w1 = yb * th  # its slope in lam: y_i theta_r (<mu/||mu||^2, mu> = 1)
    d_noise = (P > 0).to(f64)  # sigma'(<w_r, xi_i>)
    x0 = t(P0)  # <w*_r, xi_i> at lam = 0
    x1 = th * t(c[..., None, :])  # its slope: theta_r <mu, xi_i>/||mu||^2
    # positive pair (x_i with x~_i): sigma'(.) of this network times sigma(.) of the other at the same sample
    ps = d_sig * relu(yb * b[..., :, None])
    pn = d_noise * relu(Q)
    pos0 = (ps * w0 + pn * x0).sum(-2) / (m * tau)
    pos1 = (ps * w1 + pn * x1).sum(-2) / (m * tau)
    # negatives j in N_i: the other network's signal activation at y_j, relu(y_j b_r), split by the sign of y_j
    rel_p, rel_m = relu(b)[..., :, None], relu(-b)[..., :, None]  # (..., K, m, 1)
    out = []
    for w in (w0, w1):
        X = d_sig * w
        sp, sm = (X * rel_p).sum(-2), (X * rel_m).sum(-2)  # (..., K, n)
        yj_b = t(yj)  # (..., 1, n, M)
        out.append(torch.where(yj_b > 0, sp[..., None], sm[..., None]))
    relQ = relu(Q)
    idx = t(neg).expand(P.shape[:-2] + neg.shape[-2:])
    N0 = (d_noise * x0).transpose(-1, -2) @ relQ  # (..., K, n, n): sum_r sigma'(P_ri) <w*_r, xi_i> sigma(Q_rj)
    N1 = (d_noise * x1).transpose(-1, -2) @ relQ
    neg0 = (out[0] + torch.gather(N0, -1, idx)) / (m * tau)
    neg1 = (out[1] + torch.gather(N1, -1, idx)) / (m * tau)
    return pos0, pos1, neg0, neg1


def multi_comparator_margins(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig,
                             ccfg: ComparatorConfig = ComparatorConfig(), signs=None) -> Tuple[Margins, Margins]:
    """The margins of Lemma D.13 at every recorded step, for both networks, from the coefficients;
    ``signs`` as in :func:`multi_telescoping`.

    For neuron ``r`` (``sigma'`` = ``1[. > 0]``; the other network's activation is the stop-gradient
    factor)::

        <nabla_{w_r} F_0(W, x_i), w*_r> = (1/(m tau)) [sigma'(<w_r, y_i mu>) sigma(<w~_r, y_i mu~>) <w*_r, y_i mu>
                                                      + sigma'(<w_r, xi_i>) sigma(<w~_r, xi~_i>) <w*_r, xi_i>]
        <nabla_{w_r} F_j(W, x_i), w*_r> = (1/(m tau)) [sigma'(<w_r, y_i mu>) sigma(<w~_r, y_j mu~>) <w*_r, y_i mu>
                                                      + sigma'(<w_r, xi_i>) sigma(<w~_r, xi~_j>) <w*_r, xi_i>]

    summed over ``r``, with ``<w*_r, v> = <w_r(0), v> + lam theta_r <mu, v>/||mu||^2``; the second
    network's are the same with the roles of the two networks (and of ``mu, xi, W0, theta`` and
    ``mu~, xi~, W0~, theta~``) exchanged.  Returns ``(first, second)`` as
    :class:`~mmcl.proofs.single_stage2.Margins` (the ``M`` negatives in the order of
    ``data.negatives``).  Memory ``O(K n^2)`` per draw."""
    batched = _check(traj, data, cfg, ccfg)
    lam = ccfg.coefficient(cfg)
    level = ccfg.level(cfg)
    f64 = torch.float64
    dev = traj.gamma.device
    dc = data.to(device=dev, dtype=f64)
    tr = traj
    if traj.gamma.dtype != f64:
        import dataclasses
        tr = dataclasses.replace(traj, gamma=traj.gamma.to(f64), rho=traj.rho.to(f64),
                                 gamma_tilde=traj.gamma_tilde.to(f64), rho_tilde=traj.rho_tilde.to(f64))
    h1 = preactivation_history(tr, dc)
    h2 = preactivation_history(tr, dc, tilde=True)
    theta, theta_t = _signs(signs, dc)
    neg = dc.negatives
    yj = torch.gather(dc.y, -1, neg.flatten(-2)).reshape(neg.shape)  # (..., n, M)
    A0 = (dc.W0 @ dc.mu[..., None])[..., 0]
    A0t = (dc.W0_tilde @ dc.mu_tilde[..., None])[..., 0]
    P0 = dc.W0 @ dc.xi.transpose(-1, -2)
    P0t = dc.W0_tilde @ dc.xi_tilde.transpose(-1, -2)
    c = (dc.xi @ dc.mu[..., None])[..., 0] / (dc.mu * dc.mu).sum(-1, keepdim=True)
    ct = (dc.xi_tilde @ dc.mu_tilde[..., None])[..., 0] / (dc.mu_tilde * dc.mu_tilde).sum(-1, keepdim=True)
    m, tau = dc.m, float(cfg.tau)
    res = []
    for (a, P, A, P_0, cc, th), (b, Q) in (((h1.signal, h1.noise, A0, P0, c, theta), (h2.signal, h2.noise)),
                                          ((h2.signal, h2.noise, A0t, P0t, ct, theta_t), (h1.signal, h1.noise))):
        pos0, pos1, neg0, neg1 = _margins_one(dc.y, yj, neg, a, P, b, Q, A, P_0, cc, th, m, tau, batched)
        res.append(Margins(steps=traj.steps, pos=pos0 + lam * pos1, neg=neg0 + lam * neg1, pos_slope=pos1,
                           neg_slope=neg1, lam=lam, level=level))
    return res[0], res[1]


# --------------------------------------------------------------------------------------------
# The chain of App. D.2 on [T1, T], as the book reads it
# --------------------------------------------------------------------------------------------
@dataclass
class MultiComparatorChain:
    """The links of App. D.2 (Lemmas D.11-D.15) along a multi-modal run from its stage-2 start ``t1``
    on, on the CPU, for one choice of the comparators' signs.  Shapes as in
    :class:`~mmcl.proofs.single_stage2.Telescoping` and :class:`~mmcl.proofs.single_stage2.Margins`
    (a batched run has a leading ``B``); pairs are ``(first network, second network)``.

    * ``telescoping`` (:class:`MultiTelescoping`, every recorded step), ``margins`` (a pair of
      :class:`~mmcl.proofs.single_stage2.Margins`, at the recorded steps from ``t1`` on only);
    * ``pos_ratio``, ``neg_ratio`` -- pairs: ``pos / (2L)`` ``(..., K1, n)`` and ``neg / L``
      ``(..., K1, n, M)`` at the ``K1`` recorded steps from ``t1`` on; Lemma D.13 needs
      ``pos_ratio >= 1`` and ``neg_ratio <= 1``;
    * ``feasible13`` -- pair of :meth:`~mmcl.proofs.single_stage2.Margins.feasible_lam` from ``t1``
      on (``lo > hi``: no ``lam`` satisfies Lemma D.13 for that network);
    * ``distance_t1`` -- pair ``(..., )``: ``||W(T1) - W*||_F``, ``||W~(T1) - W~*||_F`` (Lemma D.12),
      and ``d12_scale`` the pair ``sqrt(m)/||mu||``, ``sqrt(m)/||mu~||`` it is bounded by up to ``O~``;
    * ``slack (..., K-1)`` -- Lemma D.14's slack ``D(t) - D(t+1) - eta (L(t) - 2 eps)``;
      ``slack_first``, ``slack_second`` the per-network slacks ``... - eta (L_S(t) - eps)``;
    * ``feasible14`` -- :meth:`~mmcl.proofs.single_stage2.Telescoping.c17_feasible_lam` of the combined
      slack from ``t1`` on; ``factor14`` its lower end as the factor in ``lam = factor tau L``;
    * ``c11`` -- pair ``(..., K-1)``: ``eta ||nabla L_S||^2 / L_S`` per network (Lemma D.11; Lemma
      D.14's last step needs ``<= 1``);
    * ``avg_loss``, ``avg_bound (..., K - t1)`` -- the two sides of Lemma D.15 from ``t1`` on;
    * ``horizon`` -- Lemma D.15's ``T - T1 = floor(D(T1)/(eta eps))`` of every draw, a list.
    """

    t1: int
    telescoping: MultiTelescoping
    margins: tuple
    pos_ratio: tuple
    neg_ratio: tuple
    feasible13: tuple
    distance_t1: tuple
    d12_scale: tuple
    slack: torch.Tensor
    slack_first: torch.Tensor
    slack_second: torch.Tensor
    feasible14: tuple
    factor14: float
    c11: tuple
    avg_loss: torch.Tensor
    avg_bound: torch.Tensor
    horizon: list

    @property
    def epsilon(self) -> float:
        """The target ``eps`` of the comparators."""
        return self.telescoping.epsilon

    @property
    def level(self) -> float:
        """``L = log(2M/eps)``."""
        return self.telescoping.first.level


def multi_comparator_chain(traj: Trajectory, data: SyntheticData, cfg: SyntheticConfig, ccfg: ComparatorConfig,
                           t1: int, signs=None) -> MultiComparatorChain:
    """Evaluate every link of App. D.2 along a multi-modal run from step ``t1`` (the start of stage 2)
    on: the margins of Lemma D.13 (:func:`multi_comparator_margins`), the distances of Lemma D.12,
    the gradient bound of Lemma D.11, the one-step inequality of Lemma D.14 (combined and per
    network) and both sides of Lemma D.15 (:func:`multi_telescoping`).  The run must record every
    step and its loss derivatives (``record_every=1``, ``record_derivatives=True``)."""
    tel = multi_telescoping(traj, data, cfg, ccfg, signs)
    comb = tel.combined
    k1 = comb._start(t1)
    mg = multi_comparator_margins(traj.records(k1), data, cfg, ccfg, signs)  # stage 2 only: O(K n^2) memory
    level = ccfg.level(cfg)
    lo14, hi14 = comb.c17_feasible_lam(k1)
    dist = tuple(torch.sqrt(t.distance_sq[..., k1]).cpu() for t in (tel.first, tel.second))
    return MultiComparatorChain(
        t1=t1, telescoping=tel, margins=mg, pos_ratio=tuple((g.pos / (2 * level)).cpu() for g in mg),
        neg_ratio=tuple((g.neg / level).cpu() for g in mg), feasible13=tuple(g.feasible_lam(0) for g in mg),
        distance_t1=dist, d12_scale=(math.sqrt(cfg.m) / cfg.mu_norm, math.sqrt(cfg.m) / cfg.mu_tilde_norm),
        slack=comb.c17_slack().cpu(), slack_first=tel.first.c17_slack().cpu(),
        slack_second=tel.second.c17_slack().cpu(), feasible14=(lo14, hi14), factor14=lo14 / (cfg.tau * level),
        c11=tuple((cfg.lr * t.c14_ratio()).cpu() for t in (tel.first, tel.second)),
        avg_loss=comb.averaged_loss(t1).cpu(), avg_bound=comb.averaged_bound(t1).cpu(),
        horizon=[_s2.lemma_c18_horizon(float(v), cfg, ccfg) for v in comb.distance_sq[..., k1].reshape(-1)])
