"""The sweeps of the book's chapter "Phase diagrams" (``book/09_phase_diagrams.md``), per size.

Each study is one grid run for both modes (:func:`run_study`); its grid, seeds and options
depend on the size (``"tiny"``, ``"default"``, ``"full"``, the sizes of the figure registry):

* ``"default"`` -- what the chapter runs on a CPU: two seeds, coarse grids;
* ``"full"`` -- what it runs with ``MMCL_BOOK_FULL=1``: eight seeds, full-resolution grids,
  larger batches (meant for a GPU's memory);
* ``"tiny"`` -- seconds: a 2 x 2 grid, one seed, 20 epochs (for the tests and ``mmcl figure
  NAME --size tiny``).

The studies (:data:`STUDIES`): ``"n_snr"`` (``n`` x SNR, Assumption 4.1(6)), ``"cmu"`` (``n`` x
``C_mu``, Assumption 4.1(7)), ``"d_n"`` (``d = d~`` x ``n``, Assumption 4.1(1), with the untrained
features scored too), ``"aug_tau"`` (``tau`` x ``sigma_eps``, Assumption 4.1(5)) and ``"view"``
(the rebuttal's denoised view, :func:`~mmcl.experiments.sweep.denoised_view`), summarised by
:func:`summarise_view`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Dict, List, Optional

from mmcl.experiments.sweep.agreement import engine_agreement
from mmcl.experiments.sweep.formulas import gap_closed
from mmcl.experiments.sweep.runner import sweep
from mmcl.experiments.sweep.table import SweepTable
from mmcl.model.config import SyntheticConfig

__all__ = ["SIZES", "MODES", "STUDIES", "SEEDS", "AGREEMENT_SAMPLES", "study_base", "study_seeds", "study_grid",
           "run_study", "run_agreement", "ViewSummary", "summarise_view"]

SIZES = ("tiny", "default", "full")
MODES = ("single", "multi")

#: Seeds per size (the view study has its own, :func:`study_seeds`).
SEEDS = {"tiny": [0], "default": [0, 1], "full": list(range(8))}
_VIEW_SEEDS = {"tiny": [0], "default": [0, 1, 2], "full": list(range(8))}
#: Runs sampled from the ``n x SNR`` grid for the check of the engines against each other.
AGREEMENT_SAMPLES = {"tiny": 2, "default": 3, "full": 12}
_MEMORY_MB = {"tiny": 512, "default": 512, "full": 4096}  # larger batches at full resolution
_TINY_EPOCHS = 20

#: The grids of the studies, per size (the order of the keys is the order of the table's columns).
STUDIES: Dict[str, Dict[str, dict]] = {
    "n_snr": {
        "tiny": {"n": [50, 100], "snr": [0.079, 0.112], "c_mu": [3.0], "neg_frac": [0.9]},
        "default": {"n": [24, 50, 100, 200], "snr": [0.04, 0.056, 0.079, 0.112, 0.158, 0.224],
                    "c_mu": [3.0], "neg_frac": [0.9]},
        "full": {"n": [12, 24, 50, 100, 200, 400], "snr": [round(0.112 * 2 ** (k / 4), 4) for k in range(-8, 6)],
                 "c_mu": [3.0], "neg_frac": [0.9]},
    },
    "cmu": {
        "tiny": {"n": [50, 100], "c_mu": [1.0, 3.0], "n_snr2": [1.25], "neg_frac": [0.9]},
        "default": {"n": [24, 50, 100], "c_mu": [0.5, 1.0, 1.5, 2.0, 2.66, 3.5, 5.0], "n_snr2": [1.25],
                    "neg_frac": [0.9]},
        "full": {"n": [24, 50, 100, 200],
                 "c_mu": [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.33, 2.66, 3.0, 3.5, 4.0, 5.0], "n_snr2": [1.25],
                 "neg_frac": [0.9]},
    },
    "d_n": {
        "tiny": {"n": [24, 50], "dim": [100, 400], "n_snr2": [1.25], "c_mu": [3.0], "neg_frac": [0.9]},
        "default": {"n": [24, 50, 100], "dim": [25, 100, 400, 1600, 6400], "n_snr2": [1.25], "c_mu": [3.0],
                    "neg_frac": [0.9]},
        "full": {"n": [24, 50, 100, 200], "dim": [25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800],
                 "n_snr2": [1.25], "c_mu": [3.0], "neg_frac": [0.9]},
    },
    "aug_tau": {
        "tiny": {"sigma_eps": [0.1, 1.0], "tau": [0.1, 0.5]},
        "default": {"sigma_eps": [0.01, 0.1, 0.3, 1.0, 3.0], "tau": [0.05, 0.1, 0.2, 0.5, 1.0]},
        "full": {"sigma_eps": [0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0],
                 "tau": [0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0]},
    },
    "view": {
        "tiny": {"view_noise_scale": [1.0, 0.5, 0.0]},
        "default": {"view_noise_scale": [1.0, 0.85, 0.7, 0.5, 0.35, 0.2, 0.0]},
        "full": {"view_noise_scale": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]},
    },
}
_OPTIONS = {"d_n": {"score_init": True}}  # the untrained features are scored too


def _check(name: Optional[str], size: str) -> None:
    if size not in SIZES:
        raise ValueError(f"size={size!r} is unknown; valid: {', '.join(map(repr, SIZES))}")
    if name is not None and name not in STUDIES:
        raise ValueError(f"study={name!r} is unknown; valid: {', '.join(map(repr, STUDIES))}")


def study_base(size: str = "default") -> SyntheticConfig:
    """The configuration every study starts from: Figure 1's setting (Sec. 6) scored on 500
    fresh OOD samples; ``"tiny"`` trains 20 epochs instead of 200."""
    _check(None, size)
    base = SyntheticConfig(n_heldout=500)
    return base.replace(n_epochs=_TINY_EPOCHS) if size == "tiny" else base


def study_seeds(name: str, size: str = "default") -> List[int]:
    """The seeds of study ``name`` at ``size``."""
    _check(name, size)
    return list((_VIEW_SEEDS if name == "view" else SEEDS)[size])


def study_grid(name: str, size: str = "default") -> dict:
    """The grid of study ``name`` at ``size`` (a copy: changing it changes nothing here)."""
    _check(name, size)
    return copy.deepcopy(STUDIES[name][size])


def run_study(name: str, size: str = "default", device=None, **options) -> SweepTable:
    """Run study ``name`` at ``size`` with :func:`~mmcl.experiments.sweep.sweep` (both modes, no
    progress bar; every run cached on disk); ``options`` go to the sweep (they override the
    study's own, e.g. ``cache=False``)."""
    _check(name, size)
    opts = {"memory_mb": _MEMORY_MB[size], "progress": False}
    opts.update(_OPTIONS.get(name, {}))
    opts.update(options)
    return sweep(study_grid(name, size), study_seeds(name, size), list(MODES), device=device, base=study_base(size),
                 **opts)


def run_agreement(size: str = "default", device=None) -> List[dict]:
    """:func:`~mmcl.experiments.sweep.engine_agreement` on a random sample (``rng_seed=0``) of
    the ``n x SNR`` study: :data:`AGREEMENT_SAMPLES` runs in float64 with the recursion and gd."""
    return engine_agreement(study_grid("n_snr", size), seeds=study_seeds("n_snr", size), mode=list(MODES),
                            base=study_base(size), n_samples=AGREEMENT_SAMPLES[size], rng_seed=0, device=device)


@dataclass
class ViewSummary:
    """The denoised-view study, seed means per ``lambda`` of the single-modal runs: ``adapt``
    and ``transfer`` map ``lambda`` to the row of :meth:`~mmcl.experiments.sweep.SweepTable.mean`
    (``mean``, ``sd``, ``count``, ``n_nan``); ``max_gamma`` and ``max_rho`` to the mean;
    ``multi_acc`` is the multi-modal adapt accuracy (the view does not enter multi-modal runs),
    ``closed`` maps ``lambda`` to the fraction of the gap closed
    (:func:`~mmcl.experiments.sweep.gap_closed`, against ``lambda = 1``)."""

    lambdas: list
    adapt: dict
    transfer: dict
    max_gamma: dict
    max_rho: dict
    multi_acc: float
    closed: dict


def summarise_view(table: SweepTable) -> ViewSummary:
    """Seed means of a sweep over ``view_noise_scale`` (the ``"view"`` study): see
    :class:`ViewSummary`.  The table must contain ``lambda = 1`` (the paper's augmentation)."""
    single = table.filter(mode="single")
    lambdas = list(dict.fromkeys(table.column("view_noise_scale")))
    if 1.0 not in lambdas:
        raise ValueError(f"summarise_view needs view_noise_scale = 1.0 in the table, got {lambdas}")

    def by_lambda(value: str) -> dict:
        return {r["view_noise_scale"]: r for r in single.mean(value, by=("view_noise_scale",))}

    adapt, transfer = by_lambda("acc_adapt"), by_lambda("acc_transfer")
    max_rho = {k: r["mean"] for k, r in by_lambda("max_rho").items()}
    max_gamma = {k: r["mean"] for k, r in by_lambda("max_gamma").items()}
    multi_acc = table.filter(mode="multi", view_noise_scale=1.0).mean("acc_adapt", by=("mode",))[0]["mean"]
    closed = {lam: gap_closed(adapt[lam]["mean"], adapt[1.0]["mean"], multi_acc) for lam in lambdas}
    return ViewSummary(lambdas=lambdas, adapt=adapt, transfer=transfer, max_gamma=max_gamma, max_rho=max_rho,
                       multi_acc=multi_acc, closed=closed)
