"""Figures of the chapter "The assumptions" (``book/07_assumptions.md``): Lemma B.1's
anti-concentration bound, Assumption 4.1 condition by condition, and what breaking ``C_mu >= 2.66``
does.

The computations are those of :mod:`mmcl.proofs.assumptions` (Lemma B.1, Assumption 4.1,
:func:`~mmcl.proofs.assumptions.c_mu_threshold`), :func:`mmcl.experiments.figure1.one_at_a_time`
(the ``C_mu`` sweep) and :func:`mmcl.experiments.figure1.final_metrics` (the single-modal baseline);
this module holds their sizes (``SEEDS``, ``C_MUS``), caches the runs per ``(size,
device)`` and draws them (:func:`plot_anticoncentration`, :func:`plot_conditions`, :func:`plot_c_mu`)."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Dict, List

import torch

from mmcl._utils import check_int, check_number
from mmcl.dynamics import simulate
from mmcl.dynamics.trajectory import Trajectory
from mmcl.experiments.figure1 import final_metrics, one_at_a_time
from mmcl.figures.registry import FigureSpec
from mmcl.figures.theme import COLORS, style
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic
from mmcl.proofs import assumptions as A

__all__ = ["SEEDS", "C_MUS", "DELTA", "config", "AnticoncentrationCurves", "anticoncentration_curves",
           "Figure1Runs", "figure1_runs", "conditions_result", "CMuSweep", "c_mu_result",
           "plot_anticoncentration", "plot_conditions", "plot_c_mu", "FIGURES"]

# seeds of the Figure 1 runs (leakage, single-modal baseline) and of each C_mu: 3 (10 with MMCL_BOOK_FULL=1)
SEEDS = {"tiny": 2, "default": 3, "full": 10}
_C_MUS = [0.5, 1.0, 1.5, 2.0, 2.66, 3.0, 4.0, 6.0]
C_MUS = {"tiny": [0.5, 2.0, 6.0], "default": _C_MUS, "full": _C_MUS}
DELTA = 0.1  # our failure probability of the high-probability lemmas (the table of Assumption 4.1)


def config(size: str = "default") -> SyntheticConfig:
    """The Figure 1 setting (``tau=0.1``, ``sigma0=0.01``, ``M=45`` ours);
    ``tiny`` (for the tests) trains 20 epochs instead of 200 in ``d = d~ = 500`` and scores on 200
    held-out samples instead of 1000."""
    cfg = SyntheticConfig()
    return cfg.replace(n_epochs=20, d=500, d_tilde=500, n_heldout=200) if size == "tiny" else cfg


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


def plot_anticoncentration(curves: AnticoncentrationCurves):
    """Left: the exact probability and both bounds; right: each bound over the exact probability.
    Shaded: where the printed bound exceeds 1."""
    import matplotlib.pyplot as plt

    r, exact, b1, b2 = curves.r, curves.exact, curves.corrected, curves.printed
    r_max = float(r[-1])
    with style():
        fig, (ax, ax1) = plt.subplots(1, 2, figsize=(13, 4.3))
        ax.plot(r, b1, color=COLORS["multi"], lw=3, label=r"bound $\sqrt{1-e^{-2c^2/(\pi\sigma^2)}}$")
        ax.plot(r, exact, color="k", lw=1.2, label=r"exact $P(|x|\leq c)$")
        ax.plot(r, b2, color=COLORS["single"], ls="--", label="bound as printed (factor 2)")
        ax.axhline(1.0, color=COLORS["reference"], lw=0.8, ls=":")
        for a_ in (ax, ax1):
            a_.axvspan(curves.vacuous_from, r_max, color=COLORS["single"], alpha=0.08)
            a_.set_xlabel(r"$c/\sigma$")
        ax.text(1.6, 0.35, "printed bound\nvacuous here", color=COLORS["single"], ha="center", fontsize=10)
        ax.set_ylabel("probability")
        ax.set_ylim(0, 2.05)
        ax.set_title("Lemma B.1: anti-concentration of a centred Gaussian")
        ax.legend(loc="upper left", fontsize=10)
        ax1.plot(r, b1 / exact, color=COLORS["multi"], lw=2, label="corrected bound / exact")
        ax1.plot(r, b2 / exact, color=COLORS["single"], ls="--", label="printed bound / exact")
        ax1.axhline(1.0, color=COLORS["reference"], lw=0.8, ls=":")
        ax1.set_ylim(0.9, 2.1)
        ax1.set_ylabel("bound / exact probability")
        ax1.set_title("How loose each bound is")
        ax1.legend(loc="center right", fontsize=10)
    return fig


# --------------------------------------------------------------------------------------------
# Assumption 4.1
# --------------------------------------------------------------------------------------------
def conditions_result(size: str = "default", device: str = "cpu") -> List[A.Condition]:
    """Assumption 4.1 at the Figure 1 settings with ``delta = 0.1``
    (:func:`~mmcl.proofs.assumptions.check_assumption41`; the same at every size: it is a formula)."""
    return A.check_assumption41(SyntheticConfig(), A.AssumptionConfig(delta=DELTA))


def plot_conditions(conditions: List[A.Condition]):
    """One bar per condition: ``log10`` of the factor by which it holds (blue, > 0) or fails
    (vermilion, < 0), clipped to ``[-10, 3]``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    with style():
        fig, ax = plt.subplots(figsize=(9, 7.2))
        keys = [cd.key for cd in conditions][::-1]
        logf = torch.tensor([math.log10(cd.factor) for cd in conditions][::-1])
        colors = [COLORS["multi"] if cd.holds else COLORS["single"] for cd in conditions][::-1]
        ax.barh(range(len(keys)), logf.clamp(-10, 3).numpy(), color=colors)
        ax.axvline(0, color="k", lw=1)
        ax.set_yticks(range(len(keys)), keys)
        ax.set_xlabel(r"$\log_{10}$ of the factor by which a condition holds ($>0$) or fails ($<0$)")
        ax.set_title(r"Assumption 4.1 at the Figure 1 settings ($\delta=0.1$)")
        ax.legend([Patch(color=COLORS["multi"]), Patch(color=COLORS["single"])], ["holds", "fails"], loc="lower left")
    return fig


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


@functools.lru_cache(maxsize=2)
def figure1_runs(size: str = "default", device: str = "cpu") -> Figure1Runs:
    """Both modes at the Figure 1 settings, the seeds of ``SEEDS``, every step recorded (the
    chapter measures the leakage of Lemma D.2 on them; the single-modal run is the baseline of the
    ``C_mu`` sweep)."""
    cfg, seeds = config(size), list(range(SEEDS[size]))
    data = SyntheticData.stack([sample_synthetic(cfg, s, device=device) for s in seeds])
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
    """``C_mu`` varied over ``C_MUS`` at the Figure 1 settings (multi-modal, one batch,
    :func:`mmcl.experiments.figure1.one_at_a_time`), against the single-modal network of
    :func:`figure1_runs` (which does not see ``mu~``)."""
    cfg, c_mus = config(size), C_MUS[size]
    runs = figure1_runs(size, device)
    sweep = one_at_a_time("c_mu", c_mus, runs.seeds, "multi", base=cfg, device=device)["multi"]
    base = final_metrics(runs.runs["single"], runs.data)
    n_snr2 = cfg.n_snr2
    return CMuSweep(c_mus=list(c_mus), seeds=runs.seeds, sweep=sweep, base=base, n_snr2=n_snr2,
                    c_proof=A.c_mu_threshold(n_snr2), c_balance=A.c_mu_threshold(n_snr2, exponent=1.0, slack=0.0))


def plot_c_mu(res: CMuSweep):
    """Left: final OOD accuracy of the multi-modal network against ``C_mu`` (both protocols), the
    single-modal baseline as bands; right: final ``max gamma`` and ``max rho``.  Dotted: the
    exponent-1 point, the paper's 2.66 and what the proof needs at this ``n SNR^2``."""
    import matplotlib.pyplot as plt

    sweep, base, c_proof, c_balance = res.sweep, res.base, res.c_proof, res.c_balance
    with style():
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(13, 4.6))
        x = torch.tensor(res.c_mus)
        for proto, ls, mk in (("adapt", "-", "o"), ("transfer", "--", "s")):
            y = sweep[proto]
            ax0.errorbar(x, y.mean(1), yerr=y.std(1), color=COLORS["multi"], ls=ls, marker=mk, ms=5, capsize=3,
                         label=f"multi-modal, {proto}")
            b = base[proto]
            ax0.axhspan(float(b.mean() - b.std()), float(b.mean() + b.std()), color=COLORS["single"], alpha=0.15)
            ax0.axhline(float(b.mean()), color=COLORS["single"], ls=ls, lw=1.2, label=f"single-modal, {proto}")
        ax1.errorbar(x, sweep["gamma"].mean(1), yerr=sweep["gamma"].std(1), color=COLORS["multi"], marker="o", ms=5,
                     capsize=3, label=r"multi: $\max_r\gamma_r$")
        ax1.errorbar(x, sweep["rho"].mean(1), yerr=sweep["rho"].std(1), color=COLORS["multi"], ls="--", marker="s",
                     ms=5, capsize=3, label=r"multi: $\max_{r,i}\rho_{r,i}$")
        ax1.axhline(float(base["gamma"].mean()), color=COLORS["single"], lw=1.2, label=r"single: $\max_r\gamma_r$")
        ax1.axhline(float(base["rho"].mean()), color=COLORS["single"], ls="--", lw=1.2,
                    label=r"single: $\max_{r,i}\rho_{r,i}$")
        for ax in (ax0, ax1):
            for xv in (c_balance, A.C_MU_PAPER, c_proof):
                ax.axvline(xv, color=COLORS["reference"], lw=0.8, ls=":")
            ax.set_xlabel(r"$C_\mu=\Vert\tilde{\mu}\Vert/\Vert\mu\Vert$")
        for xv, txt in ((c_balance, "exponent 1"), (A.C_MU_PAPER, "paper: 2.66"),
                        (c_proof, f"proof at {res.n_snr2:.2f}")):
            ax0.text(xv, 0.46, txt, rotation=90, va="bottom", ha="right", fontsize=9, color=COLORS["reference"])
        ax0.set_ylim(0.45, 1.0)
        ax0.set_ylabel("final OOD accuracy")
        ax0.set_title("Downstream accuracy")
        ax0.legend(loc="center right", fontsize=9)
        ax1.set_ylabel("final coefficient")
        ax1.set_title("Signal learning and noise memorisation")
        ax1.legend(loc="center right", fontsize=9)
    return fig


def _anticoncentration(size, device):
    return plot_anticoncentration(anticoncentration_curves())


def _conditions(size, device):
    return plot_conditions(conditions_result(size, device))


def _c_mu(size, device):
    return plot_c_mu(c_mu_result(size, device))


_CH, _LABEL = "07_assumptions", "sec-assumptions"
FIGURES = [
    FigureSpec("ch7-anticoncentration", "Lemma B.1: exact P(|x| ≤ c) against the corrected bound and the bound as "
               "printed (factor 2), and their ratios", _CH, _LABEL, _anticoncentration),
    FigureSpec("ch7-conditions", "Each explicit condition of Assumption 4.1 at the Figure 1 settings (δ = 0.1): "
               "log₁₀ of the factor by which it holds or fails", _CH, _LABEL, _conditions),
    FigureSpec("ch7-c-mu", "Breaking C_μ ≥ 2.66: final OOD accuracy, max γ and max ρ of the multi-modal network "
               "for C_μ from 0.5 to 6 (3 seeds), against the single-modal baseline", _CH, _LABEL, _c_mu),
]
