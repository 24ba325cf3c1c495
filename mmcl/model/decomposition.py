"""The signal-noise decomposition of Eq. (11).

``w_r(t) = w_r(0) + gamma_r mu/||mu||^2 + sum_i rho_{r,i} xi_i/||xi_i||^2``.  Gradient descent only
moves the weights inside ``span{mu, xi_1, ..., xi_n}`` (Eq. 7), and those ``n + 1`` vectors are
almost surely independent when ``n < d``, so the coefficients are unique and can be recovered
from ``W(t) - W(0)`` by least squares.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Decomposition", "decomposition_basis", "decompose"]


@dataclass
class Decomposition:
    """``gamma (..., m)``, ``rho (..., m, n)`` and ``residual (..., m)``, the norm of the part of
    each ``w_r(t) - w_r(0)`` outside the span (round-off for weights produced by GD)."""

    gamma: torch.Tensor
    rho: torch.Tensor
    residual: torch.Tensor


def decomposition_basis(mu: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
    """The columns ``[mu/||mu||^2, xi_1/||xi_1||^2, ...]`` of Eq. (11): ``mu (..., d)``,
    ``xi (..., n, d)`` -> ``(..., d, n + 1)``."""
    cols = torch.cat([mu[..., None, :], xi], dim=-2)
    cols = cols / (cols * cols).sum(-1, keepdim=True)
    return cols.transpose(-1, -2)


def decompose(delta_W: torch.Tensor, mu: torch.Tensor, xi: torch.Tensor) -> Decomposition:
    """Recover ``gamma``, ``rho`` of Eq. (11) from ``delta_W = W(t) - W(0)``.

    ``delta_W (..., m, d)``, ``mu (..., d)``, ``xi (..., n, d)`` with ``n + 1 <= d``; the leading
    dimensions of ``delta_W`` may include extra ones (e.g. time) before the batch of ``mu``.
    Solved by least squares (QR), which is exact when ``delta_W`` lies in the span.
    """
    n, d = xi.shape[-2], xi.shape[-1]
    if delta_W.shape[-1] != d or mu.shape[-1] != d:
        raise ValueError(f"decompose: delta_W (..., m, {delta_W.shape[-1]}), mu ({mu.shape[-1]},) and "
                         f"xi (n, {d}) must share the last dimension d")
    if n + 1 > d:
        raise ValueError(f"decompose needs n + 1 <= d for a unique decomposition, got n={n}, d={d}")
    B = decomposition_basis(mu, xi)  # (..., d, n+1)
    extra = delta_W.dim() - 2 - (B.dim() - 2)
    Bx = B.reshape((1,) * extra + B.shape) if extra > 0 else B
    Bx = Bx.expand(delta_W.shape[:-2] + B.shape[-2:])
    sol = torch.linalg.lstsq(Bx, delta_W.transpose(-1, -2)).solution  # (..., n+1, m)
    coef = sol.transpose(-1, -2)  # (..., m, n+1)
    residual = torch.linalg.vector_norm(delta_W - coef @ Bx.transpose(-1, -2), dim=-1)
    return Decomposition(gamma=coef[..., 0], rho=coef[..., 1:], residual=residual)
