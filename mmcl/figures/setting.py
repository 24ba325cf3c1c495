"""Figures of the chapter :ref:`The setting: data, encoders, losses <sec-setting>`: drawing only.

The run is :mod:`mmcl.experiments.setting`'s
(:func:`~mmcl.experiments.setting.trained_similarities`: both networks trained on one draw with the
closed-form engine, their similarity matrices of Eq. 4, and its two-modality version, before and
after training); :func:`draw_similarities` draws the four matrices, samples ordered by label:
memorised noise shows as a diagonal, learned signal as label blocks.  :func:`draw_model` draws
the model itself, patches and arrows only (no run): the two-patch input, the encoders, InfoNCE and
the two downstream heads.
"""
from __future__ import annotations

from mmcl.experiments.setting import TrainedSimilarities, similarities_result
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import headline, style

__all__ = ["draw_similarities", "draw_model", "FIGURES"]

LABEL = "sec-setting"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_similarities``).
CLAIM = "Single-modal memorises each sample's noise; multi-modal learns the signal"


def draw_similarities(result: TrainedSimilarities):
    """The four similarity matrices of ``result`` in a 2 x 2 grid drawn for the book's column:
    single-modal on the top row, multi-modal below, epoch 0 on the left and the end of training on
    the right; white lines separate the two labels.  Each colour scale runs from 0 to the matrix's
    99.5 % quantile."""
    import matplotlib.pyplot as plt

    last = result.cfg.n_epochs
    who = {"single": r"single-modal $\mathrm{Sim}_h(x_i, x_j)$",
           "multi": r"multi-modal $\mathrm{Sim}_{h,g}(x_i, \tilde x_j)$"}
    with style():
        fig, axes = plt.subplots(2, 2, figsize=(7.6, 6.8), constrained_layout=True)
        for row, mode in zip(axes, ("single", "multi")):
            for ax, epoch in zip(row, (0, last)):
                S = result.sims[mode, epoch]
                im = ax.imshow(S, cmap="viridis", vmin=0, vmax=float(S.quantile(0.995)),
                               interpolation="nearest")
                ax.axhline(result.n_pos - 0.5, color=palette.BACKGROUND, lw=1)
                ax.axvline(result.n_pos - 0.5, color=palette.BACKGROUND, lw=1)
                ax.set_title(f"{who[mode]}\nepoch {epoch}", fontsize="medium")
                ax.set_xticks([]), ax.set_yticks([])
                ax.set_xlabel("sample j: label +1, then -1", fontsize="small")
                ax.set_ylabel("sample i", fontsize="small")
                fig.colorbar(im, ax=ax, shrink=0.8)
        headline(fig, CLAIM)
    return fig


def _box(ax, x, y, w, h, text, colour, size="small"):
    """A rounded box centred at ``(x, y)``, ``w`` by ``h`` axes units, with ``text`` in it."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.01,rounding_size=0.015",
                                fc=colour, ec=palette.DARK, lw=1.0, alpha=0.9))
    ax.text(x, y, text, ha="center", va="center", fontsize=size, color=palette.INK)


def _input(ax, x, y, signal: str, noise: str, signal_strong: bool = False):
    """A two-patch input centred at ``(x, y)``: the signal patch (its size: how strong) beside the
    noise patch, each a square labelled inside."""
    from matplotlib.patches import Rectangle

    s = 0.060 if signal_strong else 0.045
    ax.add_patch(Rectangle((x - 0.005 - s, y - s / 2 * 1.6), s, s * 1.6, fc=palette.SIGNAL, ec=palette.INK, lw=0.8))
    ax.add_patch(Rectangle((x + 0.005, y - 0.045 * 0.8), 0.045, 0.045 * 1.6, fc=palette.NOISE, ec=palette.INK,
                           lw=0.8, alpha=0.85))
    ax.text(x - 0.005 - s / 2, y, signal, ha="center", va="center", fontsize="small", color=palette.BACKGROUND)
    ax.text(x + 0.0275, y, noise, ha="center", va="center", fontsize="small", color=palette.INK)


def _arrow(ax, start, end, colour=None, rad=0.0, ls="-"):
    from matplotlib.patches import FancyArrowPatch

    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, lw=1.3, ls=ls,
                                 color=colour or palette.DARK, connectionstyle=f"arc3,rad={rad}",
                                 shrinkA=2, shrinkB=2))


def draw_model():
    """The model of the paper's Sec. 3 as a diagram (matplotlib patches and arrows only): the
    two-patch input ``x = [y mu, xi]`` (signal patch, noise patch); single-modal learning (top) with
    one shared ReLU encoder ``h`` seeing ``x`` and its augmentation ``x+ = [y mu, xi + eps]``;
    multi-modal learning (bottom) with two encoders, ``h`` on ``x`` and ``g`` on the cleaner
    second modality ``x~ = [y mu~, xi~]`` (``||mu~|| = C_mu ||mu||``, a larger signal patch); both
    trained by InfoNCE against hard negatives; and the two downstream heads on the trained features
    of an OOD input ``[y nu, zeta]``: *transfer* (fit on the training data, kept fixed) and
    *adapt* (refit on OOD samples)."""
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(8.0, 4.6), layout="constrained")
        ax.set_xlim(0, 1), ax.set_ylim(0, 1)
        ax.axis("off")
        ax.text(0.01, 0.97, "single-modal", ha="left", va="top", color=palette.SINGLE, fontweight="bold")
        ax.text(0.01, 0.50, "multi-modal", ha="left", va="top", color=palette.MULTI, fontweight="bold")
        # single-modal: x and its augmentation into one shared encoder
        _input(ax, 0.10, 0.80, "yμ", "ξ")
        _input(ax, 0.10, 0.62, "yμ", "ξ+ε")
        ax.text(0.10, 0.71, "augment", ha="center", va="center", fontsize="x-small", color=palette.PAPER_GREY)
        _box(ax, 0.36, 0.71, 0.20, 0.17, "encoder h\nm ReLU neurons,\none weight W", palette.SHADE)
        _arrow(ax, (0.165, 0.80), (0.26, 0.75))
        _arrow(ax, (0.165, 0.62), (0.26, 0.67))
        _box(ax, 0.62, 0.71, 0.17, 0.17, "InfoNCE\npositive x, x⁺\nM negatives", palette.SHADE)
        _arrow(ax, (0.46, 0.71), (0.535, 0.71), palette.SINGLE)
        # multi-modal: two encoders, the second modality cleaner
        _input(ax, 0.10, 0.34, "yμ", "ξ")
        _input(ax, 0.10, 0.13, "yμ̃", "ξ̃", signal_strong=True)
        ax.text(0.10, 0.235, "second modality\n" r"$\|\tilde\mu\| = C_\mu\|\mu\|$", ha="center", va="center", fontsize="x-small",
                color=palette.PAPER_GREY)
        _box(ax, 0.36, 0.34, 0.20, 0.13, "encoder h (W)", palette.SHADE)
        _box(ax, 0.36, 0.13, 0.20, 0.13, "encoder g (W̃)", palette.SHADE)
        _arrow(ax, (0.165, 0.34), (0.26, 0.34))
        _arrow(ax, (0.165, 0.13), (0.26, 0.13))
        _box(ax, 0.62, 0.235, 0.17, 0.17, "InfoNCE\npositive x, x̃\nboth ways", palette.SHADE)
        _arrow(ax, (0.46, 0.34), (0.535, 0.27), palette.MULTI)
        _arrow(ax, (0.46, 0.13), (0.535, 0.20), palette.MULTI)
        # downstream: the trained features of an OOD input, two linear heads
        ax.text(0.885, 0.93, "downstream: OOD input\n[yν, ζ], features h", ha="center", va="top",
                fontsize="small", color=palette.INK)
        _box(ax, 0.885, 0.66, 0.21, 0.17, "transfer head\nfit on training data,\nkept fixed", palette.SHADE)
        _box(ax, 0.885, 0.40, 0.21, 0.17, "adapt head\nrefit on 200\nOOD samples", palette.SHADE)
        _arrow(ax, (0.36, 0.80), (0.78, 0.72), palette.SINGLE, rad=-0.25, ls="--")
        _arrow(ax, (0.46, 0.37), (0.78, 0.40), palette.MULTI, ls="--")
        ax.text(0.885, 0.25, "each mode's h,\nboth heads", ha="center", va="top", fontsize="x-small",
                color=palette.PAPER_GREY)
    return fig


def _model(size, device):
    return draw_model()


def _similarities(size, device):
    return draw_similarities(similarities_result(size, device))


FIGURES = [
    FigureSpec("setting-similarities", "Similarity matrices Sim_h(x_i, x_j) (single-modal) and "
               "Sim_{h,g}(x_i, x~_j) (multi-modal), samples ordered by label, at epoch 0 and 200: "
               "memorised noise (diagonal) vs learned signal (label blocks)", CHAPTER, LABEL,
               _similarities, takeaway=True),
    FigureSpec("setting-model", "The model of Sec. 3: the two-patch input (signal patch yμ, noise patch ξ); "
               "single-modal learning with one shared ReLU encoder on x and its augmentation, multi-modal "
               "learning with two encoders, the second modality's signal C_μ times stronger; InfoNCE "
               "against hard negatives; the transfer head (fit on training data, kept fixed) and the "
               "adapt head (refit on OOD samples)", CHAPTER, LABEL, _model),
]
