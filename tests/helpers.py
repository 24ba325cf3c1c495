"""Helpers shared by the library's tests (imported as `from helpers import ...`; fixtures live in conftest.py)."""
import torch

import mmcl


def f64(cfg, seed=0):
    """A float64 draw of ``cfg``."""
    return mmcl.sample_synthetic(cfg, seed, dtype=torch.float64)


def gd_and_recursion(cfg, mode, seed=3):
    """``cfg``, its float64 draw, and gradient descent (weights and loss derivatives kept) next to the
    recursion (loss derivatives kept) on it: the pair the proof-diagnostic tests compare."""
    data = f64(cfg, seed)
    gd = mmcl.simulate(cfg, data, mode, "gd", keep_weights=True, record_derivatives=True)
    rec = mmcl.simulate(cfg, data, mode, "recursion", record_derivatives=True)
    return cfg, data, gd, rec


def _drawn_texts(fig):
    """The texts a draw of ``fig`` actually renders (tick labels outside the view are never drawn,
    so ``findobj`` would over-count): the Agg renderer's ``draw_text`` calls, recorded."""
    renderer = fig.canvas.get_renderer()
    drawn, draw_text = [], renderer.draw_text

    def record(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if mtext is not None and s.strip() and all(mtext is not t for t in drawn):
            drawn.append(mtext)
        return draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = record
    try:
        fig.draw(renderer)
    finally:
        del renderer.draw_text
    return renderer, drawn


def _lines_outside_their_axes(fig):
    """Lines in data coordinates with a finite point beyond their axes' limits (a point a log axis
    cannot show, <= 0, is masked by matplotlib, not drawn outside)."""
    import numpy as np

    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        tol_x, tol_y = 1e-9 * (x1 - x0), 1e-9 * (y1 - y0)
        for line in ax.lines:
            if not line.get_visible() or line.get_transform() != ax.transData:
                continue
            x = np.asarray(line.get_xdata(), dtype=float)
            y = np.asarray(line.get_ydata(), dtype=float)
            if x.shape != y.shape:
                continue
            shown = np.isfinite(x) & np.isfinite(y)
            if ax.get_xscale() == "log":
                shown &= x > 0
            if ax.get_yscale() == "log":
                shown &= y > 0
            beyond = shown & ((x < x0 - tol_x) | (x > x1 + tol_x) | (y < y0 - tol_y) | (y > y1 + tol_y))
            if beyond.any():
                out.append(f"line {line.get_label()!r} of panel {ax.get_title()[:30]!r}: "
                           f"{int(beyond.sum())} points beyond the axes")
    return out


def text_problems(fig):
    """What a slide would show broken: a drawn text reaching past the figure's edge, two drawn
    texts of the figure overlapping (by more than a pixel each way), a line leaving its axes."""
    import itertools

    renderer, texts = _drawn_texts(fig)
    edge = fig.bbox
    boxes = [(t, t.get_window_extent(renderer)) for t in texts]
    boxes = [(t, b) for t, b in boxes if b.width > 0 and b.height > 0]
    found = [f"text {t.get_text()[:40]!r} cut off at the figure's edge" for t, b in boxes
             if b.x0 < edge.x0 - 1 or b.y0 < edge.y0 - 1 or b.x1 > edge.x1 + 1 or b.y1 > edge.y1 + 1]
    for (s, a), (t, b) in itertools.combinations(boxes, 2):
        w = min(a.x1, b.x1) - max(a.x0, b.x0)
        h = min(a.y1, b.y1) - max(a.y0, b.y0)
        if w > 1 and h > 1:
            found.append(f"texts {s.get_text()[:30]!r} and {t.get_text()[:30]!r} overlap")
    return found + _lines_outside_their_axes(fig)
