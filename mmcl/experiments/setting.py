"""The experiment of the chapter :ref:`The setting: data, encoders, losses <sec-setting>`:
its sizes, its configuration and its cached run.  The drawing is in :mod:`mmcl.figures.setting`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`SettingSizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`trained_similarities` -- trains the single- and the multi-modal network on one draw with
  the closed-form engine and computes their similarity matrices (Eq. 4, and its two-modality
  version) before and after training (:class:`TrainedSimilarities`);
* :func:`similarities_result` -- :func:`trained_similarities` of seed 0 at a size, cached.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, Tuple

import torch

from mmcl._utils import check_int
from mmcl.dynamics import MODES, Trajectory, simulate
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model import losses
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import SyntheticData, sample_synthetic

__all__ = ["SettingSizes", "BY_SIZE", "sizes", "config", "TrainedSimilarities", "trained_similarities",
           "similarities_result"]



@dataclass(frozen=True)
class SettingSizes:
    """What a size means for this chapter: ``n_epochs`` training epochs and, for ``"tiny"``, fewer
    OOD samples (``n_ood``), which the figure does not use."""

    n_epochs: int
    n_ood: int = 0  # 0: the Figure 1 defaults (200 test and 1000 held-out samples)


#: The paper's 200 epochs (the chapter's, at default and full size); "tiny" is for the tests.
BY_SIZE: Dict[str, SettingSizes] = {"tiny": SettingSizes(n_epochs=20, n_ood=20),
                                    "default": SettingSizes(n_epochs=200), "full": SettingSizes(n_epochs=200)}


def sizes(size: str = "default") -> SettingSizes:
    """The :class:`SettingSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 settings, trained for ``sizes(size).n_epochs`` epochs (``tiny`` also draws 20
    OOD samples instead of 200 and 1000, which the figure does not use)."""
    s = sizes(size)
    return figure1_config(n_epochs=s.n_epochs, n_ood=s.n_ood)


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

    def _same_label(self) -> torch.Tensor:
        y = self.data.y[self.order].cpu()
        return y[:, None] == y[None, :]

    def block_contrast(self, mode: str, epoch: int) -> float:
        """The mean similarity within a label block minus the mean across the blocks, the
        diagonal left out: how much the matrix ``sims[mode, epoch]`` shows the labels."""
        S = self.sims[mode, epoch]
        off = ~torch.eye(S.shape[0], dtype=torch.bool)
        same = self._same_label()
        return float(S[same & off].mean() - S[~same].mean())

    def diagonal_excess(self, mode: str, epoch: int) -> float:
        """The mean of the diagonal of ``sims[mode, epoch]`` minus the mean off it: how much
        each sample is similar to itself rather than to the others (memorised noise)."""
        S = self.sims[mode, epoch]
        off = ~torch.eye(S.shape[0], dtype=torch.bool)
        return float(torch.diagonal(S).mean() - S[off].mean())

    def summary(self) -> str:
        """One line per mode after training: final loss, diagonal excess, label-block contrast."""
        last = self.cfg.n_epochs
        return "\n".join(
            f"{mode:>6}: final loss {float(self.runs[mode].loss[-1]):.3f}; "
            f"diagonal excess {self.diagonal_excess(mode, last):.3f}, "
            f"label-block contrast {self.block_contrast(mode, last):.3f}"
            for mode in MODES)

    def __str__(self) -> str:
        return self.summary()


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
    check_config(cfg)
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
