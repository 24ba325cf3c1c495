"""The house style of every figure (matplotlib style file, Okabe-Ito colours) and the save helper.

Every figure of mmcl and of the book is drawn under :func:`mmcl.figures.style` and written by
:func:`mmcl.figures.save_figure` as PDF and SVG (vector, for slides) and PNG, under a stable name, into an
output folder (the book's build folder, never the source tree).  Colours are the Okabe-Ito
palette, readable by colour-blind viewers; single-modal is always vermilion, multi-modal blue.
"""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Iterator, List

from mmcl.figures import palette

#: The house style, ``styles/mmcl.mplstyle`` beside this module, applied by :func:`mmcl.figures.style`.
#:
#: :meta hide-value:
STYLE_FILE = Path(__file__).with_name("styles") / "mmcl.mplstyle"
#: Applied on top of :data:`STYLE_FILE` inside :func:`talk`: slide-sized type and lines.
#:
#: :meta hide-value:
TALK_STYLE_FILE = Path(__file__).with_name("styles") / "talk.mplstyle"
#: The canvas of a slide figure, inches (16:9).
TALK_SIZE = (13.333, 7.5)
_TALK = [False]
FORMATS = ("pdf", "svg", "png")
# no creation dates in the PDF and SVG metadata
_METADATA = {"pdf": {"Creator": "mmcl", "CreationDate": None}, "svg": {"Creator": "mmcl", "Date": None},
             "png": {"Creator": "mmcl"}}
#: The figures' colours by role, from :mod:`mmcl.figures.palette` (the one palette): the two
#: modes, the paper's grey for references, and the signal's green as an accent.
COLORS = {"single": palette.SINGLE, "multi": palette.MULTI, "reference": palette.PAPER_GREY,
          "accent": palette.SIGNAL}
#: The Blueprint's colours (``mmcl.proofs.blueprint``), from :mod:`mmcl.figures.palette`: the fill
#: of a statement by its proof audit, the border ``(colour, width, dash)`` by its measured verdict.
_NAME = re.compile(r"^[a-z0-9][a-z0-9\-]*$")

__all__ = ["STYLE_FILE", "TALK_STYLE_FILE", "TALK_SIZE", "FORMATS", "COLORS", "talk", "style", "save_figure", "figure_dir",
           "legend_below", "headline", "claim_of", "keep_inside"]


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Context manager applying mmcl's matplotlib style file (and, inside ``talk()``, the slide
    style on top of it)."""
    import matplotlib.pyplot as plt

    files = [str(STYLE_FILE)] + ([str(TALK_STYLE_FILE)] if _TALK[0] else [])
    with plt.style.context(files):
        yield


@contextlib.contextmanager
def talk() -> Iterator[None]:
    """Within this context every figure is drawn with slide-sized type (:data:`TALK_STYLE_FILE`),
    whatever drawing function makes it; :func:`mmcl.figures.registry.make` with ``style="talk"``
    then sets the canvas to 16:9 (:data:`TALK_SIZE`)."""
    old = _TALK[0]
    _TALK[0] = True
    try:
        yield
    finally:
        _TALK[0] = old


def legend_below(fig, axes, ncol: int = 2) -> None:
    """One legend for ``fig``, under its panels (never over the data): every distinct label of
    ``axes``, in the order first met, in ``ncol`` columns at the style's small size.  Needs a
    figure with ``layout="constrained"``, which makes room for it."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize="small", frameon=False)


def headline(fig, claim: str) -> None:
    """Title ``fig`` with its ``claim``, a sentence a slide can carry (a takeaway figure states
    its point, it does not describe its axes): the figure's suptitle, at the style's figure title
    size, above the panels' own titles."""
    if not isinstance(claim, str) or not claim.strip():
        raise ValueError(f"claim={claim!r} must be a non-empty sentence, e.g. 'Multi-modal learns the signal'")
    fig.suptitle(claim)


def claim_of(fig) -> str:
    """The title a figure states its point in: its suptitle (:func:`headline`), else the title of
    its one titled panel; ``""`` when it has neither (a figure that only describes its axes)."""
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    if sup.strip():
        return sup
    titled = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title().strip()]
    return titled[0] if len(titled) == 1 else ""


def _clip_segment(p, q, lo, hi):
    """The part of segment ``p``-``q`` inside the box ``lo``-``hi`` (Liang-Barsky), or None."""
    t0, t1 = 0.0, 1.0
    for k in range(2):
        d = q[k] - p[k]
        for num, den in ((p[k] - lo[k], -d), (hi[k] - p[k], d)):
            if den == 0:
                if num < 0:
                    return None
                continue
            t = num / den
            if den < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
    if t0 > t1:
        return None
    return [p[k] + t0 * (q[k] - p[k]) for k in range(2)], [p[k] + t1 * (q[k] - p[k]) for k in range(2)]


def keep_inside(*axes) -> None:
    """Cut every line of ``axes`` drawn in data coordinates at the axes' current limits, so that
    no line runs past them (a curve that leaves the view ends at its edge; a marker beyond it is
    dropped).  Call it once the limits are set.  Log axes are cut in log space."""
    import numpy as np

    for ax in axes:
        logs = [ax.get_xscale() == "log", ax.get_yscale() == "log"]
        lims = [sorted(ax.get_xlim()), sorted(ax.get_ylim())]
        lo = [np.log10(v) if lg else v for v, lg in zip((lims[0][0], lims[1][0]), logs)]
        hi = [np.log10(v) if lg else v for v, lg in zip((lims[0][1], lims[1][1]), logs)]
        for line in ax.lines:
            if line.get_transform() != ax.transData:
                continue
            xy = [np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)]
            if xy[0].shape != xy[1].shape or xy[0].ndim != 1:
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                pts = np.stack([np.where(v > 0, np.log10(v), np.nan) if lg else v for v, lg in zip(xy, logs)], 1)
            ok = np.isfinite(pts).all(1)
            inside = ok & (pts >= np.array(lo)).all(1) & (pts <= np.array(hi)).all(1)
            if inside[ok].all():
                continue
            if line.get_marker() not in ("None", "", " ", None) or len(pts) < 2:
                out = np.where(inside[:, None], pts, np.nan)
            else:
                rows, last = [], None
                for p, q, good in zip(pts[:-1], pts[1:], ok[:-1] & ok[1:]):
                    seg = _clip_segment(list(p), list(q), lo, hi) if good else None
                    if seg is None:
                        last = None
                        continue
                    a, b = seg
                    if last is None or not np.allclose(last, a):
                        if rows:
                            rows.append([np.nan, np.nan])
                        rows.append(a)
                    rows.append(b)
                    last = b
                out = np.array(rows, dtype=float).reshape(-1, 2)
            cols = [10 ** out[:, k] if logs[k] else out[:, k] for k in range(2)]
            line.set_data(cols[0], cols[1])


def figure_dir(default: str = "_build/figures") -> Path:
    """Where figures go: ``$MMCL_FIGURE_DIR`` if set, else ``default`` (relative to the current
    directory).  The book sets the variable to its build folder."""
    return Path(os.environ.get("MMCL_FIGURE_DIR", default))


def save_figure(fig, name: str, out_dir=None, formats=FORMATS) -> List[Path]:
    """Write ``fig`` as ``out_dir/name.{pdf,svg,png}`` and return the paths.

    ``name`` is a stable slug such as ``fig1-dynamics`` (lower case, digits and hyphens).
    ``out_dir`` defaults to :func:`figure_dir`.  Saved under :func:`style`, so that its ``savefig``
    settings (200 dpi PNGs) hold also for a figure drawn by a function that has returned.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name={name!r} must be a slug of lower-case letters, digits and hyphens, e.g. 'fig1-dynamics'")
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"formats {bad} are not supported; valid: {FORMATS}")
    out = Path(out_dir) if out_dir is not None else figure_dir()
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    engine = fig.get_layout_engine()
    try:
        with style():  # the savefig.* settings (dpi, padding) apply wherever the figure was drawn
            for fmt in formats:
                p = out / f"{name}.{fmt}"
                fig.savefig(p, format=fmt, metadata=_METADATA[fmt])
                paths.append(p)
                # the layout (in figure coordinates) is the same in every format: solve it once
                fig.set_layout_engine("none")
    finally:
        fig.set_layout_engine(engine)
    return paths
