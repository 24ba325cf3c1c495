"""Figures of the chapter "Single-modal learning, stage 2" (``book/04_single_stage2.md``): drawing only.

The runs are :mod:`mmcl.experiments.single_stage2`'s (cached per ``(size, device)``, shared by the
chapter and its figures); the computations are those of :mod:`mmcl.proofs.single_stage2` (the
comparator chain of App. C.2, the scale gap of Theorem 4.2) and :mod:`mmcl.downstream.evaluation`.
This module draws the four figures and registers them:

* :func:`draw_telescoping` -- Lemmas C.17/C.18, the one-step slack and the telescoped bound;
* :func:`draw_margins` -- Lemma C.16's margins at the last step;
* :func:`draw_scale_gap` -- Theorem 4.2 / Lemma C.18, the scale gap through stage 2 and against ``n``;
* :func:`draw_downstream` -- Theorem 4.2, the single-modal OOD test error along training.
"""
from __future__ import annotations

import torch

from mmcl.experiments.single_stage2 import (ScaleGapSweep, Stage2Downstream, comparator_chain, downstream,
                                            n_sweep, stage2_run)
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.proofs import scales
from mmcl.figures.theme import COLORS, style
from mmcl.model.config import SyntheticConfig
from mmcl.proofs import single_stage2 as cv

__all__ = ["draw_telescoping", "draw_margins", "draw_scale_gap", "draw_downstream", "FIGURES"]

LABEL = "sec-single-stage2"
CHAPTER = chapter_of(__name__)


# --------------------------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------------------------
def draw_telescoping(chain: cv.ComparatorChain, cfg: SyntheticConfig):
    """Lemmas C.17/C.18: the training loss of every seed, the one-step slack (median over seeds)
    with the paper's comparator and with the smallest that works, and the telescoped bound."""
    import matplotlib.pyplot as plt

    tel = chain.telescoping
    steps, loss = tel.steps.cpu(), tel.loss.cpu()
    T1, S = chain.t1, loss.shape[0]
    with style():
        fig, axes = plt.subplots(1, 3, figsize=(17, 4.6), constrained_layout=True)
        ax = axes[0]
        for s in range(S):
            ax.plot(steps, loss[s], color=COLORS["single"], alpha=0.7, label="training loss" if s == 0 else None)
        ax.axhline(chain.epsilon, color=COLORS["reference"], ls="--", lw=1, label=r"$\epsilon$")
        ax.axvline(T1, color=COLORS["reference"], ls="-.", lw=0.8, label=r"$T_1$")
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_title("loss")
        ax.legend(loc="upper right")
        ax = axes[1]
        t_one = steps[:-1]
        ax.plot(t_one, (chain.slack / cfg.lr).median(0).values, color=COLORS["single"],
                label=r"paper's $\lambda$ (factor 2)")
        ax.plot(t_one, (chain.slack_at / cfg.lr).median(0).values, color=COLORS["multi"],
                label=fr"$\lambda$ with factor {chain.factor17:.2f}")
        ax.axhline(0, color="k", lw=0.8)
        ax.axvline(T1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax.set_ylim(-0.4, 0.4)
        ax.set_xlabel("step t")
        ax.set_title("Lemma C.17: slack / $\\eta$ (median over seeds)")
        ax.legend(loc="lower right", fontsize=10)
        ax = axes[2]
        t_avg = steps[-chain.avg_loss.shape[-1]:]  # T1 .. T
        for s in range(S):
            ax.plot(t_avg, chain.avg_loss[s], color=COLORS["single"], alpha=0.7,
                    label="average loss since $T_1$" if s == 0 else None)
            ax.plot(t_avg, chain.avg_bound[s], color=COLORS["reference"], ls="--", alpha=0.7,
                    label="Lemma C.18 bound" if s == 0 else None)
        ax.axhline(chain.epsilon, color=COLORS["reference"], lw=0.8, ls=":")
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_title("Lemma C.18: telescoped bound")
        ax.legend(loc="lower left", bbox_to_anchor=(0.25, 0.22), fontsize=10)
    return fig


def draw_margins(chain: cv.ComparatorChain):
    """Lemma C.16 at the last step: the positive margins against the mean activation behind them,
    and the histogram of the negative margins."""
    import matplotlib.pyplot as plt

    T = int(chain.telescoping.steps[-1])
    act, pos, neg = chain.act_pos[:, -1], chain.pos_ratio[:, -1], chain.neg_ratio[:, -1]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.4), constrained_layout=True)
        ax = axes[0]
        ax.scatter(act.flatten(), pos.flatten(), s=10, color=COLORS["single"], alpha=0.6)
        xx = torch.linspace(0, float(act.max()) * 1.1, 10)
        ax.plot(xx, xx, color=COLORS["reference"], lw=1, ls=":", label="y = x")
        ax.plot(xx, xx * (1 + chain.init_share), color=COLORS["reference"], lw=1, ls="--",
                label=r"y = x (1 + $\sigma_0\sigma_\xi\sqrt{d}/\lambda$)")
        ax.axhline(1, color="k", lw=1, label="required by Lemma C.16")
        ax.set_xlabel(r"$\frac{1}{m}\sum_r \mathbb{1}[\langle w_r, \xi_i\rangle > 0]\,\sigma(\langle w_r, \xi_i + \epsilon_i\rangle)$")
        ax.set_ylabel(r"$\langle\nabla F_0, W^*\rangle / 2L$")
        ax.set_title(f"positive margins at t = {T}")
        ax.legend(loc="lower right", fontsize=10)
        ax = axes[1]
        ax.hist(neg.flatten(), bins=60, color=COLORS["multi"], alpha=0.8)
        ax.axvline(1, color="k", lw=1)
        ax.set_yscale("log")
        ax.set_xlabel(r"$\langle\nabla F_j, W^*\rangle / L$")
        ax.set_ylabel("count of (i, j) pairs")
        ax.set_title(f"negative margins at t = {T} (need $\\leq 1$)")
    return fig


def draw_scale_gap(gap: scales.ScaleGap, sweep: ScaleGapSweep):
    """Theorem 4.2 / Lemma C.18: ``min_i max_r rho`` and ``max_r |gamma_r|`` through stage 2 with the
    bound ``3 max_r |gamma_r(T1)|``, and both at the end of training against ``n``."""
    import matplotlib.pyplot as plt

    steps, T1 = gap.steps, gap.t1
    k1 = int((steps == T1).nonzero()[0, 0])
    T = int(steps[-1])
    sizes = list(sweep.sizes)
    ns = torch.tensor(sizes, dtype=torch.float64)
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.4), constrained_layout=True)
        ax = axes[0]
        for s in range(gap.gamma_max.shape[0]):
            ax.plot(steps, gap.rho_minmax[s], color=COLORS["single"], alpha=0.7,
                    label=r"$\min_i\max_r\rho_{r,i}$" if s == 0 else None)
            ax.plot(steps, gap.gamma_max[s], color=COLORS["multi"], alpha=0.7,
                    label=r"$\max_r|\gamma_r|$" if s == 0 else None)
        ax.plot(steps[k1:], 3 * gap.gamma_max[:, k1].max() * torch.ones(len(steps) - k1), color=COLORS["multi"],
                ls="--", lw=1, label=r"$3\max_r|\gamma_r^{(T_1)}|$")
        ax.axvline(T1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax.set_xlabel("step t")
        ax.set_title("scale gap through stage 2")
        ax.legend(loc="upper left", fontsize=10)
        ax = axes[1]
        for key, c, lab in (("rho", COLORS["single"], r"$\min_i\max_r\rho_{r,i}^{(T)}$"),
                            ("gamma", COLORS["multi"], r"$\max_r|\gamma_r^{(T)}|$")):
            vals = torch.stack([sweep.by_n[n][key] for n in sizes])  # (len(sizes), seeds)
            ax.errorbar(sizes, vals.mean(-1), yerr=vals.std(-1, correction=0), color=c, marker="o", capsize=4,
                        label=lab)
        ax.plot(sizes, float(sweep.gamma_mean[0]) * (ns / sizes[0]) ** -0.5, color=COLORS["reference"], ls=":",
                label=r"$\propto 1/\sqrt{n}$")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (with d = 20 n)")
        ax.set_title(f"end of training (T = {T}) against n")
        ax.legend(loc="center right", fontsize=10)
    return fig


def draw_downstream(down: Stage2Downstream, t1: int, T: int):
    """Theorem 4.2: the single-modal OOD test error along training (both protocols, mean ± 1 s.d.
    over the seeds), with the multi-modal error at the end for contrast."""
    import matplotlib.pyplot as plt

    e = down.ev["single"]
    S = e["adapt"].accuracy.shape[0]
    with style():
        fig, ax = plt.subplots(figsize=(8.5, 4.6), constrained_layout=True)
        for protocol, ls in (("adapt", "-"), ("transfer", "--")):
            acc = e[protocol].accuracy.cpu()
            x = e[protocol].steps.cpu()
            ax.plot(x, 1 - acc.mean(0), color=COLORS["single"], ls=ls, label=f"single-modal, {protocol}")
            ax.fill_between(x, 1 - acc.mean(0) - acc.std(0, correction=0), 1 - acc.mean(0) + acc.std(0, correction=0),
                            color=COLORS["single"], alpha=0.15, lw=0)
        for protocol, mk in (("adapt", "o"), ("transfer", "s")):
            ax.plot([T], [float(down.err["multi"][protocol].mean())], mk, color=COLORS["multi"], ms=9,
                    label=f"multi-modal at T, {protocol}")
        ax.axhline(0.5, color=COLORS["reference"], ls=":", lw=1)
        ax.axvline(t1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax.set_ylim(0, 0.6)
        ax.set_xlabel("training step t")
        ax.set_ylabel("OOD test error")
        ax.set_title(f"downstream error (mean $\\pm$ 1 s.d. over {S} seeds)")
        ax.legend(loc="lower left", fontsize=10)
    return fig


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
def _telescoping(size, device):
    return draw_telescoping(comparator_chain(size, device), stage2_run(size, device).cfg)


def _margins(size, device):
    return draw_margins(comparator_chain(size, device))


def _scale_gap(size, device):
    r = stage2_run(size, device)
    return draw_scale_gap(scales.scale_gap(r.traj, r.t1), n_sweep(size, device))


def _downstream(size, device):
    r = stage2_run(size, device)
    return draw_downstream(downstream(size, device), r.t1, r.T)


FIGURES = [
    FigureSpec("stage2-telescoping", "Lemmas C.17/C.18: training loss, one-step slack with the paper's comparator "
               "and with the smallest one that works, and the telescoped bound on the average loss, 5 seeds",
               CHAPTER, LABEL, _telescoping),
    FigureSpec("stage2-margins", "Lemma C.16 at epoch 200: positive margins of the comparator against the mean "
               "activation, and the distribution of the negative margins", CHAPTER, LABEL, _margins),
    FigureSpec("stage2-scale-gap", "Theorem 4.2 / Lemma C.18: min_i max_r ρ_{r,i} and max_r γ_r through stage 2 "
               "with the 3β bound, and at the end of training against n (d = 20n)", CHAPTER, LABEL, _scale_gap),
    FigureSpec("stage2-downstream", "Theorem 4.2: single-modal OOD test error along training (adapt and transfer "
               "heads, mean ± 1 s.d. over 5 seeds), multi-modal at the end for contrast", CHAPTER, LABEL,
               _downstream),
]
