"""Positive-pair graphs on images and their scores (HaoChen et al., NeurIPS 2021), and the small
discrete image-caption world on which the book compares the caption-induced graph of
:func:`mmcl.wider.factorisation.induced_image_graph` with augmentation graphs.

* A graph ``A (N, N)`` is a symmetric non-negative weight matrix with positive degrees ``D = diag(A 1)``;
  :func:`normalised_adjacency` is ``A_bar = D^{-1/2} A D^{-1/2}``, :func:`graph_spectrum` its
  eigenvalues, :func:`spectral_embedding` the minimiser of the spectral contrastive loss on ``A``.
* HaoChen et al.'s two graph quantities: the label consistency ``alpha``
  (:func:`label_consistency`) and the spectral gap ``lambda_{k+1}`` (:func:`spectral_gap`); the
  downstream result: :func:`linear_probe_error`.  :func:`score_graph` gives all three.
* :func:`augmentation_graph` is our Gaussian stand-in for an augmentation graph.
* The world: :class:`JointConfig`, :func:`sample_joint`; the comparisons: :func:`compare_graphs`
  (one draw) and :func:`snr_sweep` (over the images' signal-to-noise ratio and the captions' label
  noise).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

from mmcl.downstream.probe import standardisation
from mmcl._utils import check_int, check_number
from mmcl.wider._checks import check_float, check_graph, check_k
from mmcl.wider.factorisation import induced_image_graph

__all__ = [
    "normalised_adjacency", "graph_spectrum", "spectral_embedding", "label_consistency", "spectral_gap",
    "augmentation_graph", "linear_probe_error", "median_distance",
    # a discrete image-caption model with latent classes
    "JointConfig", "JointData", "sample_joint", "GraphScores", "score_graph",
    "GraphComparison", "compare_graphs", "WIDTH_FACTORS", "SIGNALS", "MISMATCHES", "SNRSweep", "snr_sweep",
]


# --------------------------------------------------------------------------------------------
# graphs and their scores (HaoChen et al. 2021)
# --------------------------------------------------------------------------------------------

def normalised_adjacency(A: torch.Tensor) -> torch.Tensor:
    """``A_bar = D^{-1/2} A D^{-1/2}`` ``(N, N)`` of a graph ``A (N, N)`` with degrees ``D = diag(A 1)``
    (HaoChen et al. 2021)."""
    check_graph(A)
    r = torch.rsqrt(A.sum(1))
    return A * r[:, None] * r[None, :]


def graph_spectrum(A: torch.Tensor) -> torch.Tensor:
    """Eigenvalues of ``A_bar`` (:func:`normalised_adjacency`) in decreasing order, ``(N,)``; the
    first is 1 (eigenvector ``sqrt(degrees)``)."""
    return torch.linalg.eigvalsh(normalised_adjacency(A)).flip(0)


def spectral_embedding(A: torch.Tensor, k: int) -> torch.Tensor:
    """The minimiser of HaoChen et al.'s spectral contrastive loss on the graph ``A (N, N)`` as
    embeddings ``f = D^{-1/2} F (N, k)``, ``F = U_k Lambda_k^{1/2}`` the top-``k`` eigenpairs of
    ``A_bar`` (the minimiser of ``||A_bar - F F^T||_F^2`` when those eigenvalues are >= 0; negative
    ones are set to 0, as the loss would).  Unique up to a rotation of the ``k`` columns."""
    Ab = normalised_adjacency(A)
    check_k(k, Ab.shape[0])
    lam, U = torch.linalg.eigh(Ab)
    lam, U = lam.flip(0)[:k], U.flip(1)[:, :k]
    F = U * torch.sqrt(lam.clamp_min(0.0))
    return F * torch.rsqrt(A.sum(1))[:, None]


def label_consistency(A: torch.Tensor, labels: torch.Tensor) -> float:
    """HaoChen et al.'s ``alpha``: the probability that a positive pair ``(x, x+) ~ A`` has
    different labels, ``sum_{x,x+} A(x,x+) 1[y(x) != y(x+)] / sum A``.  ``A (N, N)``, ``labels (N,)``
    integers.  Small is good."""
    check_graph(A)
    if labels.shape != (A.shape[0],):
        raise ValueError(f"labels must have shape ({A.shape[0]},), got {tuple(labels.shape)}")
    diff = (labels[:, None] != labels[None, :]).to(A.dtype)
    return float((A * diff).sum() / A.sum())


def spectral_gap(A: torch.Tensor, k: int) -> float:
    """``lambda_{k+1}``, the ``(k+1)``-th smallest eigenvalue of the normalised Laplacian
    ``I - A_bar`` (HaoChen et al.'s downstream error bound scales as ``alpha / lambda_{k+1}``)."""
    nu = graph_spectrum(A)
    check_k(k, len(nu) - 1)
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
    check_float("X", X, 2)
    check_number("width", width, 0.0)
    K = torch.exp(-_sq_distances(X) / (4.0 * width ** 2))  # the diagonal is 1, so every degree is positive
    return K / K.sum()


def linear_probe_error(Z: torch.Tensor, labels: torch.Tensor, train: torch.Tensor, l2: float = 1e-3) -> float:
    """Test error of a linear probe: ridge regression of one-hot labels on the standardised
    features ``Z (N, k)`` (with a bias) fit on the rows where ``train (N,)`` is True, prediction
    by argmax, error on the other rows.  Closed form, deterministic.  ``labels (N,)`` in
    ``0..C-1``; ``l2 > 0`` is the ridge penalty on the standardised scale."""
    check_float("Z", Z, 2)
    N = Z.shape[0]
    if labels.shape != (N,) or train.shape != (N,):
        raise ValueError(f"labels and train must have shape ({N},), got {tuple(labels.shape)} and {tuple(train.shape)}")
    if train.dtype != torch.bool:
        raise ValueError(f"train must be a boolean mask, got dtype {train.dtype}")
    n_tr, n_te = int(train.sum()), int((~train).sum())
    if n_tr < 2 or n_te < 1:
        raise ValueError(f"the split needs >= 2 training and >= 1 test rows, got {n_tr} and {n_te}")
    check_number("l2", l2, 0.0)
    C = int(labels.max()) + 1
    Ztr = Z[train]
    mean, std = standardisation(Ztr, 0)
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
            check_int(f"JointConfig.{name}", getattr(self, name), low)
        for name, low, high, low_closed, high_closed in (("concentration", 0.0, None, False, False),
                                                         ("caption_noise", 0.0, 1.0, True, False),
                                                         ("mismatch", 0.0, 1.0, True, True),
                                                         ("signal", 0.0, None, True, False),
                                                         ("sigma", 0.0, None, False, False)):
            check_number(f"JointConfig.{name}", getattr(self, name), low, high,
                         low_closed=low_closed, high_closed=high_closed)
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
    check_float("X", X, 2)
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


#: Augmentation widths of :func:`compare_graphs`, in units of half the median distance between images.
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


#: The signals ``||mu||`` of :func:`snr_sweep`, image SNR 0 to 0.4 at ``dim = 400``, ``sigma = 1``.
SIGNALS = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
#: The caption label-noise rates of the caption graphs :func:`snr_sweep` compares.
MISMATCHES = (0.0, 0.1, 0.3)


@dataclass
class SNRSweep:
    """:func:`snr_sweep`: the ``signals`` (``||mu||``) and their image ``snr (S,)``, the ``seeds``
    and caption ``mismatches`` used, the base ``config``;

    * ``probe`` -- linear-probe errors ``(S, len(seeds))`` (float32) by graph: ``"augmentation"``
      (the oracle width of :func:`compare_graphs`), ``"raw"`` (the probe on the images) and
      ``"caption M"`` for each mismatch ``M``;
    * ``plane`` -- ``(alpha / chance, lambda_{k+1})`` points of the first seed's graphs, chance
      ``= 1 - 1/C``: ``"augmentation, SNR X"`` (one point per width) at each of ``plane_signals``,
      ``"caption, mismatch M"`` (one point) at ``plane_signals[0]``.
    """

    signals: List[float]
    snr: torch.Tensor
    seeds: List[int]
    mismatches: List[float]
    probe: Dict[str, torch.Tensor]
    plane: Dict[str, list]
    config: JointConfig


def snr_sweep(cfg: JointConfig = JointConfig(), signals: Sequence[float] = SIGNALS, seeds: Sequence[int] = range(3),
              mismatches: Sequence[float] = MISMATCHES, plane_signals: Sequence[float] = (2.0, 8.0),
              progress: bool = True) -> SNRSweep:
    """Caption-induced against augmentation graphs as the images' signal-to-noise ratio grows.

    For every signal ``||mu||`` in ``signals``, seed and caption mismatch rate in ``mismatches``,
    draw :func:`sample_joint` with ``cfg``'s other fields; at ``cfg.mismatch`` (which must be one of
    ``mismatches``) run :func:`compare_graphs` (augmentation at the oracle width, the raw probe
    and the caption graph), at the other rates score only the caption graph (:func:`score_graph`,
    the same split).  The caption graph does not depend on the images, so its errors are constant
    along ``signals``.  Returns :class:`SNRSweep`.
    """
    from tqdm.auto import tqdm

    if not isinstance(cfg, JointConfig):
        raise ValueError(f"cfg must be a JointConfig, got {type(cfg).__name__}")
    signals, seeds, mismatches = list(signals), list(seeds), list(mismatches)
    for name, v in (("signals", signals), ("seeds", seeds), ("mismatches", mismatches)):
        if not v:
            raise ValueError(f"{name} must not be empty")
    if cfg.mismatch not in mismatches:
        raise ValueError(f"mismatches={mismatches} must contain cfg.mismatch={cfg.mismatch} "
                         "(the augmentation graphs are scored there)")
    k = cfg.n_classes
    chance = 1.0 - 1.0 / k  # alpha of the graph whose positives are independent images
    probe = {"augmentation": torch.zeros(len(signals), len(seeds)), "raw": torch.zeros(len(signals), len(seeds))}
    probe.update({f"caption {m}": torch.zeros(len(signals), len(seeds)) for m in mismatches})
    plane: Dict[str, list] = {}
    for i, sig in enumerate(tqdm(signals, desc="SNR", disable=not progress)):
        for j, seed in enumerate(seeds):
            for m in mismatches:
                d_ = sample_joint(dataclasses.replace(cfg, signal=sig, mismatch=m), seed)
                if m == cfg.mismatch:
                    c_ = compare_graphs(d_)
                    probe["augmentation"][i, j] = c_.augmentation[c_.best].probe_error
                    probe["raw"][i, j] = c_.raw_probe_error
                    if j == 0 and sig in plane_signals:
                        plane[f"augmentation, SNR {d_.config.snr:.1f}"] = [(a.alpha / chance, a.gap)
                                                                          for a in c_.augmentation]
                    sc = c_.caption
                else:
                    sc = score_graph(induced_image_graph(d_.P), d_.image_labels, k)  # probe split as in compare_graphs
                probe[f"caption {m}"][i, j] = sc.probe_error
                if j == 0 and plane_signals and sig == plane_signals[0]:
                    plane[f"caption, mismatch {m}"] = [(sc.alpha / chance, sc.gap)]
    snr = torch.tensor([dataclasses.replace(cfg, signal=sig).snr for sig in signals])
    return SNRSweep(signals=signals, snr=snr, seeds=seeds, mismatches=mismatches, probe=probe, plane=plane,
                    config=cfg)
