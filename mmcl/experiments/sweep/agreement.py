"""The engines checked against each other on a random sample of a grid: :func:`~mmcl.experiments.sweep.engine_agreement`.

The recursion of Lemmas 5.1/5.3 and gradient descent on the weights (Eqs. 7 and 10) are run in
float64 on the same draws; the recursion's final coefficients are also compared with those solved
from gradient descent's final weights by the decomposition of Eq. (11)."""
from __future__ import annotations

import dataclasses
import math
import random
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_bool, check_int, resolve_device
from mmcl.cache import load_or_compute
from mmcl.dynamics.engines import simulate
from mmcl.dynamics.trajectory import ENGINES
from mmcl.experiments.sweep.draws import make_draw
from mmcl.experiments.sweep.grid import Run, expand_grid
from mmcl.experiments.sweep.runner import CACHE_FORMAT
from mmcl.model.config import SyntheticConfig
from mmcl.model.decomposition import decompose

__all__ = ["engine_agreement"]


def engine_agreement(grid: Mapping[str, Sequence], seeds: Iterable[int] = (0,), mode=("single", "multi"), *,
                     base: Optional[SyntheticConfig] = None, n_samples: int = 4, rng_seed: int = 0,
                     engines: Tuple[str, str] = ("recursion", "gd"), device=None, span: bool = False) -> List[dict]:
    """Run ``n_samples`` runs drawn at random (``rng_seed``) from the grid with both ``engines``
    in float64 and return, per run, the largest absolute differences of the loss and of the
    coefficients ``gamma``, ``rho`` (and ``gamma~``, ``rho~`` in multi mode) over all steps,
    ``decomposed``: the difference between the first engine's final coefficients and those solved
    from the second engine's final weights by Eq. (11) (:func:`mmcl.model.decomposition.decompose`; NaN when the
    second engine keeps no weights or ``n + 1 > d``), their maximum ``max_abs_diff``, and
    ``scale``, the largest coefficient.  ``span=True`` draws the runs in the basis of their span
    (:mod:`mmcl.model.span`).  Cached like the sweeps."""
    check_int("n_samples", n_samples)
    check_bool("span", span)
    for e in engines:
        if e not in ENGINES:
            raise ValueError(f"engine {e!r} is unknown; valid: {', '.join(map(repr, ENGINES))}")
    runs = expand_grid(grid, seeds, mode, base)
    picked = random.Random(rng_seed).sample(runs, min(n_samples, len(runs)))
    dev = resolve_device(device) if device is not None else torch.device("cpu")
    params = {"format": CACHE_FORMAT, "engines": list(engines), "device": dev.type,
              "runs": [[dataclasses.asdict(r.cfg), r.view, r.seed, r.mode] for r in picked]}
    if span:
        params["span"] = True
    return load_or_compute("sweep-agreement", params, lambda: _agreement(picked, engines, dev, span))


def _agreement(picked: List[Run], engines: Tuple[str, str], dev: torch.device, span: bool = False) -> List[dict]:
    out = []
    for r in picked:
        data = make_draw(r.cfg, r.seed, r.view, dtype=torch.float64, device=dev, span=span)
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
        if b.W is not None and r.cfg.n + 1 <= data.width:
            # independent of the engines' bookkeeping: Eq. (11) solved for the final weights
            dec = decompose(b.W - data.W0, data.mu, data.xi)
            row["decomposed"] = max(float((dec.gamma - a.gamma[-1]).abs().max()),
                                    float((dec.rho - a.rho[-1]).abs().max()))
        row["max_abs_diff"] = max(v for v in (row["loss"], row["gamma"], row["rho"], row["decomposed"])
                                  if math.isfinite(v))
        out.append(row)
    return out
