"""Figures of the chapter :ref:`Reading guide <sec-reading-guide>`: the paper's Figure 1, drawing only.

The runs are :mod:`mmcl.experiments.reading_guide`'s (:func:`~mmcl.experiments.reading_guide.figure1_result`,
which calls :func:`mmcl.experiments.figure1.run_figure1`); :func:`mmcl.figures.figure1.draw_figure1` draws
its four panels (the chapter "Side by side" shows the same drawing), and this module registers its two layouts
and the paper's dependency graph for a talk (:func:`mmcl.figures.blueprint_graph.draw_blueprint`, with
the verdicts the book's last build recorded; the Blueprint page writes it at every build)."""
from __future__ import annotations

from mmcl.experiments.reading_guide import figure1_result, sharpest_finding
from mmcl.figures.blueprint_graph import draw_blueprint, recorded_verdicts
from mmcl.figures.figure1 import draw_figure1
from mmcl.figures.registry import FigureSpec, chapter_of

__all__ = ["draw_sharpest", "FIGURES"]

LABEL = "sec-reading-guide"
CHAPTER = chapter_of(__name__)


def draw_sharpest(sweep):
    """The book's sharpest finding in one figure, the window of test signals: the OOD error against
    ``cos(nu, mu)`` at the sweep's largest ``n``, both modes and both heads, Sec. 3.3's angle and the
    paper's parallel ``nu`` marked (:func:`mmcl.figures.window.draw_errors`, the window chapter's own
    drawing).  ``sweep`` is a :class:`~mmcl.experiments.decisive_runs.DecisiveSweep`."""
    from mmcl.figures.window import draw_errors

    return draw_errors(sweep.by_n[sweep.sizes[-1]])


def _sharpest(size, device):
    return draw_sharpest(sharpest_finding(size, device))


def _blueprint(size, device):
    return draw_blueprint(recorded_verdicts())


def _grid(size, device):
    return draw_figure1(figure1_result(size, device), ncols=2)


def _row(size, device):
    return draw_figure1(figure1_result(size, device), ncols=4)


FIGURES = [
    FigureSpec("sharpest-finding", "The multi-modal advantage lives in a window of test signals: the OOD error "
               "against cos(ν, μ), both modes and both heads, at the decisive sweep's largest n; under Sec. 3.3's "
               "angle (left edge) both modes sit at chance, and only from cos about 0.05 does the multi-modal "
               "error fall while the single-modal one stays up (the window chapter's figure window-errors)",
               CHAPTER, "sec-reading-guide-findings", _sharpest, takeaway=True),
    FigureSpec("fig1-dynamics", "Figure 1 of the paper: training loss, OOD accuracy (adapt and transfer heads), "
               "signal learning max_r γ_r and noise memorisation max_{r,i} ρ_{r,i}, single- vs multi-modal, "
               "mean ± 1 s.d. over 5 seeds", CHAPTER, LABEL, _row, shown=False),
    FigureSpec("fig1-dynamics-grid", "The same four panels as a 2 × 2 grid (for the page)", CHAPTER, LABEL, _grid),
    FigureSpec("blueprint", "The paper's dependency graph laid out by Graphviz's dot, each statement in the colour "
               "of its standing with the word (refuted, gap, rests on a gap, stands), merged from our audit "
               "of its proof and the verdicts the book measured (the Blueprint page draws it with links)",
               CHAPTER, LABEL, _blueprint, shown=False),
]
