"""The OOD error of trained features as the test signal tilts from Sec. 3.3's angle towards ``mu``:
the measurement behind the book's window of test signals.

A test signal of norm ``||nu||`` at the angle ``cos(nu, mu) = c`` is

``nu(c) = ||nu|| (c q1 + sqrt(1 - c^2) q2)``,  ``q1 = mu/||mu||``,

``q2`` the unit part of the draw's own OOD signal orthogonal to ``mu`` (a fixed direction, so
that every ``nu(c)`` is independent of the training data, as Sec. 3.3's is).  The response
``<w_r, nu(c)>`` is linear in ``(c, sqrt(1 - c^2))``, and the noise responses ``<w_r, zeta>``
do not depend on ``nu``: one trained network is scored at every angle of a grid at the cost of
its embeddings.  Per angle, :func:`tilt_curves` gives

* the measured OOD error of both protocols of :mod:`mmcl.downstream.evaluation` (``adapt``: a
  logistic head fit on the labelled OOD samples; ``transfer``: the head fit on the training
  embeddings), on the held-out OOD samples;
* the Gaussian-equivalent error of each protocol from the response decomposition and the exact
  moments of the features (:mod:`mmcl.downstream.window`): ``adapt`` the best linear head after a
  fit on ``n_fit`` samples (:func:`~mmcl.downstream.window.lda_dprime`,
  :func:`~mmcl.downstream.window.fitted_dprime`), ``transfer`` the trained head itself
  (:func:`~mmcl.downstream.window.head_error_gaussian`);
* the proposition's floor, the error no linear head can beat
  (:func:`~mmcl.downstream.window.head_error_floor`), and the other side, the error the best linear
  head stays below (:func:`~mmcl.downstream.window.head_error_upper`).

Everything is computed in float64 from the coefficients of Eq. (11).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional

import torch

from mmcl._utils import check_number
from mmcl.downstream.evaluation import embeddings, features, fit_logistic
from mmcl.downstream.window import fitted_dprime, head_error_floor, head_error_gaussian, lda_dprime, normal_cdf
from mmcl.dynamics.forward import times, weights
from mmcl.dynamics.trajectory import Trajectory
from mmcl.model.data import OODData, SyntheticData

__all__ = ["tilted_signals", "TiltCurves", "tilt_curves", "cos_grid"]

_F64 = torch.float64


def cos_grid(low: float, per_decade: int = 6, coarse_below: float = 1e-4) -> torch.Tensor:
    """An ascending grid of ``cos(nu, mu)`` from ``low`` to 1: one point per decade below
    ``coarse_below`` (where every error sits at chance), ``per_decade`` points per decade above it,
    float64."""
    check_number("low", low, 0, 1)
    check_number("coarse_below", coarse_below, 0, 1)
    if not isinstance(per_decade, int) or per_decade < 1:
        raise ValueError(f"per_decade must be an int >= 1, got {per_decade!r}")
    lo = math.log10(low)
    mid = max(lo, math.log10(coarse_below))
    coarse = torch.arange(lo, mid, 1.0, dtype=_F64)
    k = max(2, round((0.0 - mid) * per_decade) + 1)
    fine = torch.linspace(mid, 0.0, k, dtype=_F64)
    return torch.pow(10.0, torch.cat([coarse, fine]).unique(sorted=True))


def tilted_signals(mu: torch.Tensor, nu0: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
    """``nu(c) = ||nu0|| (c q1 + sqrt(1 - c^2) q2)`` for every ``c`` of ``cos (K,)``: ``q1`` is
    ``mu``'s direction and ``q2`` the unit part of ``nu0`` orthogonal to it.  ``mu, nu0 (B.., d)``
    -> ``(B.., K, d)``.  ``nu0`` must have a part orthogonal to ``mu`` (Sec. 3.3's does)."""
    cos = torch.as_tensor(cos, dtype=mu.dtype, device=mu.device)
    if cos.dim() != 1 or cos.numel() == 0 or float(cos.min()) < 0 or float(cos.max()) > 1:
        raise ValueError(f"cos must be a 1-D tensor of values in [0, 1], got {cos!r}")
    q1 = mu / mu.norm(dim=-1, keepdim=True)
    perp = nu0 - (nu0 * q1).sum(-1, keepdim=True) * q1
    pn = perp.norm(dim=-1, keepdim=True)
    if float(pn.min()) <= 1e-12 * float(nu0.norm(dim=-1).max()):
        raise ValueError("nu0 is parallel to mu: no direction to tilt it in (draw the OOD set with nu_cos < 1)")
    q2 = perp / pn
    sin = (1 - cos * cos).clamp_min(0).sqrt()
    nn = nu0.norm(dim=-1, keepdim=True)[..., None]  # (B.., 1, 1)
    return nn * (cos[:, None] * q1[..., None, :] + sin[:, None] * q2[..., None, :])


@dataclass
class TiltCurves:
    """The OOD errors of one trained network (or a batch ``B..``) at every ``cos`` of a grid.

    ``cos (K,)``; ``error[protocol]`` the measured error ``(B.., K)``; ``gaussian[protocol]`` its
    Gaussian-equivalent prediction ``(B.., K)``; ``floor (B.., K)`` the proposition's lower bound
    on every linear head's error; ``upper (B.., K)`` the Cantelli bound on the best (population) head's
    error (:func:`~mmcl.downstream.window.head_error_upper`); ``signal (B.., K, m)`` the responses ``<w_r, nu(c)>``;
    ``gamma_sq (B..)`` ``sum_r gamma_r^2``; ``init_sd (B..)`` the root mean square over neurons of
    ``sigma_xi ||w_r||`` (each feature's noise response); ``n_fit`` the labelled OOD samples of
    ``adapt``."""

    cos: torch.Tensor
    error: Dict[str, torch.Tensor]
    gaussian: Dict[str, torch.Tensor]
    floor: torch.Tensor
    upper: torch.Tensor
    signal: torch.Tensor
    gamma_sq: torch.Tensor
    init_sd: torch.Tensor
    n_fit: int


def tilt_curves(traj: Trajectory, data: SyntheticData, cos: torch.Tensor, sigma_xi: float, *,
                ood: Optional[OODData] = None, l2: float = 1e-2) -> TiltCurves:
    """The OOD errors of the last recorded step of ``traj`` (first network) at every angle of
    ``cos (K,)`` (ascending, in ``(0, 1]``), on the OOD set ``ood`` (default ``data.ood``) with its
    signal tilted (:func:`tilted_signals`); ``sigma_xi`` the test noise's scale (``cfg.sigma_xi``).
    See :class:`TiltCurves`."""
    check_number("sigma_xi", sigma_xi, 0)
    ood = ood if ood is not None else data.ood
    if ood is None:
        raise ValueError("tilt_curves needs an OOD set: data.ood is None, pass ood=OODData(...)")
    cos = torch.as_tensor(cos, dtype=_F64)
    if cos.dim() != 1 or cos.numel() < 2 or not bool((cos[1:] > cos[:-1]).all()) or float(cos[0]) <= 0:
        raise ValueError(f"cos must be an ascending 1-D grid of at least 2 values in (0, 1], got {cos!r}")
    batched = data.batched
    data = data.to(dtype=_F64)
    ood = ood.to(device=data.mu.device, dtype=_F64)
    gamma = traj.gamma[:, -1] if batched else traj.gamma[-1]
    rho = traj.rho[:, -1] if batched else traj.rho[-1]
    gamma, rho = gamma.to(device=data.mu.device, dtype=_F64), rho.to(device=data.mu.device, dtype=_F64)
    cos = cos.to(data.mu.device)
    W = weights(data, gamma, rho)  # (B.., m, d')
    nus = tilted_signals(data.mu, ood.nu, cos)  # (B.., K, d')
    a = times(W, nus).transpose(-1, -2)  # (B.., K, m): <w_r, nu(c)>
    y_fit = ood.y_fit[..., None, :].expand(a.shape[:-1] + ood.y_fit.shape[-1:])  # (B.., K, N_fit)
    y_eval = ood.y_eval[..., None, :].expand(a.shape[:-1] + ood.y_eval.shape[-1:])
    # h = relu(y a) + relu(<w_r, zeta>) at every angle: one noise response, shared by the K signals
    h_fit = features(a, y_fit, times(W, ood.zeta_fit)[..., None, :, :])  # (B.., K, N_fit, m)
    h_eval = features(a, y_eval, times(W, ood.zeta_eval)[..., None, :, :])
    error, gaussian = {}, {}
    adapt = fit_logistic(h_fit, y_fit, l2=l2)
    error["adapt"] = 1 - adapt.accuracy(h_eval, y_eval)
    m, n_fit = a.shape[-1], ood.y_fit.shape[-1]
    D = lda_dprime(a, W, sigma_xi)  # (B.., K)
    gaussian["adapt"] = normal_cdf(-fitted_dprime(D, m, n_fit) / 2)
    upper = 1.0 / (1.0 + D * D / 4)  # Cantelli: the population head's error is at most this
    X_train = embeddings(data, gamma, rho, data.mu, data.y, data.xi)  # (B.., n, m)
    transfer = fit_logistic(X_train, data.y.expand(X_train.shape[:-1]), l2=l2)
    u, b = transfer.raw()
    score = (h_eval @ u[..., None, :, None])[..., 0] + b[..., None, None]
    error["transfer"] = (score * y_eval <= 0).to(_F64).mean(-1)
    gaussian["transfer"] = head_error_gaussian(u, b, a, W, sigma_xi)
    floor = head_error_floor(a, W, sigma_xi)  # -inf where a feature has no private noise: no bound
    return TiltCurves(cos=cos.cpu(), error={k: v.cpu() for k, v in error.items()},
                      gaussian={k: v.cpu() for k, v in gaussian.items()}, floor=floor.cpu(), upper=upper.cpu(),
                      signal=a.cpu(),
                      gamma_sq=(gamma * gamma).sum(-1).cpu(),
                      init_sd=(sigma_xi * W.norm(dim=-1)).pow(2).mean(-1).sqrt().cpu(), n_fit=n_fit)
