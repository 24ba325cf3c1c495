"""Figures of the chapter :ref:`Multi-modal learning <sec-multimodal>`: drawing only.

The runs are :mod:`mmcl.experiments.multimodal`'s (the chapter's five seeds, cached per ``(size,
device)``, shared by the chapter and its three figures); the computations are those of
:mod:`mmcl.proofs.multi_stage1` (synchronisation, the end of stage 1, the noise cases of Lemma
D.9).  This module draws the figures and registers them:

* :func:`draw_signal_and_noise` -- the chapter in one picture (the takeaway): signal and noise,
  single- against multi-modal;
* :func:`draw_synchronisation` -- Lemma D.3, neurons that start out of step;
* :func:`draw_sync_prediction` -- when they synchronise, measured against our proposition;
* :func:`draw_stage1` -- Lemma 5.4, the end of stage 1, and the spread of the loss derivatives;
* :func:`draw_noise` -- Lemma D.9's case (4).
"""
from __future__ import annotations

import math

import torch

from mmcl.dynamics import Trajectory
from mmcl.experiments.multimodal import multimodal_runs, noise_cases, stage1_end, sync_examples
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, headline, keep_inside, style
from mmcl.proofs import multi_stage1 as sync

__all__ = ["draw_signal_and_noise", "draw_synchronisation", "draw_sync_prediction", "draw_stage1",
           "draw_noise", "FIGURES"]

LABEL = "sec-multimodal"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_signal_and_noise``).
CLAIM = 'Multi-modal learns more signal, but its noise stays of order one, not 1/√n'


# --------------------------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------------------------
def draw_synchronisation(examples, seeds):
    """Lemma D.3: ``u_r``, ``v_r`` of three neurons that start out of step (predicted ``t'`` near 3,
    10 and 25 steps, winning side predicted right) with the linear stage-1 map; ``examples``:
    :func:`mmcl.experiments.multimodal.sync_examples`."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, 3, figsize=(8.0, 3.0), sharey=True, constrained_layout=True)
        for ax, ex in zip(axes[:3], examples):
            ax.plot(ex.steps, ex.u, color=COLORS["multi"], label=r"$u_r$ (modality 1)")
            ax.plot(ex.steps, ex.v, color=COLORS["accent"], ls="--", label=r"$v_r$ (modality 2)")
            ax.plot(ex.steps, ex.pu, color=palette.INK, lw=0.9, ls=":", label="linear map")
            ax.plot(ex.steps, ex.pv, color=palette.INK, lw=0.9, ls=":")
            ax.axhline(0, color=COLORS["reference"], lw=0.8)
            ax.axvline(float(ex.sync_step), color=COLORS["reference"], lw=0.8, ls="--")
            ax.set_title(f"$t'$ = {ex.sync_step} (seed {seeds[ex.b]}, r = {ex.r})", fontsize="small")
            ax.set_xlabel("step $t$")
        axes[0].set_ylabel("preactivation / initial max")
        axes[0].legend(loc="best", fontsize="x-small")
    return fig


def draw_sync_prediction(syn: sync.Synchronisation, seeds):
    """Our proposition against the runs: the measured against the predicted ``t'`` of every
    out-of-step neuron that synchronises, marked by whether the winning side was predicted."""
    import matplotlib.pyplot as plt

    opp = syn.opposite0
    synced = opp & syn.synchronised
    right = (syn.sign == syn.predicted_sign) & opp
    with style():
        fig, ax1 = plt.subplots(figsize=(5.0, 3.8), constrained_layout=True)
        pred, meas = syn.predicted_step[synced].cpu(), syn.sync_step[synced].cpu()
        ok = right[synced].cpu()
        ax1.scatter(pred[ok], meas[ok], s=22, color=COLORS["multi"], label="winning side predicted")
        ax1.scatter(pred[~ok], meas[~ok], s=40, marker="x", color=COLORS["reference"],
                    label="winning side missed")
        hi = float(max(pred.max(), meas.max())) * 1.3
        ax1.plot([0.8, hi], [0.8, hi], color=COLORS["reference"], lw=0.8, ls=":")
        ax1.set_xscale("log", base=2)
        ax1.set_yscale("log", base=2)
        ax1.set_xlabel(r"predicted $t'$ (proposition)")
        ax1.set_ylabel(r"measured $t'$")
        ax1.set_title(f"out-of-step neurons, {len(seeds)} seeds", fontsize="medium")
        ax1.legend(loc="upper left", fontsize="x-small")
    return fig


def draw_stage1(end: sync.Stage1End):
    """Lemma 5.4: ``max_r gamma_r`` of every seed against the linear stage-1 map, Lemma D.4's lower
    bound and ``T1``; the spread ``C_l`` of the loss derivatives (Lemma D.1)."""
    import matplotlib.pyplot as plt

    T1 = end.t1
    with style():
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
        t = end.steps.cpu()
        d4 = end.d4_best  # Lemma D.4's bound, best in-step neuron
        S = end.max_gamma.shape[0]
        for b in range(S):
            first = b == 0
            ax0.plot(t, end.max_gamma[b].cpu(), color=COLORS["multi"], lw=1.5, alpha=0.8,
                     label=r"measured $\max_r\gamma_r$" if first else None)
            ax0.plot(t, end.predicted_gamma[b].cpu(), color=COLORS["accent"], lw=1, ls=":",
                     label="linear map (ours)" if first else None)
            ax0.plot(t, d4[b].cpu(), color=COLORS["reference"], lw=1, ls="-.",
                     label="Lemma D.4's bound (43)" if first else None)
            ax1.plot(t, end.spread[b].cpu(), color=COLORS["multi"], lw=1.5, alpha=0.8,
                     label=r"measured $C_\ell(t)$" if first else None)
        ax0.plot(end.t1_measured.cpu(), torch.ones(S), "o", color=COLORS["multi"], ms=6,
                 label=r"$\max_r\gamma_r=1$")
        for ax in (ax0, ax1):
            ax.axvline(T1, color=palette.INK, ls="--", lw=1.2, label=r"Lemma 5.4's $T_1$")
            ax.set_yscale("log")
            ax.set_xlabel("step $t$")
        ax0.set_ylim(1e-3, 30)
        keep_inside(ax0)
        ax0.set_ylabel(r"$\max_r \gamma_r^{(t)}$")
        ax0.set_title("signal learning, multi-modal", fontsize="medium")
        ax0.legend(loc="lower right", fontsize="xx-small")
        ax1.axhline(1.01, color=COLORS["reference"], lw=0.8, ls=":")
        ax1.text(float(t[-1]) * 0.75, 1.2, r"$C_\ell=1.01$ (Lemma D.8)", fontsize="x-small", ha="center")
        ax1.set_ylabel(r"smallest $C_\ell$ of Lemma D.1")
        ax1.set_title("spread of the loss derivatives", fontsize="medium")
        ax1.legend(loc="upper left", fontsize="x-small")
    return fig


def draw_signal_and_noise(single: Trajectory, multi: Trajectory, t1: float, n: int):
    """Section 5.2 in one picture: the largest signal coefficient ``max_r gamma_r`` and the
    largest noise coefficient ``max_{r,i} rho_{r,i}``, single- against multi-modal (mean ± 1 s.d.
    over the seeds), with Lemma 5.4's ``T1`` and the ``1/sqrt(n)`` scale it gives the noise."""
    import matplotlib.pyplot as plt

    with style():
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
        t = multi.steps.cpu()
        for run, mode in ((single, "single"), (multi, "multi")):
            for ax, v in ((ax0, run.gamma.amax(-1)), (ax1, run.rho.amax((-1, -2)))):
                v = v.cpu()
                mean = v.mean(0)
                sd = v.std(0) if v.shape[0] > 1 else torch.zeros_like(mean)  # one seed: no spread
                ax.plot(t, mean, color=COLORS[mode], label=f"{mode}-modal")
                ax.fill_between(t, mean - sd, mean + sd, color=COLORS[mode], alpha=0.2, lw=0)
        ax1.axhline(1 / math.sqrt(n), color=COLORS["reference"], ls=":", lw=1)
        ax1.text(t[-1], 1 / math.sqrt(n) * 1.3, r"$1/\sqrt{n}$ (Lemma 5.4)", ha="right",
                 fontsize="small")
        for ax in (ax0, ax1):
            ax.axvline(t1, color=palette.INK, ls="--", lw=1)
            ax.set_yscale("log")
            ax.set_xlabel("step $t$")
        ax0.text(t1, 1e-2, r" $T_1$", ha="left", fontsize="small")
        ax0.set_title(r"signal: $\max_r\gamma_r$")
        ax1.set_title(r"noise: $\max_{r,i}\rho_{r,i}$")
        ax0.legend(loc="lower right", fontsize="x-small")
        headline(fig, CLAIM)
    return fig


def draw_noise(multi: Trajectory, cases: sync.NoiseCases):
    """Lemma D.9 (4): for the pairs of case (4) the largest ratio of ``Psi`` (either network) to
    the bound (45), up to ``T1``, per seed."""
    import matplotlib.pyplot as plt

    with style():
        fig, ax1 = plt.subplots(figsize=(5.0, 3.4), constrained_layout=True)
        tt = multi.steps[multi.steps <= cases.t_max].cpu()
        for b in range(cases.psi_ratio.shape[0]):
            ax1.plot(tt, cases.psi_ratio[b].cpu(), color=COLORS["multi"], lw=1.5, alpha=0.8,
                     label="largest ratio, case-4 pairs" if b == 0 else None)
        ax1.axhline(1.0, color=COLORS["reference"], ls="--", lw=1.2, label="bound (45)")
        ax1.set_ylim(0, 1.15)
        ax1.set_xlabel("step $t$")
        ax1.set_ylabel(r"$\Psi_{r,i}^{(t)}$ / bound")
        ax1.set_title("Lemma D.9 (4), up to $T_1$", fontsize="medium")
        ax1.legend(loc="lower left", fontsize="x-small")
    return fig


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
def _synchronisation(size, device):
    r = multimodal_runs(size, device)
    return draw_synchronisation(sync_examples(r.syn), r.seeds)


def _stage1(size, device):
    return draw_stage1(stage1_end(size, device))


def _sync_prediction(size, device):
    r = multimodal_runs(size, device)
    return draw_sync_prediction(r.syn, r.seeds)


def _signal_and_noise(size, device):
    r = multimodal_runs(size, device)
    return draw_signal_and_noise(r.single, r.multi, stage1_end(size, device).t1, r.cfg.n)


def _noise(size, device):
    return draw_noise(multimodal_runs(size, device).multi, noise_cases(size, device))


FIGURES = [
    FigureSpec("ch5-signal-and-noise", "Section 5.2 in one picture: the largest signal and noise "
               "coefficients, single- against multi-modal (mean ± 1 s.d. over 5 seeds), with "
               "Lemma 5.4's T₁ and its 1/√n scale for the noise", CHAPTER, LABEL, _signal_and_noise,
               takeaway=True),
    FigureSpec("ch5-synchronisation", "Multi-modal synchronisation (Lemma D.3): three neurons whose "
               "two halves start with opposite signs on the signal, with the closed form of our "
               "linear stage-1 map", CHAPTER, LABEL, _synchronisation),
    FigureSpec("ch5-sync-prediction", "Our synchronisation-time proposition against the runs: "
               "measured against predicted step t′ for every out-of-step neuron that synchronises, "
               "5 seeds", CHAPTER, LABEL, _sync_prediction),
    FigureSpec("ch5-stage1", "End of multi-modal stage 1 (Lemma 5.4): max_r γ_r against the linear "
               "stage-1 map, Lemma D.4's lower bound and T₁; the spread C_ℓ of the loss derivatives "
               "(Lemma D.1)", CHAPTER, LABEL, _stage1),
    FigureSpec("ch5-noise", "Lemma D.9 (4): the largest ratio of Ψ to the bound (45) over the "
               "pairs of case (4), up to T₁", CHAPTER, LABEL, _noise),
]
