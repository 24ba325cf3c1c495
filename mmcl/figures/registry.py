"""The registry of every figure the book shows, under its stable name.

Each chapter's figures are drawn by the functions of one module named after the chapter
(:data:`MODULES`: ``mmcl.figures.single_stage1`` for the chapter "Single-modal learning, stage 1",
...).  Such a module defines ``FIGURES``, a list of :class:`FigureSpec`; a spec's ``make(size,
device)`` computes what the figure needs (through the same library functions the chapter calls)
and returns the drawn matplotlib figure.  The chapter calls the same drawing functions on the
numbers it has computed, so the figure on the page and the one made by ``mmcl figure NAME`` are
the same drawing.

``size`` is one of :data:`~mmcl.experiments.sizes.SIZES`: ``"tiny"`` (seconds; the tests draw every figure so),
``"default"`` (what the book shows on a CPU) and ``"full"`` (what ``MMCL_BOOK_FULL=1`` shows).

* :func:`figures` -- every spec, by name, in book order;
* :func:`get` -- one spec (a clear error lists the valid names);
* :func:`make` / :func:`save` -- draw one figure, or draw and write it as PDF, SVG and PNG;
* :func:`registry_markdown` -- the table of the book's Figures page, generated from this registry.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from mmcl.experiments.sizes import SIZES, check_size  # the sizes a figure can be made at

__all__ = ["SIZES", "STYLES", "CHAPTERS", "MODULES", "slug", "chapter_of", "FigureSpec", "figures", "get", "make", "save", "registry_markdown"]


#: The book's chapters in their order (the file stems of ``book/``, as ``_toc.yml`` lists them;
#: ``tests/test_figures_registry.py`` holds the two together).  The one map from a chapter to its
#: code: chapter ``NN_<slug>`` draws with ``mmcl.figures.<slug>`` and computes with
#: ``mmcl.experiments.<slug>``.  Renumbering the book changes this tuple, the file names and the toc.
CHAPTERS = (
    "01_reading_guide",
    "02_setting",
    "03_single_stage1",
    "04_single_stage2",
    "05_multimodal",
    "06_multimodal_stage2",
    "07_downstream",
    "08_side_by_side",
    "09_assumptions",
    "10_coloredmnist",
    "11_phase_diagrams",
    "12_theorems_regime",
    "13_decisive_runs",
    "14_matrix_factorisation",
    "15_alternating_gd",
)


def slug(chapter: str) -> str:
    """``"03_single_stage1"`` -> ``"single_stage1"``: the name of the chapter's modules."""
    return chapter.split("_", 1)[1]


#: The chapters' figure modules, in the book's order (derived from :data:`CHAPTERS`).
MODULES = tuple(f"mmcl.figures.{slug(c)}" for c in CHAPTERS)


def chapter_of(module: str) -> str:
    """The chapter (file stem) whose figures ``module`` draws, e.g. ``"mmcl.figures.single_stage1"``
    -> ``"03_single_stage1"``; a ValueError for a module that draws no chapter's figures."""
    for c in CHAPTERS:
        if module == f"mmcl.figures.{slug(c)}":
            return c
    raise ValueError(f"module={module!r} is not the figure module of a chapter; valid: {', '.join(MODULES)}")


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its stable ``name`` (the file name, ``[a-z0-9-]``), a ``caption`` for the
    Figures page, the ``chapter`` that shows it (the file stem, e.g. ``"03_single_stage1"``), its
    section ``label`` there (e.g. ``"sec-single-stage1"``) and ``make(size, device)``, which returns
    a matplotlib figure.  ``shown=False`` marks a figure the chapter writes without displaying it
    (e.g. a one-row layout for slides).  ``takeaway=True`` marks the one figure that carries the
    chapter's takeaway: the chapter shows it first, under its opening summary, and it is the figure
    to put on a slide (``mmcl figure NAME --style talk``)."""

    name: str
    caption: str
    chapter: str
    label: str
    make: Callable
    shown: bool = True
    takeaway: bool = False


def _check_size(size: str) -> None:
    check_size(size)


def figures() -> Dict[str, FigureSpec]:
    """Every registered figure, by name, in the book's order (imports the chapters' modules)."""
    out: Dict[str, FigureSpec] = {}
    for module in MODULES:
        for spec in importlib.import_module(module).FIGURES:
            if spec.name in out:
                raise RuntimeError(f"figure name {spec.name!r} is registered twice ({module})")
            out[spec.name] = spec
    return out


def get(name: str) -> FigureSpec:
    """The spec registered under ``name``; a ValueError lists the valid names."""
    specs = figures()
    if name not in specs:
        raise ValueError(f"no figure is registered as {name!r}; valid: {', '.join(specs)} "
                         f"(`mmcl figure --list` shows their captions)")
    return specs[name]


#: The ways a figure can be drawn, ``"page"`` (the book's column) and ``"talk"`` (16:9, slide-sized type).
STYLES = ("page", "talk")


def make(name: str, size: str = "default", device: Optional[str] = None, style: str = "page"):
    """Draw the figure ``name`` at ``size`` (see :data:`~mmcl.experiments.sizes.SIZES`) and return it.  On the CPU the
    computation runs with one torch thread, as the chapters run (``chapter_setup``), so that the
    numbers are the chapter's; the thread count is restored afterwards.  ``style="talk"`` draws it
    for a slide: slide-sized type (``mmcl.figures.theme.talk()``) on a 16:9 canvas."""
    _check_size(size)
    if style not in STYLES:
        raise ValueError(f"style={style!r} is unknown; valid: {', '.join(map(repr, STYLES))}")
    import contextlib

    import torch

    from mmcl._utils import resolve_device
    from mmcl.figures.theme import TALK_SIZE, talk

    dev = str(resolve_device(device))
    spec = get(name)
    threads = torch.get_num_threads()
    if dev == "cpu":
        torch.set_num_threads(1)
    try:
        with talk() if style == "talk" else contextlib.nullcontext():
            fig = spec.make(size, dev)
            if style == "talk":
                fig.set_size_inches(*TALK_SIZE)
        return fig
    finally:
        torch.set_num_threads(threads)


def save(name: str, out_dir, size: str = "default", device: Optional[str] = None, style: str = "page") -> List:
    """Draw the figure ``name`` and write ``name.{pdf,svg,png}`` into ``out_dir`` (``name-talk.*``
    with ``style="talk"``); returns the paths."""
    import matplotlib.pyplot as plt

    from mmcl.figures.theme import save_figure, talk

    fig = make(name, size, device, style)
    try:
        if style == "talk":
            with talk():
                return save_figure(fig, f"{name}-talk", out_dir)
        return save_figure(fig, name, out_dir)
    finally:
        plt.close(fig)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def registry_markdown() -> str:
    """The Figures page's table (MyST markdown): name (linked to the PNG of the last build),
    caption (a chapter's takeaway figure marked **Takeaway**), the chapter that shows it, and the
    command that makes it without the book."""
    rows = ["| name | caption | chapter | command |", "|---|---|---|---|"]
    for spec in figures().values():
        caption = ("**Takeaway.** " if spec.takeaway else "") + _cell(spec.caption)
        rows.append(f"| <a href=\"../figures/{spec.name}.png\"><code>{spec.name}</code></a> | {caption} | "
                    f"{{ref}}`{spec.label}` | `mmcl figure {spec.name} --out DIR` |")
    return "\n".join(rows) + "\n"
