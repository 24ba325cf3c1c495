"""Figures of the chapter "The setting: data, encoders, losses" (``book/02_setting.md``).

:func:`trained_similarities` trains the single- and the multi-modal network on one draw with the
closed-form engine and computes their similarity matrices (Eq. 4, and its two-modality version)
before and after training; :func:`draw_similarities` draws the four matrices, samples ordered by
label: memorised noise shows as a diagonal, learned signal as label blocks.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, Tuple

import torch

from mmcl._utils import check_int
from mmcl.dynamics import Trajectory, simulate
from mmcl.figures.registry import FigureSpec
from mmcl.figures.theme import style
from mmcl.model import losses
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic

__all__ = ["EPOCHS", "config", "TrainedSimilarities", "trained_similarities", "similarities_result",
           "draw_similarities", "FIGURES"]

# training epochs per size: the paper's 200 (the chapter's, at default and full size); "tiny" is for the tests
EPOCHS = {"tiny": 20, "default": 200, "full": 200}
MODES = ("single", "multi")


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 settings, trained for ``EPOCHS[size]`` epochs (``tiny`` also draws 20 OOD
    samples instead of 200 and 1000, which the figure does not use)."""
    if size not in EPOCHS:
        raise ValueError(f"size={size!r} is unknown; valid: {', '.join(map(repr, EPOCHS))}")
    cfg = SyntheticConfig().replace(n_epochs=EPOCHS[size])
    return cfg.replace(n_test=20, n_heldout=20) if size == "tiny" else cfg


@dataclass
class TrainedSimilarities:
    """What :func:`trained_similarities` computed: the ``cfg``, the draw ``data``, the two runs
    ``runs[mode]`` (``"single"``, ``"multi"``; first and last states recorded), ``order`` (the
    samples sorted by label, ``+1`` first, stably), ``n_pos`` (the number of ``+1`` samples) and
    ``sims[(mode, epoch)]`` for ``epoch`` 0 and ``cfg.n_epochs``: the ``(n, n)`` similarity matrix
    on the CPU, rows and columns in ``order``, ``Sim_h(x_i, x_j)`` for ``"single"`` and
    ``Sim_{h,g}(x_i, x~_j)`` for ``"multi"``."""

    cfg: SyntheticConfig
    data: SyntheticData
    runs: Dict[str, Trajectory]
    order: torch.Tensor
    n_pos: int
    sims: Dict[Tuple[str, int], torch.Tensor]


def _sim_matrix(mode, W, W_tilde, P, order):
    H = losses.encode(W[None], P["x"])
    partner = H if mode == "single" else losses.encode(W_tilde[None], P["x_tilde"])
    return losses.similarity(H, partner)[0][order][:, order].cpu()


def trained_similarities(cfg: SyntheticConfig, seed: int = 0, device: str = "cpu") -> TrainedSimilarities:
    """Draw the data of ``seed`` (float32, :func:`mmcl.model.data.sample_synthetic`), train both
    networks for ``cfg.n_epochs`` epochs with the closed-form engine ``gd`` (Eqs. 7 and 10), and
    compute the similarity matrices of the paper's Eq. (4) (:func:`mmcl.model.losses.similarity`
    on :func:`mmcl.model.losses.encode`) at initialisation and after training: see
    :class:`TrainedSimilarities`."""
    if not isinstance(cfg, SyntheticConfig):
        raise ValueError(f"cfg must be a SyntheticConfig, got {type(cfg).__name__}")
    check_int("seed", seed, minimum=0)
    data = sample_synthetic(cfg, seed=seed, device=device)
    runs = {mode: simulate(cfg, data, mode, "gd", record_every=cfg.n_epochs) for mode in MODES}
    order = torch.argsort(-data.y, stable=True)  # label +1 first
    P = losses.patches(data)
    sims = {}
    for mode, run in runs.items():
        sims[mode, 0] = _sim_matrix(mode, data.W0, data.W0_tilde, P, order)
        sims[mode, cfg.n_epochs] = _sim_matrix(mode, run.W, run.W_tilde, P, order)
    return TrainedSimilarities(cfg=cfg, data=data, runs=runs, order=order, n_pos=int((data.y > 0).sum()), sims=sims)


@functools.lru_cache(maxsize=2)
def similarities_result(size: str = "default", device: str = "cpu") -> TrainedSimilarities:
    """:func:`trained_similarities` of seed 0 at the settings of ``size`` (:func:`config`), cached."""
    return trained_similarities(config(size), seed=0, device=device)


def draw_similarities(result: TrainedSimilarities):
    """The four similarity matrices of ``result`` side by side: single-modal at epoch 0 and at the
    end, then multi-modal; white lines separate the two labels.  Each colour scale runs from 0 to
    the matrix's 99.5 % quantile."""
    import matplotlib.pyplot as plt

    last = result.cfg.n_epochs
    with style():
        fig, axes = plt.subplots(1, 4, figsize=(16, 4.4), constrained_layout=True)
        panels = [("single", 0), ("single", last), ("multi", 0), ("multi", last)]
        for ax, key in zip(axes, panels):
            S = result.sims[key]
            im = ax.imshow(S, cmap="viridis", vmin=0, vmax=float(S.quantile(0.995)), interpolation="nearest")
            ax.axhline(result.n_pos - 0.5, color="white", lw=1)
            ax.axvline(result.n_pos - 0.5, color="white", lw=1)
            who = r"$\mathrm{Sim}_h(x_i, x_j)$" if key[0] == "single" else r"$\mathrm{Sim}_{h,g}(x_i, \tilde x_j)$"
            ax.set_title(f"{key[0]}-modal, epoch {key[1]}\n{who}")
            ax.set_xlabel("sample j (label +1, then -1)")
            ax.set_ylabel("sample i")
            fig.colorbar(im, ax=ax, shrink=0.75)
    return fig


def _similarities(size, device):
    return draw_similarities(similarities_result(size, device))


FIGURES = [
    FigureSpec("setting-similarities", "Similarity matrices Sim_h(x_i, x_j) (single-modal) and Sim_{h,g}(x_i, x~_j) "
               "(multi-modal), samples ordered by label, at epoch 0 and 200: memorised noise (diagonal) vs "
               "learned signal (label blocks)", "02_setting", "sec-setting", _similarities),
]
