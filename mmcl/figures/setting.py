"""Figures of the chapter "The setting: data, encoders, losses" (``book/02_setting.md``): drawing only.

The run is :mod:`mmcl.experiments.setting`'s
(:func:`~mmcl.experiments.setting.trained_similarities`: both networks trained on one draw with the
closed-form engine, their similarity matrices of Eq. 4, and its two-modality version, before and
after training); :func:`draw_similarities` draws the four matrices, samples ordered by label:
memorised noise shows as a diagonal, learned signal as label blocks.
"""
from __future__ import annotations

from mmcl.experiments.setting import TrainedSimilarities, similarities_result
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import style

__all__ = ["draw_similarities", "FIGURES"]

LABEL = "sec-setting"
CHAPTER = chapter_of(__name__)


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
               "learned signal (label blocks)", CHAPTER, LABEL, _similarities),
]
