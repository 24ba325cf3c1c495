"""Phase diagrams in general: the drawings that ``mmcl sweep`` and the chapter
:ref:`Phase diagrams <sec-phase-diagrams>` share (drawing only).

* :func:`draw_phase_diagram` -- three heatmaps of a :class:`~mmcl.experiments.sweep.PhaseGrid`
  (single-modal, multi-modal, their gap) on a 2 x 2 grid drawn for the page, the three data panels
  first in ``fig.axes``; :func:`phase_legend` puts their legend in the fourth cell and
  :func:`outline_cells` marks cells on them;
* :func:`draw_t1_ratio` -- measured ``T1`` over the formula of Lemma 5.2 / 5.4.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Optional, Tuple

from mmcl.experiments.sweep.phase import PhaseGrid
from mmcl.experiments.sweep.table import SweepTable
from mmcl.figures import palette
from mmcl.figures.theme import COLORS

__all__ = ["draw_phase_diagram", "phase_legend", "outline_cells", "draw_t1_ratio"]


# --------------------------------------------------------------------------------------------
# Phase diagrams in general
# --------------------------------------------------------------------------------------------
def _edges(vals, log: bool):
    import numpy as np

    v = np.asarray(vals, dtype=float)
    if len(v) == 1:
        return np.array([v[0] / 1.5, v[0] * 1.5]) if log else np.array([v[0] - 0.5, v[0] + 0.5])
    if log:
        lv = np.log(v)
        mid = (lv[1:] + lv[:-1]) / 2
        return np.exp(np.concatenate([[lv[0] - (mid[0] - lv[0])], mid, [lv[-1] + (lv[-1] - mid[-1])]]))
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])


def draw_phase_diagram(pg: PhaseGrid, *, xlabel: Optional[str] = None, ylabel: Optional[str] = None,
                       xlog: bool = False, ylog: bool = False, title: Optional[str] = None,
                       annotate: str = "gap", acc_range=(0.5, 1.0), gap_max: Optional[float] = None):
    """Three heatmaps on a 2 x 2 grid drawn for the book's column (8 in wide): single-modal and
    multi-modal on top (one shared colour scale ``acc_range``), the gap multi - single below left
    (diverging scale, blue = multi better); the fourth cell holds no data and carries the legend
    (:func:`phase_legend`).  Cells are centred on the grid values (log-spaced edges with
    ``xlog``/``ylog``), so curves can be drawn over them in data coordinates.  ``annotate``: write
    the cell values on the ``"gap"`` panel (default), on ``"all"`` panels or on ``"none"`` (grids
    over 80 cells are never annotated).  Returns the figure, its three data panels first in
    ``fig.axes``; draw under :func:`mmcl.figures.style`."""
    import matplotlib.pyplot as plt
    import numpy as np

    if annotate not in ("gap", "all", "none"):
        raise ValueError(f"annotate={annotate!r} is unknown; valid: 'gap', 'all', 'none'")

    xe, ye = _edges(pg.xs, xlog), _edges(pg.ys, ylog)
    fig, grid = plt.subplots(2, 2, figsize=(8.0, 6.6))
    axes = [grid[0, 0], grid[0, 1], grid[1, 0]]
    spare = grid[1, 1]
    spare.set_axis_off()
    spare.set_label(_LEGEND_AXIS)
    g = np.nan_to_num(pg.gap, nan=0.0)
    gm = gap_max if gap_max is not None else max(0.05, float(np.abs(g).max()))
    panels = [("single-modal", pg.single, "viridis", acc_range), ("multi-modal", pg.multi, "viridis", acc_range),
              ("gap: multi $-$ single", pg.gap, "RdBu", (-gm, gm))]
    meshes = []
    for ax, (name, arr, cmap, (lo, hi)) in zip(axes, panels):
        mesh = ax.pcolormesh(xe, ye, np.ma.masked_invalid(arr), cmap=cmap, vmin=lo, vmax=hi, shading="flat")
        meshes.append(mesh)
        if xlog:
            ax.set_xscale("log")
        if ylog:
            ax.set_yscale("log")
        ax.set_xticks(pg.xs)
        ax.set_xticklabels([_fmt(v) for v in pg.xs], fontsize=9)
        ax.set_yticks(pg.ys)
        ax.set_yticklabels([_fmt(v) for v in pg.ys], fontsize=9)
        ax.minorticks_off()
        ax.grid(False)
        ax.set_xlim(xe[0], xe[-1])  # the mesh fills the axes; curves drawn later do not widen them
        ax.set_ylim(ye[0], ye[-1])
        ax.set_autoscale_on(False)
        ax.set_title(name)
        ax.set_xlabel(xlabel or pg.x)
        ax.set_ylabel(ylabel or pg.y)
        if (annotate == "all" or (annotate == "gap" and name == panels[2][0])) and arr.size <= 80:
            for iy, yv in enumerate(pg.ys):
                for ix, xv in enumerate(pg.xs):
                    val = arr[iy, ix]
                    if np.isfinite(val):
                        xc = math.sqrt(xe[ix] * xe[ix + 1]) if xlog else (xe[ix] + xe[ix + 1]) / 2
                        yc = math.sqrt(ye[iy] * ye[iy + 1]) if ylog else (ye[iy] + ye[iy + 1]) / 2
                        dark = (val - lo) / (hi - lo) < 0.35 if cmap == "viridis" else abs(val) > 0.6 * gm
                        ax.text(xc, yc, f"{val:.2f}", ha="center", va="center", fontsize=8,
                                color=palette.BACKGROUND if dark else palette.INK)
    acc_label = "OOD accuracy" if pg.value.startswith("acc") else pg.value
    fig.colorbar(meshes[0], ax=axes[:2], shrink=0.9).set_label(acc_label)
    fig.colorbar(meshes[2], ax=axes[2], shrink=0.9).set_label("accuracy gap")
    if title:
        fig.suptitle(title)
    return fig


_LEGEND_AXIS = "phase-diagram legend"


def phase_legend(fig, **kw) -> None:
    """Put the legend of a :func:`draw_phase_diagram` figure (the labelled artists of its panels)
    into its spare fourth cell, where it covers no data."""
    spare = next(ax for ax in fig.axes if ax.get_label() == _LEGEND_AXIS)
    handles, labels = [], []
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    kw.setdefault("loc", "center left")
    kw.setdefault("bbox_to_anchor", (0.15, 0.5))
    kw.setdefault("fontsize", "small")
    spare.legend(handles, labels, **kw)


def outline_cells(ax, pg: PhaseGrid, cells: Iterable[Tuple[Any, Any]], *, xlog: bool = False, ylog: bool = False,
                  **patch_kw) -> None:
    """Draw a rectangle over each cell ``(x value, y value)`` of ``pg`` on ``ax`` (a panel of
    :func:`draw_phase_diagram` with the same ``xlog``/``ylog``).  ``patch_kw`` go to
    ``matplotlib.patches.Rectangle``, e.g. ``fill=False, lw=3, ec=palette.INK`` for an outline or
    ``hatch="///"`` for a hatched cell; a ``label`` goes to the first cell only."""
    from matplotlib.patches import Rectangle

    xe, ye = _edges(pg.xs, xlog), _edges(pg.ys, ylog)
    patch_kw.setdefault("fill", False)
    for xv, yv in cells:
        if xv not in pg.xs or yv not in pg.ys:
            raise ValueError(f"outline_cells: ({xv!r}, {yv!r}) is not a cell of the grid {pg.xs} x {pg.ys}")
        ix, iy = pg.xs.index(xv), pg.ys.index(yv)
        ax.add_patch(Rectangle((xe[ix], ye[iy]), xe[ix + 1] - xe[ix], ye[iy + 1] - ye[iy], **patch_kw))
        patch_kw.pop("label", None)  # one legend entry for all the cells


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def draw_t1_ratio(tables: Mapping[str, SweepTable], *, band: Tuple[float, float] = (0.5, 2.0),
                  n_epochs: Optional[int] = None):
    """Measured ``T1`` over the formula of Lemma 5.2 (single) or 5.4 (multi), one point per run,
    against the formula's value, for several labelled tables; the band marks ``band``, a dotted
    vertical line ``n_epochs`` (the steps trained) when given.  Returns the figure; draw
    under :func:`mmcl.figures.style`."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.9), sharey=True)
    markers = "osD^vP*X"
    for ax, m in zip(axes, ("single", "multi")):
        for (label, t), mk in zip(tables.items(), markers):
            rows = [r for r in t.filter(mode=m).rows if not r["diverged"] and math.isfinite(r["t1"])
                    and r["t1_formula"] > 0]
            if not rows:
                continue
            xs = [r["t1_formula"] for r in rows]
            ys = [r["t1"] / r["t1_formula"] for r in rows]
            ax.scatter(xs, ys, s=16, marker=mk, alpha=0.6, color=COLORS[m])  # one colour per mode
        ax.axhline(1.0, color=COLORS["reference"], lw=1)
        ax.axhspan(band[0], band[1], color=COLORS["reference"], alpha=0.08, lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"$T_1$ of the lemma (steps)")
        ax.set_title(f"{m}-modal (Lemma {'5.2' if m == 'single' else '5.4'})")
    lo, hi = axes[0].get_ylim()  # shared y: readable ticks inside the data's range (set_yticks would widen it)
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50) if lo <= t <= hi]
    axes[0].set_yticks(ticks)
    axes[0].set_yticklabels([f"{t:g}" for t in ticks])
    for ax in axes:
        ax.yaxis.set_minor_locator(NullLocator())
    axes[0].set_ylabel(r"measured $T_1$ / formula")
    if len(tables) > 1:  # the sweeps by their marker
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=COLORS["reference"], marker=mk, lw=0) for _, mk in zip(tables, markers)]
        fig.legend(handles, list(tables), loc="outside lower center", ncol=4)
    if n_epochs is not None:
        for ax in axes:
            ax.axvline(n_epochs, color=COLORS["reference"], ls=":", lw=1.2)
    return fig
