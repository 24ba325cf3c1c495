"""The paper's Figure 1, drawing only: :func:`draw_figure1` draws the four panels of a
:class:`~mmcl.experiments.figure1.Figure1Result` (:func:`mmcl.experiments.figure1.run_figure1`).

The reading guide shows it as a 2 x 2 grid (``fig1-dynamics-grid``) and writes the paper's one-row
layout for slides (``fig1-dynamics``); the chapter "Side by side" shows the grid titled by its
claim (``ch6-figure1``); ``mmcl figure fig1`` draws it with its own options."""
from __future__ import annotations

from typing import Optional

import torch

from mmcl.experiments.figure1 import Figure1Result
from mmcl.figures import palette
from mmcl.figures.theme import COLORS, headline, style

__all__ = ["draw_figure1"]


def _band(ax, x, Y, color, label, ls="-"):
    mean, sd = Y.mean(0), (Y.std(0, correction=0) if Y.shape[0] > 1 else torch.zeros_like(Y[0]))
    ax.plot(x, mean, color=color, ls=ls, label=label)
    ax.fill_between(x, mean - sd, mean + sd, color=color, alpha=0.2, lw=0)


def draw_figure1(result: Figure1Result, ncols: int = 4, claim: Optional[str] = None):
    """The four panels of Figure 1 (training loss, OOD accuracy under both protocols, signal
    learning, noise memorisation; mean +- 1 s.d. over seeds).  ``ncols=4`` is the paper's row (for
    slides), ``ncols=2`` a 2x2 grid (for the page).  ``claim``: the title, when the figure states a
    point (the side-by-side chapter's takeaway).  Returns the figure (the book's ``env.show`` and
    :func:`mmcl.figures.registry.save` write it)."""
    import matplotlib.pyplot as plt

    if ncols not in (1, 2, 4):
        raise ValueError(f"ncols must be 1, 2 or 4, got {ncols!r}")
    labels = {"single": "single-modal", "multi": "multi-modal"}
    nrows = 4 // ncols
    with style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3.6 * nrows + 0.3), squeeze=False)
        axes = axes.flatten()
        for mode, c in result.curves.items():
            t = torch.arange(c.loss.shape[1])
            _band(axes[0], t, c.loss, COLORS[mode], labels[mode])
            for protocol, ls in (("adapt", "-"), ("transfer", "--")):
                if protocol in c.accuracy:
                    _band(axes[1], c.eval_steps, c.accuracy[protocol], COLORS[mode], f"{labels[mode]}, {protocol}", ls)
            _band(axes[2], t, c.max_gamma, COLORS[mode], labels[mode])
            _band(axes[3], t, c.max_rho, COLORS[mode], labels[mode])
        # the quantity on a line of its own: four titles side by side fit a slide's row
        titles = ["Training loss", "OOD test accuracy", "Signal learning\n" r"max$_r\,\gamma_r$",
                  "Noise memorisation\n" r"max$_{r,i}\,\rho_{r,i}$"]
        for ax, title in zip(axes, titles):
            ax.set_title(title)
            ax.set_xlabel("Epoch")
        axes[1].set_ylim(0.4, 1.02)
        axes[1].axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        from matplotlib.lines import Line2D
        # one legend under the panels (never over the data): the modes, then the accuracy's line styles
        handles = [Line2D([], [], color=COLORS[m], lw=2) for m in result.curves]
        handles += [Line2D([], [], color=palette.INK, ls="-"), Line2D([], [], color=palette.INK, ls="--")]
        names = [labels[m] for m in result.curves]
        names += ["OOD acc.: adapt (head fit on OOD)", "OOD acc.: transfer (head fit on train)"]
        spread = f"mean $\\pm$ 1 s.d. over {len(result.seeds)} seeds"
        fig.legend(handles, names, loc="outside lower center", ncol=2 if ncols < 4 else 4,
                   fontsize="small", frameon=False, title=spread if claim else None,
                   title_fontsize="small")
        if claim:
            headline(fig, claim)
        else:
            fig.suptitle(f"Single- vs multi-modal contrastive learning ({spread})")
    return fig
