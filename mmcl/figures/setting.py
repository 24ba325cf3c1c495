"""Figures of the chapter :ref:`The setting: data, encoders, losses <sec-setting>`: drawing only.

The run is :mod:`mmcl.experiments.setting`'s
(:func:`~mmcl.experiments.setting.trained_similarities`: both networks trained on one draw with the
closed-form engine, their similarity matrices of Eq. 4, and its two-modality version, before and
after training); :func:`draw_similarities` draws the four matrices, samples ordered by label:
memorised noise shows as a diagonal, learned signal as label blocks.
"""
from __future__ import annotations

from mmcl.experiments.setting import TrainedSimilarities, similarities_result
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import headline, style

__all__ = ["draw_similarities", "FIGURES"]

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


def _similarities(size, device):
    return draw_similarities(similarities_result(size, device))


FIGURES = [
    FigureSpec("setting-similarities", "Similarity matrices Sim_h(x_i, x_j) (single-modal) and "
               "Sim_{h,g}(x_i, x~_j) (multi-modal), samples ordered by label, at epoch 0 and 200: "
               "memorised noise (diagonal) vs learned signal (label blocks)", CHAPTER, LABEL,
               _similarities, takeaway=True),
]
