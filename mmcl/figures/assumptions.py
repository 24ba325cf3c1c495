"""Figures of the chapter :ref:`The assumptions <sec-assumptions>`: drawing only.

The computations are :mod:`mmcl.experiments.assumptions`'s (Lemma B.1's curves, Assumption 4.1's
conditions, the Figure 1 runs and the ``C_mu`` sweep, at the chapter's sizes), which calls
:mod:`mmcl.proofs.assumptions` and :mod:`mmcl.experiments.figure1`; this module draws them and
registers the three figures:

* :func:`draw_anticoncentration` -- Lemma B.1, the exact probability against both bounds;
* :func:`draw_conditions` -- Assumption 4.1 condition by condition;
* :func:`draw_c_mu` -- what breaking ``C_mu >= 2.66`` does.
"""
from __future__ import annotations

import math
from typing import List

import torch

from mmcl.experiments.assumptions import (AnticoncentrationCurves, CMuSweep, anticoncentration_curves, c_mu_result,
                                          conditions_result)
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style
from mmcl.proofs import assumptions as A

__all__ = ["draw_anticoncentration", "draw_conditions", "draw_c_mu", "FIGURES"]

LABEL = "sec-assumptions"
CHAPTER = chapter_of(__name__)


# --------------------------------------------------------------------------------------------
# Lemma B.1
# --------------------------------------------------------------------------------------------
def draw_anticoncentration(curves: AnticoncentrationCurves):
    """Left: the exact probability and both bounds; right: each bound over the exact probability.
    Shaded: where the printed bound exceeds 1."""
    import matplotlib.pyplot as plt

    r, exact, b1, b2 = curves.r, curves.exact, curves.corrected, curves.printed
    r_max = float(r[-1])
    with style():
        fig, (ax, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.6))
        ax.plot(r, b1, color=COLORS["accent"], lw=3, label="corrected bound")
        ax.plot(r, exact, color=palette.INK, lw=1.2, label=r"exact $P(|x|\leq c)$")
        ax.plot(r, b2, color=COLORS["reference"], ls="--", label="as printed (factor 2)")
        ax.axhline(1.0, color=COLORS["reference"], lw=0.8, ls=":")
        for a_ in (ax, ax1):
            a_.axvspan(curves.vacuous_from, r_max, color=COLORS["reference"], alpha=0.08)
            a_.set_xlabel(r"$c/\sigma$")
        ax.text(2.0, 1.25, "printed bound\nvacuous here", color=COLORS["reference"], ha="center", fontsize=10)
        ax.set_ylabel("probability")
        ax.set_ylim(0, 2.05)
        ax.set_title("Lemma B.1: $P(|x|\\leq c)$ and its bounds")
        ax.legend(loc="lower right", fontsize=9)
        ax1.plot(r, b1 / exact, color=COLORS["accent"], lw=2, label="corrected / exact")
        ax1.plot(r, b2 / exact, color=COLORS["reference"], ls="--", label="printed / exact")
        ax1.axhline(1.0, color=COLORS["reference"], lw=0.8, ls=":")
        ax1.set_ylim(0.9, 2.1)
        ax1.set_ylabel("bound / exact probability")
        ax1.set_title("How loose each bound is")
        ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=9)
    return fig


# --------------------------------------------------------------------------------------------
# Assumption 4.1
# --------------------------------------------------------------------------------------------
def draw_conditions(conditions: List[A.Condition]):
    """One bar per condition: ``log10`` of the factor by which it holds (> 0) or fails (< 0), in
    the verdicts' colours (:data:`mmcl.figures.palette.VERDICT`), clipped to ``[-10, 3]``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    with style():
        fig, ax = plt.subplots(figsize=(7.0, 6.0))
        keys = [cd.key for cd in conditions][::-1]
        logf = torch.tensor([math.log10(cd.factor) for cd in conditions][::-1])
        colors = [palette.VERDICT["holds" if cd.holds else "fails"] for cd in conditions][::-1]
        ax.barh(range(len(keys)), logf.clamp(-10, 3).numpy(), color=colors)
        ax.axvline(0, color=palette.INK, lw=1)
        ax.set_yticks(range(len(keys)), keys)
        ax.set_xlabel(r"$\log_{10}$ of the margin: holds ($>0$) or fails ($<0$)")
        n_fail = sum(not cd.holds for cd in conditions)
        ax.set_title(f"Assumption 4.1 at Figure 1: {n_fail} of {len(conditions)} conditions fail")
        ax.legend([Patch(color=palette.VERDICT["holds"]), Patch(color=palette.VERDICT["fails"])], ["holds", "fails"],
                  loc="lower left")
    return fig


# --------------------------------------------------------------------------------------------
# Breaking C_mu >= 2.66
# --------------------------------------------------------------------------------------------
def draw_c_mu(res: CMuSweep):
    """Left: final OOD accuracy of the multi-modal network against ``C_mu`` (both protocols), the
    single-modal baseline as bands; right: final ``max gamma`` and ``max rho``.  Dotted: the
    exponent-1 point, the paper's 2.66 and what the proof needs at this ``n SNR^2``."""
    import matplotlib.pyplot as plt

    sweep, base, c_proof, c_balance = res.sweep, res.base, res.c_proof, res.c_balance
    with style():
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.0, 4.6))
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
                        (c_proof, "proof needs")):
            ax0.text(xv, 0.46, txt, rotation=90, va="bottom", ha="right", fontsize=9, color=COLORS["reference"])
        ax0.set_ylim(0.45, 1.0)
        ax0.set_ylabel("final OOD accuracy")
        ax0.set_title("OOD accuracy")
        ax0.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=9)
        ax1.set_ylabel("final coefficient")
        ax1.set_title("Signal and noise")
        ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=9)
    return fig


def _anticoncentration(size, device):
    return draw_anticoncentration(anticoncentration_curves())


def _conditions(size, device):
    return draw_conditions(conditions_result(size, device))


def _c_mu(size, device):
    return draw_c_mu(c_mu_result(size, device))


FIGURES = [
    FigureSpec("ch7-anticoncentration", "Lemma B.1: exact P(|x| ≤ c) against the corrected bound and the bound as "
               "printed (factor 2), and their ratios", CHAPTER, LABEL, _anticoncentration),
    FigureSpec("ch7-conditions", "Each explicit condition of Assumption 4.1 at the Figure 1 settings (δ = 0.1): "
               "log₁₀ of the factor by which it holds or fails", CHAPTER, LABEL, _conditions, takeaway=True),
    FigureSpec("ch7-c-mu", "Breaking C_μ ≥ 2.66: final OOD accuracy, max γ and max ρ of the multi-modal network "
               "for C_μ from 0.5 to 6 (3 seeds), against the single-modal baseline", CHAPTER, LABEL, _c_mu),
]
