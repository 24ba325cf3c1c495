"""Figures of the chapter :ref:`Multi-modal contrastive learning as matrix factorisation
<sec-matrix-factorisation>`: drawing only.

The runs are :mod:`mmcl.experiments.matrix_factorisation`'s (its sizes, the default image-caption
world :func:`~mmcl.experiments.matrix_factorisation.world` and the sweep over the images'
signal-to-noise ratio :func:`~mmcl.experiments.matrix_factorisation.snr_sweep_result`); the
computations are :mod:`mmcl.wider.factorisation` and :mod:`mmcl.wider.graphs`.  This module draws
them and registers the four figures; the chapter calls the same drawing functions:

* :func:`draw_probe_snr` -- the probe errors against the images' SNR (the chapter's takeaway);
* :func:`draw_spectrum` -- the singular values of ``P~`` and the induced graph's eigenvalues;
* :func:`draw_graphs` -- the caption-induced and the augmentation graph side by side;
* :func:`draw_plane` -- every graph in the (spectral gap, alpha) plane.
"""
from __future__ import annotations

import torch

from mmcl.experiments.matrix_factorisation import graphs_result, snr_sweep_result, world
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style
from mmcl.wider import graphs

__all__ = ["draw_probe_snr", "draw_spectrum", "draw_graphs", "draw_plane", "FIGURES"]

LABEL = "sec-matrix-factorisation"
#: The probe on the raw images: a baseline, neither modality nor a constant of the paper.
RAW = palette.FAINT
CHAPTER = chapter_of(__name__)


def draw_spectrum(s, nu, k: int, n: int = 12):
    """The first ``n`` singular values ``s`` of ``P~``, the eigenvalues ``nu`` of the induced graph's
    ``A_bar`` and ``s^2``, with a line after ``k`` (figure ``mf-spectrum``)."""
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(7.0, 4.0))
        idx = torch.arange(1, n + 1)
        ax.plot(idx, s[:n], "o-", color=COLORS["multi"], label=r"singular values $s_i$ of $\tilde P$")
        ax.plot(idx, nu[:n], "s--", color=COLORS["accent"], mfc="none", ms=9,
                label=r"eigenvalues of $\bar A$ (induced graph)")
        ax.plot(idx, s[:n] ** 2, "x", color=palette.INK, ms=7, label=r"$s_i^2$")
        ax.axvline(k + 0.5, color=COLORS["reference"], lw=1, ls=":")
        ax.text(k + 1.5, 0.45, f"k = C = {k}", color=COLORS["reference"])
        ax.set_xlabel("index i")
        ax.set_ylabel("value")
        ax.set_xticks(idx)
        ax.legend(loc="upper right")
    return fig


def draw_graphs(G_caption, G_augmentation):
    """The normalised caption-induced and augmentation graphs side by side, self-pairs hidden
    (figure ``mf-graphs``; images sorted by class), as
    :func:`mmcl.experiments.matrix_factorisation.shown_graphs` gives them."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.9))
        for ax, Gbar, title in ((axes[0], G_caption, "caption-induced graph\n(shared captions)"),
                                (axes[1], G_augmentation, "augmentation graph\n(best width)")):
            im = ax.imshow(Gbar.numpy(), cmap="viridis", interpolation="nearest",
                           vmax=float(torch.quantile(Gbar.flatten(), 0.995)))
            ax.set_title(title)
            ax.set_xlabel("image (sorted by class)")
            ax.set_ylabel("image")
            ax.grid(False)
            fig.colorbar(im, ax=ax, shrink=0.8, label=r"$\bar A(x, x')$")
    return fig


def draw_plane(sweep: graphs.SNRSweep):
    """Every graph of ``sweep.plane`` in the (spectral gap, alpha / chance) plane: the augmentation
    graphs one point per width at two image SNRs, the caption graphs one point per mismatch rate
    (figure ``mf-plane``)."""
    import matplotlib.pyplot as plt

    C_ = COLORS
    with style():
        fig, ax = plt.subplots(figsize=(7.0, 4.4))
        for name, pts in sweep.plane.items():
            a, gp = zip(*pts)
            if name.startswith("augmentation"):
                ls = "-" if "0.1" in name else "--"
                ax.plot(gp, a, "o" + ls, color=C_["single"], label=name + " (widths)")
            else:
                m = float(name.split()[-1])
                ax.plot(gp, a, "D", ms=9, color=C_["multi"], alpha=0.4 + 0.6 * (1 - m / 0.3))
                ax.annotate(f"caption, {int(100 * m)}% mismatched", (gp[0], a[0]),
                            textcoords="offset points", xytext=(-12, 4), ha="right",
                            color=C_["multi"], fontsize="small")
        ax.set_xlabel(r"spectral gap $\lambda_{k+1}$ (larger: better connected)")
        ax.set_ylabel(r"$\alpha$ / chance (smaller: more consistent)")
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.25)
        ax.legend(loc="upper left", fontsize="small")
        ax.set_title("positive pairs of each graph")
    return fig


def draw_probe_snr(sweep: graphs.SNRSweep):
    """The probe errors of ``sweep.probe`` against the image SNR, mean +- 1 s.d. over draws, with
    the chapter's default SNR marked (figure ``mf-probe-snr``, the chapter's takeaway)."""
    import matplotlib.pyplot as plt

    C_ = COLORS
    snr = sweep.snr
    with style():
        fig, ax = plt.subplots(figsize=(7.0, 4.4))

        def band(v, color, label, ls="-"):
            mu, sd = v.mean(1), v.std(1) if v.shape[1] > 1 else torch.zeros(v.shape[0])
            ax.plot(snr, mu, ls, color=color, label=label, marker="o", ms=4)
            ax.fill_between(snr, mu - sd, mu + sd, color=color, alpha=0.15, lw=0)

        band(sweep.probe["augmentation"], C_["single"], "augmentation graph (oracle width)")
        for m, ls in zip(sweep.mismatches, (":", "-", "--")):
            band(sweep.probe[f"caption {m}"], C_["multi"],
                 f"caption graph, {int(100 * m)}% mismatched", ls)
        band(sweep.probe["raw"], RAW, "probe on the raw images", ":")
        ax.axvline(sweep.config.snr, ymax=0.74, color=C_["reference"], lw=0.8)
        ax.text(sweep.config.snr + 0.005, 0.8, "about the SNR of\nthe paper's Fig. 1",
                color=C_["reference"], fontsize="small", va="bottom")
        ax.set_xlabel("image SNR")
        ax.set_ylabel("linear-probe test error")
        ax.set_ylim(-0.02, 1.3)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.legend(loc="upper right", fontsize="small", ncol=2)
        ax.set_title("captions beat augmentation until the images carry signal")
    return fig


def _spectrum(size, device):
    w = world(size, device)
    return draw_spectrum(w["s"], w["nu"], w["k"])


def _graphs(size, device):
    return draw_graphs(*graphs_result(size, device))


def _probe_snr(size, device):
    return draw_probe_snr(snr_sweep_result(size, device))


def _plane(size, device):
    return draw_plane(snr_sweep_result(size, device))


FIGURES = [
    FigureSpec("mf-probe-snr", "Linear-probe error of the spectral embedding of the caption-induced "
               "graph (three caption mismatch rates) and of the best augmentation graph, against "
               "the image SNR: captions win at the paper's SNR, augmentation once the images "
               "carry enough signal", CHAPTER, LABEL, _probe_snr, takeaway=True),
    FigureSpec("mf-spectrum", "Singular values of the normalised image–caption matrix P̃ and "
               "eigenvalues of the caption-induced image graph (equal to the squared singular "
               "values), with the gap after k = C", CHAPTER, LABEL, _spectrum),
    FigureSpec("mf-graphs", "The caption-induced and the (best-width) Gaussian augmentation graph "
               "on the same 200 images at SNR 0.1, normalised, images sorted by class",
               CHAPTER, LABEL, _graphs),
    FigureSpec("mf-plane", "Label consistency α (relative to chance) against spectral gap "
               "λ_{k+1} for caption graphs and for augmentation graphs of every width at image "
               "SNR 0.1 and 0.4", CHAPTER, LABEL, _plane),
]
