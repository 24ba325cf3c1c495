"""Multi-modal contrastive learning as an asymmetric matrix factorisation: the loss identity of
Zhang, Wang & Wang (ICML 2023).

On a discrete joint distribution ``P(x_v, x_l)`` of images and captions, the multi-modal
*spectral* contrastive loss of tabular encoders is an asymmetric matrix factorisation of the
normalised co-occurrence matrix ``P~ = D_V^{-1/2} P D_L^{-1/2}`` (:func:`spectral_contrastive_loss`,
:func:`factorisation_loss`, minimised by :func:`optimal_factors`), and it performs single-modal
spectral contrastive learning (HaoChen et al., NeurIPS 2021) on the image graph induced through
shared captions (:func:`induced_image_graph`), whose normalised form is ``P~ P~^T``.
:func:`principal_angles` compares the subspaces that the factors span.

The graphs' scores and the discrete image-caption world are in :mod:`mmcl.wider.graphs`;
alternating gradient descent on the factorisation is in :mod:`mmcl.wider.agd`.

Conventions (the book's chapter "Multi-modal contrastive learning as matrix factorisation" derives
them):

* ``P (N_v, N_l)`` is a joint distribution: entries >= 0 summing to 1, every row and every
  column with positive mass.  Marginals ``p_V = P 1 (N_v,)``, ``p_L = P^T 1 (N_l,)``,
  ``D_V = diag(p_V)``, ``D_L = diag(p_L)``.
* Encoders are tables.  We parameterise them by ``F_V (N_v, k)``, ``F_L (N_l, k)`` and the
  encoders' outputs are ``f_V(x) = F_V[x] / sqrt(p_V(x))``, ``f_L(l) = F_L[l] / sqrt(p_L(l))``,
  i.e. ``f = D^{-1/2} F`` (:func:`encoder_outputs`).  With this scaling the loss identity holds
  exactly (no extra constant, no factor).
"""
from __future__ import annotations

from typing import Tuple

import torch

from mmcl.wider._checks import check_distribution, check_float, check_k

__all__ = ["marginals", "normalised_cooccurrence", "encoder_outputs", "spectral_contrastive_loss",
           "factorisation_loss", "optimal_factors", "induced_image_graph", "principal_angles"]


def marginals(P: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The marginals ``p_V = P 1 (N_v,)`` and ``p_L = P^T 1 (N_l,)`` of a joint ``P (N_v, N_l)``."""
    check_distribution(P)
    return P.sum(1), P.sum(0)


def normalised_cooccurrence(P: torch.Tensor) -> torch.Tensor:
    """``P~ = D_V^{-1/2} P D_L^{-1/2}`` ``(N_v, N_l)``, i.e. ``P~[x, l] = P(x, l) / sqrt(p_V(x) p_L(l))``.

    Its top singular value is exactly 1, with singular vectors ``sqrt(p_V)`` and ``sqrt(p_L)``
    (``P~ sqrt(p_L) = D_V^{-1/2} P 1 = sqrt(p_V)``).
    """
    pv, pl = marginals(P)
    return P / torch.sqrt(pv)[:, None] / torch.sqrt(pl)[None, :]


def _check_tables(P, F_V, F_L) -> None:
    check_distribution(P)
    check_float("F_V", F_V, 2)
    check_float("F_L", F_L, 2)
    if F_V.shape[0] != P.shape[0]:
        raise ValueError(f"F_V has {F_V.shape[0]} rows but P has {P.shape[0]} images (rows); F_V must be (N_v, k)")
    if F_L.shape[0] != P.shape[1]:
        raise ValueError(f"F_L has {F_L.shape[0]} rows but P has {P.shape[1]} captions (columns); "
                         "F_L must be (N_l, k)")
    if F_V.shape[1] != F_L.shape[1]:
        raise ValueError(f"F_V (N_v, {F_V.shape[1]}) and F_L (N_l, {F_L.shape[1]}) must share the embedding "
                         "dimension k")


def encoder_outputs(P: torch.Tensor, F_V: torch.Tensor, F_L: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The encoders ``f_V = D_V^{-1/2} F_V (N_v, k)`` and ``f_L = D_L^{-1/2} F_L (N_l, k)``: row ``x``
    of ``f_V`` is the image embedding ``f_V(x) = F_V[x] / sqrt(p_V(x))``."""
    _check_tables(P, F_V, F_L)
    pv, pl = marginals(P)
    return F_V / torch.sqrt(pv)[:, None], F_L / torch.sqrt(pl)[:, None]


def spectral_contrastive_loss(P: torch.Tensor, F_V: torch.Tensor, F_L: torch.Tensor) -> torch.Tensor:
    """The multi-modal spectral contrastive loss of tabular encoders, as an expectation (a scalar):

    ``L = -2 E_{(x, l) ~ P}[f_V(x)^T f_L(l)] + E_{x ~ p_V, l ~ p_L}[(f_V(x)^T f_L(l))^2]``

    (the spectral contrastive loss of HaoChen et al. 2021 in the two-encoder form of Zhang, Wang &
    Wang 2023; the book's Eq. ``eq-mf-loss``), with the
    encoders ``f_V = D_V^{-1/2} F_V``, ``f_L = D_L^{-1/2} F_L`` (:func:`encoder_outputs`).  The
    positive pairs are drawn from the joint ``P``, the negative pairs from the product of its
    marginals.  ``P (N_v, N_l)``, ``F_V (N_v, k)``, ``F_L (N_l, k)``.

    Computed from the expectations directly (never through ``P~``), so that the identity
    ``L = ||P~ - F_V F_L^T||_F^2 - ||P~||_F^2`` (:func:`factorisation_loss`) is a check, not a
    definition.
    """
    f_v, f_l = encoder_outputs(P, F_V, F_L)
    pv, pl = P.sum(1), P.sum(0)
    S = f_v @ f_l.T  # (N_v, N_l): f_V(x)^T f_L(l)
    positive = (P * S).sum()
    negative = (pv[:, None] * pl[None, :] * S * S).sum()
    return -2.0 * positive + negative


def factorisation_loss(P: torch.Tensor, F_V: torch.Tensor, F_L: torch.Tensor) -> torch.Tensor:
    """``||P~ - F_V F_L^T||_F^2 - ||P~||_F^2`` (a scalar): the matrix-factorisation form of
    :func:`spectral_contrastive_loss` (Zhang, Wang & Wang 2023; the book's Lemma ``lem-mf-identity``).  Minimised over rank-``k``
    tables by the truncated SVD of ``P~`` (Eckart-Young), :func:`optimal_factors`."""
    _check_tables(P, F_V, F_L)
    Pt = normalised_cooccurrence(P)
    return ((Pt - F_V @ F_L.T) ** 2).sum() - (Pt ** 2).sum()


def optimal_factors(P: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A minimiser of the loss over ``F_V (N_v, k)``, ``F_L (N_l, k)``: the balanced truncated SVD
    ``F_V = U_k S_k^{1/2}``, ``F_L = V_k S_k^{1/2}`` of ``P~``.  Returns ``(F_V, F_L, minimum)`` with
    ``minimum = -sum_{i<=k} s_i^2`` (a scalar tensor)."""
    Pt = normalised_cooccurrence(P)
    check_k(k, min(Pt.shape))
    U, s, Vh = torch.linalg.svd(Pt, full_matrices=False)
    r = torch.sqrt(s[:k])
    return U[:, :k] * r, Vh[:k].T * r, -(s[:k] ** 2).sum()


def induced_image_graph(P: torch.Tensor) -> torch.Tensor:
    """The image-image graph induced through shared captions, ``(N_v, N_v)``:

    ``A(x, x+) = sum_l P(x, l) P(x+, l) / p_L(l)`` = ``P D_L^{-1} P^T``,

    the joint law of two images drawn independently given one caption (Zhang, Wang & Wang 2023:
    the pseudo-positive pairs of multi-modal learning; the book's Lemma ``lem-mf-induced``).  It is
    symmetric, sums to 1, has degrees
    ``A 1 = p_V``, and its normalised form ``D_V^{-1/2} A D_V^{-1/2}`` equals ``P~ P~^T``.
    """
    check_distribution(P)
    pl = P.sum(0)
    return torch.einsum("xl,yl,l->xy", P, P, 1.0 / pl)


def principal_angles(U: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Principal angles (radians, increasing) between the column spaces of ``U (N, a)`` and
    ``V (N, b)``, ``(min(a, b),)``.  Cosines are the singular values of ``Q_U^T Q_V``, sines those of
    ``(I - Q_U Q_U^T) Q_V``; the angle is ``atan2(sin, cos)``, accurate near 0 as well as near
    ``pi/2`` (``arccos`` alone cannot resolve angles below ~1e-8 in float64)."""
    check_float("U", U, 2)
    check_float("V", V, 2)
    if U.shape[0] != V.shape[0]:
        raise ValueError(f"U {tuple(U.shape)} and V {tuple(V.shape)} must have the same number of rows")
    if U.shape[1] < V.shape[1]:
        U, V = V, U
    Qu, _ = torch.linalg.qr(U)
    Qv, _ = torch.linalg.qr(V)
    M = Qu.T @ Qv
    cos = torch.linalg.svdvals(M)  # decreasing
    sin = torch.linalg.svdvals(Qv - Qu @ M).flip(0)  # increasing, paired with the decreasing cosines
    return torch.atan2(sin, cos)
