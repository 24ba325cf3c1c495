"""The checks behind the audit of the appendix's proofs (the Blueprint, :mod:`mmcl.proofs.statements`):
for each step found to fail, the algebra (sympy, exact) or the measurement that shows it.

Algebraic (sympy):

* :func:`lemma_c6_constants` -- the constant Lemma C.6's condition on ``d`` needs for each reading of
  its margin (the printed 300 is the one of ``sqrt(150 L/d)``; the stated ``150 sqrt(L/d)`` needs 45,000);
* :func:`lemma54_last_line` -- the constant and the order of the last line of Lemma 5.4's proof
  (``sqrt(80)``, printed ``sqrt(24)``; ``Theta~(n^(1/4) sqrt(sigma0 sigma_xi sqrt d))``);
* :func:`lemma_d9_46_limit` -- the right side of Lemma D.9's (46) at ``t = 0`` in units of
  ``sigma0 sigma_xi sqrt(d)``, as ``n`` grows (``101/sqrt(2 pi)`` times ``C_l``).

Measured at initialisation (no training), on a draw of the data model:

* :func:`lemma_c5_violation` beside :func:`lemma_c5_law` -- the share of pairs ``(r, i)`` with
  ``|<w_r(0), xi_i>| < C |<w_r(0), eps_i>|``, against the Cauchy law ``(2/pi) arctan(C sigma_eps/sigma_xi)``;
* :func:`lemma_c6_pair_probability` -- the exact probability that one pair falls below Lemma C.6's
  margin at its printed threshold, in units of ``delta/n``;
* :func:`lemma_d6_margin` -- Lemma D.6's threshold beside the mean of the total it bounds;
* :func:`lemma_d9_46_share` -- the share of pairs for which Lemma D.9's (46) holds at ``t = 0``;
* :func:`lemma_c14_term` -- the quantity ``2(1 - l'_i)((1/m) sum_r sum_j z_rj)^2`` that the proof of
  Lemma C.14 calls ``O(1)``, at ``t = 0``.

And after training: :func:`lemma_c7_turned_inactive`, the share of the pairs active at
initialisation that are inactive at the end (Lemma C.7 states that the inactive sets never change).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import math
from typing import Dict

import torch

from mmcl._utils import check_number
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData

__all__ = ["lemma_c5_law", "lemma_c5_violation", "lemma_c6_constants", "lemma_c6_pair_probability",
           "lemma_c7_turned_inactive", "lemma_c14_term", "lemma_d6_margin", "lemma_d9_46_limit",
           "lemma_d9_46_share", "lemma54_last_line"]


def lemma_c5_law(sigma_eps: float, sigma_xi: float, C: float) -> float:
    """``P(|<w, xi>| < C |<w, eps>|)`` at initialisation: the ratio of two independent centred
    Gaussians with scales ``sigma_xi`` and ``sigma_eps`` (times the same ``||w||``) is ``sigma_xi/sigma_eps``
    times a standard Cauchy variable, so the probability is ``(2/pi) arctan(C sigma_eps/sigma_xi)``,
    whatever ``d``."""
    for name, v in (("sigma_eps", sigma_eps), ("sigma_xi", sigma_xi), ("C", C)):
        check_number(name, v, 0)
    return 2 / math.pi * math.atan(C * sigma_eps / sigma_xi)


def lemma_c5_violation(data: SyntheticData, C: float) -> torch.Tensor:
    """The share of pairs ``(r, i)`` with ``|<w_r(0), xi_i>| < C |<w_r(0), eps_i>|`` (Lemma C.5 claims
    none for a large ``C``), ``(B..)`` float64."""
    check_number("C", C, 0)
    f64 = torch.float64
    W0, xi, eps = data.W0.to(f64), data.xi.to(f64), data.eps.to(f64)
    a = (W0 @ xi.transpose(-1, -2)).abs()
    b = (W0 @ eps.transpose(-1, -2)).abs()
    return (a < C * b).to(f64).mean((-1, -2))


def lemma_c6_constants() -> Dict[str, object]:
    """Lemma B.1 turns ``P(|<w_r(0), xi_i>| <= c) <= delta/n`` into ``2 c^2/(pi s^2) <= l`` with
    ``s^2 = sigma0^2 sigma_xi^2 d`` and ``l = -log(1 - delta^2/4n^2)``, that is ``d^2 >= K L/(pi l sigma0^2
    sigma_xi^2)`` for a margin ``c^2 = k L/d``.  Returns ``K`` (sympy, exact) for the margin the printed
    condition encodes (``"sqrt(150 L/d)"``: 300) and for the statement's (``"150 sqrt(L/d)"``: 45,000)."""
    import sympy as sp

    d, L, s0, sx, ell = sp.symbols("d L sigma0 sigma_xi ell", positive=True)
    out = {}
    for name, c2 in (("sqrt(150 L/d)", 150 * L / d), ("150 sqrt(L/d)", 150 ** 2 * L / d)):
        sol = sp.solve(sp.Eq(2 * c2 / (sp.pi * s0 ** 2 * sx ** 2 * d), ell), d ** 2)
        out[name] = sp.nsimplify(sp.simplify(sol[0] * sp.pi * ell * s0 ** 2 * sx ** 2 / L))
    return out


def lemma_c6_pair_probability(n: int, delta: float) -> float:
    """The exact probability that one pair falls below Lemma C.6's stated margin ``150 sqrt(L/d)`` when
    ``d`` sits at the printed threshold, in units of the ``delta/n`` the proof claims:
    ``erf(c/(sqrt 2 s)) n/delta`` with ``c^2/s^2 = 150 l`` there (independent of ``sigma0``, ``sigma_xi``)."""
    check_number("delta", delta, 0, 1)
    ell = -math.log1p(-delta ** 2 / (4 * n ** 2))
    # c/s at d = sqrt(300 L/(pi l s0^2 sx^2)) with c = 150 sqrt(L/d): c^2/s^2 = 150^2 pi l/300
    z = math.sqrt(150 ** 2 * math.pi * ell / 300)
    return math.erf(z / math.sqrt(2)) * n / delta


def lemma_c7_turned_inactive(data: SyntheticData, cfg: SyntheticConfig) -> torch.Tensor:
    """The share of the pairs ``(r, i)`` active at initialisation (``<w_r(0), xi_i> > 0``) that are
    inactive after ``cfg.n_epochs`` steps of single-modal gradient descent (the recursion of Lemma
    5.1), ``(B..)``.  Lemma C.7's conclusion ``I_r,-(t) = I_r,-(0)`` says none."""
    from mmcl.dynamics import simulate
    from mmcl.dynamics.forward import preactivations

    check_config(cfg)
    traj = simulate(cfg, data, "single", "recursion", dtype="float64", record_every=cfg.n_epochs)
    d64 = data.to(dtype=torch.float64)
    g1 = traj.gamma[..., -1, :]
    r1 = traj.rho[..., -1, :, :]
    before = preactivations(d64, torch.zeros_like(g1), torch.zeros_like(r1), d64.xi) > 0
    after = preactivations(d64, g1, r1, d64.xi) > 0
    lost = (before & ~after).to(torch.float64).sum((-1, -2))
    return lost / before.to(torch.float64).sum((-1, -2))


def lemma_c14_term(data: SyntheticData) -> torch.Tensor:
    """``2 (1 - 1/(M+1)) Z_i^2`` at initialisation, ``Z_i = (1/m) sum_r sum_j z_rj`` with ``z_rj`` the
    activations of neuron ``r`` on both patches of the positive and the ``M`` negatives of anchor ``i``
    (the softmax is uniform at ``t = 0``); the median over anchors, ``(B..)``.  The proof of Lemma C.14
    calls it ``O(1)``; it is about ``2 M (M + 1) A^2`` for an average activation ``A``."""
    f64 = torch.float64
    d = data.to(dtype=f64)
    relu = torch.relu
    act_sig = relu((d.W0 @ d.mu[..., :, None]) * d.y[..., None, :])  # (B.., m, n)
    act_noise = relu(d.W0 @ d.xi.transpose(-1, -2))  # (B.., m, n)
    act_pos = act_sig + relu(d.W0 @ (d.xi + d.eps).transpose(-1, -2))
    per = (act_sig + act_noise).mean(-2)  # (B.., n): (1/m) sum_r over both patches
    M = d.negatives.shape[-1]
    Z = act_pos.mean(-2) + torch.gather(per[..., None, :].expand(per.shape + per.shape[-1:]), -1,
                                        d.negatives).sum(-1)
    return (2 * (1 - 1 / (M + 1)) * Z * Z).median(-1).values


def lemma_d6_margin(cfg: SyntheticConfig) -> Dict[str, float]:
    """Lemma D.6's threshold ``150 sqrt(log(6n^2/delta)/d) n^2`` (``delta = 0.1``) beside the mean of the
    total it bounds, ``E B~_r,+,+(0) = (n/8) sigma0 sigma_xi sqrt(d) sqrt(2/pi)`` (about ``n/8`` half-normal
    terms of scale ``sigma0 sigma_xi sqrt d``; the exact ``n/4`` active pairs times ``1/2`` of the
    other encoder), and its standard deviation."""
    check_config(cfg)
    n, s = cfg.n, cfg.init_noise
    thr = 150 * math.sqrt(math.log(6 * n ** 2 / 0.1) / cfg.d) * n ** 2
    p = 1 / 8  # y_i = 1 (1/2), active in both encoders (1/4)
    mean = n * p * s * math.sqrt(2 / math.pi)
    var = n * (p * s * s - (p * s * math.sqrt(2 / math.pi)) ** 2)
    return {"threshold": thr, "mean": mean, "sd": math.sqrt(var)}


def lemma_d9_46_limit() -> object:
    """The right side of Lemma D.9's (46) at ``t = 0``, ``101 C_l (B_r,+,+(0) + B_r,+,-(0))/(M+1)`` with
    ``M = n/2`` and the mean ``(n/2) s/sqrt(2 pi)`` of the two totals, in units of ``C_l s``
    (``s = sigma0 sigma_xi sqrt d``) as ``n`` grows: ``101/sqrt(2 pi)`` (sympy), about 40 standard
    deviations of the left side ``Psi~(0)``."""
    import sympy as sp

    n = sp.symbols("n", positive=True)
    return sp.limit(101 / (n / 2 + 1) * (n / 2) / sp.sqrt(2 * sp.pi), n, sp.oo)


def lemma_d9_46_share(data: SyntheticData, c_ell: float = 1.01) -> torch.Tensor:
    """The share of pairs ``(r, i)`` active in both encoders at initialisation for which (46),
    ``Psi~_r,i(0) >= 101 C_l (B_r,+,+(0) + B_r,+,-(0))/(M+1)``, holds (``Psi~(0) = <w~_r(0), xi~_i>``;
    ``B_r,+,s(0)`` the sum over ``y_i = 1`` of ``<w_r(0), xi_i>`` over the pairs active in the first
    encoder and, by ``s``, active or not in the second), ``(B..)``."""
    check_number("c_ell", c_ell, 0)
    f64 = torch.float64
    d = data.to(dtype=f64)
    a = d.W0 @ d.xi.transpose(-1, -2)  # (B.., m, n)
    at = d.W0_tilde @ d.xi_tilde.transpose(-1, -2)
    pos = (d.y > 0)[..., None, :]
    B = (a.clamp_min(0) * pos).sum(-1, keepdim=True)  # B_r,+,+ + B_r,+,-
    M = d.negatives.shape[-1]
    both = (a > 0) & (at > 0)
    ok = (at >= 101 * c_ell * B / (M + 1)) & both
    return ok.to(f64).sum((-1, -2)) / both.to(f64).sum((-1, -2))


def lemma54_last_line() -> Dict[str, object]:
    """The last line of Lemma 5.4's proof, exactly (sympy): ``exp((1/2) log(20/(sigma0 ||mu||))) 2
    sqrt(lg) sigma0 sigma_xi sqrt(d)`` equals ``c sqrt(lg sigma0/||mu||) sigma_xi sqrt(d)`` with ``c^2 = 80``
    (printed ``sqrt(24)``); with ``||mu|| = SNR sigma_xi sqrt d``, ``n SNR^2 = k`` and ``u = sigma0 sigma_xi
    sqrt d`` it is ``sqrt(80 lg) n^(1/4) k^(-1/4) sqrt(u)``, at most ``1/sqrt(n)`` only for
    ``u <= sqrt(k)/(80 lg n^(3/2))``.  Returns ``{"c_squared", "in_n", "u_max"}``."""
    import sympy as sp

    s0, mu, lg, sx, d, n, k, u = sp.symbols("sigma0 mu lg sigma_xi d n k u", positive=True)
    b = sp.exp(sp.Rational(1, 2) * sp.log(20 / (s0 * mu))) * 2 * sp.sqrt(lg) * s0 * sx * sp.sqrt(d)
    c2 = sp.simplify(b ** 2 / (lg * s0 * sx ** 2 * d / mu))
    in_n = sp.simplify(b.subs(mu, sp.sqrt(k / n) * sx * sp.sqrt(d)).subs(s0, u / (sx * sp.sqrt(d))))
    umax = sp.solve(sp.Eq(in_n, 1 / sp.sqrt(n)), u)[0]
    return {"c_squared": c2, "in_n": in_n, "u_max": sp.simplify(umax)}
