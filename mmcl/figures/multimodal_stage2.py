"""Figures of the chapter :ref:`Multi-modal learning, stage 2 <sec-multimodal-stage2>`: drawing only.

The runs are :mod:`mmcl.experiments.multimodal_stage2`'s (its :func:`~mmcl.experiments.multimodal_stage2.stage2_run`,
:func:`~mmcl.experiments.multimodal_stage2.chains` and :func:`~mmcl.experiments.multimodal_stage2.scales`, cached per
``(size, device)`` and shared by the chapter's four figures); the computations are those of
:mod:`mmcl.proofs.multi_stage2` (the comparators of Lemma D.12 and the chain of App. D.2) on the
synchronisation of :mod:`mmcl.proofs.multi_stage1`.  This module draws them and registers the figures:

* :func:`draw_loss` -- the loss of each direction and their sum;
* :func:`draw_margins` -- Lemma D.13, the positive margins at the last step;
* :func:`draw_telescoping` -- Lemmas D.14/D.15, the one-step slack and the telescoped bound;
* :func:`draw_scales` -- what stage 2 leaves, ``max_r gamma_r`` and ``max_{r,i} |rho_{r,i}|``.
"""
from __future__ import annotations

import math

import torch

from mmcl.experiments import multimodal_stage2 as experiment
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.proofs.scales import Stage2Scales
from mmcl.figures.theme import COLORS, headline, legend_below, style
from mmcl.model.config import SyntheticConfig

__all__ = ["draw_margins", "draw_loss", "draw_telescoping", "draw_scales", "FIGURES"]

LABEL = "sec-multimodal-stage2"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_scales``).
CLAIM = "Stage 2 leaves the noise far above Lemma D.15's bound"


# --------------------------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------------------------
# One colour code: the paper's choices (its signs theta_r, its bounds) are ``reference`` grey; our
# variant (the signs read at T1) and the multi-modal quantities are ``multi`` blue; the noise
# coefficients are ``accent`` green.  Nothing here is single-modal, so nothing is vermilion.
_PAPER, _OURS, _NOISE = COLORS["reference"], COLORS["multi"], COLORS["accent"]


def draw_margins(ch: experiment.Stage2Chains):
    """Lemma D.13 at the last step: the positive margins ``<nabla F_0, W*>/(2L)`` of each network,
    with the paper's signs and with the signs at ``T1``, and the largest negative margin."""
    import matplotlib.pyplot as plt

    T = int(ch.paper.telescoping.combined.steps[-1])
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.6), layout="constrained")
        for k, ax in enumerate(axes):
            pp = ch.paper.pos_ratio[k][..., -1, :].flatten()
            pt = ch.at_t1.pos_ratio[k][..., -1, :].flatten()
            hi = max(1.1, float(pp.max()), float(pt.max())) * 1.05
            bins = torch.linspace(min(0.0, float(pp.min())), hi, 40).tolist()
            ax.hist(pp, bins=bins, color=_PAPER, alpha=0.6, label=r"paper's $\theta_r$ (at $t=0$)")
            ax.hist(pt, bins=bins, color=_OURS, alpha=0.6, label=r"$\theta_r$ read at $T_1$")
            ax.axvline(1, color=palette.INK, lw=1, label="required by Lemma D.13")
            neg = float(ch.paper.neg_ratio[k][..., -1, :, :].max())
            ax.axvline(neg, color=_NOISE, lw=1, ls="--", label=r"largest negative margin / $L$")
            ax.set_xlabel(r"$\langle\nabla F_0, W^*\rangle / 2L$" if k == 0
                          else r"$\langle\nabla \widetilde F_0, \widetilde W^*\rangle / 2L$")
            ax.set_title(("first network" if k == 0 else "second network") + f", t = {T}")
        axes[0].set_ylabel("count of (seed, i)")
        legend_below(fig, axes)
    return fig


def draw_loss(ch: experiment.Stage2Chains):
    """The loss of each direction and their sum along training (every seed), with ``2 eps`` and
    the start of stage 2."""
    import matplotlib.pyplot as plt

    tel = ch.paper.telescoping
    steps = tel.combined.steps.cpu()
    with style():
        fig, ax = plt.subplots(figsize=(6.0, 3.6), layout="constrained")
        for s in range(tel.combined.loss.shape[0]):
            lab = s == 0
            ax.plot(steps, tel.combined.loss[s].cpu(), color=palette.INK, alpha=0.8,
                    label=r"$L = L_S(W) + L_S(\widetilde W)$" if lab else None)
            ax.plot(steps, tel.first.loss[s].cpu(), color=_OURS, alpha=0.7, ls="--",
                    label=r"$L_S(W)$" if lab else None)
            ax.plot(steps, tel.second.loss[s].cpu(), color=_OURS, alpha=0.7, ls=":",
                    label=r"$L_S(\widetilde W)$" if lab else None)
        ax.axhline(2 * ch.ccfg.epsilon, color=_PAPER, lw=0.8, label=r"$2\epsilon$")
        ax.axvline(ch.paper.t1, color=_PAPER, ls="-.", lw=0.8, label=r"$T_1$")
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_ylabel("training loss")
        ax.legend(loc="upper right", fontsize="small")
    return fig


def draw_telescoping(ch: experiment.Stage2Chains, cfg: SyntheticConfig):
    """Lemmas D.14/D.15: the one-step slack of Lemma D.14 (median over seeds; the paper's signs,
    the signs at ``T1``, and per network), and the telescoped bound on the average loss."""
    import matplotlib.pyplot as plt

    steps = ch.paper.telescoping.combined.steps.cpu()
    T1, eps = ch.paper.t1, ch.ccfg.epsilon
    S = ch.paper.avg_loss.shape[0]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), layout="constrained")
        ax = axes[0]
        t_one = steps[:-1]
        for series, color, ls, lab in (
                (ch.paper.slack, _PAPER, "-", r"both, paper's $\theta$"),
                (ch.at_t1.slack, _OURS, "-", r"both, $\theta$ at $T_1$"),
                (ch.at_t1.slack_first, _OURS, "--", r"$W$ alone, $\theta$ at $T_1$"),
                (ch.at_t1.slack_second, _OURS, ":", r"$\widetilde W$ alone, $\theta$ at $T_1$")):
            ax.plot(t_one[T1:], (series[:, T1:] / cfg.lr).median(0).values, color=color, ls=ls,
                    label=lab)
        ax.axhline(0, color=palette.INK, lw=0.8)
        ax.set_xlabel("step t")
        ax.set_title(r"Lemma D.14: slack / $\eta$ (median)")
        ax = axes[1]
        t_avg = steps[-ch.paper.avg_loss.shape[-1]:]
        for s in range(S):
            first = s == 0
            ax.plot(t_avg, ch.paper.avg_loss[s], color=palette.INK, alpha=0.8,
                    label=r"average of $L$ since $T_1$" if first else None)
            ax.plot(t_avg, ch.paper.avg_bound[s], color=_PAPER, ls="--", alpha=0.7,
                    label=r"Lemma D.15 bound, paper's $\theta$" if first else None)
            ax.plot(t_avg, ch.at_t1.avg_bound[s], color=_OURS, ls="--", alpha=0.7,
                    label=r"Lemma D.15 bound, $\theta$ at $T_1$" if first else None)
        ax.axhline(2 * eps, color=_PAPER, lw=0.8, ls=":", label=r"$2\epsilon$")
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_title("Lemma D.15: telescoped bound")
        legend_below(fig, axes, ncol=3)
    return fig


def draw_scales(scales: Stage2Scales, n: int):
    """What stage 2 leaves: ``max_r gamma_r`` and ``max_{r,i} |rho_{r,i}|`` of both networks along
    training, with Lemma D.15's bound ``sigma0 sigma_xi sqrt(d)`` on the noise and ``1/sqrt(n)``."""
    import matplotlib.pyplot as plt

    steps, T1 = scales.steps, scales.t1
    S = scales.gamma_max.shape[0]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.6), layout="constrained", sharey=True)
        for k, ax in enumerate(axes):
            g = scales.gamma_max if k == 0 else scales.gamma_tilde_max
            r = scales.rho_max if k == 0 else scales.rho_tilde_max
            for s in range(S):
                first = s == 0
                ax.plot(steps, g[s], color=_OURS, alpha=0.7,
                        label=r"signal $\max_r\gamma_r$" if first else None)
                ax.plot(steps, r[s], color=_NOISE, alpha=0.7,
                        label=r"noise $\max_{r,i}|\rho_{r,i}|$" if first else None)
            ax.axhline(scales.rho_bound, color=_PAPER, ls="--", lw=1,
                       label=r"Lemma D.15: $\sigma_0\sigma_\xi\sqrt{d}$")
            ax.axhline(1 / math.sqrt(n), color=_PAPER, ls=":", lw=1,
                       label=r"Appendix D.3: $1/\sqrt{n}$")
            ax.axvline(T1, color=_PAPER, ls="-.", lw=0.8, label=r"$T_1$: stage 2 starts")
            ax.set_yscale("log")
            ax.set_xlabel("step t")
            ax.set_title("first network ($W$)" if k == 0 else r"second network ($\widetilde W$)")
        legend_below(fig, axes, ncol=3)
        headline(fig, CLAIM)
    return fig


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
def _margins(size, device):
    return draw_margins(experiment.chains(size, device))


def _loss(size, device):
    return draw_loss(experiment.chains(size, device))


def _telescoping(size, device):
    return draw_telescoping(experiment.chains(size, device), experiment.stage2_run(size, device).cfg)


def _scales(size, device):
    return draw_scales(experiment.scales(size, device), experiment.stage2_run(size, device).cfg.n)


FIGURES = [
    FigureSpec("mm-stage2-scales", "What stage 2 leaves (Lemma D.15, App. D.3): max_r γ_r and max_{r,i} "
               "|ρ_{r,i}| of both networks through training, against Lemma D.15's σ0σ_ξ√d and 1/√n: "
               "the noise stays far above both, 5 seeds", CHAPTER, LABEL, _scales, takeaway=True),
    FigureSpec("mm-stage2-loss", "The multi-modal loss of each direction and their sum through training, "
               "against 2ε, 5 seeds", CHAPTER, LABEL, _loss),
    FigureSpec("mm-stage2-margins", "Lemma D.13 at epoch 200: positive margins of both comparators, with the "
               "paper's signs θ_r and with the signs read at T1, against the required 1, and the largest "
               "negative margin, 5 seeds", CHAPTER, LABEL, _margins),
    FigureSpec("mm-stage2-telescoping", "Lemmas D.14/D.15: the one-step slack (both networks and each "
               "alone) and the telescoped bound on the average loss, 5 seeds", CHAPTER, LABEL,
               _telescoping),
]
