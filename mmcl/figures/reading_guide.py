"""Figures of the chapter :ref:`Reading guide <sec-reading-guide>`: the paper's Figure 1, drawing only.

The runs are :mod:`mmcl.experiments.reading_guide`'s (:func:`~mmcl.experiments.reading_guide.figure1_result`,
which calls :func:`mmcl.experiments.figure1.run_figure1`); :func:`mmcl.figures.figure1.draw_figure1` draws its
four panels (the chapter "Side by side" shows the same drawing), and this module registers its two layouts."""
from __future__ import annotations

from mmcl.experiments.reading_guide import figure1_result, sharpest_finding
from mmcl.figures.theme import style
from mmcl.figures.figure1 import draw_figure1
from mmcl.figures.registry import FigureSpec, chapter_of

__all__ = ["draw_sharpest", "FIGURES"]

LABEL = "sec-reading-guide"
CHAPTER = chapter_of(__name__)


def plot_blueprint(verdicts=None):
    """The paper's dependency graph (:mod:`mmcl.proofs.blueprint`) for a slide: the layers of
    :func:`mmcl.figures.blueprint_graph.layout` from left (premises) to right (theorems), each node filled
    by its proof audit and, where ``verdicts`` (``{key: measured verdict}``) gives one, bordered by
    the measured verdict; solid edges for what a statement uses, dotted for what only its proof
    uses.  The book's Blueprint page draws the same graph as SVG with links."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyBboxPatch, Patch

    from mmcl.figures.theme import AUDIT_FILL, VERDICT_STROKE
    from mmcl.proofs import blueprint as bp
    from mmcl.figures.blueprint_graph import layout, short_label

    verdicts = dict(verdicts or {})
    pos = layout()
    n_layers = 1 + max(p[0] for p in pos.values())
    tallest = 1 + max(p[1] for p in pos.values())
    xy = {k: (layer * 1.35, -i) for k, (layer, i) in pos.items()}
    kinds = {s.key: s for s in bp.STATEMENTS}
    with style():
        fig, ax = plt.subplots(figsize=(13.33, 7.5))
        for src, dst, kind in bp.edges():
            (x0, y0), (x1, y1) = xy[src], xy[dst]
            ax.annotate("", xy=(x1 - 0.5, y1), xytext=(x0 + 0.5, y0),
                        arrowprops=dict(arrowstyle="-|>", color="#999999", lw=0.7, ls=":" if kind == "proof" else "-",
                                        shrinkA=0, shrinkB=0, connectionstyle="arc3,rad=0.0"))
        for k, (x, y) in xy.items():
            s = kinds[k]
            color, lw, dash = VERDICT_STROKE[verdicts.get(k, "")]
            box = "round,pad=0.02,rounding_size=0.3" if s.kind == "theorem" else "square,pad=0.02"
            ax.add_patch(FancyBboxPatch((x - 0.48, y - 0.33), 0.96, 0.66, boxstyle=box, fc=AUDIT_FILL[s.audit.status],
                                        ec=color, lw=lw, ls="--" if dash else "-"))
            ax.text(x, y, short_label(k), ha="center", va="center", fontsize=9)
        ax.set_xlim(-0.7, (n_layers - 1) * 1.35 + 0.7)
        ax.set_ylim(-tallest + 0.4, 0.7)
        ax.axis("off")
        handles = [Patch(fc=c, ec="#888888", label=bp.AUDIT_TEXT[a]) for a, c in AUDIT_FILL.items()]
        handles += [Line2D([], [], color="#999999", ls="-", label="uses"),
                    Line2D([], [], color="#999999", ls=":", label="only its proof uses")]
        ax.legend(handles=handles, loc="lower right", fontsize=10, frameon=False, title="proof audit")
        ax.set_title("The paper's statements: premises (left) to theorems (right)")
    return fig


def draw_sharpest(sweep):
    """The book's sharpest finding in one figure, the window of test signals: the OOD error against
    ``cos(nu, mu)`` at the sweep's largest ``n``, both modes and both heads, Sec. 3.3's angle and the
    paper's parallel ``nu`` marked (:func:`mmcl.figures.window.draw_errors`, the window chapter's own
    drawing).  ``sweep`` is a :class:`mmcl.experiments.theorems_regime.DecisiveSweep`."""
    from mmcl.figures.window import draw_errors

    return draw_errors(sweep.by_n[sweep.sizes[-1]])


def _sharpest(size, device):
    return draw_sharpest(sharpest_finding(size, device))


def _blueprint(size, device):
    return plot_blueprint()


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
    FigureSpec("blueprint", "The paper's dependency graph, each statement filled by our audit of its proof (the Blueprint "
               "page draws it with the measured verdicts and links)", CHAPTER, LABEL, _blueprint, shown=False),
]
