"""Grids: validation and expansion into runs.

A grid is a dict from parameter names to lists of values;
:func:`~mmcl.experiments.sweep.expand_grid` checks it completely (names, empty lists, repeated
values, values the config rejects, two names that set the same field) and expands its cartesian
product into runs (grid points x modes x seeds).  A
name is a :class:`~mmcl.model.config.SyntheticConfig` field or one of the derived parameters of
:data:`~mmcl.experiments.sweep.grid.DERIVED`, which set config fields from the others."""
from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_int, check_number
from mmcl.dynamics.trajectory import MODES
from mmcl.experiments.sweep.formulas import mu_norm_for_snr, snr_on_curve
from mmcl.experiments.sweep.table import same_value
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import sample_synthetic

__all__ = ["DERIVED", "expand_grid", "speed_grid", "Run"]

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


@dataclass(frozen=True)
class Run:
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
        if any(same_value(v, s) and type(v) is type(s) for s in seen):
            raise ValueError(f"grid[{name!r}] repeats the value {v!r}")
        seen.append(v)
    return vals


def _check_derived_value(name: str, v) -> None:
    """One value of a derived parameter, in the range that :data:`~mmcl.experiments.sweep.grid.DERIVED`
    gives (the error names ``grid[NAME]``)."""
    label = f"grid[{name!r}] value"
    if name == "dim":
        check_int(label, v, 2)
    elif name == "neg_frac":
        check_number(label, v, 0, 1, high_closed=True)
    elif name == "view_noise_scale":
        check_number(label, v, 0, low_closed=True)
    else:
        check_number(label, v, 0)


def _point_config(base: SyntheticConfig, point: Mapping[str, Any]) -> Tuple[SyntheticConfig, float]:
    """The config and view lambda of one grid point: its config fields first, then the derived
    parameters of :data:`~mmcl.experiments.sweep.grid.DERIVED`, which read the fields they depend on
    (``n``, ``d``, ``sigma_xi``) from the point or ``base``.  Errors name the point and the parameter."""
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


def check_seeds(seeds) -> List[int]:
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds must be a list of non-negative integers, got {seeds!r}")
    out = []
    for i, s in enumerate(seeds):
        if hasattr(s, "item"):
            s = s.item()
        check_int(f"seeds[{i}]", s, 0)
        if s in out:
            raise ValueError(f"seeds repeats {s}")
        out.append(s)
    if not out:
        raise ValueError("seeds is empty: give at least one seed")
    return out


def check_modes(mode) -> List[str]:
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
                base: Optional[SyntheticConfig] = None) -> List[Run]:
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
    seeds = check_seeds(seeds)
    modes = check_modes(mode)
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
                runs.append(Run(point=point, cfg=cfg, view=view, seed=s, mode=m))
    return runs


def speed_grid(n_runs_per_mode: int, seeds: int) -> dict:
    """The grid the speed measurements time (``benchmarks/bench_sweep.py``, ``mmcl gpu-check``): about
    ``n_runs_per_mode`` paper-size runs per mode with ``seeds`` draws each, over temperatures and
    augmentation strengths."""
    per = max(1, n_runs_per_mode // seeds)
    taus = [0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3]
    eps = [0.1, 0.05, 0.2, 0.3]
    k_tau = min(len(taus), per)
    k_eps = max(1, min(len(eps), per // k_tau))
    return {"tau": taus[:k_tau], "sigma_eps": eps[:k_eps]}
