"""Batched parameter sweeps over the synthetic model, and the phase diagrams drawn from them.

The paper (Sec. 6) shows one setting.  :func:`sweep` runs a grid of settings x seeds x modes on
top of :func:`mmcl.dynamics.engines.simulate` and returns a tidy :class:`SweepTable`, one row per run:

* the grid is a dict from parameter names to lists of values; its cartesian product is run.  A
  name is a :class:`~mmcl.model.config.SyntheticConfig` field or one of the *derived* parameters of
  :data:`DERIVED` (``snr``, ``n_snr2``, ``c_mu``, ``nu_ratio``, ``neg_frac``, ``dim``,
  ``view_noise_scale``), which set config fields from the others (e.g. ``c_mu`` sets
  ``mu_tilde_norm = c_mu * mu_norm``), so that ``C_mu`` or ``n SNR^2`` can be held fixed while
  ``n`` or ``d`` move;
* runs whose tensors have equal shapes (``n, d, d~, m, M, n_epochs, n_test, n_heldout``) are
  grouped, and each group is cut into batches that :func:`mmcl.dynamics.engines.simulate` runs as *one* tensor
  computation with a leading batch dimension (``cfg`` may differ per batch element in everything
  that is not a shape);
* every run is cached on disk (:func:`mmcl.cache.load_or_compute`) under a hash of its full
  configuration, seed, mode, engine, precision and the code version, so a rerun is instant and a
  changed parameter reruns only the runs it changes;
* a grid is validated completely (names, empty lists, values the config rejects) before any
  run starts; errors name the parameter;
* ``client=`` (a ``dask.distributed.Client``, optional extra ``mmcl[dask]``) submits the batches
  to a cluster instead of running them here.

Draws.  Every run uses exactly the draw ``sample_synthetic(cfg, seed)`` (a test checks this bit
for bit), but draws are made by rescaling one *unit* draw per shape and seed
(:func:`make_draw`): every random tensor of the data model is a standard normal times a scale
(``xi = sigma_xi * g``, ``W0 = sigma0 * g``, ...), and the hard negatives for ``M`` are the first
``M`` of those for ``n/2``.  Sampling is the most expensive part of a small run, and a sweep over
``mu_norm``, ``sigma_eps``, ``tau``, ``C_mu``, ... then samples once per seed.

The rebuttal's "view of higher SNR".  ``view_noise_scale`` (lambda) gives single-modal learning a
positive whose noise patch is shrunk, ``x+ = [y mu, lambda (xi + eps)]``: its SNR is that of
``x`` divided by lambda.  ``lambda = 1`` is the paper's augmentation (Eq. 5); ``lambda < 1`` is a
partly denoised view (its noise patch shrunk towards zero, as a denoiser would), ``lambda = 0`` a
view with its noise removed.  It needs no change of the
dynamics: the positive's noise patch is ``xi + eps``, so the view is the draw with
``eps' = lambda (xi + eps) - xi`` (:func:`denoised_view`).  Multi-modal runs never use ``eps``.

Table columns: the grid's parameters, ``mode``, ``seed``, the derived ``snr``, ``n_snr2`` and
``c_mu`` of each run's config, then the results at the last step: ``loss`` (training loss,
Eq. 6 or 9), ``acc_<protocol>`` (OOD accuracy of :func:`mmcl.downstream.evaluation.evaluate_all`),
``max_gamma`` (``max_r gamma_r``), ``max_rho`` (``max_{r,i} rho_{r,i}``), with
``score_init=True`` also ``acc_<protocol>_init`` (the initial, untrained features), ``t1``
(:func:`mmcl.proofs.predictions.measured_t1`, first step at which stage 1 has ended, ``nan`` if never),
``t1_formula`` (:func:`mmcl.proofs.predictions.t1_formula`, Lemma 5.2 or 5.4) and ``diverged``.
"""
from __future__ import annotations

import collections
import csv
import dataclasses
import itertools
import json
import math
import numbers
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import torch

from mmcl._utils import resolve_device, resolve_dtype
from mmcl.cache import load_or_compute
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import OODData, SyntheticData, sample_ood, sample_synthetic
from mmcl.model.decomposition import decompose
from mmcl.dynamics.trajectory import ENGINES, MODES, DivergenceError
from mmcl.dynamics.engines import _batched, simulate
from mmcl.downstream.evaluation import PROTOCOLS, evaluate_all
from mmcl.proofs.predictions import measured_t1, t1_formula

__all__ = ["DERIVED", "SweepConfig", "SweepTable", "PhaseGrid", "sweep", "expand_grid", "make_draw",
           "denoised_view", "engine_agreement", "phase_grid", "plot_phase_diagram", "outline_cells", "plot_t1_ratio",
           "mu_norm_for_snr", "snr_on_curve", "gap_closed", "add_parser", "run"]

#: The derived grid parameters, name -> what it sets (applied after the config fields of the point).
DERIVED = {
    "snr": "mu_norm = snr * sigma_xi * sqrt(d)  (SNR of Sec. 3)",
    "n_snr2": "mu_norm = sqrt(n_snr2 / n) * sigma_xi * sqrt(d)  (holds n SNR^2, Assumption 4.1(6))",
    "c_mu": "mu_tilde_norm = c_mu * mu_norm  (C_mu of Assumption 4.1(7))",
    "neg_frac": "M = ceil(neg_frac * n/2), 0 < neg_frac <= 1  (hard negatives per anchor; needs balanced=True)",
    "view_noise_scale": "single-modal positive x+ = [y mu, lambda (xi + eps)], lambda >= 0 (the rebuttal's view)",
    "dim": "d = d_tilde = dim  (the patch dimension of both modalities at once)",
    "nu_ratio": "nu_norm = nu_ratio * mu_norm  (OOD signal relative to the training signal; the paper's is 2/5)",
}
_CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(SyntheticConfig))
_SHAPE_FIELDS = ("n", "d", "d_tilde", "m", "M", "n_epochs", "n_test", "n_heldout", "balanced")
_CACHE_NAMESPACE = "sweep"
_CACHE_FORMAT = 1  # bump when the cached per-run record changes


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------
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
    cache: bool = True  # read and write the on-disk cache (MMCL_CACHE=0 also disables it)
    progress: bool = True  # a tqdm progress bar over the runs

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"SweepConfig.engine={self.engine!r} is unknown; valid: {', '.join(map(repr, ENGINES))}")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"SweepConfig.dtype={self.dtype!r} is not supported; valid: 'float32', 'float64'")
        if self.device is not None:
            resolve_device(self.device)  # raises ValueError naming the device
        if self.batch_size is not None and (isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int)
                                            or self.batch_size < 1):
            raise ValueError(f"SweepConfig.batch_size must be a positive integer or None, got {self.batch_size!r}")
        if isinstance(self.memory_mb, bool) or not isinstance(self.memory_mb, numbers.Real) or \
                not (0 < self.memory_mb < float("inf")):
            raise ValueError(f"SweepConfig.memory_mb must be a finite number > 0, got {self.memory_mb!r}")
        protocols = tuple(self.protocols) if not isinstance(self.protocols, str) else (self.protocols,)
        bad = [p for p in protocols if p not in PROTOCOLS]
        if not protocols or bad:
            raise ValueError(f"SweepConfig.protocols={self.protocols!r}: need one or more of {PROTOCOLS}")
        object.__setattr__(self, "protocols", protocols)
        if isinstance(self.t1_level, bool) or not isinstance(self.t1_level, numbers.Real) or \
                not (0 < self.t1_level < float("inf")):
            raise ValueError(f"SweepConfig.t1_level must be a finite number > 0, got {self.t1_level!r}")
        if isinstance(self.record_every, bool) or not isinstance(self.record_every, int) or self.record_every < 1:
            raise ValueError(f"SweepConfig.record_every must be a positive integer, got {self.record_every!r}")
        for name in ("cache", "progress", "score_init"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"SweepConfig.{name} must be True or False, got {getattr(self, name)!r}")


# --------------------------------------------------------------------------------------------
# The tidy table
# --------------------------------------------------------------------------------------------
class SweepTable:
    """Rows of a sweep: a list of dicts with the same keys (``columns``), one per run.

    ``configs`` holds the :class:`~mmcl.model.config.SyntheticConfig` of every row (not written to CSV);
    ``grid_keys`` the grid's parameter names; ``meta`` how the sweep ran (engine, dtype, seeds,
    the base config, the number of runs computed and read from the cache, the wall time).
    """

    def __init__(self, rows: List[dict], columns: Sequence[str], configs: Sequence[SyntheticConfig] = (),
                 grid_keys: Sequence[str] = (), meta: Optional[dict] = None):
        self.rows = list(rows)
        self.columns = list(columns)
        self.configs = list(configs) if configs else [None] * len(self.rows)
        self.grid_keys = list(grid_keys)
        self.meta = dict(meta or {})
        if len(self.configs) != len(self.rows):
            raise ValueError(f"SweepTable: {len(self.configs)} configs for {len(self.rows)} rows")

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i: int) -> dict:
        return self.rows[i]

    def __repr__(self) -> str:
        keys = ", ".join(f"{k}: {len(self.unique(k))}" for k in self.grid_keys)
        return f"SweepTable({len(self)} rows; grid {{{keys}}}; columns {self.columns})"

    def _check(self, name: str) -> None:
        if name not in self.columns:
            raise ValueError(f"SweepTable has no column {name!r}; columns: {self.columns}")

    def column(self, name: str) -> list:
        """The values of one column, in row order."""
        self._check(name)
        return [r[name] for r in self.rows]

    def unique(self, name: str) -> list:
        """The distinct values of a column, sorted."""
        self._check(name)
        return sorted(set(self.column(name)))

    def filter(self, predicate: Optional[Callable[[dict], bool]] = None, **equals) -> "SweepTable":
        """Rows where ``predicate(row)`` is true and every ``column == value`` of ``equals`` holds."""
        for k in equals:
            self._check(k)
        keep = [i for i, r in enumerate(self.rows)
                if all(_same(r[k], v) for k, v in equals.items()) and (predicate is None or predicate(r))]
        return SweepTable([self.rows[i] for i in keep], self.columns, [self.configs[i] for i in keep],
                          self.grid_keys, self.meta)

    def mean(self, value: str, by: Sequence[str]) -> List[dict]:
        """Mean, standard deviation and count of ``value`` over the rows of each distinct ``by``
        tuple (diverged runs and NaN values are left out of the mean, counted in ``n_nan``)."""
        self._check(value)
        for k in by:
            self._check(k)
        groups: Dict[tuple, list] = collections.OrderedDict()
        for r in self.rows:
            groups.setdefault(tuple(r[k] for k in by), []).append(r[value])
        out = []
        for key, vals in groups.items():
            good = [float(v) for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
            m = sum(good) / len(good) if good else float("nan")
            sd = (sum((v - m) ** 2 for v in good) / len(good)) ** 0.5 if good else float("nan")
            out.append({**dict(zip(by, key)), "mean": m, "sd": sd, "count": len(good), "n_nan": len(vals) - len(good)})
        return out

    def to_csv(self, path) -> Path:
        """Write the rows as CSV (header = ``columns``); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns)
            w.writeheader()
            for r in self.rows:
                w.writerow({k: _csv_value(r[k]) for k in self.columns})
        return path

    def to_parquet(self, path) -> Path:
        """Write the rows as Parquet (needs ``pyarrow``); ``meta`` goes into the file's metadata."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - pyarrow is present in the dev environment
            raise ValueError("to_parquet needs pyarrow (pip install pyarrow); use to_csv instead") from exc
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([{k: r[k] for k in self.columns} for r in self.rows])
        table = table.replace_schema_metadata({"mmcl.sweep": json.dumps(self.meta, default=str)})
        pq.write_table(table, path)
        return path

    @staticmethod
    def concat(tables: Sequence["SweepTable"]) -> "SweepTable":
        """Rows of several tables, one after the other; the columns are the union (first seen
        first), and a row lacks a column (value ``None``) where its table had no such column."""
        tables = list(tables)
        if not tables:
            raise ValueError("SweepTable.concat needs at least one table")
        cols: List[str] = []
        for t in tables:
            cols += [c for c in t.columns if c not in cols]
        keys: List[str] = []
        for t in tables:
            keys += [k for k in t.grid_keys if k not in keys]
        rows = [{c: r.get(c) for c in cols} for t in tables for r in t.rows]
        return SweepTable(rows, cols, [c for t in tables for c in t.configs], keys, tables[0].meta)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, numbers.Real) and not isinstance(b, bool):
        return math.isclose(a, float(b), rel_tol=1e-12, abs_tol=0.0) or a == b
    return a == b


def _csv_value(v):
    if isinstance(v, float):
        return repr(v)  # round-trips exactly; nan -> 'nan'
    return v


# --------------------------------------------------------------------------------------------
# Grids: validation and expansion
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Run:
    """One run: the grid point as given, its config, the view's lambda, seed and mode."""

    point: Tuple[Tuple[str, Any], ...]
    cfg: SyntheticConfig
    view: float
    seed: int
    mode: str


def _as_values(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise ValueError(f"grid[{name!r}] must be a list of values, got {values!r}")
    vals = []
    for v in values:
        if hasattr(v, "item") and not isinstance(v, (list, tuple)):
            v = v.item()  # numpy / torch scalars -> Python numbers
        vals.append(v)
    if not vals:
        raise ValueError(f"grid[{name!r}] is empty: give at least one value")
    seen = []
    for v in vals:
        if any(_same(v, s) and type(v) is type(s) for s in seen):
            raise ValueError(f"grid[{name!r}] repeats the value {v!r}")
        seen.append(v)
    return vals


def _check_derived_value(name: str, v) -> None:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
        raise ValueError(f"grid[{name!r}] value {v!r} must be a finite number")
    if name == "neg_frac":
        if not 0 < v <= 1:
            raise ValueError(f"grid['neg_frac'] value {v!r} is outside the valid range 0 < neg_frac <= 1")
    elif name == "view_noise_scale":
        if v < 0:
            raise ValueError(f"grid['view_noise_scale'] value {v!r} is outside the valid range lambda >= 0")
    elif name == "dim":
        if not isinstance(v, int) or v < 2:
            raise ValueError(f"grid['dim'] value {v!r} must be an integer >= 2")
    elif not v > 0:
        raise ValueError(f"grid[{name!r}] value {v!r} is outside the valid range {name} > 0")


def _point_config(base: SyntheticConfig, point: Mapping[str, Any]) -> Tuple[SyntheticConfig, float]:
    """The config and view lambda of one grid point: its config fields first, then the derived
    parameters of :data:`DERIVED`, which read the fields they depend on (``n``, ``d``,
    ``sigma_xi``) from the point or ``base``.  Errors name the point and the parameter."""
    fields_ = {k: v for k, v in point.items() if k in _CONFIG_FIELDS}
    if "dim" in point:
        fields_["d"] = fields_["d_tilde"] = point["dim"]
    hint = ""
    if "neg_frac" in point:
        fields_["M"] = 1  # a placeholder that always fits; neg_frac sets M below
    elif "M" not in fields_ and "n" in fields_:
        hint = f" (the base config's M={base.M} must fit every n; put 'M' or 'neg_frac' in the grid)"
    try:
        cfg = base.replace(**fields_)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"grid point {dict(point)}: {exc}{hint}") from exc
    changes: Dict[str, Any] = {}
    if "neg_frac" in point:
        if not cfg.balanced:
            raise ValueError(f"grid point {dict(point)}: neg_frac needs balanced=True")
        changes["M"] = max(1, math.ceil(point["neg_frac"] * (cfg.n // 2) - 1e-9))
    if "snr" in point:
        changes["mu_norm"] = mu_norm_for_snr(point["snr"], cfg.d, cfg.sigma_xi)
    if "n_snr2" in point:
        changes["mu_norm"] = mu_norm_for_snr(snr_on_curve(cfg.n, point["n_snr2"]), cfg.d, cfg.sigma_xi)
    if "c_mu" in point:
        changes["mu_tilde_norm"] = point["c_mu"] * changes.get("mu_norm", cfg.mu_norm)
    if "nu_ratio" in point:
        changes["nu_norm"] = point["nu_ratio"] * changes.get("mu_norm", cfg.mu_norm)
    try:
        cfg = cfg.replace(**changes)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"grid point {dict(point)}: {exc}") from exc
    return cfg, float(point.get("view_noise_scale", 1.0))


def _check_seeds(seeds) -> List[int]:
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds must be a list of non-negative integers, got {seeds!r}")
    out = []
    for s in seeds:
        if hasattr(s, "item"):
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise ValueError(f"seeds must be non-negative integers, got {s!r}")
        if s in out:
            raise ValueError(f"seeds repeats {s}")
        out.append(s)
    if not out:
        raise ValueError("seeds is empty: give at least one seed")
    return out


def _check_modes(mode) -> List[str]:
    modes = [mode] if isinstance(mode, str) else list(mode)
    if not modes:
        raise ValueError("mode is empty: give 'single', 'multi' or both")
    for m in modes:
        if m not in MODES:
            raise ValueError(f"mode={m!r} is unknown; valid: {', '.join(map(repr, MODES))}")
    if len(set(modes)) != len(modes):
        raise ValueError(f"mode repeats a value: {modes}")
    return modes


def expand_grid(grid: Mapping[str, Sequence], seeds: Iterable[int] = (0,), mode="single",
                base: Optional[SyntheticConfig] = None) -> List[_Run]:
    """Validate ``grid`` completely and expand it into runs (grid points x modes x seeds).

    Raises ValueError naming the parameter for an unknown name, an empty or non-list value, a
    repeated value, a value the config rejects, or two parameters that set the same field
    (``snr``/``n_snr2``/``mu_norm``; ``c_mu``/``mu_tilde_norm``; ``neg_frac``/``M``).  Nothing runs.
    """
    base = SyntheticConfig() if base is None else base
    if not isinstance(base, SyntheticConfig):
        raise ValueError(f"base must be a SyntheticConfig, got {type(base).__name__}")
    if not isinstance(grid, Mapping):
        raise ValueError(f"grid must be a dict from parameter names to lists of values, got {type(grid).__name__}")
    valid = set(_CONFIG_FIELDS) | set(DERIVED)
    for name in grid:
        if name not in valid:
            raise ValueError(f"grid parameter {name!r} is unknown; valid: SyntheticConfig fields "
                             f"{sorted(_CONFIG_FIELDS)} or derived {sorted(DERIVED)}")
    for group in (("snr", "n_snr2", "mu_norm"), ("c_mu", "mu_tilde_norm"), ("neg_frac", "M"), ("dim", "d", "d_tilde"),
                  ("nu_ratio", "nu_norm")):
        both = [g for g in group if g in grid]
        if len(both) > 1:
            raise ValueError(f"grid parameters {both} set the same field; keep one of them")
    values = {name: _as_values(name, vals) for name, vals in grid.items()}
    for name, vals in values.items():
        if name in DERIVED:
            for v in vals:
                _check_derived_value(name, v)
    seeds = _check_seeds(seeds)
    modes = _check_modes(mode)
    names = list(values)
    runs = []
    for combo in itertools.product(*(values[n] for n in names)):
        point = tuple(zip(names, combo))
        cfg, view = _point_config(base, dict(point))
        if not cfg.balanced:  # the label pool of an unbalanced draw is checked per seed, before anything runs
            tiny = cfg.replace(d=2, d_tilde=2, m=1, n_test=1, n_heldout=1)
            for s in seeds:
                try:
                    sample_synthetic(tiny, s, dtype=torch.float64, with_ood=False)
                except ValueError as exc:
                    raise ValueError(f"grid point {dict(point)}, seed {s}: {exc}") from exc
        for m in modes:
            for s in seeds:
                runs.append(_Run(point=point, cfg=cfg, view=view, seed=s, mode=m))
    return runs


# --------------------------------------------------------------------------------------------
# Draws: rescaled unit draws and the denoised view
# --------------------------------------------------------------------------------------------
def _unit_config(cfg: SyntheticConfig) -> SyntheticConfig:
    """``cfg`` with every scale 1 and, when balanced, all ``n/2`` hard negatives per anchor
    (the negatives for ``M`` are the first ``M`` of those: the same random keys, sorted)."""
    return cfg.replace(mu_norm=1.0, mu_tilde_norm=1.0, nu_norm=1.0, sigma_xi=1.0, sigma_xi_tilde=1.0,
                       sigma_eps=1.0, sigma0=1.0, M=cfg.n // 2 if cfg.balanced else cfg.M)


class _UnitDraws:
    """Small LRU caches of unit draws -- the training part keyed by its shape and seed, the OOD
    part (which depends on ``d``, ``n_test``, ``n_heldout`` and the seed only) apart, so runs that
    differ in ``n`` share it -- and of their rescaled, cast tensors: most runs of a sweep share
    ``sigma_xi``, ``nu_norm``, ..., so each scaled tensor is made once per seed."""

    def __init__(self, capacity_mb: float = 384.0):
        self.capacity = capacity_mb * 2 ** 20  # bytes of float64 unit draws kept (their memos come on top)
        self._lru: "collections.OrderedDict[tuple, tuple]" = collections.OrderedDict()  # key -> (value, memo, bytes)

    def _get(self, key: tuple, make):
        if key in self._lru:
            self._lru.move_to_end(key)
        else:
            value = make()
            size = sum(t.numel() * t.element_size() for t in vars(value).values() if isinstance(t, torch.Tensor))
            self._lru[key] = (value, {}, size)
            while len(self._lru) > 1 and sum(e[2] for e in self._lru.values()) > self.capacity:
                self._lru.popitem(last=False)  # the least recently used; never the entry just made
        value, memo, _ = self._lru[key]
        return value, memo

    def train(self, cfg: SyntheticConfig, seed: int) -> Tuple[SyntheticData, dict]:
        """The unit training draw (no OOD set) of ``cfg``'s shape and ``seed``, and its memo."""
        key = ("train", cfg.n, cfg.d, cfg.d_tilde, cfg.m, cfg.balanced, None if cfg.balanced else cfg.M, seed)
        return self._get(key,
                         lambda: sample_synthetic(_unit_config(cfg), seed, dtype=torch.float64, with_ood=False))

    def ood(self, cfg: SyntheticConfig, seed: int) -> Tuple[OODData, dict]:
        """The unit OOD set of ``cfg``'s ``d``, ``n_test``, ``n_heldout`` and ``seed``, and its memo."""
        key = ("ood", cfg.d, cfg.n_test, cfg.n_heldout, seed)
        return self._get(key, lambda: sample_ood(_unit_config(cfg), seed, dtype=torch.float64))


def denoised_view(data: SyntheticData, view_noise_scale: float) -> SyntheticData:
    """The draw with the single-modal positive ``x+ = [y mu, lambda (xi + eps)]`` (lambda =
    ``view_noise_scale``; the paper's Eq. (5) is lambda = 1), by setting
    ``eps' = lambda (xi + eps) - xi`` (shapes unchanged, batched or not).  Everything else,
    including the multi-modal tensors, is the same object."""
    lam = view_noise_scale
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not (0 <= lam < float("inf")):
        raise ValueError(f"view_noise_scale must be a finite number >= 0, got {lam!r}")
    if lam == 1:
        return data
    return dataclasses.replace(data, eps=lam * (data.xi + data.eps) - data.xi)


def make_draw(cfg: SyntheticConfig, seed: int, view_noise_scale: float = 1.0, *, dtype=torch.float32,
              device="cpu", units: Optional[_UnitDraws] = None) -> SyntheticData:
    """The draw ``sample_synthetic(cfg, seed)`` (identical bit for bit), made by rescaling a unit
    draw of the same shape and seed (see the module docstring), with the denoised view of
    ``view_noise_scale`` applied.  ``units`` reuses unit draws across calls."""
    units = units if units is not None else _UnitDraws()
    u, memo = units.train(cfg, seed)
    uo, memo_ood = units.ood(cfg, seed)
    dtype, device = resolve_dtype(dtype), resolve_device(device)

    def scaled(name: str, t: torch.Tensor, scale: Optional[float], store=memo) -> torch.Tensor:
        # float64 product first, then the cast: the operations of sample_synthetic, so the same bits
        key = (name, scale, dtype, device)
        if key not in store:
            store[key] = (t if scale is None else t * scale).to(device=device, dtype=dtype)
        return store[key]

    ood = OODData(nu=scaled("nu", uo.nu, cfg.nu_norm, memo_ood), y_fit=scaled("y_fit", uo.y_fit, None, memo_ood),
                  zeta_fit=scaled("zeta_fit", uo.zeta_fit, cfg.sigma_xi, memo_ood),
                  y_eval=scaled("y_eval", uo.y_eval, None, memo_ood),
                  zeta_eval=scaled("zeta_eval", uo.zeta_eval, cfg.sigma_xi, memo_ood))
    if view_noise_scale == 1:
        eps = scaled("eps", u.eps, cfg.sigma_eps)
    else:  # the view is formed in float64 from the scaled draw, then cast
        xi64, eps64 = u.xi * cfg.sigma_xi, u.eps * cfg.sigma_eps
        view = denoised_view(dataclasses.replace(u, xi=xi64, eps=eps64, ood=None), view_noise_scale)
        eps = view.eps.to(device=device, dtype=dtype)
    neg = memo.get(("negatives", cfg.M, device))
    if neg is None:
        neg = memo[("negatives", cfg.M, device)] = u.negatives[:, :cfg.M].contiguous().to(device)
    return SyntheticData(y=scaled("y", u.y, None), mu=scaled("mu", u.mu, cfg.mu_norm),
                         xi=scaled("xi", u.xi, cfg.sigma_xi), eps=eps, negatives=neg,
                         W0=scaled("W0", u.W0, cfg.sigma0), mu_tilde=scaled("mu_tilde", u.mu_tilde, cfg.mu_tilde_norm),
                         xi_tilde=scaled("xi_tilde", u.xi_tilde, cfg.sigma_xi_tilde),
                         W0_tilde=scaled("W0_tilde", u.W0_tilde, cfg.sigma0), ood=ood)


# --------------------------------------------------------------------------------------------
# Running batches
# --------------------------------------------------------------------------------------------
def _canonical(run: _Run) -> Tuple[SyntheticConfig, float]:
    """The config and lambda with the parameters the mode never reads set to fixed values, so
    that runs differing only in those are computed once: a multi-modal run never reads ``eps``
    (``sigma_eps``, the view); a single-modal run never reads ``mu~``, ``xi~`` beyond their shape
    (``mu_tilde_norm``, ``sigma_xi_tilde``; ``d_tilde`` stays: it moves the random stream)."""
    ref = SyntheticConfig()
    if run.mode == "multi":
        return run.cfg.replace(sigma_eps=ref.sigma_eps), 1.0
    return run.cfg.replace(mu_tilde_norm=ref.mu_tilde_norm, sigma_xi_tilde=ref.sigma_xi_tilde), run.view


def _cache_params(cfg: SyntheticConfig, view: float, seed: int, mode: str, opts: SweepConfig) -> dict:
    return {"format": _CACHE_FORMAT, "cfg": dataclasses.asdict(cfg), "view_noise_scale": view, "seed": seed,
            "mode": mode, "engine": opts.engine, "dtype": opts.dtype, "protocols": list(opts.protocols),
            "t1_level": opts.t1_level, "record_every": opts.record_every, "score_init": opts.score_init}


@dataclass
class _BatchSpec:
    """A batch of runs of equal shapes and mode, everything a worker needs (picklable)."""

    mode: str
    cfgs: List[SyntheticConfig]
    views: List[float]
    seeds: List[int]
    opts: SweepConfig
    device: str


def _bytes_per_run(cfg: SyntheticConfig, mode: str, opts: SweepConfig) -> int:
    """Rough memory of one run in a batch: data, recorded coefficients, evaluation temporaries."""
    size = 8 if opts.dtype == "float64" else 4
    ood = (cfg.n_test + cfg.n_heldout) * cfg.d
    data = 2 * cfg.n * cfg.d + cfg.m * cfg.d + ood + cfg.n * cfg.n
    traj = 2 * (cfg.m + cfg.m * cfg.n) + cfg.n_epochs + cfg.n_epochs // opts.record_every + 2  # 2 states, loss, T1 stat
    if mode == "multi":
        data += cfg.n * cfg.d_tilde + cfg.m * cfg.d_tilde
        traj *= 2
    # the engines' stacked patches and basis (mmcl.dynamics.kernel._Network)
    data += (3 * cfg.n + 3) * cfg.d if mode == "single" else (2 * cfg.n + 3) * (cfg.d + cfg.d_tilde)
    if opts.engine != "recursion":  # the weights and their temporaries
        data += 4 * cfg.m * max(cfg.d, cfg.d_tilde)
    evals = (cfg.n_test + cfg.n_heldout) * (cfg.n + 2 * cfg.m) * 2
    return size * (data + traj + evals + 8 * cfg.n * cfg.n)


def _metrics_nan(opts: SweepConfig, t1f: float) -> dict:
    out = {"loss": float("nan")}
    out.update({f"acc_{p}": float("nan") for p in opts.protocols})
    if opts.score_init:
        out.update({f"acc_{p}_init": float("nan") for p in opts.protocols})
    out.update({"max_gamma": float("nan"), "max_rho": float("nan"), "t1": float("nan"), "t1_formula": t1f,
                "diverged": True})
    return out


def _pad_draw(data: SyntheticData, d: int, d_tilde: int) -> SyntheticData:
    """The draw embedded in ``R^d`` (and ``R^d~``) by appending zero coordinates to every vector.
    Every inner product, hence every step of the recursion and every embedding, is unchanged."""
    def pad(t, size):
        return t if t is None or t.shape[-1] == size else torch.nn.functional.pad(t, (0, size - t.shape[-1]))

    ood = data.ood
    if ood is not None:
        ood = dataclasses.replace(ood, nu=pad(ood.nu, d), zeta_fit=pad(ood.zeta_fit, d),
                                  zeta_eval=pad(ood.zeta_eval, d))
    return dataclasses.replace(data, mu=pad(data.mu, d), xi=pad(data.xi, d), eps=pad(data.eps, d),
                               W0=pad(data.W0, d), mu_tilde=pad(data.mu_tilde, d_tilde),
                               xi_tilde=pad(data.xi_tilde, d_tilde), W0_tilde=pad(data.W0_tilde, d_tilde), ood=ood)


_SCORED = ("W0", "mu", "xi", "y")  # the draw's tensors that scoring a run reads (mmcl.downstream.evaluation)


def _run_batch(spec: _BatchSpec, units: Optional[_UnitDraws] = None) -> List[dict]:
    """Run one batch as one tensor computation; returns one metrics dict per run.

    Runs of the recursion engine may differ in ``d``/``d~``: the recursion only sees inner
    products, so the draws are zero-padded to the largest dimension for :func:`simulate`, and
    each dimension's runs are then scored on their own, unpadded OOD sets.  A batch in which some
    run diverges is split in halves until the diverging runs are alone."""
    units = units if units is not None else _UnitDraws()
    opts = spec.opts
    dtype = resolve_dtype(opts.dtype)
    draws = [make_draw(c, s, v, dtype=dtype, device=spec.device, units=units)
             for c, s, v in zip(spec.cfgs, spec.seeds, spec.views)]
    # the OOD sets are not stacked: runs that share one (same seed and scales) are scored against
    # it by broadcasting, below; a single-modal run never reads the second modality
    oods = [dr.ood for dr in draws]
    draws = [dr._drop(ood=True, tilde=spec.mode == "single") for dr in draws]
    dims = [(c.d, c.d_tilde) for c in spec.cfgs]
    if len(set(dims)) == 1:
        data = SyntheticData.stack(draws)
        sim_cfgs = spec.cfgs
    else:
        if opts.engine != "recursion":
            raise ValueError("only the recursion engine batches runs of different dimensions")  # pragma: no cover
        dmax, dtmax = max(d for d, _ in dims), max(dt for _, dt in dims)
        data = SyntheticData.stack([_pad_draw(dr, dmax, dtmax) for dr in draws])
        sim_cfgs = [c.replace(d=dmax, d_tilde=dtmax) for c in spec.cfgs]
    try:
        # the states at the first and last steps only (scored, and max gamma/rho); T1 from its statistic
        # at every record_every-th step, without writing the states in between
        T = spec.cfgs[0].n_epochs
        traj = simulate(sim_cfgs, data, spec.mode, opts.engine, record_every=max(1, T), t1_every=opts.record_every)
    except DivergenceError:
        if len(spec.cfgs) == 1:
            return [_metrics_nan(opts, t1_formula(spec.cfgs[0], spec.mode))]
        h = len(spec.cfgs) // 2
        del data, draws
        halves = [dataclasses.replace(spec, cfgs=spec.cfgs[a:b], views=spec.views[a:b], seeds=spec.seeds[a:b])
                  for a, b in ((0, h), (h, len(spec.cfgs)))]
        return _run_batch(halves[0], units) + _run_batch(halves[1], units)
    B = len(spec.cfgs)
    t1 = measured_t1(traj, opts.t1_level).cpu()
    loss = traj.loss[:, -1].double().cpu()
    max_gamma = traj.gamma[:, -1].amax(-1).double().cpu()
    max_rho = traj.rho[:, -1].amax((-1, -2)).double().cpu()
    accs = {p: torch.empty(B, dtype=torch.float64) for p in opts.protocols}
    accs0 = {p: torch.empty(B, dtype=torch.float64) for p in opts.protocols}
    K = traj.steps.shape[0]
    scored = [0, K - 1] if opts.score_init else [K - 1]  # the last step (and the first, if asked)
    # scored on each dimension's own, unpadded draws, against each OOD set shared by broadcasting
    groups: Dict[tuple, List[int]] = collections.OrderedDict()
    for b in range(B):
        groups.setdefault((dims[b],) + tuple(id(getattr(oods[b], f.name)) for f in dataclasses.fields(OODData)),
                          []).append(b)
    tsel = torch.tensor(scored, device=traj.gamma.device)
    gamma_s, rho_s = traj.gamma.index_select(1, tsel), traj.rho.index_select(1, tsel)  # the scored steps only
    for idx in groups.values():
        if len(idx) > 1 and all(getattr(draws[b], f) is getattr(draws[idx[0]], f) for b in idx for f in _SCORED):
            # the runs share one draw (same seed and scales: make_draw's memo returns the same tensors),
            # so their embeddings share its products with the inputs: scored against it once, by
            # broadcasting (mmcl.dynamics.forward.preactivations), instead of forming each run's W
            sub = _batched(draws[idx[0]])
        elif len(idx) == B and len(set(dims)) == 1:
            sub = data
        else:
            sub = SyntheticData.stack([draws[b] for b in idx])
        sel = torch.tensor(idx, device=traj.gamma.device)
        part = dataclasses.replace(traj, steps=traj.steps[tsel], gamma=gamma_s[sel], rho=rho_s[sel],
                                   gamma_tilde=None, rho_tilde=None)
        shared = OODData(**{f.name: getattr(oods[idx[0]], f.name)[None] for f in dataclasses.fields(OODData)})
        for p, ev in evaluate_all(part, sub, opts.protocols, ood=shared).items():
            accs[p][idx] = ev.accuracy[:, -1].double().cpu()
            accs0[p][idx] = ev.accuracy[:, 0].double().cpu()
    out = []
    for b, cfg in enumerate(spec.cfgs):
        rec = {"loss": float(loss[b])}
        rec.update({f"acc_{p}": float(a[b]) for p, a in accs.items()})
        if opts.score_init:
            rec.update({f"acc_{p}_init": float(a[b]) for p, a in accs0.items()})
        rec.update({"max_gamma": float(max_gamma[b]), "max_rho": float(max_rho[b]), "t1": float(t1[b]),
                    "t1_formula": t1_formula(cfg, spec.mode), "diverged": False})
        out.append(rec)
    return out


class _Missing(Exception):
    """Raised inside load_or_compute to learn that an entry is not cached (nothing is stored)."""


def _lookup(params: dict):
    def compute():
        raise _Missing

    try:
        return load_or_compute(_CACHE_NAMESPACE, params, compute)
    except _Missing:
        return None


def _store(params: dict, value: dict) -> None:
    load_or_compute(_CACHE_NAMESPACE, params, lambda: value)


def sweep(grid: Mapping[str, Sequence], seeds: Iterable[int] = (0, 1, 2), mode="single",
          engine: str = "recursion", *, device=None, base: Optional[SyntheticConfig] = None,
          client=None, **options) -> SweepTable:
    """Run every configuration of ``grid`` x ``seeds`` x ``mode`` as batched tensor computations
    and return a :class:`SweepTable` (columns: see the module docstring).

    ``grid``: dict from :class:`~mmcl.model.config.SyntheticConfig` field names or :data:`DERIVED` names to lists of
    values; the other fields come from ``base`` (default: the Figure 1 setting).  ``mode``:
    ``"single"``, ``"multi"`` or a list of both.  ``engine`` and ``device`` as in
    :func:`mmcl.dynamics.engines.simulate`; ``options`` are the other fields of :class:`SweepConfig` (``dtype``,
    ``batch_size``, ``memory_mb``, ``protocols``, ``t1_level``, ``record_every``, ``score_init``,
    ``cache``, ``progress``).  ``client``: a ``dask.distributed.Client``; each batch then becomes one task
    on its cluster (the cache is read and written here).  The grid is validated before any run
    starts.  Every run computes ``n_epochs`` steps of GD on the loss of its mode and scores its
    last step; runs that diverge are kept as rows with ``diverged=True`` and NaN results.
    """
    t_start = time.perf_counter()
    opts = SweepConfig(engine=engine, device=None if device is None else str(device), **options)
    base = SyntheticConfig() if base is None else base
    seeds, modes = _check_seeds(seeds), _check_modes(mode)  # once: they may be iterators
    runs = expand_grid(grid, seeds, modes, base)
    if client is not None and not (hasattr(client, "submit") and hasattr(client, "gather")):
        raise ValueError(f"client must be a dask.distributed.Client (with submit/gather), got {type(client).__name__}")
    dev = str(resolve_device(opts.device)) if opts.device is not None else "cpu"

    # unique computations (the mode's unused parameters canonicalised), cache look-ups
    canon = [_canonical(r) for r in runs]
    keys = [(c, v, r.seed, r.mode) for r, (c, v) in zip(runs, canon)]
    results: Dict[tuple, dict] = {}
    todo: "collections.OrderedDict[tuple, None]" = collections.OrderedDict()
    for k in keys:
        if k in results or k in todo:
            continue
        hit = _lookup(_cache_params(*k, opts)) if opts.cache else None
        if hit is not None:
            results[k] = hit
        else:
            todo[k] = None
    n_cached = len(results)

    # group by shape and mode; within a group order by seed (unit draws are shared per seed)
    # (the recursion batches different d, d~ together: see _run_batch)
    shape_fields = [f for f in _SHAPE_FIELDS if opts.engine != "recursion" or f not in ("d", "d_tilde")]
    groups: Dict[tuple, List[tuple]] = collections.OrderedDict()
    for k in todo:
        cfg, _, seed, m = k
        groups.setdefault((m,) + tuple(getattr(cfg, f) for f in shape_fields), []).append(k)
    specs = []
    for gkey, ks in sorted(groups.items(), key=lambda kv: (repr(kv[0][1:]), kv[0][0])):
        ks.sort(key=lambda k: (k[2], k[0].d, k[0].d_tilde))
        widest = max((k[0] for k in ks), key=lambda c: c.d + c.d_tilde)
        bs = opts.batch_size
        if bs is None:  # as many as fit memory_mb, in batches of equal size (a last batch of a few runs
            # costs nearly as much as a full one: a step's time is mostly per batch at small sizes)
            bs = max(1, min(256, int(opts.memory_mb * 2 ** 20 // _bytes_per_run(widest, gkey[0], opts))))
            bs = -(-len(ks) // -(-len(ks) // bs))
        for i in range(0, len(ks), bs):
            chunk = ks[i:i + bs]
            specs.append((chunk, _BatchSpec(mode=gkey[0], cfgs=[k[0] for k in chunk], views=[k[1] for k in chunk],
                                            seeds=[k[2] for k in chunk], opts=opts, device=dev)))

    bar = None
    if opts.progress and todo:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(todo), desc="sweep", unit="run")

    def _finish(chunk, recs):
        for k, rec in zip(chunk, recs):
            results[k] = rec
            if opts.cache:
                _store(_cache_params(*k, opts), rec)
        if bar is not None:
            bar.update(len(chunk))

    if client is None:
        units = _UnitDraws()
        for chunk, spec in specs:
            _finish(chunk, _run_batch(spec, units))
    elif specs:
        try:
            from distributed import as_completed
        except ImportError as exc:  # pragma: no cover - distributed is installed with the dask extra
            raise ValueError("client= needs dask.distributed: pip install 'mmcl[dask]'") from exc
        futures = {client.submit(_run_batch, spec, pure=False): chunk for chunk, spec in specs}
        for fut in as_completed(list(futures)):
            _finish(futures[fut], fut.result())
    if bar is not None:
        bar.close()

    # the tidy table, in the grid's order
    grid_keys = list(grid)
    metric_cols = (["loss"] + [f"acc_{p}" for p in opts.protocols]
                   + ([f"acc_{p}_init" for p in opts.protocols] if opts.score_init else [])
                   + ["max_gamma", "max_rho", "t1", "t1_formula", "diverged"])
    derived_cols = [c for c in ("snr", "n_snr2", "c_mu") if c not in grid_keys]
    columns = grid_keys + ["mode", "seed"] + derived_cols + metric_cols
    rows = []
    for r, k in zip(runs, keys):
        row = {"mode": r.mode, "seed": r.seed, "snr": r.cfg.snr, "n_snr2": r.cfg.n_snr2,
               "c_mu": r.cfg.c_mu}
        row.update(dict(r.point))  # a grid value wins over its recomputed derived value
        rec = results[k]
        row.update({c: rec[c] for c in metric_cols})
        rows.append({c: row[c] for c in columns})
    meta = {"engine": opts.engine, "dtype": opts.dtype, "device": dev, "seeds": seeds, "modes": modes,
            "protocols": list(opts.protocols), "base": dataclasses.asdict(base),
            "grid": {k: list(dict.fromkeys(dict(r.point)[k] for r in runs)) for k in grid_keys},
            "runs": len(runs), "computed": len(todo), "cached": n_cached, "batches": len(specs),
            "wall_s": time.perf_counter() - t_start}
    return SweepTable(rows, columns, [r.cfg for r in runs], grid_keys, meta)


# --------------------------------------------------------------------------------------------
# Checks and small formulas used by the book
# --------------------------------------------------------------------------------------------
def engine_agreement(grid: Mapping[str, Sequence], seeds: Iterable[int] = (0,), mode=("single", "multi"), *,
                     base: Optional[SyntheticConfig] = None, n_samples: int = 4, rng_seed: int = 0,
                     engines: Tuple[str, str] = ("recursion", "gd"), device=None) -> List[dict]:
    """Run ``n_samples`` runs drawn at random (``rng_seed``) from the grid with both ``engines``
    in float64 and return, per run, the largest absolute differences of the loss and of the
    coefficients ``gamma``, ``rho`` (and ``gamma~``, ``rho~`` in multi mode) over all steps,
    ``decomposed``: the difference between the first engine's final coefficients and those solved
    from the second engine's final weights by Eq. (11) (:func:`mmcl.model.decomposition.decompose`; NaN when the
    second engine keeps no weights or ``n + 1 > d``), their maximum ``max_abs_diff``, and
    ``scale``, the largest coefficient.  Cached like the sweeps."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    for e in engines:
        if e not in ENGINES:
            raise ValueError(f"engine {e!r} is unknown; valid: {', '.join(map(repr, ENGINES))}")
    runs = expand_grid(grid, seeds, mode, base)
    picked = random.Random(rng_seed).sample(runs, min(n_samples, len(runs)))
    dev = resolve_device(device) if device is not None else torch.device("cpu")
    params = {"format": _CACHE_FORMAT, "engines": list(engines), "device": dev.type,
              "runs": [[dataclasses.asdict(r.cfg), r.view, r.seed, r.mode] for r in picked]}
    return load_or_compute("sweep-agreement", params, lambda: _agreement(picked, engines, dev))


def _agreement(picked: List[_Run], engines: Tuple[str, str], dev: torch.device) -> List[dict]:
    out = []
    for r in picked:
        data = make_draw(r.cfg, r.seed, r.view, dtype=torch.float64, device=dev)
        a, b = (simulate(r.cfg, data, r.mode, e) for e in engines)
        row = dict(r.point)
        row.update({"mode": r.mode, "seed": r.seed,
                    "loss": float((a.loss - b.loss).abs().max()),
                    "gamma": float((a.gamma - b.gamma).abs().max()), "rho": float((a.rho - b.rho).abs().max()),
                    "scale": float(max(a.gamma.abs().max(), a.rho.abs().max()))})
        if r.mode == "multi":
            row["gamma"] = max(row["gamma"], float((a.gamma_tilde - b.gamma_tilde).abs().max()))
            row["rho"] = max(row["rho"], float((a.rho_tilde - b.rho_tilde).abs().max()))
        row["decomposed"] = float("nan")
        if b.W is not None and r.cfg.n + 1 <= r.cfg.d:
            # independent of the engines' bookkeeping: Eq. (11) solved for the final weights
            dec = decompose(b.W - data.W0, data.mu, data.xi)
            row["decomposed"] = max(float((dec.gamma - a.gamma[-1]).abs().max()),
                                    float((dec.rho - a.rho[-1]).abs().max()))
        row["max_abs_diff"] = max(v for v in (row["loss"], row["gamma"], row["rho"], row["decomposed"])
                                  if math.isfinite(v))
        out.append(row)
    return out


def mu_norm_for_snr(snr: float, d: int, sigma_xi: float = 1.0) -> float:
    """``||mu||`` giving ``SNR = ||mu|| / (sigma_xi sqrt(d))`` (Sec. 3)."""
    return snr * sigma_xi * math.sqrt(d)


def snr_on_curve(n, n_snr2: float):
    """The SNR on the curve ``n SNR^2 = n_snr2`` of Assumption 4.1(6), for a number or a list of ``n``."""
    if isinstance(n, numbers.Real):
        return math.sqrt(n_snr2 / n)
    return [math.sqrt(n_snr2 / v) for v in n]


def gap_closed(acc_view: float, acc_single: float, acc_multi: float) -> float:
    """Fraction of the multi- vs single-modal accuracy gap that a view closes:
    ``(acc_view - acc_single) / (acc_multi - acc_single)`` (1 = closed, 0 = no help)."""
    den = acc_multi - acc_single
    if den == 0:
        return float("nan")
    return (acc_view - acc_single) / den


# --------------------------------------------------------------------------------------------
# Phase diagrams
# --------------------------------------------------------------------------------------------
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


def _edges(vals, log: bool):
    import numpy as np

    v = np.asarray(vals, dtype=float)
    if len(v) == 1:
        return np.array([v[0] / 1.5, v[0] * 1.5]) if log else np.array([v[0] - 0.5, v[0] + 0.5])
    if log:
        lv = np.log(v)
        mid = (lv[1:] + lv[:-1]) / 2
        return np.exp(np.concatenate([[lv[0] - (mid[0] - lv[0])], mid, [lv[-1] + (lv[-1] - mid[-1])]]))
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])


def plot_phase_diagram(pg: PhaseGrid, *, xlabel: Optional[str] = None, ylabel: Optional[str] = None,
                       xlog: bool = False, ylog: bool = False, title: Optional[str] = None,
                       annotate: str = "gap", acc_range=(0.5, 1.0), gap_max: Optional[float] = None):
    """Three heatmaps side by side: single-modal, multi-modal (shared colour scale ``acc_range``)
    and the gap multi - single (diverging scale, blue = multi better).  Cells are centred on the
    grid values (log-spaced edges with ``xlog``/``ylog``), so curves can be drawn over them in
    data coordinates.  ``annotate``: write the cell values on the ``"gap"`` panel (default),
    on ``"all"`` panels or on ``"none"`` (grids over 80 cells are never annotated).  Returns
    ``(fig, axes)``; draw under :func:`mmcl.figures.style`."""
    import matplotlib.pyplot as plt
    import numpy as np

    if annotate not in ("gap", "all", "none"):
        raise ValueError(f"annotate={annotate!r} is unknown; valid: 'gap', 'all', 'none'")

    xe, ye = _edges(pg.xs, xlog), _edges(pg.ys, ylog)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), sharey=True)
    g = np.nan_to_num(pg.gap, nan=0.0)
    gm = gap_max if gap_max is not None else max(0.05, float(np.abs(g).max()))
    panels = [("single-modal", pg.single, "viridis", acc_range), ("multi-modal", pg.multi, "viridis", acc_range),
              ("gap: multi $-$ single", pg.gap, "RdBu", (-gm, gm))]
    for ax, (name, arr, cmap, (lo, hi)) in zip(axes, panels):
        mesh = ax.pcolormesh(xe, ye, np.ma.masked_invalid(arr), cmap=cmap, vmin=lo, vmax=hi, shading="flat")
        if xlog:
            ax.set_xscale("log")
        if ylog:
            ax.set_yscale("log")
        ax.set_xticks(pg.xs)
        ax.set_xticklabels([_fmt(v) for v in pg.xs])
        ax.set_yticks(pg.ys)
        ax.set_yticklabels([_fmt(v) for v in pg.ys])
        ax.minorticks_off()
        ax.grid(False)
        ax.set_xlim(xe[0], xe[-1])  # the mesh fills the axes; curves drawn later do not widen them
        ax.set_ylim(ye[0], ye[-1])
        ax.set_autoscale_on(False)
        ax.set_title(name)
        ax.set_xlabel(xlabel or pg.x)
        cb = fig.colorbar(mesh, ax=ax, shrink=0.9)
        cb.set_label(("OOD accuracy" if pg.value.startswith("acc") else pg.value) if name != panels[2][0]
                     else "accuracy gap")
        if (annotate == "all" or (annotate == "gap" and name == panels[2][0])) and arr.size <= 80:
            for iy, yv in enumerate(pg.ys):
                for ix, xv in enumerate(pg.xs):
                    val = arr[iy, ix]
                    if np.isfinite(val):
                        xc = math.sqrt(xe[ix] * xe[ix + 1]) if xlog else (xe[ix] + xe[ix + 1]) / 2
                        yc = math.sqrt(ye[iy] * ye[iy + 1]) if ylog else (ye[iy] + ye[iy + 1]) / 2
                        dark = (val - lo) / (hi - lo) < 0.35 if cmap == "viridis" else abs(val) > 0.6 * gm
                        ax.text(xc, yc, f"{val:.2f}", ha="center", va="center", fontsize=9,
                                color="white" if dark else "black")
    axes[0].set_ylabel(ylabel or pg.y)
    if title:
        fig.suptitle(title)
    return fig, axes


def outline_cells(ax, pg: PhaseGrid, cells: Iterable[Tuple[Any, Any]], *, xlog: bool = False, ylog: bool = False,
                  **patch_kw) -> None:
    """Draw a rectangle over each cell ``(x value, y value)`` of ``pg`` on ``ax`` (a panel of
    :func:`plot_phase_diagram` with the same ``xlog``/``ylog``).  ``patch_kw`` go to
    ``matplotlib.patches.Rectangle``, e.g. ``fill=False, lw=3, ec="black"`` for an outline or
    ``hatch="///"`` for a hatched cell; a ``label`` goes to the first cell only."""
    from matplotlib.patches import Rectangle

    xe, ye = _edges(pg.xs, xlog), _edges(pg.ys, ylog)
    patch_kw.setdefault("fill", False)
    for xv, yv in cells:
        if xv not in pg.xs or yv not in pg.ys:
            raise ValueError(f"outline_cells: ({xv!r}, {yv!r}) is not a cell of the grid {pg.xs} x {pg.ys}")
        ix, iy = pg.xs.index(xv), pg.ys.index(yv)
        ax.add_patch(Rectangle((xe[ix], ye[iy]), xe[ix + 1] - xe[ix], ye[iy + 1] - ye[iy], **patch_kw))
        patch_kw.pop("label", None)  # one legend entry for all the cells


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def plot_t1_ratio(tables: Mapping[str, SweepTable], *, band: Tuple[float, float] = (0.5, 2.0)):
    """Measured ``T1`` over the formula of Lemma 5.2 (single) or 5.4 (multi), one point per run,
    against the formula's value, for several labelled tables; the band marks ``band``.  Returns
    ``(fig, axes)``."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator
    from mmcl.figures import COLORS

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.4), sharey=True)
    markers = "osD^vP*X"
    for ax, m in zip(axes, ("single", "multi")):
        for (label, t), mk in zip(tables.items(), markers):
            rows = [r for r in t.filter(mode=m).rows if not r["diverged"] and math.isfinite(r["t1"])
                    and r["t1_formula"] > 0]
            if not rows:
                continue
            xs = [r["t1_formula"] for r in rows]
            ys = [r["t1"] / r["t1_formula"] for r in rows]
            ax.scatter(xs, ys, s=22, marker=mk, alpha=0.6, label=label, color=COLORS[m] if len(tables) == 1 else None)
        ax.axhline(1.0, color=COLORS["reference"], lw=1)
        ax.axhspan(band[0], band[1], color=COLORS["reference"], alpha=0.08, lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"$T_1$ of the lemma (steps)")
        ax.set_title(f"{m}-modal (Lemma {'5.2' if m == 'single' else '5.4'})")
    lo, hi = axes[0].get_ylim()  # shared y: readable ticks inside the data's range (set_yticks would widen it)
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50) if lo <= t <= hi]
    axes[0].set_yticks(ticks)
    axes[0].set_yticklabels([f"{t:g}" for t in ticks])
    for ax in axes:
        ax.yaxis.set_minor_locator(NullLocator())
    axes[0].set_ylabel(r"measured $T_1$ / formula")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig, axes


# --------------------------------------------------------------------------------------------
# Command line: mmcl sweep CONFIG.toml --out DIR
# --------------------------------------------------------------------------------------------
def add_parser(sub) -> None:
    """Register ``mmcl sweep`` on the subparsers ``sub`` of ``mmcl.cli.build_parser``."""
    p = sub.add_parser("sweep", help="run a parameter sweep from a TOML file",
                       description="Run a grid of synthetic experiments (see examples/sweep.toml) and write "
                                   "the table (CSV, and Parquet where pyarrow is installed) and the figures.")
    p.add_argument("config", help="TOML file with [sweep], [base], [grid] and optional [[plot]] tables")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.add_argument("--device", default=None, help="cpu or cuda (overrides the file)")
    p.add_argument("--format", default="csv", choices=("csv", "parquet", "both"), help="table format (default csv)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the on-disk cache")
    p.add_argument("--scheduler", default=None,
                   help="address of a dask.distributed scheduler to run the batches on (needs mmcl[dask])")
    p.set_defaults(func=run)


_SWEEP_KEYS = {"seeds", "modes", "engine", "dtype", "device", "batch_size", "memory_mb", "protocols", "t1_level",
               "record_every", "score_init"}
_PLOT_KEYS = {"x", "y", "value", "name", "xlog", "ylog", "title", "filter"}


def load_toml(path) -> dict:
    """Read and check a sweep file (unknown tables or keys are errors)."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    path = Path(path)
    if not path.exists():
        raise ValueError(f"sweep file {str(path)!r} does not exist")
    try:
        spec = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"sweep file {str(path)!r} is not valid TOML: {exc}") from exc
    unknown = set(spec) - {"sweep", "base", "grid", "plot"}
    if unknown:
        raise ValueError(f"sweep file: unknown table(s) {sorted(unknown)}; valid: [sweep], [base], [grid], [[plot]]")
    bad = set(spec.get("sweep", {})) - _SWEEP_KEYS
    if bad:
        raise ValueError(f"sweep file: unknown key(s) {sorted(bad)} in [sweep]; valid: {sorted(_SWEEP_KEYS)}")
    if "grid" not in spec or not spec["grid"]:
        raise ValueError("sweep file: a [grid] table with at least one parameter is required")
    for pl in spec.get("plot", []):
        bad = set(pl) - _PLOT_KEYS
        if bad or "x" not in pl or "y" not in pl:
            raise ValueError(f"sweep file: each [[plot]] needs x and y and takes only {sorted(_PLOT_KEYS)}, got {pl}")
    return spec


def run(args) -> int:
    """``mmcl sweep``: run the file's sweep, write ``sweep.csv``/``sweep.parquet``, a phase diagram
    per ``[[plot]]`` and ``sweep-t1-ratio``, and print a summary."""
    import matplotlib

    matplotlib.use("Agg")
    from mmcl.figures import save_figure, style

    spec = load_toml(args.config)
    s = dict(spec.get("sweep", {}))
    seeds = s.pop("seeds", 3)
    seeds = range(seeds) if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
    modes = s.pop("modes", ["single", "multi"])
    engine = s.pop("engine", "recursion")
    file_device = s.pop("device", None)
    device = args.device or file_device  # the command line wins over the file
    if "protocols" in s:
        s["protocols"] = tuple(s["protocols"])
    try:
        base = SyntheticConfig().replace(**spec.get("base", {}))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"sweep file [base]: {exc}") from exc
    client = None
    if args.scheduler:
        try:
            from distributed import Client
        except ImportError as exc:
            raise ValueError("--scheduler needs dask.distributed: pip install 'mmcl[dask]'") from exc
        client = Client(args.scheduler)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = sweep(spec["grid"], seeds, modes, engine, device=device, base=base, client=client,
                  cache=not args.no_cache, progress=sys.stderr.isatty(), **s)
    written = []
    if args.format in ("csv", "both"):
        written.append(table.to_csv(out / "sweep.csv"))
    if args.format in ("parquet", "both"):
        written.append(table.to_parquet(out / "sweep.parquet"))
    import matplotlib.pyplot as plt

    for i, pl in enumerate(spec.get("plot", [])):
        t = table.filter(**pl.get("filter", {}))
        pg = phase_grid(t, pl["x"], pl["y"], pl.get("value", f"acc_{table.meta['protocols'][0]}"))
        with style():
            fig, _ = plot_phase_diagram(pg, xlog=pl.get("xlog", False), ylog=pl.get("ylog", False),
                                        title=pl.get("title"))
            written += save_figure(fig, pl.get("name", f"sweep-phase-{i + 1}"), out)
        plt.close(fig)
    with style():
        fig, _ = plot_t1_ratio({"sweep": table})
        written += save_figure(fig, "sweep-t1-ratio", out)
    plt.close(fig)
    m = table.meta
    print(f"{m['runs']} runs ({m['computed']} computed in {m['batches']} batches, {m['cached']} from the cache) "
          f"in {m['wall_s']:.1f} s")
    acc = f"acc_{m['protocols'][0]}"
    for mode in m["modes"]:
        accs = [v for v in table.filter(mode=mode).column(acc) if math.isfinite(v)]
        if accs:
            print(f"{mode:>6}: mean {acc} {sum(accs) / len(accs):.3f} over {len(accs)} runs")
    for p in written:
        print(f"wrote {p}")
    if client is not None:
        client.close()
    return 0
