"""The experiment of the chapter :ref:`ColoredMNIST <sec-coloredmnist>`: its sizes, the data
and training settings of each size, and its cached runs.  The drawings are in
:mod:`mmcl.figures.coloredmnist`; the package re-exports every name of ``__all__``.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`ColoredMNISTSizes`);
* :func:`data_config`, :func:`train_config` -- the
  :class:`~mmcl.experiments.coloredmnist.data.ColoredMNISTConfig` and
  :class:`~mmcl.experiments.coloredmnist.train.TrainConfig` of a size;
* :func:`samples_data` -- the ColoredMNIST of seed 0 (the chapter's first section);
* :func:`table1_result` -- :func:`~mmcl.experiments.coloredmnist.table1.run_table1` over the runs of a
  size (cached: three figures draw the same runs).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Dict, Optional, Tuple

from mmcl.experiments.coloredmnist.data import ColoredMNIST, ColoredMNISTConfig, make_colored_mnist
from mmcl.experiments.coloredmnist.runs import ABLATIONS, RUNS
from mmcl.experiments.coloredmnist.table1 import Table1Result, run_table1
from mmcl.experiments.coloredmnist.train import TrainConfig
from mmcl.experiments.sizes import pick

__all__ = ["ColoredMNISTSizes", "BY_SIZE", "sizes", "data_config", "train_config", "samples_data",
           "table1_result"]


@dataclass(frozen=True)
class ColoredMNISTSizes:
    """What a size means for this chapter: ``seeds`` (``0..seeds-1``), the ``runs`` (None: every run
    of ``RUNS`` and ``ABLATIONS``) and the departures from the default settings: ``n_images`` of
    :class:`~mmcl.experiments.coloredmnist.data.ColoredMNISTConfig` (None: every shipped digit, its
    default) and ``epochs``, ``batch_size`` of :class:`~mmcl.experiments.coloredmnist.train.TrainConfig`
    (None: its default)."""

    seeds: int
    runs: Optional[Tuple[str, ...]] = None
    n_images: Optional[int] = None
    epochs: Optional[int] = None
    batch_size: Optional[int] = None


#: ``"default"`` is what the chapter runs (1 seed, the defaults), ``"full"`` what ``MMCL_BOOK_FULL=1``
#: runs (3 seeds); ``"tiny"`` (for the tests) trains three runs, one of each method, on 400 digits
#: (320 for training) for one epoch of five steps of 64.
BY_SIZE: Dict[str, ColoredMNISTSizes] = {
    "tiny": ColoredMNISTSizes(seeds=1, runs=("multi", "single_crop_flip", "supervised"), n_images=400, epochs=1,
                              batch_size=64),
    "default": ColoredMNISTSizes(seeds=1),
    "full": ColoredMNISTSizes(seeds=3),
}


def sizes(size: str = "default") -> ColoredMNISTSizes:
    """The :class:`ColoredMNISTSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def data_config(size: str = "default") -> ColoredMNISTConfig:
    """The :class:`~mmcl.experiments.coloredmnist.data.ColoredMNISTConfig` of ``size`` (the
    defaults, except ``"tiny"``)."""
    s = sizes(size)
    return replace(ColoredMNISTConfig(), **({} if s.n_images is None else {"n_images": s.n_images}))


def train_config(size: str = "default") -> TrainConfig:
    """The :class:`~mmcl.experiments.coloredmnist.train.TrainConfig` of ``size`` (the defaults,
    except ``"tiny"``)."""
    s = sizes(size)
    changes = {k: v for k, v in (("epochs", s.epochs), ("batch_size", s.batch_size)) if v is not None}
    return replace(TrainConfig(), **changes)


@functools.lru_cache(maxsize=3)
def samples_data(size: str = "default") -> ColoredMNIST:
    """The ColoredMNIST of seed 0 at the data settings of ``size`` (the chapter's first section)."""
    return make_colored_mnist(data_config(size), seed=0)


@functools.lru_cache(maxsize=3)
def table1_result(size: str = "default", device: str = "cpu") -> Table1Result:
    """:func:`~mmcl.experiments.coloredmnist.table1.run_table1` of the runs of ``size`` (by
    default every run of ``RUNS`` and ``ABLATIONS``) at its seeds and settings, each run through the
    on-disk cache (cached here too: three figures draw the same runs)."""
    s = sizes(size)
    return run_table1(range(s.seeds), [*RUNS, *ABLATIONS] if s.runs is None else list(s.runs),
                      data_cfg=data_config(size), train_cfg=train_config(size), device=device, progress=False)
