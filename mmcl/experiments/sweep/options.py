"""How a sweep runs (engine, precision, device, batching, what is scored):
:class:`~mmcl.experiments.sweep.SweepConfig`.

What a sweep runs is its grid (``mmcl.experiments.sweep.grid``); the options here never change
which runs there are, only how they are computed and which columns the table gets."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from mmcl._utils import check_bool, check_int, check_number, resolve_device
from mmcl.downstream.evaluation import PROTOCOLS
from mmcl.dynamics.trajectory import ENGINES

__all__ = ["SweepConfig"]


@dataclass(frozen=True)
class SweepConfig:
    """How a sweep runs (not what it runs: that is the grid).  Validated on construction."""

    engine: str = "recursion"  # engine of mmcl.simulate; the recursion is exact and the fastest
    dtype: str = "float32"  # precision of the runs; float64 for exactness checks
    device: Optional[str] = None  # None: cpu; "cuda" runs every batch on the GPU
    batch_size: Optional[int] = None  # runs per tensor batch; None: as many as fit memory_mb
    memory_mb: float = 512.0  # memory a batch may use (data + trajectory), sets batch_size when None
    protocols: Tuple[str, ...] = PROTOCOLS  # downstream protocols scored at the last step
    t1_level: float = 1.0  # level of measured_t1: the Omega(1) of Lemmas 5.2/5.4, operationally
    record_every: int = 1  # T1 is measured every k steps (and at the last): a multiple of k
    score_init: bool = False  # also score the initial features (step 0): columns acc_<protocol>_init
    span: bool = False  # draw each run in the basis of its span (mmcl.model.span): exact in law, cost free of d
    cache: bool = True  # read and write the on-disk cache (MMCL_CACHE=0 also disables it)
    progress: bool = True  # a tqdm progress bar over the runs

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"SweepConfig.engine={self.engine!r} is unknown; valid: {', '.join(map(repr, ENGINES))}")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"SweepConfig.dtype={self.dtype!r} is not supported; valid: 'float32', 'float64'")
        if self.device is not None:
            resolve_device(self.device)  # raises ValueError naming the device
        # validated, not converted: the values given are the ones the cache key records
        check_int("SweepConfig.batch_size", self.batch_size, none=True)
        check_number("SweepConfig.memory_mb", self.memory_mb, 0)
        protocols = tuple(self.protocols) if not isinstance(self.protocols, str) else (self.protocols,)
        bad = [p for p in protocols if p not in PROTOCOLS]
        if not protocols or bad:
            raise ValueError(f"SweepConfig.protocols={self.protocols!r}: need one or more of {PROTOCOLS}")
        object.__setattr__(self, "protocols", protocols)
        check_number("SweepConfig.t1_level", self.t1_level, 0)
        check_int("SweepConfig.record_every", self.record_every)
        for name in ("cache", "progress", "score_init", "span"):
            check_bool(f"SweepConfig.{name}", getattr(self, name))
