"""The registry of every figure the book shows, under its stable name.

Each chapter's figures are drawn by the functions of one module named after the chapter's file
(:func:`modules`: ``mmcl.figures.single_stage1`` for ``book/single_stage1.md``, the chapter
"Single-modal learning, stage 1"; :func:`chapters` reads the chapters' order from ``_toc.yml``).
Such a module defines ``FIGURES``, a list of :class:`FigureSpec`; a spec's ``make(size, device)``
computes what the figure needs (through the same library functions the chapter calls) and returns
the drawn matplotlib figure.  The chapter calls the same drawing functions on the numbers it has
computed, so the figure on the page and the one made by ``mmcl figure NAME`` are the same drawing.

``size`` is one of :data:`~mmcl.experiments.sizes.SIZES`: ``"tiny"`` (seconds; the tests draw every figure so),
``"default"`` (what the book shows on a CPU) and ``"full"`` (what ``MMCL_BOOK_FULL=1`` shows).

* :func:`figures` -- every spec, by name, in book order;
* :func:`get` -- one spec (a clear error lists the valid names);
* :func:`make` / :func:`save` -- draw one figure, or draw and write it as PDF, SVG and PNG;
* :func:`registry_markdown` -- the table of the book's Figures page, generated from this registry.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from mmcl.experiments.sizes import SIZES, check_size  # the sizes a figure can be made at

__all__ = ["SIZES", "STYLES", "toc_entries", "chapters", "modules", "chapter_of", "FigureSpec", "figures", "get",
           "make", "save", "registry_markdown"]


# the book's table of contents in a checkout: _toc.yml beside the package
_TOC = Path(__file__).resolve().parents[2] / "_toc.yml"


def _toc_path(root=None) -> Path:
    if root is not None:
        return Path(root) / "_toc.yml"
    if _TOC.exists():
        return _TOC
    from mmcl._utils import repo_root  # an installed package run from a checkout

    found = repo_root() / "_toc.yml"
    if not found.exists():
        raise ValueError(f"no _toc.yml beside the mmcl package ({_TOC.parent}) or above the current "
                         f"directory: the book's chapters are listed there; run from a checkout")
    return found


def toc_entries(root=None) -> List[Tuple[str, str]]:
    """The pages ``_toc.yml`` lists, in its order, as ``(caption, path)`` pairs: ``path`` as the
    toc writes it (``"book/single_stage1"``, relative to the toc's folder) and ``caption`` the
    caption of its part (``""`` for the root page).  ``root`` is the folder of ``_toc.yml``
    (default: the checkout that holds this package, else the one above the current directory).
    Reads the toc's ``root:``, ``caption:`` and ``file:`` lines only (no YAML library needed)."""
    out, caption = [], ""
    for line in _toc_path(root).read_text().splitlines():
        m = re.match(r"^\s*(?:-\s*)?(root|caption|file):\s*(.+?)\s*$", line.split(" #", 1)[0])
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip("\"'")
        if key == "caption":
            caption = value
        else:
            out.append(("" if key == "root" else caption, value))
    return out


def chapters(root=None) -> Tuple[str, ...]:
    """The book's chapters in their order, read from ``_toc.yml``: the file stems of the pages it
    lists that are notebooks (a jupytext header with a ``kernelspec``), the reading guide first.
    The one map from a chapter to its code: chapter ``book/<stem>.md`` draws with
    ``mmcl.figures.<stem>`` and computes with ``mmcl.experiments.<stem>``."""
    toc = _toc_path(root)
    out = []
    for _, page in toc_entries(toc.parent):
        path = toc.parent / (page if page.endswith(".md") else page + ".md")
        if path.exists():
            with open(path) as fh:
                head = fh.read(600)
            if "kernelspec:" in head:
                out.append(path.stem)
    return tuple(out)


def modules(root=None) -> Tuple[str, ...]:
    """The chapters' figure modules, in the book's order: ``mmcl.figures.<stem>``."""
    return tuple(f"mmcl.figures.{c}" for c in chapters(root))


def chapter_of(module: str) -> str:
    """The chapter (file stem) whose figures ``module`` draws, e.g. ``"mmcl.figures.single_stage1"``
    -> ``"single_stage1"``; a ValueError for a module that draws no chapter's figures."""
    stem = module.rpartition(".")[2]
    if module == f"mmcl.figures.{stem}" and stem in chapters():
        return stem
    raise ValueError(f"module={module!r} is not the figure module of a chapter; valid: {', '.join(modules())}")


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its stable ``name`` (the file name, ``[a-z0-9-]``), a ``caption`` for the
    Figures page, the ``chapter`` that shows it (the file stem, e.g. ``"single_stage1"``), its
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
    for module in modules():
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
