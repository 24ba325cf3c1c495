"""What every chapter of the book calls first: device, scale, figure folder and display.

A chapter starts with ``env = chapter_setup()`` and shows each figure with
``env.show(fig, "fig-slug")``, which saves it through :func:`mmcl.figures.save_figure` into the
build folder (PDF, SVG, PNG) and displays it inline.  Its checks assert through ``env.claims``,
the chapter's claims register (:mod:`mmcl.booksupport.claims`).

Environment variables (documented in the README):

* ``MMCL_DEVICE`` -- ``cpu`` or ``cuda``; default: ``cuda`` where a GPU is present, else ``cpu``.
* ``MMCL_BOOK_FULL=1`` -- full-resolution simulations (more seeds, finer grids), meant for a GPU;
  chapters choose sizes with ``env.pick(default, full)``.
* ``MMCL_FIGURE_DIR`` -- where figures are written; default ``<repo>/_build/extra/figures``
  (copied into the HTML as ``figures/``), never the source tree.

Public for chapters: :func:`chapter_setup` and the claims register, and ``records`` (the records of lent
GPU machines, ``benchmarks/records/``); the Sphinx extension,
``blueprint_page`` and ``findings`` (the Blueprint page and the reading guide's table of findings
it renders) and ``notebooks`` are internal to the build and
the command line.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from mmcl._utils import default_device, repo_root, resolve_device
from mmcl.booksupport.claims import Claims
from mmcl.figures import save_figure, style

__all__ = ["BookEnv", "chapter_setup", "repo_root"]


@dataclass
class BookEnv:
    device: str
    full: bool
    figure_dir: Path
    #: The chapter's claims register (:mod:`mmcl.booksupport.claims`): every check asserts through it.
    claims: Optional[Claims] = field(default=None, repr=False)
    #: The numbers glued into the prose by :meth:`number`, by key.
    numbers: dict = field(default_factory=dict, repr=False)

    @property
    def size(self) -> str:
        """The size of :mod:`mmcl.figures.registry` that this environment runs: ``"full"`` when
        ``MMCL_BOOK_FULL=1``, else ``"default"``."""
        return "full" if self.full else "default"

    def pick(self, default, full):
        """``full`` when ``MMCL_BOOK_FULL=1``, else ``default``."""
        return full if self.full else default

    def show(self, fig, name: str):
        """Save ``fig`` as ``name.{pdf,svg,png}`` in ``figure_dir`` and display it."""
        import matplotlib.pyplot as plt

        save_figure(fig, name, self.figure_dir)
        try:
            from IPython.display import display
            with style():  # the inline image at the style's resolution, as when drawn in the cell
                display(fig)
        except ImportError:  # pragma: no cover - outside IPython nothing is displayed
            pass
        plt.close(fig)

    def number(self, key: str, value) -> float:
        """Glue a number this run computed into the chapter's prose and return it.

        The prose writes ``{glue:text}`key:.2f``` where it would have typed the digits (myst-nb's
        glue), so the page shows what this build measured (:mod:`mmcl.booksupport.numbers` finds
        numbers typed by hand instead).  Nothing is displayed in the cell."""
        import math
        import re

        if not isinstance(key, str) or not re.fullmatch(r"[a-z][a-z0-9_-]*", key):
            raise ValueError(f"key must be lower case letters, digits, '_' or '-', got {key!r}")
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"the number glued as {key!r} must be finite, got {number!r}")
        self.numbers[key] = number
        try:
            from myst_nb import glue
        except ImportError:  # pragma: no cover - the book's extra brings myst-nb
            return number
        glue(key, number, display=False)
        return number

    def __repr__(self) -> str:
        return f"BookEnv(device={self.device!r}, full={self.full}, figures -> {self.figure_dir})"


def chapter_setup(quiet: bool = False) -> BookEnv:
    """Read the environment, fix torch's threads/seeds for reproducibility, return a BookEnv."""
    import torch

    device = str(resolve_device(os.environ.get("MMCL_DEVICE") or default_device()))
    full = os.environ.get("MMCL_BOOK_FULL", "0") not in ("", "0", "false", "False")
    fig_dir = Path(os.environ.get("MMCL_FIGURE_DIR") or repo_root() / "_build" / "extra" / "figures")
    torch.manual_seed(0)
    if device == "cpu":
        # The chapters' tensors are small (m x n x n): one thread is as fast as two on an idle
        # 2-core machine and many times faster when the cores are shared
        # (benchmarks/bench_choices.py times a default recursion run both ways).
        torch.set_num_threads(1)
    env = BookEnv(device=device, full=full, figure_dir=fig_dir, claims=Claims())
    if not quiet:
        print(f"mmcl: device={device}, {'full-resolution' if full else 'default (CPU-sized)'} simulations")
    return env
