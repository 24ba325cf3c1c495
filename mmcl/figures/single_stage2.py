"""Figures of the chapter :ref:`Single-modal learning, stage 2 <sec-single-stage2>`: drawing only.

The runs are :mod:`mmcl.experiments.single_stage2`'s (cached per ``(size, device)``, shared by the
chapter and its figures); the computations are those of :mod:`mmcl.proofs.single_stage2` (the
comparator chain of App. C.2, the scale gap of Theorem 4.2) and :mod:`mmcl.downstream.evaluation`.
This module draws the four figures and registers them:

* :func:`draw_downstream` -- Theorem 4.2 in one picture (the takeaway): the loss converges, the
  single-modal OOD test error does not move;
* :func:`draw_telescoping` -- Lemmas C.17/C.18, the one-step slack and the telescoped bound;
* :func:`draw_margins` -- Lemma C.16's margins at the last step;
* :func:`draw_scale_gap` -- Theorem 4.2 / Lemma C.18, the scale gap through stage 2 and against ``n``;
"""
from __future__ import annotations

import torch

from mmcl.experiments.single_stage2 import (EPSILON, ScaleGapSweep, Stage2Downstream, Stage2Run,
                                            comparator_chain, downstream, n_sweep, scale_gap_result,
                                            stage2_run)
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.proofs import scales
from mmcl.figures.theme import COLORS, headline, keep_inside, style
from mmcl.model.config import SyntheticConfig
from mmcl.proofs import single_stage2 as cv

__all__ = ["draw_telescoping", "draw_margins", "draw_scale_gap", "draw_downstream", "FIGURES"]

LABEL = "sec-single-stage2"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_downstream``).
CLAIM = 'The single-modal loss converges, but the OOD error does not fall'


# --------------------------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------------------------
def draw_telescoping(chain: cv.ComparatorChain, cfg: SyntheticConfig):
    """Lemmas C.17/C.18: the one-step slack (median over seeds) with the paper's comparator and
    with the smallest that works, and the telescoped bound against the average loss."""
    import matplotlib.pyplot as plt

    tel = chain.telescoping
    steps = tel.steps.cpu()
    T1, S = chain.t1, tel.loss.shape[0]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
        ax = axes[0]
        t_one = steps[:-1]
        ax.plot(t_one, (chain.slack / cfg.lr).median(0).values, color=COLORS["reference"],
                label=r"paper's $\lambda$ (factor 2)")
        ax.plot(t_one, (chain.slack_at / cfg.lr).median(0).values, color=COLORS["accent"],
                label=fr"factor {chain.factor17:.1f}")
        ax.axhline(0, color=palette.INK, lw=0.8)
        ax.axvline(T1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax.text(T1, 0.36, r" $T_1$", ha="left", va="top", fontsize="small")
        ax.set_ylim(-0.4, 0.4)
        keep_inside(ax)
        ax.set_xlabel("step t")
        ax.set_title("Lemma C.17: slack / $\\eta$")
        ax.legend(loc="lower right", fontsize="small")
        ax = axes[1]
        t_avg = steps[-chain.avg_loss.shape[-1]:]  # T1 .. T
        for s in range(S):
            ax.plot(t_avg, chain.avg_bound[s], color=COLORS["reference"], ls="--", alpha=0.7,
                    label="Lemma C.18 bound" if s == 0 else None)
            ax.plot(t_avg, chain.avg_loss[s], color=COLORS["single"], alpha=0.7,
                    label="average loss since $T_1$" if s == 0 else None)
        ax.axhline(chain.epsilon, color=COLORS["reference"], lw=0.8, ls=":")
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_title("Lemma C.18: telescoped bound")
        ax.legend(loc="center right", bbox_to_anchor=(1.0, 0.36), fontsize="small")
    return fig


def draw_margins(chain: cv.ComparatorChain):
    """Lemma C.16 at the last step: the positive margins against the mean activation behind them,
    and the histogram of the negative margins."""
    import matplotlib.pyplot as plt

    T = int(chain.telescoping.steps[-1])
    act, pos, neg = chain.act_pos[:, -1], chain.pos_ratio[:, -1], chain.neg_ratio[:, -1]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
        ax = axes[0]
        ax.scatter(act.flatten(), pos.flatten(), s=10, color=COLORS["single"], alpha=0.6)
        xx = torch.linspace(0, float(act.max()) * 1.1, 10)
        ax.plot(xx, xx, color=COLORS["reference"], lw=1, ls=":", label="y = x")
        ax.plot(xx, xx * (1 + chain.init_share), color=COLORS["reference"], lw=1, ls="--",
                label="with initial alignment")
        ax.axhline(1, color=palette.INK, lw=1, label="required by Lemma C.16")
        ax.set_xlabel("average activation behind the margin")
        ax.set_ylabel(r"$\langle\nabla F_0, W^*\rangle / 2L$")
        ax.set_title(f"positive margins at t = {T} (need $\\geq 1$)")
        ax.legend(loc="lower right", fontsize="x-small")
        ax = axes[1]
        ax.hist(neg.flatten(), bins=60, color=COLORS["single"], alpha=0.8)
        ax.axvline(1, color=palette.INK, lw=1)
        ax.set_yscale("log")
        ax.set_xlabel(r"$\langle\nabla F_j, W^*\rangle / L$")
        ax.set_ylabel("(i, j) pairs")
        ax.set_title("negative margins (need $\\leq 1$)")
    return fig


def draw_scale_gap(gap: scales.ScaleGap, sweep: ScaleGapSweep):
    """Theorem 4.2 / Lemma C.18: ``min_i max_r rho`` and ``max_r |gamma_r|`` through stage 2 with the
    bound ``3 max_r |gamma_r(T1)|``, and both at the end of training against ``n``."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    steps, T1 = gap.steps, gap.t1
    k1 = int((steps == T1).nonzero()[0, 0])
    T = int(steps[-1])
    sizes = list(sweep.sizes)
    ns = torch.tensor(sizes, dtype=torch.float64)
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
        ax = axes[0]
        for s in range(gap.gamma_max.shape[0]):
            ax.plot(steps, gap.rho_minmax[s], color=COLORS["single"], alpha=0.7,
                    label=r"$\min_i\max_r\rho_{r,i}$" if s == 0 else None)
            ax.plot(steps, gap.gamma_max[s], color=COLORS["accent"], alpha=0.7,
                    label=r"$\max_r|\gamma_r|$" if s == 0 else None)
        ax.plot(steps[k1:], 3 * gap.gamma_max[:, k1].max() * torch.ones(len(steps) - k1), color=COLORS["reference"],
                ls="--", lw=1, label=r"$3\max_r|\gamma_r^{(T_1)}|$")
        ax.axvline(T1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax.set_xlabel("step t")
        ax.set_title("through stage 2")
        ax.legend(loc="upper left", fontsize="x-small")
        ax = axes[1]
        for key, c, lab in (("rho", COLORS["single"], r"$\min_i\max_r\rho_{r,i}^{(T)}$"),
                            ("gamma", COLORS["accent"], r"$\max_r|\gamma_r^{(T)}|$")):
            vals = torch.stack([sweep.by_n[n][key] for n in sizes])  # (len(sizes), seeds)
            ax.errorbar(sizes, vals.mean(-1), yerr=vals.std(-1, correction=0), color=c, marker="o", capsize=4,
                        label=lab)
        ax.plot(sizes, float(sweep.gamma_mean[0]) * (ns / sizes[0]) ** -0.5, color=COLORS["reference"], ls=":",
                label=r"$\propto 1/\sqrt{n}$")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("n (with d = 20 n)")
        ax.set_title(f"at T = {T}, against n")
        ax.legend(loc="center right", fontsize="x-small")
    return fig


def draw_downstream(down: Stage2Downstream, run: Stage2Run):
    """Theorem 4.2 in one picture: the training loss of every seed falls below the target, while
    the single-modal OOD test error (both protocols, mean over the seeds) does not move, with the
    multi-modal error at the end for contrast."""
    import matplotlib.pyplot as plt

    e = down.ev["single"]
    t1, T = run.t1, run.T
    loss = run.traj.loss.cpu()
    with style():
        fig, (ax0, ax) = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
        for s in range(loss.shape[0]):
            ax0.plot(run.traj.steps.cpu(), loss[s], color=COLORS["single"], alpha=0.7)
        ax0.axhline(EPSILON, color=COLORS["reference"], ls=":", lw=1)
        ax0.text(T, EPSILON * 1.15, r"$\epsilon$ = " + f"{EPSILON}", ha="right", va="bottom",
                 fontsize="small")
        ax0.axvline(t1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax0.set_yscale("log")
        ax0.set_xlabel("training step t")
        ax0.set_title("training loss: converges")
        for protocol, ls in (("adapt", "-"), ("transfer", "--")):
            acc = e[protocol].accuracy.cpu()
            x = e[protocol].steps.cpu()
            ax.plot(x, 1 - acc.mean(0), color=COLORS["single"], ls=ls, label=f"single, {protocol}")
        for protocol, mk in (("adapt", "o"), ("transfer", "s")):
            ax.plot([T], [float(down.err["multi"][protocol].mean())], mk, color=COLORS["multi"],
                    ms=7, label=f"multi at T, {protocol}")
        ax.axhline(0.5, color=COLORS["reference"], ls=":", lw=1)
        ax.axvline(t1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax.text(t1, 0.58, r" $T_1$", ha="left", va="top", fontsize="small")
        ax.set_ylim(0, 0.6)
        ax.set_xlabel("training step t")
        ax.set_title("OOD test error: does not")
        ax.legend(loc="lower left", fontsize="x-small", ncol=2)
        headline(fig, CLAIM)
    return fig


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
def _telescoping(size, device):
    return draw_telescoping(comparator_chain(size, device), stage2_run(size, device).cfg)


def _margins(size, device):
    return draw_margins(comparator_chain(size, device))


def _scale_gap(size, device):
    return draw_scale_gap(scale_gap_result(size, device), n_sweep(size, device))


def _downstream(size, device):
    return draw_downstream(downstream(size, device), stage2_run(size, device))


FIGURES = [
    FigureSpec("stage2-downstream", "Theorem 4.2 in one picture: the single-modal training loss of "
               "every seed falls below the target, while the OOD test error (adapt and transfer heads, "
               "mean over the seeds) does not move; the multi-modal error at the end for contrast",
               CHAPTER, LABEL, _downstream, takeaway=True),
    FigureSpec("stage2-telescoping", "Lemmas C.17/C.18: the one-step slack with the paper's "
               "comparator and with the smallest one that works, and the telescoped bound on the "
               "average loss", CHAPTER, LABEL, _telescoping),
    FigureSpec("stage2-margins", "Lemma C.16 at the last step: positive margins of the comparator "
               "against the average activation, and the distribution of the negative margins",
               CHAPTER, LABEL, _margins),
    FigureSpec("stage2-scale-gap", "Theorem 4.2 / Lemma C.18: min_i max_r ρ_{r,i} and max_r γ_r "
               "through stage 2 with the 3β bound, and at the end of training against n (d = 20n)",
               CHAPTER, LABEL, _scale_gap),
]
