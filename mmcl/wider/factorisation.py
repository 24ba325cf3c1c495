"""Multi-modal contrastive learning as asymmetric matrix factorisation, and alternating gradient
descent (AGD) on the factorisation.

Two results beside Huang et al. (2024):

* Zhang, Wang & Wang (ICML 2023): on a discrete joint distribution ``P(x_v, x_l)`` of images and
  captions, the multi-modal *spectral* contrastive loss of tabular encoders is an asymmetric
  matrix factorisation of the normalised co-occurrence matrix
  ``P~ = D_V^{-1/2} P D_L^{-1/2}`` (:func:`spectral_contrastive_loss`,
  :func:`factorization_loss`), and it performs single-modal spectral contrastive learning
  (HaoChen et al., NeurIPS 2021) on the image graph induced through shared captions
  (:func:`induced_image_graph`), whose normalised form is ``P~ P~^T``.
* Ward & Kolda (NeurIPS 2023): AGD on ``1/2 ||A - X Y^T||_F^2`` from an unbalanced random
  initialisation (``X_0`` proportional to ``A Phi``, ``Y_0`` small) reaches
  ``||A - X Y^T||_F^2 <= eps ||A||_F^2`` in ``O((sigma_1/sigma_r)^2 log(1/eps))`` iterations
  (:func:`agd`, :func:`initial_factors`, :func:`iterations_vs_condition`).

Conventions (the book's chapters "Multi-modal contrastive learning as matrix factorisation" and
"Alternating gradient descent on the factorisation" derive them):

* ``P (N_v, N_l)`` is a joint distribution: entries >= 0 summing to 1, every row and every
  column with positive mass.  Marginals ``p_V = P 1 (N_v,)``, ``p_L = P^T 1 (N_l,)``,
  ``D_V = diag(p_V)``, ``D_L = diag(p_L)``.
* Encoders are tables.  We parameterise them by ``F_V (N_v, k)``, ``F_L (N_l, k)`` and the
  encoders' outputs are ``f_V(x) = F_V[x] / sqrt(p_V(x))``, ``f_L(l) = F_L[l] / sqrt(p_L(l))``,
  i.e. ``f = D^{-1/2} F`` (:func:`encoder_outputs`).  With this scaling the loss identity holds
  exactly (no extra constant, no factor).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np
import torch

from mmcl.dynamics import DivergenceError

__all__ = [
    # the factorisation view
    "marginals", "normalized_cooccurrence", "encoder_outputs", "spectral_contrastive_loss",
    "factorization_loss", "optimal_factors", "induced_image_graph", "normalized_adjacency",
    "spectral_embedding", "graph_spectrum", "label_consistency", "spectral_gap", "augmentation_graph",
    "principal_angles", "linear_probe_error",
    # a discrete image-caption model with latent classes
    "JointConfig", "JointData", "sample_joint", "GraphScores", "score_graph", "median_distance",
    "GraphComparison", "compare_graphs", "WIDTH_FACTORS",
    # alternating gradient descent
    "INITS", "AGDConfig", "AGDResult", "initial_factors", "agd_step", "agd", "default_step",
    "low_rank_matrix", "iterations_vs_condition", "ward_kolda_bound", "loglog_slope",
]


# --------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------

def _sum_tol(dtype: torch.dtype) -> float:
    return 1e-9 if dtype == torch.float64 else 1e-5


def _check_float(name: str, T, ndim: Optional[int] = None) -> None:
    if not isinstance(T, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(T).__name__}")
    if not T.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {T.dtype}")
    if ndim is not None and T.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {tuple(T.shape)}")
    if not bool(torch.isfinite(T).all()):
        raise ValueError(f"{name} has non-finite entries (NaN or inf)")


def _check_distribution(P) -> None:
    """A joint distribution: 2-D, finite, >= 0, sums to 1, no empty row or column."""
    _check_float("P", P, 2)
    if P.shape[0] < 1 or P.shape[1] < 1:
        raise ValueError(f"P must have at least one row and one column, got shape {tuple(P.shape)}")
    if bool((P < 0).any()):
        raise ValueError(f"P is not a distribution: it has negative entries (min {float(P.min()):.3g}); "
                         "every entry must be >= 0")
    total = float(P.sum())
    if abs(total - 1.0) > _sum_tol(P.dtype):
        raise ValueError(f"P is not a distribution: its entries sum to {total!r}, not 1 "
                         f"(tolerance {_sum_tol(P.dtype):g} for {P.dtype})")
    for axis, what in ((1, "row (image)"), (0, "column (caption)")):
        empty = (P.sum(axis) <= 0).nonzero().flatten()
        if len(empty):
            raise ValueError(f"P has {len(empty)} {what}(s) with zero mass (first: index {int(empty[0])}); "
                             "D^{-1/2} is undefined there: drop them")


def _check_graph(A, name: str = "A") -> None:
    """A symmetric non-negative weight matrix with positive degrees."""
    _check_float(name, A, 2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square (a graph on N nodes), got shape {tuple(A.shape)}")
    if bool((A < 0).any()):
        raise ValueError(f"{name} has negative weights (min {float(A.min()):.3g}); a graph's weights must be >= 0")
    scale = float(A.abs().max())
    if float((A - A.T).abs().max()) > 1e3 * torch.finfo(A.dtype).eps * max(scale, 1e-300):
        raise ValueError(f"{name} must be symmetric (max |A - A^T| = {float((A - A.T).abs().max()):.3g})")
    deg = A.sum(1)
    if bool((deg <= 0).any()):
        raise ValueError(f"{name} has {int((deg <= 0).sum())} node(s) with zero degree; D^{{-1/2}} is undefined")


def _check_k(k, upper: int, name: str = "k") -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    if k > upper:
        raise ValueError(f"{name}={k} is larger than the matrix allows (at most {upper})")


# --------------------------------------------------------------------------------------------
# the factorisation view (Zhang, Wang & Wang 2023; HaoChen et al. 2021)
# --------------------------------------------------------------------------------------------

def marginals(P: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The marginals ``p_V = P 1 (N_v,)`` and ``p_L = P^T 1 (N_l,)`` of a joint ``P (N_v, N_l)``."""
    _check_distribution(P)
    return P.sum(1), P.sum(0)


def normalized_cooccurrence(P: torch.Tensor) -> torch.Tensor:
    """``P~ = D_V^{-1/2} P D_L^{-1/2}`` ``(N_v, N_l)``, i.e. ``P~[x, l] = P(x, l) / sqrt(p_V(x) p_L(l))``.

    Its top singular value is exactly 1, with singular vectors ``sqrt(p_V)`` and ``sqrt(p_L)``
    (``P~ sqrt(p_L) = D_V^{-1/2} P 1 = sqrt(p_V)``).
    """
    pv, pl = marginals(P)
    return P / torch.sqrt(pv)[:, None] / torch.sqrt(pl)[None, :]


def _check_tables(P, F_V, F_L) -> None:
    _check_distribution(P)
    _check_float("F_V", F_V, 2)
    _check_float("F_L", F_L, 2)
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
    ``L = ||P~ - F_V F_L^T||_F^2 - ||P~||_F^2`` (:func:`factorization_loss`) is a check, not a
    definition.
    """
    f_v, f_l = encoder_outputs(P, F_V, F_L)
    pv, pl = P.sum(1), P.sum(0)
    S = f_v @ f_l.T  # (N_v, N_l): f_V(x)^T f_L(l)
    positive = (P * S).sum()
    negative = (pv[:, None] * pl[None, :] * S * S).sum()
    return -2.0 * positive + negative


def factorization_loss(P: torch.Tensor, F_V: torch.Tensor, F_L: torch.Tensor) -> torch.Tensor:
    """``||P~ - F_V F_L^T||_F^2 - ||P~||_F^2`` (a scalar): the matrix-factorisation form of
    :func:`spectral_contrastive_loss` (Zhang, Wang & Wang 2023; the book's Lemma ``lem-mf-identity``).  Minimised over rank-``k``
    tables by the truncated SVD of ``P~`` (Eckart-Young), :func:`optimal_factors`."""
    _check_tables(P, F_V, F_L)
    Pt = normalized_cooccurrence(P)
    return ((Pt - F_V @ F_L.T) ** 2).sum() - (Pt ** 2).sum()


def optimal_factors(P: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A minimiser of the loss over ``F_V (N_v, k)``, ``F_L (N_l, k)``: the balanced truncated SVD
    ``F_V = U_k S_k^{1/2}``, ``F_L = V_k S_k^{1/2}`` of ``P~``.  Returns ``(F_V, F_L, minimum)`` with
    ``minimum = -sum_{i<=k} s_i^2`` (a scalar tensor)."""
    Pt = normalized_cooccurrence(P)
    _check_k(k, min(Pt.shape))
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
    _check_distribution(P)
    pl = P.sum(0)
    return torch.einsum("xl,yl,l->xy", P, P, 1.0 / pl)


def normalized_adjacency(A: torch.Tensor) -> torch.Tensor:
    """``A_bar = D^{-1/2} A D^{-1/2}`` ``(N, N)`` of a graph ``A (N, N)`` with degrees ``D = diag(A 1)``
    (HaoChen et al. 2021)."""
    _check_graph(A)
    r = torch.rsqrt(A.sum(1))
    return A * r[:, None] * r[None, :]


def graph_spectrum(A: torch.Tensor) -> torch.Tensor:
    """Eigenvalues of ``A_bar`` (:func:`normalized_adjacency`) in decreasing order, ``(N,)``; the
    first is 1 (eigenvector ``sqrt(degrees)``)."""
    return torch.linalg.eigvalsh(normalized_adjacency(A)).flip(0)


def spectral_embedding(A: torch.Tensor, k: int) -> torch.Tensor:
    """The minimiser of HaoChen et al.'s spectral contrastive loss on the graph ``A (N, N)`` as
    embeddings ``f = D^{-1/2} F (N, k)``, ``F = U_k Lambda_k^{1/2}`` the top-``k`` eigenpairs of
    ``A_bar`` (the minimiser of ``||A_bar - F F^T||_F^2`` when those eigenvalues are >= 0; negative
    ones are set to 0, as the loss would).  Unique up to a rotation of the ``k`` columns."""
    Ab = normalized_adjacency(A)
    _check_k(k, Ab.shape[0])
    lam, U = torch.linalg.eigh(Ab)
    lam, U = lam.flip(0)[:k], U.flip(1)[:, :k]
    F = U * torch.sqrt(lam.clamp_min(0.0))
    return F * torch.rsqrt(A.sum(1))[:, None]


def label_consistency(A: torch.Tensor, labels: torch.Tensor) -> float:
    """HaoChen et al.'s ``alpha``: the probability that a positive pair ``(x, x+) ~ A`` has
    different labels, ``sum_{x,x+} A(x,x+) 1[y(x) != y(x+)] / sum A``.  ``A (N, N)``, ``labels (N,)``
    integers.  Small is good."""
    _check_graph(A)
    if labels.shape != (A.shape[0],):
        raise ValueError(f"labels must have shape ({A.shape[0]},), got {tuple(labels.shape)}")
    diff = (labels[:, None] != labels[None, :]).to(A.dtype)
    return float((A * diff).sum() / A.sum())


def spectral_gap(A: torch.Tensor, k: int) -> float:
    """``lambda_{k+1}``, the ``(k+1)``-th smallest eigenvalue of the normalised Laplacian
    ``I - A_bar`` (HaoChen et al.'s downstream error bound scales as ``alpha / lambda_{k+1}``)."""
    nu = graph_spectrum(A)
    _check_k(k, len(nu) - 1)
    return float(1.0 - nu[k])


def _sq_distances(X: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances ``||x_i - x_j||^2`` between the rows of ``X (N, d)``, ``(N, N)``:
    clamped at 0, exactly symmetric, zero diagonal."""
    sq = (X * X).sum(1)
    D2 = (sq[:, None] + sq[None, :] - 2.0 * X @ X.T).clamp_min(0.0)
    D2 = 0.5 * (D2 + D2.T)
    D2.fill_diagonal_(0.0)
    return D2


def augmentation_graph(X: torch.Tensor, width: float) -> torch.Tensor:
    """A Gaussian augmentation graph on the images ``X (N, d)``, ``(N, N)``:

    ``A(x, x') proportional to exp(-||x - x'||^2 / (4 width^2))``, normalised to sum to 1,

    the overlap of two isotropic Gaussian clouds of standard deviation ``width``: two images are
    a positive pair in proportion to how likely a perturbation of that size links them.  A
    finite-sample stand-in for the augmentation graph of HaoChen et al. (our choice)."""
    _check_float("X", X, 2)
    if isinstance(width, bool) or not isinstance(width, (int, float)) or not width > 0 or not math.isfinite(width):
        raise ValueError(f"width must be a positive finite number, got {width!r}")
    K = torch.exp(-_sq_distances(X) / (4.0 * width ** 2))  # the diagonal is 1, so every degree is positive
    return K / K.sum()


def principal_angles(U: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Principal angles (radians, increasing) between the column spaces of ``U (N, a)`` and
    ``V (N, b)``, ``(min(a, b),)``.  Cosines are the singular values of ``Q_U^T Q_V``, sines those of
    ``(I - Q_U Q_U^T) Q_V``; the angle is ``atan2(sin, cos)``, accurate near 0 as well as near
    ``pi/2`` (``arccos`` alone cannot resolve angles below ~1e-8 in float64)."""
    _check_float("U", U, 2)
    _check_float("V", V, 2)
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


def linear_probe_error(Z: torch.Tensor, labels: torch.Tensor, train: torch.Tensor, l2: float = 1e-3) -> float:
    """Test error of a linear probe: ridge regression of one-hot labels on the standardised
    features ``Z (N, k)`` (with a bias) fit on the rows where ``train (N,)`` is True, prediction
    by argmax, error on the other rows.  Closed form, deterministic.  ``labels (N,)`` in
    ``0..C-1``; ``l2 > 0`` is the ridge penalty on the standardised scale."""
    _check_float("Z", Z, 2)
    N = Z.shape[0]
    if labels.shape != (N,) or train.shape != (N,):
        raise ValueError(f"labels and train must have shape ({N},), got {tuple(labels.shape)} and {tuple(train.shape)}")
    if train.dtype != torch.bool:
        raise ValueError(f"train must be a boolean mask, got dtype {train.dtype}")
    n_tr, n_te = int(train.sum()), int((~train).sum())
    if n_tr < 2 or n_te < 1:
        raise ValueError(f"the split needs >= 2 training and >= 1 test rows, got {n_tr} and {n_te}")
    if not l2 > 0:
        raise ValueError(f"l2 must be > 0, got {l2!r}")
    C = int(labels.max()) + 1
    Ztr = Z[train]
    mean, std = Ztr.mean(0), Ztr.std(0, correction=0)
    std = torch.where(std > 1e-12 * (1 + mean.abs()), std, torch.ones_like(std))
    Xa = torch.cat([(Z - mean) / std, torch.ones_like(Z[:, :1])], 1)
    Y = torch.nn.functional.one_hot(labels.long(), C).to(Z.dtype)
    Xt = Xa[train]
    reg = l2 * n_tr * torch.eye(Xa.shape[1], dtype=Z.dtype, device=Z.device)
    reg[-1, -1] = 0.0
    W = torch.linalg.solve(Xt.T @ Xt + reg, Xt.T @ Y[train])
    pred = (Xa[~train] @ W).argmax(1)
    return float((pred != labels[~train]).to(Z.dtype).mean())


# --------------------------------------------------------------------------------------------
# a discrete image-caption distribution with latent classes (ours)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class JointConfig:
    """A small discrete image-caption world with latent classes (ours, for the book).

    Each image ``x`` has a class ``c(x)`` and features ``x = ||mu|| e_{c(x)} + xi``,
    ``xi ~ N(0, sigma^2 I_dim)`` (the signal-plus-noise images of Huang et al., one patch).
    Captions have classes too.  ``P(x, l) = (1/N_v) [(1 - eta) q_x(l) + eta / N_l]`` where
    ``q_x`` is a Dirichlet(``concentration``) distribution over the captions of the class ``x`` is
    *described as*: its own class ``c(x)``, except for a fraction ``mismatch`` of the images,
    described as a uniformly drawn other class (text label noise); ``eta`` is a floor of captions
    drawn from anywhere (it keeps every pair possible).
    """

    n_classes: int = 4  # latent classes C
    images_per_class: int = 50  # N_v = C * images_per_class
    captions_per_class: int = 10  # N_l = C * captions_per_class
    concentration: float = 2.0  # Dirichlet concentration of q_x: large = every caption of the class equally likely
    caption_noise: float = 0.05  # eta: probability mass on a caption drawn uniformly from all classes
    mismatch: float = 0.1  # probability that an image is described as another (random) class: text label noise
    dim: int = 400  # image feature dimension d
    signal: float = 2.0  # ||mu||: class signal in the image features; SNR = 2/sqrt(400) = 0.1 (Fig. 1 of Huang et al.: 0.11)
    sigma: float = 1.0  # std of the image noise xi

    def __post_init__(self) -> None:
        for name, low in (("n_classes", 2), ("images_per_class", 1), ("captions_per_class", 1), ("dim", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"JointConfig.{name} must be an integer >= {low}, got {v!r}")
        for name, lo, hi, lo_open, hi_open in (("concentration", 0.0, math.inf, True, True),
                                               ("caption_noise", 0.0, 1.0, False, True),
                                               ("mismatch", 0.0, 1.0, False, False),
                                               ("signal", 0.0, math.inf, False, True),
                                               ("sigma", 0.0, math.inf, True, True)):
            v = getattr(self, name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            ok = ok and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
            if not ok:
                rng = f"{'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
                raise ValueError(f"JointConfig.{name} must lie in {rng}, got {v!r}")
        if self.dim < self.n_classes:
            raise ValueError(f"JointConfig.dim={self.dim} must be >= n_classes={self.n_classes} "
                             "(class c's signal lies along e_c)")

    @property
    def n_images(self) -> int:
        return self.n_classes * self.images_per_class

    @property
    def n_captions(self) -> int:
        return self.n_classes * self.captions_per_class

    @property
    def snr(self) -> float:
        """``||mu|| / (sigma sqrt(dim))``, as in Huang et al. (Sec. 3)."""
        return self.signal / (self.sigma * math.sqrt(self.dim))


@dataclass
class JointData:
    """A draw of :func:`sample_joint`: ``P (N_v, N_l)`` (sums to 1), ``image_labels (N_v,)`` (the
    true classes), ``described_as (N_v,)`` (the class of an image's captions; differs from the
    label on the mismatched images), ``caption_labels (N_l,)``, ``images (N_v, dim)``, the config."""

    P: torch.Tensor
    image_labels: torch.Tensor
    described_as: torch.Tensor
    caption_labels: torch.Tensor
    images: torch.Tensor
    config: JointConfig


def sample_joint(cfg: JointConfig = JointConfig(), seed: int = 0, dtype=torch.float64) -> JointData:
    """Draw a :class:`JointData` (CPU, fixed seed).  Images are sorted by class, so are captions."""
    if not isinstance(cfg, JointConfig):
        raise ValueError(f"cfg must be a JointConfig, got {type(cfg).__name__}")
    rng = np.random.default_rng(int(seed))  # numpy: a public, seeded Dirichlet sampler
    C, nv, nl, k = cfg.n_classes, cfg.n_images, cfg.n_captions, cfg.captions_per_class
    yv = torch.arange(C).repeat_interleave(cfg.images_per_class)
    yl = torch.arange(C).repeat_interleave(k)
    Q = torch.zeros(nv, nl, dtype=torch.float64)
    q_within = torch.from_numpy(rng.dirichlet(np.full(k, float(cfg.concentration)), size=nv))  # (N_v, k)
    flip = torch.from_numpy(rng.random(nv) < cfg.mismatch)
    shift = torch.from_numpy(rng.integers(1, C, size=nv))  # another class, uniformly
    described = torch.where(flip, (yv + shift) % C, yv)
    for c in range(C):
        Q[described == c, c * k:(c + 1) * k] = q_within[described == c]
    P = ((1.0 - cfg.caption_noise) * Q + cfg.caption_noise / nl) / nv
    P = P / P.sum()
    mu = torch.zeros(C, cfg.dim, dtype=torch.float64)
    mu[torch.arange(C), torch.arange(C)] = cfg.signal
    X = mu[yv] + cfg.sigma * torch.from_numpy(rng.standard_normal((nv, cfg.dim)))
    return JointData(P=P.to(dtype), image_labels=yv, described_as=described, caption_labels=yl, images=X.to(dtype), config=cfg)


@dataclass
class GraphScores:
    """HaoChen et al.'s two graph quantities and the downstream result for one positive-pair graph:
    ``alpha`` (:func:`label_consistency`), ``gap`` = ``lambda_{k+1}`` (:func:`spectral_gap`) and
    ``probe_error`` (:func:`linear_probe_error` on :func:`spectral_embedding`)."""

    alpha: float
    gap: float
    probe_error: float


def _alternate_split(N: int) -> torch.Tensor:
    """Every other row, ``(N,)`` bool: half of each class when the rows are sorted by class."""
    return torch.arange(N) % 2 == 0


def score_graph(A: torch.Tensor, labels: torch.Tensor, k: int, train: Optional[torch.Tensor] = None) -> GraphScores:
    """:class:`GraphScores` of the graph ``A (N, N)`` with ``labels (N,)``, embedding dimension
    ``k`` and the probe's training rows ``train (N,)`` (bool; default every other row)."""
    train = _alternate_split(A.shape[0]) if train is None else train
    return GraphScores(alpha=label_consistency(A, labels), gap=spectral_gap(A, k),
                       probe_error=linear_probe_error(spectral_embedding(A, k), labels, train))


def median_distance(X: torch.Tensor) -> float:
    """The median of ``||x_i - x_j||`` over pairs ``i < j`` of the rows of ``X (N, d)``."""
    _check_float("X", X, 2)
    if X.shape[0] < 2:
        raise ValueError(f"X needs at least 2 rows, got {X.shape[0]}")
    i, j = torch.triu_indices(X.shape[0], X.shape[0], 1)
    return float(torch.sqrt(_sq_distances(X)[i, j]).median())


@dataclass
class GraphComparison:
    """:func:`compare_graphs`: ``caption`` (the induced image graph), ``augmentation[i]`` for
    ``widths[i]`` (absolute widths), ``best`` = index of the width with the lowest probe error
    (an oracle choice, in the augmentation graph's favour), ``raw_probe_error`` (the probe on the
    image features themselves)."""

    caption: GraphScores
    augmentation: list
    widths: list
    best: int
    raw_probe_error: float


WIDTH_FACTORS = (0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.4)


def compare_graphs(data: JointData, k: Optional[int] = None, width_factors: Sequence[float] = WIDTH_FACTORS,
                   train: Optional[torch.Tensor] = None) -> GraphComparison:
    """Score the caption-induced graph and Gaussian augmentation graphs on the same images.

    Augmentation widths are ``factor * median_distance(images) / 2`` for each factor, so that at
    ``factor = 1`` a pair at the median distance has weight ``exp(-1)`` relative to a self-pair.
    ``k`` defaults to the number of classes; ``train`` (bool ``(N_v,)``) to every other image
    (half of each class, images being sorted by class).
    """
    cfg = data.config
    k = cfg.n_classes if k is None else k
    N = data.P.shape[0]
    train = _alternate_split(N) if train is None else train
    y = data.image_labels
    caption = score_graph(induced_image_graph(data.P), y, k, train)
    med = median_distance(data.images)
    widths = [f * med / 2.0 for f in width_factors]
    aug = [score_graph(augmentation_graph(data.images, w), y, k, train) for w in widths]
    best = min(range(len(aug)), key=lambda i: (aug[i].probe_error, i))
    return GraphComparison(caption=caption, augmentation=aug, widths=widths, best=best,
                           raw_probe_error=linear_probe_error(data.images, y, train))


# --------------------------------------------------------------------------------------------
# alternating gradient descent (Ward & Kolda 2023)
# --------------------------------------------------------------------------------------------

INITS = ("ward_kolda", "gaussian")


@dataclass(frozen=True)
class AGDConfig:
    """Constants of AGD's initialisations and default step (all *ours*; see :func:`initial_factors`).

    Ward-Kolda: ``X_0 = A Phi / (sqrt(eta) C sigma_1)``, ``Y_0 = sqrt(eta) D sigma_1 Psi``.
    Gaussian: ``X_0, Y_0`` with i.i.d. ``N(0, alpha^2 sigma_1 / d)`` entries.
    Default step ``eta = step_scale / sigma_1(A)``.
    """

    C: float = 2.0  # WK's C: eta sigma_1(X_0)^2 ~ (1 + sqrt(r/d))^2 / C^2 <= 1 for every d >= r (ours)
    D: float = 0.01  # WK's D: Y_0 small, so X_0 Y_0^T ~ 0 and the first error is ~ ||A||^2 (ours)
    alpha: float = 1e-3  # Gaussian scale: the fastest of 1e-2..1e-5 on the rank-5 100x100 test matrix (ours)
    step_scale: float = 0.5  # default eta = step_scale / sigma_1(A) (ours; the objective stays monotone)
    check_every: int = 25  # iterations between checks for "all converged" / "diverged" (no effect on results)

    def __post_init__(self) -> None:
        for name in ("C", "D", "alpha", "step_scale"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v):
                raise ValueError(f"AGDConfig.{name} must be a positive finite number, got {v!r}")
        if isinstance(self.check_every, bool) or not isinstance(self.check_every, int) or self.check_every < 1:
            raise ValueError(f"AGDConfig.check_every must be an integer >= 1, got {self.check_every!r}")


@dataclass
class AGDResult:
    """A run of :func:`agd` on ``A (..., m, n)`` with factor width ``d``.

    * ``X (..., m, d)``, ``Y (..., n, d)`` -- the factors after ``iterations`` steps;
    * ``rel_error (T+1, ...)`` -- ``||A - X_t Y_t^T||_F^2 / ||A||_F^2`` for ``t = 0..T``, ``T`` the
      largest iteration count of the batch (a converged member's entries stay at its final value);
    * ``iterations (...)`` (int64) -- steps used: the first ``t`` with ``rel_error <= tol``, else
      ``max_iter``;
    * ``converged (...)`` (bool), ``step (...)`` -- the step each member used.
    """

    X: torch.Tensor
    Y: torch.Tensor
    rel_error: torch.Tensor
    iterations: torch.Tensor
    converged: torch.Tensor
    step: torch.Tensor
    init: str


def _check_matrix(A) -> None:
    _check_float("A", A)
    if A.dim() < 2:
        raise ValueError(f"A must be a matrix (..., m, n), got shape {tuple(A.shape)}")
    if A.shape[-1] < 1 or A.shape[-2] < 1:
        raise ValueError(f"A must be non-empty, got shape {tuple(A.shape)}")


def _sigma1(A: torch.Tensor) -> torch.Tensor:
    s1 = torch.linalg.matrix_norm(A, ord=2)
    if bool((s1 <= 0).any()):
        raise ValueError("A (or a member of the batch) is the zero matrix; there is nothing to factorise")
    return s1


def default_step(A: torch.Tensor, config: AGDConfig = AGDConfig()) -> torch.Tensor:
    """The documented step ``eta = step_scale / sigma_1(A)`` ``(...)`` (``step_scale = 0.5``)."""
    _check_matrix(A)
    return config.step_scale / _sigma1(A)


def _resolve_step(A, step, config) -> torch.Tensor:
    if step is None:
        return default_step(A, config)
    if isinstance(step, torch.Tensor):
        if not bool(torch.isfinite(step).all()) or not bool((step > 0).all()):
            raise ValueError(f"step must be > 0 and finite, got {step}")
        return step.to(A.dtype).to(A.device).expand(A.shape[:-2])
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not step > 0 or not math.isfinite(step):
        raise ValueError(f"step must be a positive finite number (or None for the default "
                         f"{config.step_scale}/sigma_1(A)), got {step!r}")
    return torch.full(A.shape[:-2], float(step), dtype=A.dtype, device=A.device)


def initial_factors(A: torch.Tensor, rank: int, init: str = "ward_kolda", step=None, seed: int = 0,
                    config: AGDConfig = AGDConfig()) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(X_0 (..., m, d), Y_0 (..., n, d))`` for ``A (..., m, n)``, ``d = rank``.

    * ``"ward_kolda"`` -- the unbalanced initialisation of Ward & Kolda (2023)::

          X_0 = A Phi / (sqrt(eta) C sigma_1(A)),   Y_0 = sqrt(eta) D sigma_1(A) Psi,

      ``Phi (n, d)``, ``Psi (n, d)`` with i.i.d. ``N(0, 1/d)`` entries: ``X_0`` lies in the column
      span of ``A`` and is large, ``Y_0`` is small.  The *form* is Ward & Kolda's as we recall it
      (we could not consult the paper offline); the constants ``C = 2`` and ``D = 0.01`` are ours:
      since ``V_r^T Phi`` is an ``r x d`` Gaussian matrix with singular values about
      ``1 +- sqrt(r/d)``, ``eta sigma_1(X_0)^2 ~ (1 + sqrt(r/d))^2 / C^2 <= 1`` for every ``d >= r``,
      which keeps the first ``Y`` steps stable, and ``D = 0.01`` makes ``X_0 Y_0^T`` negligible.
    * ``"gaussian"`` -- the standard small initialisation: i.i.d. ``N(0, alpha^2 sigma_1 / d)``
      entries in both factors, ``alpha = 1e-3``.

    Random draws use a CPU generator seeded with ``seed`` (identical on every device); a batch
    gets independent draws per member.
    """
    _check_matrix(A)
    m, n = A.shape[-2:]
    _check_k(rank, min(m, n), "rank")
    if init not in INITS:
        raise ValueError(f"init={init!r} is not supported; valid: {INITS}")
    eta = _resolve_step(A, step, config)
    s1 = _sigma1(A)
    g = torch.Generator().manual_seed(int(seed))
    batch = A.shape[:-2]
    kw = dict(generator=g, dtype=torch.float64)
    if init == "ward_kolda":
        Phi = (torch.randn(batch + (n, rank), **kw) / math.sqrt(rank)).to(A)
        Psi = (torch.randn(batch + (n, rank), **kw) / math.sqrt(rank)).to(A)
        a = (1.0 / (torch.sqrt(eta) * config.C * s1))[..., None, None]
        b = (torch.sqrt(eta) * config.D * s1)[..., None, None]
        return a * (A @ Phi), b * Psi
    scale = (config.alpha * torch.sqrt(s1 / rank))[..., None, None]
    X0 = torch.randn(batch + (m, rank), **kw).to(A)
    Y0 = torch.randn(batch + (n, rank), **kw).to(A)
    return scale * X0, scale * Y0


def agd_step(A: torch.Tensor, X: torch.Tensor, Y: torch.Tensor, step) -> Tuple[torch.Tensor, torch.Tensor]:
    """One step of alternating gradient descent on ``f(X, Y) = 1/2 ||A - X Y^T||_F^2``:

    ``X' = X + eta (A - X Y^T) Y``, then ``Y' = Y + eta (A - X' Y^T)^T X'`` (the ``Y`` step uses the
    new ``X``).  ``A (..., m, n)``, ``X (..., m, d)``, ``Y (..., n, d)``, ``step`` a number or a
    tensor ``(...)``.  Each half-step is a gradient step on a quadratic, and
    ``f(X - eta G, Y) = f(X, Y) - eta ||G||^2 + eta^2/2 ||G Y^T||^2`` (``G = grad_X f``), so ``f``
    does not increase while ``eta ||Y||_2^2 <= 2`` and ``eta ||X'||_2^2 <= 2``.
    """
    eta = step[..., None, None] if isinstance(step, torch.Tensor) else step
    X = X + eta * (A - X @ Y.transpose(-1, -2)) @ Y
    Y = Y + eta * (A - X @ Y.transpose(-1, -2)).transpose(-1, -2) @ X
    return X, Y


def agd(A: torch.Tensor, rank: int, init: str = "ward_kolda", step=None, tol: float = 1e-6,
        max_iter: int = 20000, seed: int = 0, config: AGDConfig = AGDConfig(),
        progress: bool = False) -> AGDResult:
    """Alternating gradient descent on ``1/2 ||A - X Y^T||_F^2`` (Ward & Kolda 2023), ``X`` then ``Y``.

    ``A (m, n)`` or a batch ``(..., m, n)``; ``rank`` = the factors' width ``d`` (Ward & Kolda take
    ``d > r = rank(A)``: mild over-parameterisation); ``init`` in ``("ward_kolda", "gaussian")``
    (:func:`initial_factors`); ``step`` = ``eta`` (default ``0.5 / sigma_1(A)``, per member of a
    batch); stops when ``||A - X Y^T||_F^2 <= tol ||A||_F^2`` or after ``max_iter`` steps.  In a
    batch, each member stops (is frozen) at its own first success.  Returns :class:`AGDResult`.
    Raises :class:`mmcl.dynamics.trajectory.DivergenceError` if the error stops being finite.
    """
    from tqdm.auto import tqdm

    _check_matrix(A)
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < 1:
        raise ValueError(f"tol must lie in (0, 1) (a relative squared error), got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    eta = _resolve_step(A, step, config)
    X, Y = initial_factors(A, rank, init, eta, seed, config)
    normA = (A * A).sum((-2, -1))
    active = torch.ones(A.shape[:-2], dtype=torch.bool, device=A.device)
    iters = torch.full(A.shape[:-2], max_iter, dtype=torch.int64, device=A.device)
    hist = []
    bar = tqdm(total=max_iter, desc=f"AGD ({init})", disable=not progress, leave=False)
    t = 0
    while True:
        R = A - X @ Y.transpose(-1, -2)
        err = (R * R).sum((-2, -1)) / normA
        hist.append(err)
        done = active & (err <= tol)
        iters = torch.where(done, torch.full_like(iters, t), iters)
        active = active & ~done
        if t % config.check_every == 0 or t == max_iter:
            if not bool(torch.isfinite(err).all()):
                bar.close()
                raise DivergenceError(f"AGD ({init}) diverged at iteration {t}: the error is not finite; "
                                      f"use a smaller step (got eta*sigma_1 = {float((eta * _sigma1(A)).max()):.3g})")
            if not bool(active.any()):
                break
        if t == max_iter:
            break
        e = torch.where(active, eta, torch.zeros_like(eta))[..., None, None]
        X = X + e * R @ Y
        Y = Y + e * (A - X @ Y.transpose(-1, -2)).transpose(-1, -2) @ X
        t += 1
        bar.update(1)
    bar.close()
    H = torch.stack(hist)
    T = int(iters.max())
    return AGDResult(X=X, Y=Y, rel_error=H[:T + 1], iterations=iters, converged=~active, step=eta, init=init)


def low_rank_matrix(m: int, n: int, r: int, kappa: float, seed: int = 0, dtype=torch.float64) -> torch.Tensor:
    """A rank-``r`` ``(m, n)`` matrix ``U diag(s) V^T`` with Haar-random orthonormal ``U, V`` and
    singular values geometrically spaced from ``s_1 = 1`` to ``s_r = 1/kappa`` (our choice of
    spectrum), so that ``sigma_1 / sigma_r = kappa`` exactly."""
    for name, v in (("m", m), ("n", n), ("r", r)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    _check_k(r, min(m, n), "r")
    if isinstance(kappa, bool) or not isinstance(kappa, (int, float)) or not kappa >= 1 or not math.isfinite(kappa):
        raise ValueError(f"kappa must be a finite number >= 1, got {kappa!r}")
    g = torch.Generator().manual_seed(int(seed))
    U, Ru = torch.linalg.qr(torch.randn(m, r, generator=g, dtype=torch.float64))
    V, Rv = torch.linalg.qr(torch.randn(n, r, generator=g, dtype=torch.float64))
    U, V = U * torch.sign(torch.diagonal(Ru)), V * torch.sign(torch.diagonal(Rv))
    s = kappa ** (-torch.arange(r, dtype=torch.float64) / max(r - 1, 1))
    if r == 1:
        s = torch.ones(1, dtype=torch.float64)
    return ((U * s) @ V.T).to(dtype)


def iterations_vs_condition(kappas: Sequence[float], seeds: Sequence[int], m: int = 100, n: int = 100, r: int = 5,
                            d: int = 10, init: str = "ward_kolda", step_scale: Optional[float] = None,
                            tol: float = 1e-6, max_iter: int = 20000, device="cpu",
                            config: AGDConfig = AGDConfig(), progress: bool = True) -> torch.Tensor:
    """Iterations AGD needs to reach ``||A - X Y^T||_F^2 <= tol ||A||_F^2``, ``(len(kappas), len(seeds))``
    (int64, CPU), for :func:`low_rank_matrix` ``(m, n, r, kappa, seed)`` with factors of width ``d``.
    All seeds of one ``kappa`` run as one batch, initialised from seed ``seeds[0] + 7919 i`` for the
    ``i``-th ``kappa`` (independent draws per member of the batch).  The step
    is ``step_scale / sigma_1`` (default ``config.step_scale``); unconverged runs count ``max_iter``."""
    from tqdm.auto import tqdm

    cfg = config if step_scale is None else dataclasses.replace(config, step_scale=step_scale)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    out = torch.empty(len(kappas), len(seeds), dtype=torch.int64)
    for i, kappa in enumerate(tqdm(list(kappas), desc=f"kappa ({init})", disable=not progress, leave=False)):
        A = torch.stack([low_rank_matrix(m, n, r, kappa, s) for s in seeds]).to(device)
        res = agd(A, d, init=init, tol=tol, max_iter=max_iter, seed=seeds[0] + 7919 * i, config=cfg)
        out[i] = res.iterations.cpu()
    return out


def ward_kolda_bound(kappa, eps: float, d: Optional[int] = None, r: Optional[int] = None,
                     constant: float = 1.0):
    """The iteration count of Ward & Kolda's theorem with its absolute constant set to
    ``constant``: ``constant * kappa^2 * log(1/eps)``, times ``d / (sqrt(d) - sqrt(r - 1))^2`` when
    ``d`` and ``r`` are given (their over-parameterisation factor, as we recall it).  ``kappa``
    a number or a tensor."""
    if not 0 < eps < 1:
        raise ValueError(f"eps must lie in (0, 1), got {eps!r}")
    factor = 1.0
    if d is not None or r is not None:
        if d is None or r is None or not d >= r >= 1:
            raise ValueError(f"give both d and r with d >= r >= 1, got d={d!r}, r={r!r}")
        factor = d / (math.sqrt(d) - math.sqrt(r - 1)) ** 2
    return constant * factor * kappa ** 2 * math.log(1.0 / eps)


def loglog_slope(x, y) -> Tuple[float, float]:
    """Least-squares fit of ``log y = slope * log x + intercept``; returns ``(slope, intercept)``.
    ``x (K,)`` and ``y (K, S)`` or ``(K,)`` (every column is a sample at the same ``x``)."""
    x = torch.as_tensor(x, dtype=torch.float64)
    y = torch.as_tensor(y, dtype=torch.float64)
    if y.dim() == 1:
        y = y[:, None]
    if x.dim() != 1 or y.shape[0] != x.shape[0] or x.shape[0] < 2:
        raise ValueError(f"need x (K,) and y (K,) or (K, S) with K >= 2, got {tuple(x.shape)} and {tuple(y.shape)}")
    if bool((x <= 0).any()) or bool((y <= 0).any()):
        raise ValueError("x and y must be positive for a log-log fit")
    lx = torch.log(x)[:, None].expand_as(y).reshape(-1)
    ly = torch.log(y).reshape(-1)
    M = torch.stack([lx, torch.ones_like(lx)], 1)
    sol = torch.linalg.lstsq(M, ly[:, None]).solution[:, 0]
    return float(sol[0]), float(sol[1])
