"""Downstream evaluation (Sec. 3.3 and Sec. 6): embeddings and a logistic-regression head.

The embedding of an input ``x = [x^(1), x^(2)]`` is ``h(x) = [sum_p sigma(<w_r, x^(p)>)]_r`` (m
features).  The OOD inputs are ``[y nu, zeta]``.  Two protocols, both reported:

* ``"adapt"`` -- the paper's: a logistic head is fit on the ``n_test`` labelled OOD samples and
  scored on fresh held-out OOD samples;
* ``"transfer"`` -- a head fit on the training embeddings ``h(x_i)`` with labels ``y_i`` and
  scored on the held-out OOD samples.

Embeddings are computed from the coefficients of Eq. (11) (:func:`mmcl.dynamics.forward.preactivations`), which is
exact for every engine, so a trajectory of the recursion can be evaluated without weights.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional

import torch

from mmcl._utils import check_int
from mmcl.downstream.probe import standardisation
from mmcl.model.data import OODData, SyntheticData
from mmcl.dynamics.trajectory import Trajectory
from mmcl.dynamics.forward import times, weights, weights_cheaper, preactivations
from mmcl.model.losses import relu

__all__ = ["PROTOCOLS", "LogisticHead", "fit_logistic", "Evaluation", "evaluate", "evaluate_all", "embeddings",
           "features", "accuracy_standard_error"]

PROTOCOLS = ("adapt", "transfer")


@dataclass
class LogisticHead:
    """A fitted linear head on standardised features: ``sign(((X - mean)/scale) @ weight + bias)``.
    Shapes carry the leading batch dimensions of the fit: ``weight (..., p)``, ``bias (...)``."""

    weight: torch.Tensor
    bias: torch.Tensor
    mean: torch.Tensor
    scale: torch.Tensor

    def raw(self):
        """``(u, b)`` with ``score = <u, x> + b`` on the raw features: ``((x - mean)/scale) @ weight + bias``
        folded into one product with ``x``; ``u (..., p)``, ``b (...)``."""
        u = self.weight / self.scale
        return u, self.bias - (self.mean * u).sum(-1)

    def decision(self, X: torch.Tensor) -> torch.Tensor:
        """``X (..., N, p)`` -> scores ``(..., N)``."""
        u, b = self.raw()
        return (X @ u[..., None])[..., 0] + b[..., None]

    def accuracy(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Fraction of ``sign(score) == y`` (a score of exactly 0 counts as wrong), ``(...)``."""
        return (self.decision(X) * y > 0).to(X.dtype).mean(-1)


def _objective(theta, Xa, y, l2):
    """``theta (..., A, p+1)`` candidates, ``Xa (..., N, p+1)``, ``y (..., N)`` -> ``(..., A)``."""
    z = theta @ Xa.transpose(-1, -2)  # (..., A, N)
    w = theta[..., :-1]
    return torch.nn.functional.softplus(-y[..., None, :] * z).mean(-1) + 0.5 * l2 * (w * w).sum(-1)


def fit_logistic(X: torch.Tensor, y: torch.Tensor, l2: float = 1e-2, max_iter: int = 50) -> LogisticHead:
    """L2-regularised logistic regression, batched over leading dimensions, by damped Newton.

    Minimises ``mean_i log(1 + exp(-y_i (w.x_i + b))) + l2/2 ||w||^2`` over standardised features
    (each column centred and divided by its standard deviation; constant columns are left
    unscaled).  ``X (..., N, p)``, ``y (..., N)`` in {-1, +1}.  Each Newton step takes the best of
    the step sizes 1, 1/2, ..., 1/32 (or none), so the objective never increases.
    """
    if not l2 > 0:
        raise ValueError(f"l2 must be > 0 (it keeps the fit bounded on separable data), got {l2!r}")
    if X.shape[:-1] != y.shape:
        raise ValueError(f"fit_logistic: X {tuple(X.shape)} and y {tuple(y.shape)} disagree")
    mean, scale = standardisation(X, -2)
    Xs = (X - mean[..., None, :]) / scale[..., None, :]
    Xa = torch.cat([Xs, torch.ones_like(Xs[..., :1])], -1)
    p1 = Xa.shape[-1]
    reg = torch.full((p1,), l2, dtype=X.dtype, device=X.device)
    reg[-1] = 0.0
    theta = torch.zeros(X.shape[:-2] + (p1,), dtype=X.dtype, device=X.device)
    alphas = torch.tensor([1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.0], dtype=X.dtype, device=X.device)
    eye = torch.eye(p1, dtype=X.dtype, device=X.device)
    N = X.shape[-2]
    for _ in range(max_iter):
        z = (Xa @ theta[..., None])[..., 0]
        s = torch.sigmoid(-y * z)
        grad = -((y * s)[..., None, :] @ Xa)[..., 0, :] / N + reg * theta
        wgt = s * (1 - s)
        H = (Xa * wgt[..., None]).transpose(-1, -2) @ Xa / N + torch.diag(reg) + 1e-10 * eye
        step = torch.linalg.solve(H, grad[..., None])[..., 0]
        cand = theta[..., None, :] - alphas[:, None] * step[..., None, :]  # (..., A, p1)
        f = _objective(cand, Xa, y, l2)  # (..., A)
        best = f.argmin(-1)
        theta = torch.gather(cand, -2, best[..., None, None].expand(best.shape + (1, p1)))[..., 0, :]
        if float(grad.abs().max()) < 1e-9:
            break
    return LogisticHead(weight=theta[..., :-1], bias=theta[..., -1], mean=mean, scale=scale)


def embeddings(data: SyntheticData, gamma: torch.Tensor, rho: torch.Tensor, signal: torch.Tensor,
               y: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """``h(x) = sigma(<w_r, y s>) + sigma(<w_r, z>)`` for inputs ``x = [y s, z]`` with one signal
    vector ``signal (B.., d)`` and noise rows ``noise (B.., N, d)``; ``gamma (..., B.., m)``,
    ``rho (..., B.., m, n)`` -> ``(..., B.., N, m)``."""
    a = preactivations(data, gamma, rho, signal[..., None, :])[..., 0]  # (..., m)
    z = preactivations(data, gamma, rho, noise)  # (..., m, N)
    return features(a, y, z)


def features(a, y, z):
    """``h = sigma(y a) + sigma(z)`` from the signal preactivations ``a (..., m)``, the labels
    ``y (..., N)`` and the noise preactivations ``z (..., m, N)``."""
    return relu(y[..., :, None] * a[..., None, :]) + relu(z.transpose(-1, -2))


def _embedder(data: SyntheticData, gamma, rho, k_min: int):
    """:func:`embeddings` at fixed coefficients as a function of ``(signal, y, noise)``, for
    noise sets of at least ``k_min`` rows: where forming ``W(t)`` is the cheaper order, it is
    formed once for all the sets instead of once per call."""
    if not weights_cheaper(data, gamma, k_min):
        return lambda signal, y, noise: embeddings(data, gamma, rho, signal, y, noise)
    W = weights(data, gamma, rho)

    def embed(signal, y, noise):
        a = preactivations(data, gamma, rho, signal[..., None, :])[..., 0]  # one vector: the cheap order
        return features(a, y, times(W, noise))
    return embed


@dataclass
class Evaluation:
    """Downstream accuracy along a trajectory: ``steps (E,)``, ``accuracy (E,)`` on the held-out
    OOD set and ``fit_accuracy (E,)`` on the samples the head was fit on (a batch adds a leading
    ``B``), for one ``protocol``."""

    protocol: str
    steps: torch.Tensor
    accuracy: torch.Tensor
    fit_accuracy: torch.Tensor


def evaluate_all(traj: Trajectory, data: SyntheticData, protocols=PROTOCOLS, *, every: int = 1,
                 ood: Optional[OODData] = None, l2: float = 1e-2) -> Dict[str, Evaluation]:
    """:func:`evaluate` for several protocols at once, computing the OOD embeddings only once."""
    protocols = tuple(protocols)
    for protocol in protocols:
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol={protocol!r} is unknown; valid: {', '.join(map(repr, PROTOCOLS))}")
    check_int("every", every)
    ood = ood if ood is not None else data.ood
    if ood is None:
        raise ValueError("evaluate needs an OOD set: data.ood is None, pass ood=OODData(...)")
    K = traj.steps.shape[0]
    idx = list(range(0, K, every))
    if idx[-1] != K - 1:
        idx.append(K - 1)
    dev, dt = traj.gamma.device, traj.gamma.dtype
    data = data.to(device=dev, dtype=dt)
    ood = ood.to(device=dev, dtype=dt)
    batched = data.batched
    tsel = torch.tensor(idx, device=dev)
    # time first, then batch: (E, B.., m)
    gamma = traj.gamma.index_select(1 if batched else 0, tsel)
    rho = traj.rho.index_select(1 if batched else 0, tsel)
    if batched:
        gamma, rho = gamma.transpose(0, 1), rho.transpose(0, 1)
    f64 = torch.float64  # embeddings in the run's precision, the head in float64
    # the inputs [y s, z] each protocol fits its head on, as (signal s, labels y, noise rows z)
    fit_sets = {"adapt": (ood.nu, ood.y_fit, ood.zeta_fit), "transfer": (data.mu, data.y, data.xi)}
    embed = _embedder(data, gamma, rho, min([ood.zeta_eval.shape[-2]] + [fit_sets[p][2].shape[-2] for p in protocols]))
    h_eval = embed(ood.nu, ood.y_eval, ood.zeta_eval).to(f64)
    y_eval = ood.y_eval.to(f64).expand(h_eval.shape[:-1])
    out = {}
    for protocol in protocols:
        X_fit, y_fit = embed(*fit_sets[protocol]), fit_sets[protocol][1]
        X_fit = X_fit.to(f64)
        y_fit = y_fit.to(f64).expand(X_fit.shape[:-1])
        head = fit_logistic(X_fit, y_fit, l2=l2)
        acc = head.accuracy(h_eval, y_eval)
        fit_acc = head.accuracy(X_fit, y_fit)
        if batched:
            acc, fit_acc = acc.transpose(0, 1), fit_acc.transpose(0, 1)
        out[protocol] = Evaluation(protocol=protocol, steps=traj.steps[tsel], accuracy=acc, fit_accuracy=fit_acc)
    return out


def evaluate(traj: Trajectory, data: SyntheticData, protocol: str = "adapt", *, every: int = 1,
             ood: Optional[OODData] = None, l2: float = 1e-2) -> Evaluation:
    """OOD accuracy of a logistic head on the first network's embeddings ``h`` at every
    ``every``-th recorded step of ``traj`` (and always the last), under ``protocol``
    (``"adapt"`` or ``"transfer"``, see the module docstring).  The head is fit in float64."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol={protocol!r} is unknown; valid: {', '.join(map(repr, PROTOCOLS))}")
    return evaluate_all(traj, data, (protocol,), every=every, ood=ood, l2=l2)[protocol]


def accuracy_standard_error(n_scored: int) -> float:
    """The largest standard error of an accuracy scored on ``n_scored`` independent samples,
    ``sqrt(p (1 - p) / n)`` at ``p = 1/2``."""
    check_int("n_scored", n_scored, 1)
    return math.sqrt(0.25 / n_scored)
