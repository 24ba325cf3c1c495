"""The experiment of the chapter :ref:`Reading guide <sec-reading-guide>`: the paper's
Figure 1 at the chapter's sizes.  The runs themselves are :func:`mmcl.experiments.figure1.run_figure1`;
the drawing is :func:`mmcl.figures.figure1.draw_figure1`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`ReadingGuideSizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`figure1_result` -- Figure 1's runs, cached (both layouts of the figure draw them);
* :func:`sharpest_finding` -- the decisive sweep of the chapter "The decisive runs"
  (:func:`~mmcl.experiments.decisive_runs.decisive_sweep`), whose errors carry the book's sharpest
  finding; the guide shows them first.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict

from mmcl.experiments.figure1 import Figure1Result, run_figure1
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.config import SyntheticConfig

__all__ = ["ReadingGuideSizes", "BY_SIZE", "sizes", "config", "figure1_result", "sharpest_finding"]


@dataclass(frozen=True)
class ReadingGuideSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) and, for ``"tiny"``, a
    shorter run (``n_epochs`` steps)."""

    seeds: int
    n_epochs: int = 200


#: The chapter shows 5 seeds (20 with MMCL_BOOK_FULL=1); "tiny" (for the tests) trains 20 epochs.
BY_SIZE: Dict[str, ReadingGuideSizes] = {"tiny": ReadingGuideSizes(seeds=1, n_epochs=20),
                                         "default": ReadingGuideSizes(seeds=5), "full": ReadingGuideSizes(seeds=20)}


def sizes(size: str = "default") -> ReadingGuideSizes:
    """The :class:`ReadingGuideSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The chapter's configuration: the Figure 1 settings (``tiny``: 20 epochs instead of 200)."""
    return figure1_config(n_epochs=sizes(size).n_epochs)


@functools.lru_cache(maxsize=2)
def figure1_result(size: str = "default", device: str = "cpu") -> Figure1Result:
    """Figure 1's runs (:func:`~mmcl.experiments.figure1.run_figure1`) at :func:`config`, with the
    seeds of ``size`` (cached: both layouts draw the same runs)."""
    return run_figure1(config(size), seeds=range(sizes(size).seeds), device=device)


def sharpest_finding(size: str = "default", device: str = "cpu"):
    """The decisive sweep at ``size`` (:func:`~mmcl.experiments.decisive_runs.decisive_sweep`: both
    modes trained where every premise but 4b holds, scored under Sec. 3.3's ``nu`` and the paper's);
    the same runs as the chapter "The decisive runs", cached on disk so the two chapters share them."""
    from mmcl.experiments.decisive_runs import decisive_sweep

    return decisive_sweep(size, device)
