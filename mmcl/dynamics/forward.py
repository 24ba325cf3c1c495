"""Eq. (11) forward: the weights ``W(t)`` and their products with any vectors, from the coefficients.

``W(t) = W(0) + gamma mu^T/||mu||^2 + sum_i rho_i xi_i^T/||xi_i||^2``: every engine's output can be
turned back into preactivations (:func:`preactivations`) or weights without having kept ``W``.
"""
from __future__ import annotations

import torch

from mmcl.model.data import SyntheticData

__all__ = ["preactivations", "weights", "times", "weights_cheaper"]


def preactivations(data: SyntheticData, gamma, rho, vectors: torch.Tensor, tilde: bool = False) -> torch.Tensor:
    """``<w_r(t), v>`` for the rows ``v`` of ``vectors (..., k, d)`` from the coefficients of
    Eq. (11): ``<w_r(0), v> + gamma_r <mu, v>/||mu||^2 + sum_i rho_{r,i} <xi_i, v>/||xi_i||^2``.

    ``gamma (..., m)``/``rho (..., m, n)`` may carry extra leading dimensions (e.g. time) before
    the batch ones of ``data``; the result is ``(..., m, k)``.  ``tilde=True`` uses the second
    modality's ``mu~``, ``xi~``, ``W0~``.  The products are taken in whichever order costs fewer
    operations: through the data's inner products with ``v`` (many states, few vectors) or by
    forming the weights ``W(t)`` first (few states, many vectors, e.g. scoring the last step on
    a large test set).
    """
    mu, xi, W0 = _modality(data, tilde)
    v = vectors
    if weights_cheaper(data, gamma, v.shape[-2], tilde):
        return times(weights(data, gamma, rho, tilde), v)
    base = W0 @ v.transpose(-1, -2)  # (B.., m, k)
    mv = (v @ mu[..., None])[..., 0] / (mu * mu).sum(-1, keepdim=True)  # (B.., k)
    xv = (xi @ v.transpose(-1, -2)) / (xi * xi).sum(-1)[..., None]  # (B.., n, k)
    return base + gamma[..., None] * mv[..., None, :] + _fold_states(rho, xv)


def _fold_states(A: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """``A @ V`` for ``A (L.., B.., r, n)`` with extra leading dimensions ``L`` (e.g. time steps)
    before the batch dimensions ``B..`` of ``V (B.., n, k)``: ``L`` is folded into the rows of one
    batched product.  A ``V`` whose batch dimensions are all 1 is shared by every row of ``A``:
    one 2-D product.  (A broadcast product would copy ``V`` once per leading index;
    ``benchmarks/bench_choices.py`` times both at Figure 1's evaluation.)"""
    nb, extra = V.dim() - 2, A.dim() - V.dim()
    if nb > 0 and extra >= 0 and all(s == 1 for s in V.shape[:-2]) and A.dim() > 2:
        # one V for every state and batch element (e.g. the one draw that a group of runs shares):
        # all of A's rows in one 2-D product, instead of a broadcast that copies V per batch index
        out = A.reshape(-1, A.shape[-1]) @ V.reshape(V.shape[-2:])
        return out.reshape(*A.shape[:-1], V.shape[-1])
    if nb == 0 or extra <= 0 or A.shape[extra:-2] != V.shape[:-2]:
        return A @ V
    r, batch, lead = A.shape[-2], V.shape[:-2], A.shape[:extra]
    rows = A.movedim(tuple(range(extra)), tuple(range(nb, nb + extra))).reshape(*batch, -1, A.shape[-1])
    out = (rows @ V).reshape(*batch, *lead, r, V.shape[-1])
    return out.movedim(tuple(range(nb, nb + extra)), tuple(range(extra)))


def weights_cheaper(data: SyntheticData, gamma, k: int, tilde: bool = False) -> bool:
    """Whether :func:`preactivations` of ``k`` vectors at the states ``gamma`` costs fewer operations
    by forming ``W(t)`` (``O(states m n d + states m d k)``) than through the data's inner products
    with the vectors (``O((m + n) d k + states m n k)``)."""
    _, xi, W0 = _modality(data, tilde)
    m, n, d = W0.shape[-2], xi.shape[-2], xi.shape[-1]
    states = gamma.numel() // max(1, W0[..., 0].numel())  # leading states per draw (e.g. time steps)
    return states * (m * n * d + m * d * k) < (m + n) * d * k + states * m * n * k


def times(W: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``W @ v^T`` for ``W (..., m, d)`` and ``v (..., k, d)``.  Vectors shared by the whole batch
    (leading dimensions of size 1, e.g. one OOD set scored against many runs) take one 2-D product
    with all the runs' rows: a broadcast batched product would copy ``v`` once per run."""
    if 2 < v.dim() <= W.dim() and all(s == 1 for s in v.shape[:-2]):
        v = v.reshape(v.shape[-2:])
    return W @ v.transpose(-1, -2)


def _modality(data: SyntheticData, tilde: bool):
    """``(mu, xi, W0)`` of the first modality, or of the second (``mu~, xi~, W0~``) with ``tilde``."""
    return (data.mu_tilde, data.xi_tilde, data.W0_tilde) if tilde else (data.mu, data.xi, data.W0)


def weights(data: SyntheticData, gamma, rho, tilde: bool = False) -> torch.Tensor:
    """``W(t) = W(0) + gamma mu^T/||mu||^2 + (rho / ||xi||^2) Xi`` (Eq. 11), ``(..., m, d)``."""
    mu, xi, W0 = _modality(data, tilde)
    gh = gamma / (mu * mu).sum(-1, keepdim=True)
    rh = rho / (xi * xi).sum(-1)[..., None, :]
    return W0 + gh[..., None] * mu[..., None, :] + _fold_states(rh, xi)
