"""The experiment of the chapter :ref:`Multi-modal contrastive learning as matrix factorisation
<sec-matrix-factorisation>`: its sizes, its configuration and its cached runs.  The
drawings are in :mod:`mmcl.figures.matrix_factorisation`; the computations are those of
:mod:`mmcl.wider.factorisation` and :mod:`mmcl.wider.graphs`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`FactorisationSizes`: the draws and the signals of the SNR sweep);
* :func:`config` -- the chapter's image-caption world (:class:`mmcl.wider.graphs.JointConfig`, the
  same at every size);
* :func:`world` -- that world's seed-0 draw and what the figures draw of it;
* :func:`snr_sweep_result` -- the sweep over the images' signal-to-noise ratio
  (:func:`mmcl.wider.graphs.snr_sweep`), which the chapter's checks and a figure share;
* :func:`comparison_table`, :func:`sweep_table` -- what the chapter prints of a comparison of
  graphs and of a sweep, as text.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, Tuple

import torch

from mmcl.experiments.sizes import check_size, pick
from mmcl.wider import factorisation as fz
from mmcl.wider import graphs

__all__ = ["FactorisationSizes", "BY_SIZE", "sizes", "config", "world", "snr_sweep_result",
           "comparison_table", "sweep_table", "crossover_snr", "shown_graphs", "graphs_result"]


@dataclass(frozen=True)
class FactorisationSizes:
    """What a size means for this chapter: ``sweep_seeds`` draws (0..sweep_seeds-1) per signal of
    the SNR sweep, over the signals ``||mu||`` in ``signals``.  The default world and its graphs are
    the same at every size."""

    sweep_seeds: int
    signals: Tuple[float, ...] = graphs.SIGNALS


#: The chapter's sweep runs 3 draws per signal (10 with MMCL_BOOK_FULL=1); "tiny" (for the tests)
#: keeps the two signals of the alpha-gap plane (SNR 0.1 and 0.4) and ||mu|| = 0.
BY_SIZE: Dict[str, FactorisationSizes] = {"tiny": FactorisationSizes(sweep_seeds=1, signals=(0.0, 2.0, 8.0)),
                                          "default": FactorisationSizes(sweep_seeds=3),
                                          "full": FactorisationSizes(sweep_seeds=10)}


def sizes(size: str = "default") -> FactorisationSizes:
    """The :class:`FactorisationSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> graphs.JointConfig:
    """The chapter's image-caption world: the default :class:`mmcl.wider.graphs.JointConfig` (image
    SNR 0.1, 10 % mismatched captions), the same at every size."""
    check_size(size)
    return graphs.JointConfig()


@functools.lru_cache(maxsize=3)
def world(size: str = "default", device: str = "cpu") -> dict:
    """The chapter's default world (:func:`config`, seed 0; CPU, the same at every size): ``data``,
    ``k`` = C, the singular values ``s`` of ``P~``, the caption-induced graph ``A_cap``, its
    spectrum ``nu`` and the comparison ``comp`` of :func:`mmcl.wider.graphs.compare_graphs`."""
    cfg = config(size)
    data = graphs.sample_joint(cfg, seed=0)
    A_cap = fz.induced_image_graph(data.P)
    return dict(data=data, k=cfg.n_classes, s=torch.linalg.svdvals(fz.normalised_cooccurrence(data.P)),
                A_cap=A_cap, nu=graphs.graph_spectrum(A_cap), comp=graphs.compare_graphs(data))


@functools.lru_cache(maxsize=3)
def snr_sweep_result(size: str = "default", device: str = "cpu") -> graphs.SNRSweep:
    """:func:`mmcl.wider.graphs.snr_sweep` of the default world (:func:`config`) over the signals of
    :func:`sizes` with its ``sweep_seeds`` draws each (CPU; cached: the chapter's checks and the
    figure share it)."""
    s = sizes(size)
    return graphs.snr_sweep(config(size), signals=s.signals, seeds=range(s.sweep_seeds))


def comparison_table(comp: graphs.GraphComparison, n_classes: int) -> str:
    """The rows of :func:`mmcl.wider.graphs.compare_graphs`'s ``comp`` as a text table: label
    consistency ``alpha`` (absolute and over its chance value ``1 - 1/n_classes``, the ``alpha``
    of a graph whose positives are independent images), spectral gap ``lambda_k+1`` and probe
    error of the caption graph and of each augmentation width (the oracle's choice marked), then
    the probe on the raw images."""
    if not isinstance(comp, graphs.GraphComparison):
        raise ValueError(f"comp must be a GraphComparison, got {type(comp).__name__}")
    if not isinstance(n_classes, int) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    chance = 1.0 - 1.0 / n_classes
    head = ("graph", "alpha", "alpha/chance", "lambda_k+1", "probe error")
    lines = [f"{head[0]:<28}{head[1]:>7}{head[2]:>14}{head[3]:>12}{head[4]:>13}"]

    def row(name, sc, tag=""):
        lines.append(f"{name:<28}{sc.alpha:7.3f}{sc.alpha / chance:14.2f}{sc.gap:12.3f}"
                     f"{sc.probe_error:13.2f}{tag}")

    row("caption-induced", comp.caption)
    for i, (w, sc) in enumerate(zip(comp.widths, comp.augmentation)):
        row(f"augmentation, width {w:.1f}", sc, "  <- best (oracle)" if i == comp.best else "")
    lines.append(f"{'(probe on the raw images)':<28}{'':33}{comp.raw_probe_error:13.2f}")
    return "\n".join(lines)


def sweep_table(sweep: graphs.SNRSweep) -> str:
    """The mean probe error over draws of every graph of ``sweep`` at each image SNR, as a text
    table (one row per graph, one column per SNR)."""
    if not isinstance(sweep, graphs.SNRSweep):
        raise ValueError(f"sweep must be an SNRSweep, got {type(sweep).__name__}")
    lines = [f"{'image SNR':<16}" + " ".join(f"{float(v):5.2f}" for v in sweep.snr)]
    for name, v in sweep.probe.items():
        lines.append(f"{name:<16}" + " ".join(f"{x:5.2f}" for x in v.mean(1).tolist()))
    return "\n".join(lines)


def crossover_snr(sweep: graphs.SNRSweep, caption: str = "") -> float:
    """The first image SNR of ``sweep`` at which the augmentation graph's mean probe error falls
    below the caption graph's (``caption``: a key of ``sweep.probe``; default the caption graph
    at the sweep's own mismatch rate), or ``nan`` where it never does on the grid."""
    if not isinstance(sweep, graphs.SNRSweep):
        raise ValueError(f"sweep must be an SNRSweep, got {type(sweep).__name__}")
    caption = caption or f"caption {sweep.config.mismatch}"
    if caption not in sweep.probe:
        raise ValueError(f"caption must be one of {sorted(sweep.probe)}, got {caption!r}")
    aug, cap = sweep.probe["augmentation"].mean(1), sweep.probe[caption].mean(1)
    below = (aug < cap).nonzero()
    return float(sweep.snr[int(below[0])]) if len(below) else float("nan")


def shown_graphs(A_caption: torch.Tensor, A_augmentation: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The two graphs as the figure ``mf-graphs`` shows them: each normalised
    (:func:`mmcl.wider.graphs.normalised_adjacency`) with its self-pairs set to zero, so that the
    blocks of the classes show."""
    out = []
    for G in (A_caption, A_augmentation):
        Gbar = graphs.normalised_adjacency(G)
        out.append(Gbar - torch.diag(torch.diagonal(Gbar)))
    return out[0], out[1]


def graphs_result(size: str = "default", device: str = "cpu") -> Tuple[torch.Tensor, torch.Tensor]:
    """:func:`shown_graphs` of the caption-induced graph of :func:`world` and of its augmentation
    graph at the best width of the comparison."""
    w = world(size, device)
    comp = w["comp"]
    return shown_graphs(w["A_cap"], graphs.augmentation_graph(w["data"].images, comp.widths[comp.best]))
