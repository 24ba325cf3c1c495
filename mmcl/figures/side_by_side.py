"""Figures of the chapter "Side by side" (``book/06_side_by_side.md``): Figure 1 with error bars,
its sensitivity to the constants the paper leaves unstated, and to the downstream protocol.

The computations are :func:`mmcl.experiments.figure1.run_figure1`,
:func:`mmcl.experiments.figure1.sensitivity_sweep` and
:func:`mmcl.experiments.figure1.compare_protocols`; this module holds their sizes (``SEEDS``,
``SWEEP_SEEDS``, ``GRID``), caches their results per ``(size, device)`` and draws them
(:func:`plot_sensitivity`, :func:`plot_protocols`; Figure 1 itself is
:func:`mmcl.figures.reading_guide.plot_figure1`)."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List

import torch

from mmcl.figures.reading_guide import plot_figure1
from mmcl.experiments.figure1 import (Figure1Result, ProtocolComparison, compare_protocols, run_figure1, sensitivity_sweep)
from mmcl.figures.registry import FigureSpec
from mmcl.figures.theme import COLORS, style
from mmcl.model.config import SyntheticConfig

__all__ = ["SEEDS", "SWEEP_SEEDS", "GRID", "EVAL_EVERY", "config", "figure1_result", "Sensitivity",
           "sensitivity_result", "protocols_result", "plot_sensitivity", "plot_protocols", "FIGURES"]

# seeds of Figure 1 and of the protocol comparison: the chapter shows 5 (20 with MMCL_BOOK_FULL=1)
SEEDS = {"tiny": 2, "default": 5, "full": 20}
# seeds of each one-constant-at-a-time variation: 3 (10 with MMCL_BOOK_FULL=1)
SWEEP_SEEDS = {"tiny": 2, "default": 3, "full": 10}
# the values of each unstated constant (the same at the default and full sizes)
_GRID = {"tau": [0.03, 0.1, 0.3, 1.0], "sigma0": [0.001, 0.003, 0.01, 0.03, 0.1], "M": [5, 20, 45]}
GRID = {"tiny": {"tau": [0.1, 1.0], "sigma0": [0.001, 0.1], "M": [5, 45]}, "default": _GRID, "full": _GRID}
EVAL_EVERY = 20  # OOD accuracy of Figure 1 scored every 20 steps


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 setting (the paper's, plus our ``tau``, ``sigma0``, ``M``);
    ``tiny`` (for the tests) trains 20 epochs instead of 200 in ``d = d~ = 500`` and scores on 200
    held-out samples instead of 1000."""
    cfg = SyntheticConfig()
    return cfg.replace(n_epochs=20, d=500, d_tilde=500, n_heldout=200) if size == "tiny" else cfg


@functools.lru_cache(maxsize=2)
def figure1_result(size: str = "default", device: str = "cpu") -> Figure1Result:
    """Figure 1's runs with the seeds of ``size``, OOD accuracy every ``EVAL_EVERY`` steps."""
    return run_figure1(config(size), seeds=range(SEEDS[size]), device=device, eval_every=EVAL_EVERY)


@dataclass
class Sensitivity:
    """One sensitivity sweep: the ``base`` configuration, the ``seeds``, the ``grid`` (name ->
    values) and ``sweep``, name -> mode -> metric -> ``(values, seeds)`` tensor
    (:func:`mmcl.experiments.figure1.sensitivity_sweep`)."""

    base: SyntheticConfig
    seeds: List[int]
    grid: Dict[str, list]
    sweep: Dict[str, Dict[str, Dict[str, torch.Tensor]]]


@functools.lru_cache(maxsize=2)
def sensitivity_result(size: str = "default", device: str = "cpu") -> Sensitivity:
    """``tau``, ``sigma0`` and ``M`` varied one at a time around :func:`config` (``GRID``,
    ``SWEEP_SEEDS``), both modes, final step only."""
    base, seeds, grid = config(size), list(range(SWEEP_SEEDS[size])), GRID[size]
    return Sensitivity(base=base, seeds=seeds, grid=grid,
                       sweep=sensitivity_sweep(grid, seeds, base=base, device=device))


@functools.lru_cache(maxsize=2)
def protocols_result(size: str = "default", device: str = "cpu") -> ProtocolComparison:
    """The downstream protocol variants on the final features of the seeds of Figure 1
    (:func:`mmcl.experiments.figure1.compare_protocols`)."""
    return compare_protocols(config(size), range(SEEDS[size]), device=device)


_LABELS = {"tau": r"temperature $\tau$", "sigma0": r"initial weight scale $\sigma_0$", "M": "negatives per anchor $M$"}


def plot_sensitivity(sens: Sensitivity):
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
    return plot_figure1(figure1_result(size, device), ncols=2, save=False)[0]


def _sensitivity(size, device):
    return plot_sensitivity(sensitivity_result(size, device))


def _protocols(size, device):
    return plot_protocols(protocols_result(size, device))


_CH, _LABEL = "06_side_by_side", "sec-side-by-side"
FIGURES = [
    FigureSpec("ch6-figure1", "Figure 1 of the paper as a 2 × 2 grid, mean ± 1 s.d. over 5 seeds, OOD accuracy "
               "scored every 20 steps", _CH, _LABEL, _figure1),
    FigureSpec("ch6-sensitivity", "Final OOD accuracy and training loss, single vs multi, as τ, σ₀ and M vary one "
               "at a time (3 seeds each)", _CH, _LABEL, _sensitivity),
    FigureSpec("ch6-protocols", "Final OOD accuracy under five downstream protocols (adapt held-out / in-sample, "
               "transfer, ridge 10⁻⁴ and 1), 5 seeds", _CH, _LABEL, _protocols),
]
