"""The experiment of the chapter "Multi-modal learning" (``book/05_multimodal.md``): its sizes, its
configuration and its cached runs.  The drawings are in :mod:`mmcl.figures.multimodal`; the
diagnostics it computes are those of :mod:`mmcl.proofs.multi_stage1` (synchronisation, the end of
stage 1, the noise cases of Lemma D.9).

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`MultimodalSizes`);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`multimodal_runs` -- both recursions on the chapter's seeds and the synchronisation of the
  multi-modal one (:class:`MultimodalRuns`);
* :func:`stage1_end` -- the end of stage 1 (Lemma 5.4) of those runs;
* :func:`noise_cases` -- the noise cases of Lemma D.9 of those runs, up to ``floor(T1)``.

The run functions are cached per ``(size, device)``: the chapter and its three figures share them.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List

import torch

from mmcl.dynamics import Trajectory, simulate
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic_batch
from mmcl.proofs import multi_stage1 as sync

__all__ = ["MultimodalSizes", "BY_SIZE", "sizes", "config", "MultimodalRuns", "multimodal_runs", "stage1_end",
           "noise_cases"]


@dataclass(frozen=True)
class MultimodalSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) and, for ``"tiny"``, a
    shorter run (``n_epochs`` steps)."""

    seeds: int
    n_epochs: int = 200


#: The chapter runs 5 seeds (20 with MMCL_BOOK_FULL=1); "tiny" (for the tests) also stops after 100
#: steps (Lemma 5.4's T1 is 86).
BY_SIZE: Dict[str, MultimodalSizes] = {"tiny": MultimodalSizes(seeds=1, n_epochs=100),
                                       "default": MultimodalSizes(seeds=5), "full": MultimodalSizes(seeds=20)}


def sizes(size: str = "default") -> MultimodalSizes:
    """The :class:`MultimodalSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The chapter's configuration: the Figure 1 settings (tau = 0.1, sigma0 = 0.01, M = 45 are
    ours); ``tiny`` stops after 100 steps instead of 200."""
    return figure1_config(n_epochs=sizes(size).n_epochs)


@dataclass
class MultimodalRuns:
    """The chapter's runs: ``cfg`` (the Figure 1 settings), the ``seeds`` and their stacked ``data``
    (float64); the multi-modal recursion ``multi`` (loss derivatives recorded), the single-modal
    recursion ``single`` on the same draws, and ``syn``, the
    :func:`~mmcl.proofs.multi_stage1.synchronisation` of ``multi``."""

    cfg: SyntheticConfig
    seeds: List[int]
    data: SyntheticData
    multi: Trajectory
    single: Trajectory
    syn: sync.Synchronisation


@functools.lru_cache(maxsize=2)
def multimodal_runs(size: str = "default", device: str = "cpu") -> MultimodalRuns:
    """Both recursions at :func:`config` with the seeds of ``size`` (cached)."""
    cfg = config(size)
    seeds = list(range(sizes(size).seeds))
    data = sample_synthetic_batch(cfg, seeds, dtype=torch.float64, device=device)
    multi = simulate(cfg, data, "multi", "recursion", record_derivatives=True)
    single = simulate(cfg, data, "single", "recursion")
    return MultimodalRuns(cfg=cfg, seeds=seeds, data=data, multi=multi, single=single,
                          syn=sync.synchronisation(data, multi))


@functools.lru_cache(maxsize=2)
def stage1_end(size: str = "default", device: str = "cpu") -> sync.Stage1End:
    """:func:`mmcl.proofs.multi_stage1.stage1_end` of :func:`multimodal_runs` (cached)."""
    r = multimodal_runs(size, device)
    return sync.stage1_end(r.syn, r.multi, r.cfg)


@functools.lru_cache(maxsize=2)
def noise_cases(size: str = "default", device: str = "cpu") -> sync.NoiseCases:
    """:func:`mmcl.proofs.multi_stage1.noise_cases` of :func:`multimodal_runs` up to ``floor(T1)`` (cached)."""
    r = multimodal_runs(size, device)
    return sync.noise_cases(r.data, r.multi, r.cfg)
