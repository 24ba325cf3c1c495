"""What a linear head can read from an OOD input, in closed form: the book's proposition on Sec.
3.3's test signal and the window of test signals where the paper's comparison holds.

Fix trained weights ``W`` (rows ``w_r``, independent of the test data).  An OOD input
``x = [y nu, zeta]``, ``zeta ~ N(0, sigma_xi^2 I)``, has the embedding

``h_r = relu(y a_r) + relu(g_r)``,  ``a_r = <w_r, nu>``,  ``g = W zeta ~ N(0, sigma_xi^2 W W^T)``.

The label enters only through ``a``; the noise part ``relu(g)`` has the same law in both classes,
and ``relu(a) - relu(-a) = a``: the two classes' embeddings are the same random vector shifted by
``a``.  Everything below follows from that.

* :func:`relu_moments` -- the mean and covariance of ``relu(g)`` for a Gaussian ``g`` (the
  arc-cosine kernel; exact);
* :func:`private_noise` -- ``l_r = sigma_xi dist(w_r, span{w_s: s != r})``: the standard deviation
  of the part of neuron ``r``'s noise response that no other neuron sees;
* :func:`head_error_floor` -- part (a) of the proposition: every linear head errs with probability
  at least ``1/4 - sum_r |a_r| / (2 sqrt(2 pi) l_r)``;
* :func:`discriminability_bound` -- part (b): every linear head's score separates the two class
  means by at most ``D_max`` of its own standard deviations;
* :func:`head_error_upper`, :func:`dprime_lower` -- the other side, for the corrected theorem: the
  best head's error is at most ``1/(1 + D^2/4)`` (Cantelli), and ``D`` is at least ``||a||`` over the
  features' largest noise scale;
* :func:`atom_head_error` -- the head that reaches the 1/4 of part (a) (it reads one neuron's exact
  zero);
* :func:`head_error_gaussian` -- the error of a given head when its score is replaced by a Gaussian
  of the same two moments (the *Gaussian-equivalent* error);
* :func:`lda_dprime`, :func:`fitted_dprime` -- the discriminability of the best linear head, and
  what a head fit on ``N`` labelled samples keeps of it;
* :func:`window_dprime`, :func:`window_threshold` -- the closed form of the book's window: the
  best head's discriminability as a function of ``cos(nu, mu)`` from four numbers of the trained
  network (``sum_r gamma_r^2``, the init noise ``s0 = sigma0 sigma_xi sqrt(d)``, ``SNR``, ``m``),
  and the cosine at which its error falls to a target.

Each formula is written once, in float64, and tested against a Monte Carlo computation.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import torch

from mmcl._utils import check_int, check_number

__all__ = ["RELU_VARIANCE", "ERROR_TARGET", "normal_cdf", "relu_moments", "private_noise", "head_error_floor",
           "discriminability_bound", "head_error_upper", "dprime_lower", "atom_head", "atom_head_error", "head_error_gaussian", "lda_dprime",
           "fitted_dprime", "gaussian_error", "window_dprime", "window_threshold", "threshold_on_grid"]

#: ``Var(relu(z))`` for ``z ~ N(0, 1)``: ``1/2 - 1/(2 pi)``.
RELU_VARIANCE = 0.5 - 1.0 / (2.0 * math.pi)
#: The OOD error at which the book reads a threshold of the window (ours: halfway to chance).
ERROR_TARGET = 0.25

_F64 = torch.float64


def normal_cdf(x: torch.Tensor) -> torch.Tensor:
    """``Phi(x)``, the standard normal distribution function (elementwise)."""
    x = torch.as_tensor(x, dtype=_F64)
    return 0.5 * torch.erfc(-x / math.sqrt(2.0))


def _gram(W: torch.Tensor) -> torch.Tensor:
    if not isinstance(W, torch.Tensor) or W.dim() < 2:
        raise ValueError(f"W must be a tensor (..., m, d) of weights, got {type(W).__name__}")
    W = W.to(_F64)
    return W @ W.transpose(-1, -2)


def relu_moments(cov: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(mean, covariance)`` of ``relu(g)`` for ``g ~ N(0, cov)``, ``cov (..., m, m)``.

    With ``s_r = sqrt(cov_rr)`` and ``c = cov_rs/(s_r s_s)``: ``E relu(g_r) = s_r/sqrt(2 pi)`` and
    ``E relu(g_r) relu(g_s) = s_r s_s (sqrt(1 - c^2) + c (pi - arccos c)) / (2 pi)`` (the
    arc-cosine kernel of degree one), so the diagonal of the covariance is
    ``RELU_VARIANCE s_r^2``."""
    cov = torch.as_tensor(cov, dtype=_F64)
    if cov.dim() < 2 or cov.shape[-1] != cov.shape[-2]:
        raise ValueError(f"cov must be a square matrix (..., m, m), got shape {tuple(cov.shape)}")
    s = cov.diagonal(dim1=-2, dim2=-1).clamp_min(0).sqrt()
    outer = s[..., :, None] * s[..., None, :]
    c = torch.where(outer > 0, cov / outer.clamp_min(1e-300), torch.zeros_like(cov)).clamp(-1.0, 1.0)
    second = outer * (torch.sqrt(1 - c * c) + c * (math.pi - torch.arccos(c))) / (2 * math.pi)
    mean = s / math.sqrt(2 * math.pi)
    return mean, second - mean[..., :, None] * mean[..., None, :]


def private_noise(W: torch.Tensor, sigma_xi: float) -> torch.Tensor:
    """``l_r = sigma_xi dist(w_r, span{w_s : s != r})`` for the rows of ``W (..., m, d)``, ``(..., m)``:
    the standard deviation of ``<w_r, zeta>`` given every other neuron's ``<w_s, zeta>``.  From the
    Gram matrix ``G = W W^T``: ``dist^2 = 1/(G^{-1})_rr`` (zero where the rows are dependent)."""
    check_number("sigma_xi", sigma_xi, 0, math.inf)
    G = _gram(W)
    m = G.shape[-1]
    # scale to unit diagonal before inverting, so the answer does not depend on the rows' units
    dg = G.diagonal(dim1=-2, dim2=-1).clamp_min(1e-300).sqrt()
    R = G / (dg[..., :, None] * dg[..., None, :])
    eig = torch.linalg.eigvalsh(R)
    ok = eig[..., :1] > 1e-12 * m
    inv_diag = torch.linalg.inv(R + torch.where(ok[..., None], 0.0, 1.0) * torch.eye(m, dtype=_F64)
                                ).diagonal(dim1=-2, dim2=-1)
    dist = dg / inv_diag.sqrt()
    return torch.where(ok, sigma_xi * dist, torch.zeros_like(dist))


def head_error_floor(a: torch.Tensor, W: torch.Tensor, sigma_xi: float) -> torch.Tensor:
    """Part (a) of the proposition: a lower bound on the OOD error of *every* linear head
    ``f = <u, h> + b`` (``u != 0``; for ``u = 0`` the error is 1/2),

    ``L(f) >= 1/4 - sum_r |a_r| / (2 sqrt(2 pi) l_r)``,

    ``a (..., m)`` the signal responses ``<w_r, nu>`` (or ``(..., K, m)``: ``K`` signals against the
    same weights), ``l`` from :func:`private_noise`.  Proof: the
    error is at least ``1/2 - P(Z in J)/2`` with ``Z = <u, relu(g)>`` and ``J`` an interval of
    length ``|<u, a>|``; split on the sign of ``g_k`` for ``k`` maximising ``|u_k| l_k``: ``g_k <= 0``
    has probability 1/2, and on ``g_k > 0`` the score moves linearly with the part of ``zeta`` only
    neuron ``k`` sees, a Gaussian of standard deviation ``l_k``, so it lands in ``J`` with probability
    at most ``|<u, a>| / (sqrt(2 pi) |u_k| l_k) <= sum_r |a_r|/(sqrt(2 pi) l_r)``.  Returns ``(...)``
    (``-inf`` where some ``l_r`` is zero: no bound)."""
    a = torch.as_tensor(a, dtype=_F64)
    ell = private_noise(W, sigma_xi)
    if a.dim() == ell.dim() + 1:  # several signals (..., K, m) against one set of weights
        ell = ell[..., None, :]
    if a.shape[-1] != ell.shape[-1] or torch.broadcast_shapes(a.shape, ell.shape) != a.shape:
        raise ValueError(f"a {tuple(a.shape)} must have W's shape without its last dimension, {tuple(ell.shape)}"
                         " (or one more dimension before m: several signals)")
    ratio = torch.where(ell > 0, a.abs() / ell.clamp_min(1e-300), torch.full_like(a, math.inf))
    return 0.25 - ratio.sum(-1) / (2 * math.sqrt(2 * math.pi))


def discriminability_bound(a: torch.Tensor, W: torch.Tensor, sigma_xi: float) -> torch.Tensor:
    """Part (b) of the proposition: for every linear head ``f``, ``|E[f | y=1] - E[f | y=-1]|`` is at
    most ``D_max`` standard deviations of ``f`` (the same in both classes),

    ``D_max^2 = sum_r a_r^2 / s_r^2 / (lambda_min(R) RELU_VARIANCE)``,

    ``s_r = sigma_xi ||w_r||``, ``R`` the correlation matrix of the rows of ``W``.  Proof: the
    covariance of ``relu(g)`` is ``S K S`` with ``K = sum_k c_k^2 R^(k)`` (Hadamard powers, the
    Hermite coefficients of relu, ``sum_{k>=1} c_k^2 = RELU_VARIANCE``), and ``R^(k) >= lambda_min(R) I``
    by Schur's product theorem; then Cauchy-Schwarz on ``<u, a>``.  ``(...)``."""
    a = torch.as_tensor(a, dtype=_F64)
    check_number("sigma_xi", sigma_xi, 0, math.inf)
    G = _gram(W)
    s = sigma_xi * G.diagonal(dim1=-2, dim2=-1).sqrt()
    dg = G.diagonal(dim1=-2, dim2=-1).sqrt()
    lam = torch.linalg.eigvalsh(G / (dg[..., :, None] * dg[..., None, :]))[..., 0].clamp_min(0)
    return torch.sqrt((a * a / (s * s)).sum(-1) / (lam.clamp_min(1e-300) * RELU_VARIANCE))


def atom_head(a: torch.Tensor, s: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The head that reaches part (a)'s 1/4: it reads the neuron ``k`` with the largest
    ``|a_k|/s_k`` alone, ``f = sign(a_k) (h_k - |a_k|/2)``.  One class always has ``h_k >= |a_k|``
    (its signal patch is active), the other has ``h_k = relu(g_k)``, exactly 0 half the time.
    Returns ``(u (..., m), b (...))``."""
    a = torch.as_tensor(a, dtype=_F64)
    s = torch.as_tensor(s, dtype=_F64)
    k = (a.abs() / s).argmax(-1, keepdim=True)
    ak = a.gather(-1, k)
    u = torch.zeros_like(a).scatter(-1, k, torch.sign(ak))
    return u, -(ak / 2)[..., 0]


def atom_head_error(a: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """The OOD error of :func:`atom_head`: ``Phi(-|a_k| / (2 s_k)) / 2``, ``(...)``; it tends to 1/4
    as the signal response ``|a_k|`` vanishes against the noise ``s_k``."""
    a = torch.as_tensor(a, dtype=_F64)
    s = torch.as_tensor(s, dtype=_F64)
    return 0.5 * normal_cdf(-(a.abs() / (2 * s)).amax(-1))


def gaussian_error(mean_pos: torch.Tensor, mean_neg: torch.Tensor, sd: torch.Tensor) -> torch.Tensor:
    """``(Phi(-mean_pos/sd) + Phi(mean_neg/sd)) / 2``: the error of a score with class means
    ``mean_pos`` (``y = 1``), ``mean_neg`` and the standard deviation ``sd`` in both classes, read as
    Gaussian."""
    return 0.5 * (normal_cdf(-mean_pos / sd) + normal_cdf(mean_neg / sd))


def head_error_gaussian(u: torch.Tensor, b: torch.Tensor, a: torch.Tensor, W: torch.Tensor,
                        sigma_xi: float) -> torch.Tensor:
    """The Gaussian-equivalent error of the head ``f = <u, h> + b`` (raw features) on the OOD inputs
    with signal responses ``a (..., K, m)`` (``K`` test signals; the weights ``W (..., m, d)`` shared):
    the score's class means ``<u, relu(+-a)> + <u, E relu(g)> + b`` and its standard deviation
    ``sqrt(u^T Cov(relu(g)) u)`` (:func:`relu_moments`) into :func:`gaussian_error`.  ``(..., K)``."""
    u = torch.as_tensor(u, dtype=_F64)
    b = torch.as_tensor(b, dtype=_F64)
    a = torch.as_tensor(a, dtype=_F64)
    mean, cov = relu_moments(sigma_xi ** 2 * _gram(W))
    base = (u * mean).sum(-1) + b  # (...)
    sd = torch.sqrt((u[..., None, :] @ cov @ u[..., :, None])[..., 0, 0])
    pos = (u[..., None, :] * a.clamp_min(0)).sum(-1) + base[..., None]
    neg = (u[..., None, :] * (-a).clamp_min(0)).sum(-1) + base[..., None]
    return gaussian_error(pos, neg, sd[..., None])


def lda_dprime(a: torch.Tensor, W: torch.Tensor, sigma_xi: float) -> torch.Tensor:
    """The discriminability of the best linear head in the Gaussian-equivalent model:
    ``D = sqrt(a^T K^{-1} a)``, ``K = Cov(relu(g))`` (:func:`relu_moments`), for ``a (..., K, m)``;
    ``(..., K)``.  Its error is ``Phi(-D/2)``."""
    a = torch.as_tensor(a, dtype=_F64)
    _, cov = relu_moments(sigma_xi ** 2 * _gram(W))
    sol = torch.linalg.solve(cov[..., None, :, :], a[..., :, None])[..., 0]
    return torch.sqrt((a * sol).sum(-1).clamp_min(0))


def head_error_upper(a: torch.Tensor, W: torch.Tensor, sigma_xi: float) -> torch.Tensor:
    """An upper bound on the OOD error of the best linear head (the population one, fit on the test
    distribution itself): ``1 / (1 + D^2/4)``, ``D`` of :func:`lda_dprime`.  Proof: the head
    ``u = K^{-1} a`` with its threshold halfway between the two class means errs in each class with
    probability at most ``s^2/(s^2 + (Delta/2)^2)`` by Cantelli's one-sided inequality (``Delta`` the
    distance of the means, ``s`` the score's standard deviation, the same in both classes), and
    ``Delta/s = D``.  No Gaussian approximation.  ``a (..., K, m)`` -> ``(..., K)``."""
    D = lda_dprime(a, W, sigma_xi)
    return 1.0 / (1.0 + D * D / 4)


def dprime_lower(a: torch.Tensor, W: torch.Tensor, sigma_xi: float) -> torch.Tensor:
    """A lower bound on :func:`lda_dprime` from two numbers of the weights:
    ``D^2 >= ||a||^2 / (RELU_VARIANCE max_r s_r^2 lambda_max(R))``, ``s_r = sigma_xi ||w_r||``, ``R``
    the rows' correlation matrix.  Proof: ``Cov(relu(g)) = S (sum_k c_k^2 R^(k)) S`` (the Hermite
    expansion of :func:`discriminability_bound`), and ``lambda_max(R^(k)) <= lambda_max(R)`` by
    Schur's product theorem (a Hadamard product with a correlation matrix does not raise the largest
    eigenvalue), so ``lambda_max(Cov) <= RELU_VARIANCE max_r s_r^2 lambda_max(R)``; then
    ``a^T K^{-1} a >= ||a||^2/lambda_max(K)``.  ``a (..., K, m)`` -> ``(..., K)``."""
    a = torch.as_tensor(a, dtype=_F64)
    check_number("sigma_xi", sigma_xi, 0, math.inf)
    G = _gram(W)
    dg = G.diagonal(dim1=-2, dim2=-1).sqrt()
    lam = torch.linalg.eigvalsh(G / (dg[..., :, None] * dg[..., None, :]))[..., -1]
    smax2 = (sigma_xi * dg).pow(2).amax(-1)
    return a.norm(dim=-1) / torch.sqrt(RELU_VARIANCE * smax2 * lam)[..., None]


def fitted_dprime(D: torch.Tensor, p: int, n_fit: int) -> torch.Tensor:
    """What a head fit on ``n_fit`` labelled samples (half per class) of ``p`` features keeps of the
    best discriminability ``D``: ``D^2 / sqrt(D^2 + 4 p / n_fit)``.  The class means it estimates
    differ from the true ones by a Gaussian of covariance ``(4/n_fit) K``, which adds ``4 p/n_fit``
    to the squared length of the direction it reads (to first order in that error)."""
    check_int("p", p)
    check_int("n_fit", n_fit)
    D = torch.as_tensor(D, dtype=_F64)
    return D * D / torch.sqrt(D * D + 4.0 * p / n_fit)


def window_dprime(cos, *, gamma_sq: float, m: int, kappa: float, snr: float, s0: float, d: float,
                  n_fit: Optional[int] = None) -> torch.Tensor:
    """The closed form of the window: the best linear head's discriminability at ``cos(nu, mu)``
    from four numbers of a trained network (``gamma_sq = sum_r gamma_r^2``, ``s0 = sigma0 sigma_xi
    sqrt(d)``, ``snr``, ``m``) and ``kappa = ||nu||/||mu||``:

    ``D^2 = m kappa^2 SNR^2 / V  +  cos^2 kappa^2 gamma_sq / (V s0^2 + gamma_sq / (4 SNR^2 d))``,

    ``V = RELU_VARIANCE``.  The first term is the initial weights' channel (``<w_r(0), nu>``, a
    label signal of ``sigma0 ||nu||`` per neuron against the init noise ``s0``, independent across
    neurons: a head adds the ``m`` of them); the second the learned channel: the signal part
    ``gamma_r cos ||nu||/||mu||`` against the init noise and the common-mode noise
    ``gamma_r <mu, zeta>/||mu||^2`` (standard deviation ``gamma_r/(SNR sqrt d)``, the same scalar in
    every neuron, which caps the channel at ``2 cos ||nu||/sigma_xi``).  The memorised parts are of
    relative order ``1/sqrt(d)`` and left out.  With ``n_fit``: :func:`fitted_dprime` of it
    (``p = m``).  ``cos`` a number or a tensor; float64."""
    c = torch.as_tensor(cos, dtype=_F64)
    for name, v in (("gamma_sq", gamma_sq), ("kappa", kappa), ("snr", snr), ("s0", s0), ("d", d)):
        check_number(name, v, 0, math.inf, low_closed=(name == "gamma_sq"))
    check_int("m", m)
    V = RELU_VARIANCE
    init = m * (kappa * snr) ** 2 / V
    learned = c * c * kappa ** 2 * gamma_sq / (V * s0 ** 2 + gamma_sq / (4 * snr ** 2 * d))
    D = torch.sqrt(init + learned)
    return D if n_fit is None else fitted_dprime(D, m, n_fit)


def window_threshold(*, gamma_sq: float, m: int, kappa: float, snr: float, s0: float, d: float,
                     n_fit: Optional[int] = None, target: float = ERROR_TARGET) -> Optional[float]:
    """The ``cos(nu, mu)`` at which the error ``Phi(-D/2)`` of :func:`window_dprime` falls to
    ``target``: ``0.0`` where the initial weights alone already reach it, None where no ``cos <= 1``
    does.  In closed form: ``D`` must reach ``t = 2 Phi^{-1}(1 - target)`` (after a fit on ``n_fit``
    samples, ``D^2 = (t^2 + sqrt(t^4 + 16 t^2 m/n_fit))/2``), and the learned channel grows like
    ``cos^2``."""
    check_number("target", target, 0, 0.5)
    t = 2 * math.sqrt(2) * float(torch.erfinv(torch.tensor(1 - 2 * target, dtype=_F64)))
    D2 = t * t if n_fit is None else (t ** 2 + math.sqrt(t ** 4 + 16 * t ** 2 * m / n_fit)) / 2
    base = float(window_dprime(0.0, gamma_sq=gamma_sq, m=m, kappa=kappa, snr=snr, s0=s0, d=d)) ** 2
    if base >= D2:
        return 0.0
    slope = float(window_dprime(1.0, gamma_sq=gamma_sq, m=m, kappa=kappa, snr=snr, s0=s0, d=d)) ** 2 - base
    if slope <= 0:
        return None
    c = math.sqrt((D2 - base) / slope)
    return c if c <= 1.0 else None


def threshold_on_grid(cos: torch.Tensor, error: torch.Tensor, target: float = ERROR_TARGET) -> Optional[float]:
    """The ``cos`` at which a curve ``error (K,)`` on the ascending grid ``cos (K,)`` first falls to
    ``target`` (interpolated linearly in ``log cos``): None where it never does on the grid, the
    grid's first value where it starts below."""
    cos = torch.as_tensor(cos, dtype=_F64)
    error = torch.as_tensor(error, dtype=_F64)
    if cos.dim() != 1 or cos.shape != error.shape or cos.numel() < 2:
        raise ValueError(f"cos and error must be two 1-D tensors of one length >= 2, got {tuple(cos.shape)}"
                         f" and {tuple(error.shape)}")
    if not bool((cos[1:] > cos[:-1]).all()) or float(cos[0]) <= 0:
        raise ValueError("cos must be positive and strictly ascending")
    below = (error <= target).nonzero()
    if below.numel() == 0:
        return None
    k = int(below[0])
    if k == 0:
        return float(cos[0])
    e0, e1 = float(error[k - 1]), float(error[k])
    l0, l1 = math.log(float(cos[k - 1])), math.log(float(cos[k]))
    w = (e0 - target) / (e0 - e1) if e0 != e1 else 1.0
    return math.exp(l0 + w * (l1 - l0))
