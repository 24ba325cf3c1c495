"""Figures of the chapter "Multi-modal learning, stage 2" (``book/06_multimodal_stage2.md``): drawing only.

The runs are :mod:`mmcl.experiments.multimodal_stage2`'s (its :func:`~mmcl.experiments.multimodal_stage2.stage2_run`,
:func:`~mmcl.experiments.multimodal_stage2.chains` and :func:`~mmcl.experiments.multimodal_stage2.scales`, cached per
``(size, device)`` and shared by the chapter's three figures); the computations are those of
:mod:`mmcl.proofs.multi_stage2` (the comparators of Lemma D.12 and the chain of App. D.2) on the
synchronisation of :mod:`mmcl.proofs.multi_stage1`.  This module draws them and registers the figures:

* :func:`draw_margins` -- Lemma D.13, the positive margins at the last step;
* :func:`draw_telescoping` -- Lemmas D.14/D.15, the loss, the one-step slack and the telescoped bound;
* :func:`draw_scales` -- what stage 2 leaves, ``max_r gamma_r`` and ``max_{r,i} |rho_{r,i}|``.
"""
from __future__ import annotations

import math

import torch

from mmcl.experiments import multimodal_stage2 as experiment
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.proofs.scales import Stage2Scales
from mmcl.figures.theme import COLORS, style
from mmcl.model.config import SyntheticConfig

__all__ = ["draw_margins", "draw_telescoping", "draw_scales", "FIGURES"]

LABEL = "sec-multimodal-stage2"
CHAPTER = chapter_of(__name__)


# --------------------------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------------------------
def draw_margins(ch: experiment.Stage2Chains):
    """Lemma D.13 at the last step: the positive margins ``<nabla F_0, W*>/(2L)`` of each network,
    with the paper's signs and with the signs at ``T1``, and the largest negative margin."""
    import matplotlib.pyplot as plt

    T = int(ch.paper.telescoping.combined.steps[-1])
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.4), constrained_layout=True)
        for k, ax in enumerate(axes):
            pp, pt = ch.paper.pos_ratio[k][..., -1, :].flatten(), ch.at_t1.pos_ratio[k][..., -1, :].flatten()
            hi = max(1.1, float(pp.max()), float(pt.max())) * 1.05
            bins = torch.linspace(min(0.0, float(pp.min())), hi, 50).tolist()
            ax.hist(pp, bins=bins, color=COLORS["single"], alpha=0.6, label=r"paper's $\theta_r$ (at $t=0$)")
            ax.hist(pt, bins=bins, color=COLORS["multi"], alpha=0.6, label=r"$\theta_r$ read at $T_1$")
            ax.axvline(1, color="k", lw=1, label="required by Lemma D.13")
            neg = float(ch.paper.neg_ratio[k][..., -1, :, :].max())
            ax.axvline(neg, color=COLORS["accent"], lw=1, ls="--", label=fr"largest negative margin / $L$ ({neg:.2f})")
            net = "first network ($W$)" if k == 0 else r"second network ($\widetilde W$)"
            ax.set_xlabel(r"$\langle\nabla F_0, W^*\rangle / 2L$" if k == 0
                          else r"$\langle\nabla \widetilde F_0, \widetilde W^*\rangle / 2L$")
            ax.set_ylabel("count of (seed, i)")
            ax.set_title(f"{net}, positive margins at t = {T}")
            ax.legend(loc="upper right", fontsize=9)
    return fig


def draw_telescoping(ch: experiment.Stage2Chains, cfg: SyntheticConfig):
    """Lemmas D.14/D.15: the loss of each direction and their sum, the one-step slack of Lemma D.14
    (median over seeds; the paper's signs, the signs at ``T1``, and per network), and the telescoped
    bound on the average loss."""
    import matplotlib.pyplot as plt

    tel = ch.paper.telescoping
    steps = tel.combined.steps.cpu()
    T1, eps = ch.paper.t1, ch.ccfg.epsilon
    S = tel.combined.loss.shape[0]
    with style():
        fig, axes = plt.subplots(1, 3, figsize=(17, 4.6), constrained_layout=True)
        ax = axes[0]
        for s in range(S):
            lab = s == 0
            ax.plot(steps, tel.combined.loss[s].cpu(), color=COLORS["reference"], alpha=0.8,
                    label=r"$L = L_S(W) + L_S(\widetilde W)$" if lab else None)
            ax.plot(steps, tel.first.loss[s].cpu(), color=COLORS["single"], alpha=0.6, ls="--",
                    label=r"$L_S(W)$" if lab else None)
            ax.plot(steps, tel.second.loss[s].cpu(), color=COLORS["multi"], alpha=0.6, ls=":",
                    label=r"$L_S(\widetilde W)$" if lab else None)
        ax.axhline(2 * eps, color="k", lw=0.8, ls="-", label=r"$2\epsilon$")
        ax.axvline(T1, color=COLORS["reference"], ls="-.", lw=0.8)
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_title("loss")
        ax.legend(loc="upper right", fontsize=9)
        ax = axes[1]
        t_one = steps[:-1]
        for series, color, ls, lab in ((ch.paper.slack, COLORS["single"], "-", r"both, paper's $\theta$"),
                                       (ch.at_t1.slack, COLORS["multi"], "-", r"both, $\theta$ at $T_1$"),
                                       (ch.at_t1.slack_first, COLORS["multi"], "--", r"$W$ alone, $\theta$ at $T_1$"),
                                       (ch.at_t1.slack_second, COLORS["multi"], ":",
                                        r"$\widetilde W$ alone, $\theta$ at $T_1$")):
            ax.plot(t_one[T1:], (series[:, T1:] / cfg.lr).median(0).values, color=color, ls=ls, label=lab)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xlabel("step t")
        ax.set_title(r"Lemma D.14: slack / $\eta$ (median over seeds)")
        ax.legend(loc="lower right", fontsize=9)
        ax = axes[2]
        t_avg = steps[-ch.paper.avg_loss.shape[-1]:]
        for s in range(S):
            ax.plot(t_avg, ch.paper.avg_loss[s], color=COLORS["reference"], alpha=0.8,
                    label=r"average of $L$ since $T_1$" if s == 0 else None)
            ax.plot(t_avg, ch.paper.avg_bound[s], color=COLORS["single"], ls="--", alpha=0.7,
                    label=r"Lemma D.15 bound, paper's $\theta$" if s == 0 else None)
            ax.plot(t_avg, ch.at_t1.avg_bound[s], color=COLORS["multi"], ls="--", alpha=0.7,
                    label=r"Lemma D.15 bound, $\theta$ at $T_1$" if s == 0 else None)
        ax.axhline(2 * eps, color="k", lw=0.8, ls=":")
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_title("Lemma D.15: telescoped bound")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 0.3), fontsize=9)
    return fig


def draw_scales(scales: Stage2Scales, n: int):
    """What stage 2 leaves: ``max_r gamma_r`` and ``max_{r,i} |rho_{r,i}|`` of both networks along
    training, with Lemma D.15's bound ``sigma0 sigma_xi sqrt(d)`` on the noise and ``1/sqrt(n)``."""
    import matplotlib.pyplot as plt

    steps, T1 = scales.steps, scales.t1
    S = scales.gamma_max.shape[0]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.4), constrained_layout=True, sharey=True)
        for k, ax in enumerate(axes):
            g = scales.gamma_max if k == 0 else scales.gamma_tilde_max
            r = scales.rho_max if k == 0 else scales.rho_tilde_max
            gl = r"$\max_r\gamma_r$" if k == 0 else r"$\max_r\widetilde\gamma_r$"
            rl = r"$\max_{r,i}|\rho_{r,i}|$" if k == 0 else r"$\max_{r,i}|\widetilde\rho_{r,i}|$"
            for s in range(S):
                ax.plot(steps, g[s], color=COLORS["multi"], alpha=0.7, label=gl if s == 0 else None)
                ax.plot(steps, r[s], color=COLORS["single"], alpha=0.7, label=rl if s == 0 else None)
            ax.axhline(scales.rho_bound, color=COLORS["reference"], ls="--", lw=1,
                       label=r"Lemma D.15: $\sigma_0\sigma_\xi\sqrt{d}$")
            ax.axhline(1 / math.sqrt(n), color=COLORS["reference"], ls=":", lw=1, label=r"$1/\sqrt{n}$")
            ax.axvline(T1, color=COLORS["reference"], ls="-.", lw=0.8)
            ax.set_yscale("log")
            ax.set_xlabel("step t")
            ax.set_title("first network" if k == 0 else "second network")
            ax.legend(loc="lower right", fontsize=9)
    return fig


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
def _margins(size, device):
    return draw_margins(experiment.chains(size, device))


def _telescoping(size, device):
    return draw_telescoping(experiment.chains(size, device), experiment.stage2_run(size, device).cfg)


def _scales(size, device):
    return draw_scales(experiment.scales(size, device), experiment.stage2_run(size, device).cfg.n)


FIGURES = [
    FigureSpec("mm-stage2-margins", "Lemma D.13 at epoch 200: positive margins of both comparators, with the paper's "
               "signs θ_r and with the signs read at T1, against the required 1, and the largest negative margin, "
               "5 seeds", CHAPTER, LABEL, _margins),
    FigureSpec("mm-stage2-telescoping", "Lemmas D.14/D.15: the loss of each direction and their sum, the one-step "
               "slack (both networks and each alone), and the telescoped bound on the average loss, 5 seeds",
               CHAPTER, LABEL, _telescoping),
    FigureSpec("mm-stage2-scales", "Lemma D.15 / App. D.3: max_r γ_r and max_{r,i} |ρ_{r,i}| of both networks "
               "through training, against Lemma D.15's σ0σ_ξ√d and 1/√n, 5 seeds", CHAPTER, LABEL, _scales),
]
