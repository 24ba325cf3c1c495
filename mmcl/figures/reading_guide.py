"""Figures of the chapter "Reading guide" (``book/01_reading_guide.md``): the paper's Figure 1.

The runs are :func:`mmcl.experiments.figure1.run_figure1`, the drawing
:func:`mmcl.experiments.figure1.plot_figure1`; this module registers the two layouts."""
from __future__ import annotations

import functools

from mmcl.experiments.figure1 import plot_figure1, run_figure1
from mmcl.figures.registry import FigureSpec
from mmcl.model.config import SyntheticConfig

__all__ = ["SEEDS", "figure1_result", "FIGURES"]

# seeds per size: the chapter shows 5 (20 with MMCL_BOOK_FULL=1); "tiny" is for the tests
SEEDS = {"tiny": 1, "default": 5, "full": 20}


@functools.lru_cache(maxsize=2)
def figure1_result(size: str = "default", device: str = "cpu"):
    """Figure 1's runs at the Figure 1 settings, with the seeds of ``size`` (cached: both layouts
    draw the same runs).  ``tiny`` also shortens training to 20 epochs."""
    cfg = SyntheticConfig()
    if size == "tiny":
        cfg = cfg.replace(n_epochs=20)
    return run_figure1(cfg, seeds=range(SEEDS[size]), device=device)


def _grid(size, device):
    return plot_figure1(figure1_result(size, device), ncols=2, save=False)[0]


def _row(size, device):
    return plot_figure1(figure1_result(size, device), ncols=4, save=False)[0]


FIGURES = [
    FigureSpec("fig1-dynamics", "Figure 1 of the paper: training loss, OOD accuracy (adapt and transfer heads), "
               "signal learning max_r γ_r and noise memorisation max_{r,i} ρ_{r,i}, single- vs multi-modal, "
               "mean ± 1 s.d. over 5 seeds", "01_reading_guide", "sec-reading-guide", _row, shown=False),
    FigureSpec("fig1-dynamics-grid", "The same four panels as a 2 × 2 grid (for the page)", "01_reading_guide",
               "sec-reading-guide", _grid),
]
