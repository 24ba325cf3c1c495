"""The sweeps of the book's chapter :ref:`Phase diagrams <sec-phase-diagrams>`, per size.

Each study is one grid run for both modes (:func:`run_study`); its grid, seeds and options
depend on the size (one of :data:`~mmcl.experiments.sizes.SIZES`), which :class:`StudySizes`
describes, one per size in :data:`BY_SIZE` (read with :func:`sizes`):

* ``"default"`` -- what the chapter runs on a CPU: two seeds, coarse grids;
* ``"full"`` -- what it runs with ``MMCL_BOOK_FULL=1``: eight seeds, full-resolution grids,
  larger batches (meant for a GPU's memory);
* ``"tiny"`` -- seconds: a 2 x 2 grid, one seed, 20 epochs (for the tests and ``mmcl figure
  NAME --size tiny``).

The studies (:data:`STUDIES`): ``"n_snr"`` (``n`` x SNR, Assumption 4.1(6)), ``"cmu"`` (``n`` x
``C_mu``, Assumption 4.1(7)), ``"d_n"`` (``d = d~`` x ``n``, Assumption 4.1(1), with the untrained
features scored too), ``"aug_tau"`` (``tau`` x ``sigma_eps``, Assumption 4.1(5)) and ``"view"``
(the rebuttal's denoised view, :func:`~mmcl.experiments.sweep.denoised_view`), summarised by
:func:`summarise_view`.  The chapter reaches them, cached, through
:mod:`mmcl.experiments.phase_diagrams`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

from mmcl.dynamics import MODES
from mmcl.experiments.sizes import SIZES, check_size, pick
from mmcl.experiments.sweep.agreement import engine_agreement
from mmcl.experiments.sweep.formulas import gap_closed
from mmcl.experiments.sweep.runner import sweep
from mmcl.experiments.sweep.table import SweepTable
from mmcl.model.config import SyntheticConfig

__all__ = ["SIZES", "MODES", "STUDIES", "StudySizes", "BY_SIZE", "sizes", "study_base", "study_seeds", "study_grid",
           "run_study", "run_agreement", "ViewSummary", "summarise_view"]


#: The studies, in the chapter's order; their grids per size are ``StudySizes.grids``.
STUDIES: Tuple[str, ...] = ("n_snr", "cmu", "d_n", "aug_tau", "view")


@dataclass(frozen=True)
class StudySizes:
    """What a size means for the chapter's studies: the ``seeds`` of every study but the view's
    (``view_seeds``), the number of runs of the ``n x SNR`` study sampled for the check of the
    engines against each other (``agreement_samples``, :func:`run_agreement`), the memory a batch
    may take (``memory_mb``: larger batches at full resolution), the epochs trained (``n_epochs``:
    Figure 1's 200 but at ``"tiny"``) and the grid of each study (``grids[study]``, parameter ->
    values; the order of the keys is the order of the table's columns)."""

    seeds: Tuple[int, ...]
    view_seeds: Tuple[int, ...]
    agreement_samples: int
    memory_mb: int
    grids: Mapping[str, Mapping[str, tuple]]
    n_epochs: int = 200


#: The studies at each size; 2 seeds and coarse grids by default, 8 seeds and full-resolution grids at full size.
BY_SIZE: Dict[str, StudySizes] = {
    "tiny": StudySizes(seeds=(0,), view_seeds=(0,), agreement_samples=2, memory_mb=512, n_epochs=20, grids={
        "n_snr": {"n": (50, 100), "snr": (0.079, 0.112), "c_mu": (3.0,), "neg_frac": (0.9,)},
        "cmu": {"n": (50, 100), "c_mu": (1.0, 3.0), "n_snr2": (1.25,), "neg_frac": (0.9,)},
        "d_n": {"n": (24, 50), "dim": (100, 400), "n_snr2": (1.25,), "c_mu": (3.0,), "neg_frac": (0.9,)},
        "aug_tau": {"sigma_eps": (0.1, 1.0), "tau": (0.1, 0.5)},
        "view": {"view_noise_scale": (1.0, 0.5, 0.0)},
    }),
    "default": StudySizes(seeds=(0, 1), view_seeds=(0, 1, 2), agreement_samples=3, memory_mb=512, grids={
        "n_snr": {"n": (24, 50, 100, 200), "snr": (0.04, 0.056, 0.079, 0.112, 0.158, 0.224), "c_mu": (3.0,),
                  "neg_frac": (0.9,)},
        "cmu": {"n": (24, 50, 100), "c_mu": (0.5, 1.0, 1.5, 2.0, 2.66, 3.5, 5.0), "n_snr2": (1.25,),
                "neg_frac": (0.9,)},
        "d_n": {"n": (24, 50, 100), "dim": (25, 100, 400, 1600, 6400), "n_snr2": (1.25,), "c_mu": (3.0,),
                "neg_frac": (0.9,)},
        "aug_tau": {"sigma_eps": (0.01, 0.1, 0.3, 1.0, 3.0), "tau": (0.05, 0.1, 0.2, 0.5, 1.0)},
        "view": {"view_noise_scale": (1.0, 0.85, 0.7, 0.5, 0.35, 0.2, 0.0)},
    }),
    "full": StudySizes(seeds=tuple(range(8)), view_seeds=tuple(range(8)), agreement_samples=12, memory_mb=4096, grids={
        "n_snr": {"n": (12, 24, 50, 100, 200, 400), "snr": tuple(round(0.112 * 2 ** (k / 4), 4) for k in range(-8, 6)),
                  "c_mu": (3.0,), "neg_frac": (0.9,)},
        "cmu": {"n": (24, 50, 100, 200),
                "c_mu": (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.33, 2.66, 3.0, 3.5, 4.0, 5.0), "n_snr2": (1.25,),
                "neg_frac": (0.9,)},
        "d_n": {"n": (24, 50, 100, 200), "dim": (25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800),
                "n_snr2": (1.25,), "c_mu": (3.0,), "neg_frac": (0.9,)},
        "aug_tau": {"sigma_eps": (0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0),
                    "tau": (0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0)},
        "view": {"view_noise_scale": (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)},
    }),
}
_OPTIONS = {"d_n": {"score_init": True}}  # the untrained features are scored too


def sizes(size: str = "default") -> StudySizes:
    """The :class:`StudySizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def _check(name: Optional[str], size: str) -> None:
    check_size(size)
    if name is not None and name not in STUDIES:
        raise ValueError(f"study={name!r} is unknown; valid: {', '.join(map(repr, STUDIES))}")


def study_base(size: str = "default") -> SyntheticConfig:
    """The configuration every study starts from: Figure 1's setting (Sec. 6) scored on 500
    fresh OOD samples; ``"tiny"`` trains 20 epochs instead of 200."""
    s = sizes(size)
    base = SyntheticConfig(n_heldout=500)
    return base.replace(n_epochs=s.n_epochs) if s.n_epochs != base.n_epochs else base


def study_seeds(name: str, size: str = "default") -> List[int]:
    """The seeds of study ``name`` at ``size``."""
    _check(name, size)
    s = sizes(size)
    return list(s.view_seeds if name == "view" else s.seeds)


def study_grid(name: str, size: str = "default") -> dict:
    """The grid of study ``name`` at ``size``, parameter -> list of values (a copy: changing it
    changes nothing here)."""
    _check(name, size)
    return {k: list(v) for k, v in sizes(size).grids[name].items()}


def run_study(name: str, size: str = "default", device=None, **options) -> SweepTable:
    """Run study ``name`` at ``size`` with :func:`~mmcl.experiments.sweep.sweep` (both modes, no
    progress bar; every run cached on disk); ``options`` go to the sweep (they override the
    study's own, e.g. ``cache=False``)."""
    _check(name, size)
    opts = {"memory_mb": sizes(size).memory_mb, "progress": False}
    opts.update(_OPTIONS.get(name, {}))
    opts.update(options)
    return sweep(study_grid(name, size), study_seeds(name, size), list(MODES), device=device, base=study_base(size),
                 **opts)


def run_agreement(size: str = "default", device=None) -> List[dict]:
    """:func:`~mmcl.experiments.sweep.engine_agreement` on a random sample (``rng_seed=0``) of
    the ``n x SNR`` study: ``StudySizes.agreement_samples`` runs in float64 with the recursion
    and gd."""
    return engine_agreement(study_grid("n_snr", size), seeds=study_seeds("n_snr", size), mode=list(MODES),
                            base=study_base(size), n_samples=sizes(size).agreement_samples, rng_seed=0, device=device)


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
