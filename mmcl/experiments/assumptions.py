"""The experiment of the chapter :ref:`The assumptions <sec-assumptions>`: its sizes, its
configuration and what its figures and numbers are computed from.  The drawings are in
:mod:`mmcl.figures.assumptions`.

The computations are those of :mod:`mmcl.proofs.assumptions` (Lemma B.1, Assumption 4.1,
:func:`~mmcl.proofs.assumptions.c_mu_threshold`), :func:`mmcl.experiments.figure1.one_at_a_time`
(the ``C_mu`` sweep) and :func:`mmcl.experiments.figure1.final_metrics` (the single-modal baseline):

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`AssumptionsSizes`: seeds, the ``C_mu`` values, and the shorter ``"tiny"`` setting);
* :func:`config` -- the chapter's configuration (the Figure 1 settings);
* :func:`anticoncentration_curves` -- Lemma B.1 on a grid of ``c/sigma``;
* :func:`conditions_result` -- Assumption 4.1 at the Figure 1 settings, ``delta = DELTA`` (0.1);
* :func:`figure1_runs` -- both modes at the Figure 1 settings, every step recorded (cached);
* :func:`c_mu_result` -- ``C_mu`` varied at the Figure 1 settings against the single-modal run (cached).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch

from mmcl._utils import check_int, check_number
from mmcl.dynamics import simulate
from mmcl.dynamics.trajectory import Trajectory
from mmcl.experiments.figure1 import final_metrics, one_at_a_time
from mmcl.experiments.sizes import figure1_config, pick
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic_batch
from mmcl.proofs import assumptions as A
from mmcl.proofs.preactivations import preactivation_history

__all__ = ["AssumptionsSizes", "BY_SIZE", "sizes", "DELTA", "config", "AnticoncentrationCurves",
           "anticoncentration_curves", "conditions_result", "Figure1Runs", "figure1_runs", "CMuSweep",
           "c_mu_result"]

DELTA = 0.1  # our failure probability of the high-probability lemmas (the table of Assumption 4.1)

_C_MUS = (0.5, 1.0, 1.5, 2.0, 2.66, 3.0, 4.0, 6.0)


@dataclass(frozen=True)
class AssumptionsSizes:
    """What a size means for this chapter: ``seeds`` draws (0..seeds-1) of the Figure 1 runs
    (leakage, single-modal baseline) and of each ``C_mu``, the values ``c_mus`` of ``C_mu``, and
    for ``"tiny"`` a smaller setting: ``n_epochs`` steps, ``d = d~ = d`` and ``n_heldout``
    held-out samples (None: the Figure 1 values, ``d = d~ = 2000`` and 1000)."""

    seeds: int
    c_mus: Tuple[float, ...] = _C_MUS
    n_epochs: int = 200
    d: Optional[int] = None
    n_heldout: Optional[int] = None


#: The chapter runs 3 seeds (10 with MMCL_BOOK_FULL=1) at eight C_mu; "tiny" is for the tests.
BY_SIZE: Dict[str, AssumptionsSizes] = {
    "tiny": AssumptionsSizes(seeds=2, c_mus=(0.5, 2.0, 6.0), n_epochs=20, d=500, n_heldout=200),
    "default": AssumptionsSizes(seeds=3),
    "full": AssumptionsSizes(seeds=10),
}


def sizes(size: str = "default") -> AssumptionsSizes:
    """The :class:`AssumptionsSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 setting (``tau=0.1``, ``sigma0=0.01``, ``M=45`` ours);
    ``tiny`` (for the tests) trains 20 epochs instead of 200 in ``d = d~ = 500`` and scores on 200
    held-out samples instead of 1000."""
    s = sizes(size)
    return figure1_config(n_epochs=s.n_epochs, d=s.d, n_heldout=s.n_heldout)


# --------------------------------------------------------------------------------------------
# Lemma B.1
# --------------------------------------------------------------------------------------------
@dataclass
class AnticoncentrationCurves:
    """``r = c/sigma`` and, on it, the exact ``P(|x| <= c)``, the corrected bound (``factor=1``) and
    the printed one (``factor=2``), with ``vacuous_from``, where the printed bound reaches 1."""

    r: torch.Tensor
    exact: torch.Tensor
    corrected: torch.Tensor
    printed: torch.Tensor
    vacuous_from: float

    @property
    def excess(self) -> torch.Tensor:
        """How far the corrected bound sits above the exact probability, ``corrected / exact - 1``."""
        return self.corrected / self.exact - 1


def anticoncentration_curves(n_points: int = 400, r_max: float = 2.5) -> AnticoncentrationCurves:
    """Lemma B.1 on ``n_points - 1`` values of ``c/sigma`` in ``(0, r_max]``
    (:func:`~mmcl.proofs.assumptions.anticoncentration_probability`,
    :func:`~mmcl.proofs.assumptions.anticoncentration_bound`,
    :func:`~mmcl.proofs.assumptions.anticoncentration_vacuous_from`)."""
    check_int("n_points", n_points, 2)
    check_number("r_max", r_max, 0)
    r = torch.linspace(0, r_max, n_points, dtype=torch.float64)[1:]  # c / sigma
    return AnticoncentrationCurves(r=r, exact=A.anticoncentration_probability(r, 1.0),
                                   corrected=A.anticoncentration_bound(r, 1.0, factor=1.0),
                                   printed=A.anticoncentration_bound(r, 1.0, factor=2.0),
                                   vacuous_from=A.anticoncentration_vacuous_from(1.0, factor=2.0))


# --------------------------------------------------------------------------------------------
# Assumption 4.1
# --------------------------------------------------------------------------------------------
def conditions_result(size: str = "default", device: str = "cpu") -> List[A.Condition]:
    """Assumption 4.1 at the Figure 1 settings with ``delta = 0.1``
    (:func:`~mmcl.proofs.assumptions.check_assumption41`; the same at every size: it is a formula)."""
    return A.check_assumption41(SyntheticConfig(), A.AssumptionConfig(delta=DELTA))


# --------------------------------------------------------------------------------------------
# The Figure 1 runs, and breaking C_mu >= 2.66
# --------------------------------------------------------------------------------------------
@dataclass
class Figure1Runs:
    """The ``seeds``, their stacked ``data`` and the full trajectories ``runs[mode]`` (every step
    recorded, exact recursion) at :func:`config`."""

    seeds: List[int]
    data: SyntheticData
    runs: Dict[str, Trajectory]

    def leakage(self) -> Dict[str, float]:
        """Per mode, the largest leakage of the noise coefficients into the signal inner product
        over every seed, step and neuron: ``max |<w_r(t), mu> - <w_r(0), mu> - gamma_r(t)|``, the
        part of ``<w_r(t), mu>`` that Lemma D.2 bounds."""
        out = {}
        for mode, traj in self.runs.items():
            signal = preactivation_history(traj, self.data).signal  # (seeds, steps, m)
            out[mode] = float((signal - signal[:, :1] - traj.gamma).abs().amax())
        return out

    def initial_scale(self) -> float:
        """The median of ``|<w_r(0), mu>|`` over seeds and neurons."""
        return float((self.data.W0 @ self.data.mu[..., None]).abs().median())


@functools.lru_cache(maxsize=2)
def figure1_runs(size: str = "default", device: str = "cpu") -> Figure1Runs:
    """Both modes at the Figure 1 settings, the seeds of ``size``, every step recorded (the
    chapter measures the leakage of Lemma D.2 on them; the single-modal run is the baseline of the
    ``C_mu`` sweep)."""
    cfg, seeds = config(size), list(range(sizes(size).seeds))
    data = sample_synthetic_batch(cfg, seeds, device=device)
    runs = {mode: simulate(cfg, data, mode, "recursion") for mode in ("single", "multi")}
    return Figure1Runs(seeds=seeds, data=data, runs=runs)


@dataclass
class CMuSweep:
    """The multi-modal network at each ``C_mu`` of ``c_mus``: ``sweep[metric]`` a ``(c_mus, seeds)``
    tensor (metrics of :data:`mmcl.experiments.figure1.SWEEP_METRICS`), ``base`` the single-modal
    baseline per seed (:func:`mmcl.experiments.figure1.final_metrics`), and the reference values:
    ``n_snr2`` of the setting, ``c_proof`` (the ``C_mu`` the proof of Lemma 5.4 needs there) and
    ``c_balance`` (where the proof's exponent reaches one)."""

    c_mus: List[float]
    seeds: List[int]
    sweep: Dict[str, torch.Tensor]
    base: Dict[str, torch.Tensor]
    n_snr2: float
    c_proof: float
    c_balance: float


@functools.lru_cache(maxsize=2)
def c_mu_result(size: str = "default", device: str = "cpu") -> CMuSweep:
    """``C_mu`` varied over the ``c_mus`` of ``size`` at the Figure 1 settings (multi-modal, one
    batch, :func:`mmcl.experiments.figure1.one_at_a_time`), against the single-modal network of
    :func:`figure1_runs` (which does not see ``mu~``)."""
    cfg, c_mus = config(size), list(sizes(size).c_mus)
    runs = figure1_runs(size, device)
    sweep = one_at_a_time("c_mu", c_mus, runs.seeds, "multi", base=cfg, device=device)["multi"]
    base = final_metrics(runs.runs["single"], runs.data)
    n_snr2 = cfg.n_snr2
    return CMuSweep(c_mus=list(c_mus), seeds=runs.seeds, sweep=sweep, base=base, n_snr2=n_snr2,
                    c_proof=A.c_mu_threshold(n_snr2), c_balance=A.c_mu_threshold(n_snr2, exponent=1.0, slack=0.0))
