"""Patch-wise ReLU encoders, stop-gradient similarities and both InfoNCE losses
(Eqs. 3, 4, 6, 8, 9), written the way a user of ``torch.autograd`` would write them.

These functions act on full weight matrices and full patch tensors.  The ``autograd`` engine of
:func:`mmcl.dynamics.engines.simulate` differentiates them with ``loss.backward()``; the closed-form engines never
call them, which is what makes the comparison between the engines a real check.

Shapes carry an optional leading batch ``B``: ``W (B, m, d)``, patches ``X (B, n, 2, d)``.
"""
from __future__ import annotations

import torch

from mmcl.model.data import SyntheticData

__all__ = ["relu", "patches", "encode", "similarity", "info_nce", "single_modal_logits",
           "multi_modal_logits", "single_modal_loss", "multi_modal_loss"]


def relu(z: torch.Tensor) -> torch.Tensor:
    """sigma(z) = max(z, 0); its derivative used throughout is 1[z > 0]."""
    return torch.clamp_min(z, 0.0)


def patches(data: SyntheticData) -> dict:
    """The two-patch inputs of Sec. 3 as tensors ``(B, n, 2, d)``: ``x = [y mu, xi]``,
    the augmented positive ``x+ = [y mu, xi + eps]`` (Eq. 5) and, where present,
    ``x~ = [y mu~, xi~]``.  An unbatched ``data`` gets ``B = 1``."""
    y = data.y if data.batched else data.y[None]
    mu = data.mu if data.batched else data.mu[None]
    xi = data.xi if data.batched else data.xi[None]
    eps = data.eps if data.batched else data.eps[None]
    sig = y[..., None] * mu[:, None, :]
    out = {"x": torch.stack([sig, xi], dim=2), "x_pos": torch.stack([sig, xi + eps], dim=2)}
    if data.has_tilde:
        mu_t = data.mu_tilde if data.batched else data.mu_tilde[None]
        xi_t = data.xi_tilde if data.batched else data.xi_tilde[None]
        out["x_tilde"] = torch.stack([y[..., None] * mu_t[:, None, :], xi_t], dim=2)
    return out


def encode(W: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """Patch activations ``h_r(x^(p)) = sigma(<w_r, x^(p)>)`` (Eq. 3): ``W (B, m, d)``,
    ``X (B, n, 2, d)`` -> ``(B, n, m, 2)``."""
    return relu(torch.einsum("bmd,bnpd->bnmp", W, X))


def similarity(H_a: torch.Tensor, H_b: torch.Tensor) -> torch.Tensor:
    """Eq. (4)/(8): ``Sim(a_i, b_j) = (1/m) sum_{r,p} H_a[i,r,p] * sg(H_b[j,r,p])`` for all pairs,
    ``H (B, n, m, 2)`` -> ``(B, n, n)``.  The stop-gradient is ``detach()``."""
    m = H_a.shape[-2]
    return torch.einsum("bimp,bjmp->bij", H_a, H_b.detach()) / m


def _gather_negatives(S: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
    return torch.gather(S, -1, negatives)


def info_nce(logits: torch.Tensor) -> torch.Tensor:
    """Per-anchor InfoNCE ``-log softmax(logits)[..., 0]`` with log-sum-exp; ``logits (B, n, 1+M)``
    hold the positive similarity first, each divided by tau."""
    return torch.logsumexp(logits, dim=-1) - logits[..., 0]


def single_modal_logits(W: torch.Tensor, data: SyntheticData, tau) -> torch.Tensor:
    """Logits of Eq. (6), ``(B, n, 1+M)``: ``[Sim_h(x_i, x_i+), Sim_h(x_i, x_j) for j in N_i] / tau``."""
    P = patches(data)
    neg = data.negatives if data.batched else data.negatives[None]
    H = encode(W, P["x"])
    H_pos = encode(W, P["x_pos"])
    m = W.shape[-2]
    s_pos = (H * H_pos.detach()).sum(dim=(-1, -2)) / m
    s_neg = _gather_negatives(similarity(H, H), neg)
    tau = torch.as_tensor(tau, dtype=W.dtype, device=W.device).reshape(-1, 1, 1)
    return torch.cat([s_pos[..., None], s_neg], dim=-1) / tau


def multi_modal_logits(W: torch.Tensor, W_tilde: torch.Tensor, data: SyntheticData, tau):
    """Logits of both terms of Eq. (9), each ``(B, n, 1+M)``: the first network's
    ``[Sim_h(x_i, x~_i), Sim_h(x_i, x~_j)]/tau`` and the second's ``[Sim_g(x~_i, x_i), Sim_g(x~_i, x_j)]/tau``."""
    P = patches(data)
    neg = data.negatives if data.batched else data.negatives[None]
    H = encode(W, P["x"])
    G = encode(W_tilde, P["x_tilde"])
    S_h = similarity(H, G)  # S_h[i, j] = Sim_h(x_i, x~_j)
    S_g = similarity(G, H)  # S_g[i, j] = Sim_g(x~_i, x_j)
    tau = torch.as_tensor(tau, dtype=W.dtype, device=W.device).reshape(-1, 1, 1)
    lh = torch.cat([torch.diagonal(S_h, dim1=-2, dim2=-1)[..., None], _gather_negatives(S_h, neg)], -1)
    lg = torch.cat([torch.diagonal(S_g, dim1=-2, dim2=-1)[..., None], _gather_negatives(S_g, neg)], -1)
    return lh / tau, lg / tau


def single_modal_loss(W: torch.Tensor, data: SyntheticData, tau) -> torch.Tensor:
    """Eq. (6), the single-modal InfoNCE loss, one value per batch element ``(B,)``."""
    return info_nce(single_modal_logits(W, data, tau)).mean(-1)


def multi_modal_loss(W: torch.Tensor, W_tilde: torch.Tensor, data: SyntheticData, tau) -> torch.Tensor:
    """Eq. (9), the multi-modal loss (sum of both directions), one value per batch element ``(B,)``."""
    lh, lg = multi_modal_logits(W, W_tilde, data, tau)
    return (info_nce(lh) + info_nce(lg)).mean(-1)
