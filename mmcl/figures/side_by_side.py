"""Figures of the chapter "Side by side" (``book/08_side_by_side.md``): drawing only.

Figure 1 with error bars, its sensitivity to the constants the paper leaves unstated, and to the
downstream protocol.  The runs are :mod:`mmcl.experiments.side_by_side`'s
(:func:`~mmcl.experiments.side_by_side.figure1_result`,
:func:`~mmcl.experiments.side_by_side.sensitivity_result`,
:func:`~mmcl.experiments.side_by_side.protocols_result`, cached per ``(size, device)``, over
:mod:`mmcl.experiments.figure1`); this module draws them (:func:`plot_sensitivity`,
:func:`plot_protocols`; Figure 1 itself is :func:`mmcl.figures.reading_guide.plot_figure1`) and
registers the figures."""
from __future__ import annotations

import torch

from mmcl.experiments import side_by_side as experiment
from mmcl.experiments.figure1 import ProtocolComparison
from mmcl.figures.reading_guide import plot_figure1
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style

__all__ = ["plot_sensitivity", "plot_protocols", "FIGURES"]

LABEL = "sec-side-by-side"
CHAPTER = chapter_of(__name__)

_LABELS = {"tau": r"temperature $\tau$", "sigma0": r"initial weight scale $\sigma_0$", "M": "negatives per anchor $M$"}


def plot_sensitivity(sens: experiment.Sensitivity):
    """Final OOD accuracy (top, both protocols) and final training loss (bottom) of both modes
    against each varied constant, mean +- 1 s.d. over seeds; dotted: the default value."""
    import matplotlib.pyplot as plt

    grid, sweep, cfg = sens.grid, sens.sweep, sens.base
    defaults = {"tau": cfg.tau, "sigma0": cfg.sigma0, "M": cfg.M}
    with style():
        fig, axes = plt.subplots(2, len(grid), figsize=(5 * len(grid), 8.0), sharex="col", squeeze=False)
        for col, name in enumerate(grid):
            x = torch.tensor(grid[name], dtype=torch.float64)
            for mode in ("single", "multi"):
                m = sweep[name][mode]
                for proto, ls, mk in (("adapt", "-", "o"), ("transfer", "--", "s")):
                    y = m[proto]
                    axes[0, col].errorbar(x, y.mean(1), yerr=y.std(1), color=COLORS[mode], ls=ls, marker=mk, ms=5,
                                          capsize=3, label=f"{mode}-modal, {proto}")
                axes[1, col].errorbar(x, m["loss"].mean(1), yerr=m["loss"].std(1), color=COLORS[mode], marker="o",
                                      ms=5, capsize=3, label=f"{mode}-modal")
            for row in (0, 1):
                if name in defaults:
                    axes[row, col].axvline(defaults[name], color=COLORS["reference"], lw=0.8, ls=":")
                if name != "M":
                    axes[row, col].set_xscale("log")
            axes[0, col].set_ylim(0.45, 1.02)
            axes[0, col].axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
            if name != "M":
                axes[1, col].set_yscale("log")
            axes[1, col].set_xlabel(_LABELS.get(name, name))
        axes[0, 0].set_ylabel("final OOD accuracy")
        axes[1, 0].set_ylabel("final training loss")
        handles, names_ = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, names_, loc="outside lower center", ncols=4, fontsize=10)
        axes[1, 0].legend(loc="upper left", fontsize=9)
        fig.suptitle(f"One constant at a time (dotted: our default), mean $\\pm$ 1 s.d. over {len(sens.seeds)} seeds")
    return fig


def plot_protocols(pc: ProtocolComparison):
    """Bars of the final OOD accuracy of both modes under each protocol variant, mean +- 1 s.d."""
    import matplotlib.pyplot as plt

    names = pc.names
    with style():
        fig, ax = plt.subplots(figsize=(10, 4.2))
        x = torch.arange(len(names), dtype=torch.float64)
        for k, mode in enumerate(("single", "multi")):
            y = torch.stack([pc.accuracy[(n, mode)].double().cpu() for n in names])
            ax.bar((x + (k - 0.5) * 0.38).numpy(), y.mean(1).numpy(), width=0.36, yerr=y.std(1).numpy(), capsize=3,
                   color=COLORS[mode], label=f"{mode}-modal")
        ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        ax.set_xticks(x, names)
        ax.set_ylim(0.4, 1.13)
        ax.set_ylabel("final OOD accuracy")
        ax.set_title(f"Downstream protocol, mean $\\pm$ 1 s.d. over {len(pc.seeds)} seeds")
        ax.legend(loc="upper center", ncols=2)
    return fig


def _figure1(size, device):
    return plot_figure1(experiment.figure1_result(size, device), ncols=2, save=False)[0]


def _sensitivity(size, device):
    return plot_sensitivity(experiment.sensitivity_result(size, device))


def _protocols(size, device):
    return plot_protocols(experiment.protocols_result(size, device))


FIGURES = [
    FigureSpec("ch6-figure1", "Figure 1 of the paper as a 2 × 2 grid, mean ± 1 s.d. over 5 seeds, OOD accuracy "
               "scored every 20 steps", CHAPTER, LABEL, _figure1),
    FigureSpec("ch6-sensitivity", "Final OOD accuracy and training loss, single vs multi, as τ, σ₀ and M vary one "
               "at a time (3 seeds each)", CHAPTER, LABEL, _sensitivity),
    FigureSpec("ch6-protocols", "Final OOD accuracy under five downstream protocols (adapt held-out / in-sample, "
               "transfer, ridge 10⁻⁴ and 1), 5 seeds", CHAPTER, LABEL, _protocols),
]
