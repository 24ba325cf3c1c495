"""Figures of the chapter :ref:`Side by side <sec-side-by-side>`: drawing only.

Figure 1 with error bars, its sensitivity to the constants the paper leaves unstated, and to the
downstream protocol.  The runs are :mod:`mmcl.experiments.side_by_side`'s
(:func:`~mmcl.experiments.side_by_side.figure1_result`,
:func:`~mmcl.experiments.side_by_side.sensitivity_result`,
:func:`~mmcl.experiments.side_by_side.protocols_result`, cached per ``(size, device)``, over
:mod:`mmcl.experiments.figure1`); this module draws them (:func:`draw_sensitivity_accuracy`,
:func:`draw_sensitivity_loss`, :func:`draw_protocols`; Figure 1 itself is :func:`mmcl.figures.figure1.draw_figure1`) and
registers the figures."""
from __future__ import annotations

import torch

from mmcl.experiments import side_by_side as experiment
from mmcl.experiments.figure1 import ProtocolComparison
from mmcl.figures.figure1 import draw_figure1
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style

__all__ = ["draw_sensitivity_accuracy", "draw_sensitivity_loss", "draw_protocols", "FIGURES"]

LABEL = "sec-side-by-side"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure (Figure 1 with error bars) states, its title.
CLAIM = "Multi-modal features transfer out of distribution; single-modal ones do not"

_LABELS = {"tau": r"temperature $\tau$", "sigma0": r"initial weight scale $\sigma_0$", "M": "negatives per anchor $M$"}


def _sweep_axes(sens: experiment.Sensitivity, ylabel: str, height: float):
    """One row of panels, one per varied constant; dotted: the default value."""
    import matplotlib.pyplot as plt

    grid, cfg = sens.grid, sens.base
    defaults = {"tau": cfg.tau, "sigma0": cfg.sigma0, "M": cfg.M}
    fig, axes = plt.subplots(1, len(grid), figsize=(8.0, height), squeeze=False)
    axes = axes[0]
    for ax, name in zip(axes, grid):
        if name in defaults:
            ax.axvline(defaults[name], color=COLORS["reference"], lw=0.8, ls=":")
        if name != "M":
            ax.set_xscale("log")
        ax.set_xlabel(_LABELS.get(name, name))
    axes[0].set_ylabel(ylabel)
    return fig, axes


def draw_sensitivity_accuracy(sens: experiment.Sensitivity):
    """Final OOD accuracy of both modes (both protocols) against each varied constant, mean +- 1
    s.d. over seeds; dotted: the default value and chance."""
    with style():
        fig, axes = _sweep_axes(sens, "final OOD accuracy", 3.6)
        for ax, name in zip(axes, sens.grid):
            x = torch.tensor(sens.grid[name], dtype=torch.float64)
            for mode in ("single", "multi"):
                for proto, ls, mk in (("adapt", "-", "o"), ("transfer", "--", "s")):
                    y = sens.sweep[name][mode][proto]
                    ax.errorbar(x, y.mean(1), yerr=y.std(1), color=COLORS[mode], ls=ls, marker=mk,
                                ms=4, capsize=2, label=f"{mode}-modal, {proto}")
            ax.set_ylim(0.45, 1.02)
            ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        handles, names_ = axes[0].get_legend_handles_labels()
        fig.legend(handles, names_, loc="outside lower center", ncols=2, fontsize=10)
        fig.suptitle(f"OOD accuracy, one constant at a time ({len(sens.seeds)} seeds)")
    return fig


def draw_sensitivity_loss(sens: experiment.Sensitivity):
    """Final training loss of both modes against each varied constant, mean +- 1 s.d. over seeds;
    dotted: the default value."""
    with style():
        fig, axes = _sweep_axes(sens, "final training loss", 3.2)
        for ax, name in zip(axes, sens.grid):
            x = torch.tensor(sens.grid[name], dtype=torch.float64)
            for mode in ("single", "multi"):
                y = sens.sweep[name][mode]["loss"]
                ax.errorbar(x, y.mean(1), yerr=y.std(1), color=COLORS[mode], marker="o", ms=4,
                            capsize=2, label=f"{mode}-modal")
            if name != "M":
                ax.set_yscale("log")
        handles, names_ = axes[0].get_legend_handles_labels()
        fig.legend(handles, names_, loc="outside lower center", ncols=2, fontsize=10)
        fig.suptitle(f"Training loss after 200 steps, one constant at a time ({len(sens.seeds)} seeds)")
    return fig


def draw_protocols(pc: ProtocolComparison):
    """Bars of the final OOD accuracy of both modes under each protocol variant, mean +- 1 s.d."""
    import matplotlib.pyplot as plt

    names = pc.names
    with style():
        fig, ax = plt.subplots(figsize=(8.0, 4.0))
        x = torch.arange(len(names), dtype=torch.float64)
        for k, mode in enumerate(("single", "multi")):
            y = torch.stack([pc.accuracy[(n, mode)].double().cpu() for n in names])
            ax.bar((x + (k - 0.5) * 0.38).numpy(), y.mean(1).numpy(), width=0.36, yerr=y.std(1).numpy(), capsize=3,
                   color=COLORS[mode], label=f"{mode}-modal")
        ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        ax.set_xticks(x, [n.replace(", ", ",\n") for n in names])
        ax.set_ylim(0.4, 1.13)
        ax.set_ylabel("final OOD accuracy")
        ax.set_title(f"Downstream protocol, mean $\\pm$ 1 s.d. over {len(pc.seeds)} seeds")
        ax.legend(loc="upper center", ncols=2)
    return fig


def _figure1(size, device):
    return draw_figure1(experiment.figure1_result(size, device), ncols=2, claim=CLAIM)


def _sensitivity_accuracy(size, device):
    return draw_sensitivity_accuracy(experiment.sensitivity_result(size, device))


def _sensitivity_loss(size, device):
    return draw_sensitivity_loss(experiment.sensitivity_result(size, device))


def _protocols(size, device):
    return draw_protocols(experiment.protocols_result(size, device))


FIGURES = [
    FigureSpec("ch6-figure1", "Figure 1 of the paper as a 2 × 2 grid, mean ± 1 s.d. over 5 seeds, OOD accuracy "
               "scored every 20 steps", CHAPTER, LABEL, _figure1, takeaway=True),
    FigureSpec("ch6-sensitivity-accuracy", "Final OOD accuracy, single vs multi, under both protocols, as τ, σ₀ "
               "and M vary one at a time (3 seeds each)", CHAPTER, LABEL, _sensitivity_accuracy),
    FigureSpec("ch6-sensitivity-loss", "Final training loss, single vs multi, as τ, σ₀ and M vary one at a time "
               "(3 seeds each): a larger τ slows training", CHAPTER, LABEL, _sensitivity_loss),
    FigureSpec("ch6-protocols", "Final OOD accuracy under five downstream protocols (adapt held-out / in-sample, "
               "transfer, ridge 10⁻⁴ and 1), 5 seeds", CHAPTER, LABEL, _protocols),
]
