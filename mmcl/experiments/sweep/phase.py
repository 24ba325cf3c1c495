"""Phase-diagram data: a sweep's seed means on a two-parameter grid, per mode, and their gap
(:class:`~mmcl.experiments.sweep.PhaseGrid`, :func:`~mmcl.experiments.sweep.phase_grid`).  The
drawings are in ``mmcl.figures.phase_diagrams``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mmcl.experiments.sweep.table import SweepTable

__all__ = ["PhaseGrid", "phase_grid"]


@dataclass
class PhaseGrid:
    """Seed-averaged ``value`` on the ``x`` x ``y`` grid for each mode and their gap (multi -
    single): arrays ``(len(ys), len(xs))`` (NaN where a cell has no finite run)."""

    x: str
    y: str
    value: str
    xs: list
    ys: list
    single: Any
    multi: Any
    gap: Any
    diverged: int = 0


def phase_grid(table: SweepTable, x: str, y: str, value: str = "acc_adapt") -> PhaseGrid:
    """Average ``value`` over seeds on the ``x`` x ``y`` grid, per mode, and the gap.  Every other
    grid parameter of ``table`` must take one value (filter the table first)."""
    import numpy as np

    for c in (x, y, value, "mode"):
        table._check(c)
    others = [k for k in table.grid_keys if k not in (x, y) and len(table.unique(k)) > 1]
    if others:
        raise ValueError(f"phase_grid: grid parameters {others} take several values; filter the table to one")
    xs, ys = table.unique(x), table.unique(y)
    arrs = {}
    for m in ("single", "multi"):
        a = np.full((len(ys), len(xs)), np.nan)
        for g in table.filter(mode=m).mean(value, by=(x, y)):
            a[ys.index(g[y]), xs.index(g[x])] = g["mean"]
        arrs[m] = a
    ndiv = sum(1 for r in table.rows if r.get("diverged"))
    return PhaseGrid(x=x, y=y, value=value, xs=xs, ys=ys, single=arrs["single"], multi=arrs["multi"],
                     gap=arrs["multi"] - arrs["single"], diverged=ndiv)
