"""Figures of the chapter "The downstream theorems" (``book/07_downstream.md``): drawing only.

The run is :mod:`mmcl.experiments.downstream`'s (:func:`~mmcl.experiments.downstream.downstream_result`,
:func:`mmcl.downstream.response.run_downstream` at the chapter's sizes, cached per ``(size, device)``);
this module draws it and registers the figures: :func:`plot_accuracy` (Figure 1's accuracy panel
for the paper's ``nu`` and for a ``nu`` that meets the condition of Sec. 3.3, and the final
accuracy against that condition), :func:`plot_response` (the parts of the OOD responses of the
features) and :func:`plot_ablation` (the accuracy when a part is left out)."""
from __future__ import annotations

import math

import torch

from mmcl.downstream.response import PARTS, VARIANTS, DownstreamResult
from mmcl.experiments import downstream as experiment
from mmcl.experiments.downstream import PAPER, TILTED
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style

__all__ = ["plot_accuracy", "plot_response", "plot_ablation", "FIGURES"]

LABEL = "sec-downstream"
CHAPTER = chapter_of(__name__)

_LABELS = {"single": "single-modal", "multi": "multi-modal"}
_LS = {"adapt": "-", "transfer": "--"}


def _band(ax, x, Y, color, label, ls="-"):
    mean, sd = Y.mean(0), (Y.std(0, correction=0) if Y.shape[0] > 1 else torch.zeros_like(Y[0]))
    ax.plot(x, mean, color=color, ls=ls, label=label)
    ax.fill_between(x, mean - sd, mean + sd, color=color, alpha=0.2, lw=0)


def _angle_title(res: DownstreamResult, c: float) -> str:
    name = r"the paper's $\nu=2e_1$" if c == 1.0 else rf"$\cos(\nu,\mu)={c:g}$"
    return rf"{name}: $|\langle\nu,\mu\rangle|\,\sqrt{{d}}/\|\mu\|^2={res.condition[c]:.2g}$"


def plot_accuracy(res: DownstreamResult, angles=(PAPER, TILTED)):
    """OOD accuracy along training (mean +- 1 s.d. over seeds), both modes and protocols, one panel
    per angle of ``angles``; a last panel: the final accuracy against the condition ratio
    ``|<nu, mu>| sqrt(d)/||mu||^2`` of Sec. 3.3 over every angle of ``res``."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, len(angles) + 1, figsize=(4.3 * (len(angles) + 1), 3.8))
        for ax, c in zip(axes, angles):
            for mode in ("single", "multi"):
                for p in ("adapt", "transfer"):
                    _band(ax, res.eval_steps, res.accuracy[(c, mode, p)], COLORS[mode], f"{_LABELS[mode]}, {p}", _LS[p])
            ax.set_title(_angle_title(res, c), fontsize=10)
            ax.set_xlabel("Epoch")
            ax.set_ylim(0.4, 1.02)
            ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        axes[0].set_ylabel("OOD test accuracy")
        axes[0].legend(loc="lower right", fontsize=8)
        ax = axes[-1]
        cs = sorted(res.nu_cos, key=lambda c: res.condition[c])
        x = [res.condition[c] for c in cs]
        for mode in ("single", "multi"):
            for p in ("adapt", "transfer"):
                Y = torch.stack([res.final[(c, mode, p)] for c in cs], -1)  # (S, angles)
                ax.errorbar(x, Y.mean(0), yerr=Y.std(0, correction=0) if Y.shape[0] > 1 else None,
                            color=COLORS[mode], ls=_LS[p], marker="o", ms=4, capsize=2)
        ax.set_xscale("symlog", linthresh=0.5)
        ax.axvline(1.0, color=COLORS["accent"], lw=1, ls=":")
        ax.text(1.05, 0.42, "condition\nmet to the left", fontsize=8, color=COLORS["accent"])
        ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        ax.set_ylim(0.4, 1.02)
        ax.set_xlabel(r"$|\langle\nu,\mu\rangle|\,/\,(\|\mu\|^2/\sqrt{d})$")
        ax.set_title("Final accuracy against the Sec. 3.3 condition", fontsize=10)
        fig.suptitle(f"Figure 1's OOD accuracy, two directions of $\\nu$ ($\\|\\nu\\|=2$; {len(res.seeds)} seeds)")
    return fig


def plot_response(res: DownstreamResult, angles=(PAPER, TILTED)):
    """The parts of a feature's OOD responses at the end of training (Eq. 11), one panel per mode:
    the spread over the held-out inputs of the noise response ``<w_r, zeta>`` by part, and the
    size of the signal response ``|<w_r, nu>|`` by part for each angle (means over features and
    seeds; log scale), with the scales ``1/sqrt(d)`` and ``1/sqrt(dn)`` of App. C.3/D.3."""
    import matplotlib.pyplot as plt

    cfg = res.cfg
    parts = PARTS + ("total",)
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        width = 0.8 / (1 + len(angles))
        xs = torch.arange(len(parts), dtype=torch.float64)
        for ax, mode in zip(axes, ("single", "multi")):
            spread = res.response[(angles[0], mode)].spread()
            ax.bar(xs - 0.4 + width / 2, [float(spread[p].mean()) for p in parts], width,
                   color=COLORS["reference"], label=r"noise: sd of $\langle w_r,\zeta\rangle$")
            for k, c in enumerate(angles):
                sig = res.response[(c, mode)].signal()
                ax.bar(xs - 0.4 + width * (k + 1.5), [float(sig[p].abs().mean()) for p in parts], width,
                       color=COLORS[mode], alpha=1.0 - 0.55 * k,
                       label=rf"signal: $|\langle w_r,\nu\rangle|$, $\cos(\nu,\mu)={c:g}$")
            for val, txt in ((1 / math.sqrt(cfg.d), r"$1/\sqrt{d}$"), (1 / math.sqrt(cfg.d * cfg.n), r"$1/\sqrt{dn}$")):
                ax.axhline(val, color=COLORS["accent"], lw=1, ls=":")
                ax.text(len(parts) - 0.55, val * 1.1, txt, fontsize=8, color=COLORS["accent"], ha="right")
            ax.set_xticks(xs.tolist(), ["init", "signal", "memorised", "total"])
            ax.set_yscale("log")
            ax.set_ylim(top=3.0)  # room for the legend above the bars
            ax.set_title(f"{_LABELS[mode]} features at the end of training", fontsize=10)
            ax.legend(fontsize=7, loc="upper left")
        axes[0].set_ylabel("mean over features and seeds")
        fig.suptitle("What a feature reads from an OOD input, part by part (Eq. 11)")
    return fig


def plot_ablation(res: DownstreamResult, angles=(PAPER, TILTED)):
    """Final OOD accuracy when a part of the responses is left out (the variants of
    :data:`mmcl.downstream.response.VARIANTS`), both modes and protocols, one panel per angle
    (means over seeds, bars +- 1 s.d.)."""
    import matplotlib.pyplot as plt

    names = list(VARIANTS)
    bars = [(m, p) for m in ("single", "multi") for p in ("adapt", "transfer")]
    with style():
        fig, axes = plt.subplots(1, len(angles), figsize=(6 * len(angles), 4), sharey=True)
        axes = list(axes) if len(angles) > 1 else [axes]
        width = 0.8 / len(bars)
        for ax, c in zip(axes, angles):
            abl = res.ablation[(c, "single")], res.ablation[(c, "multi")]
            for k, (mode, p) in enumerate(bars):
                a = abl[0] if mode == "single" else abl[1]
                Y = torch.stack([a[v][p] for v in names], -1)
                ax.bar([i - 0.4 + width * (k + 0.5) for i in range(len(names))], Y.mean(0), width,
                       yerr=Y.std(0, correction=0) if Y.shape[0] > 1 else None, capsize=2,
                       color=COLORS[mode], alpha=1.0 if p == "adapt" else 0.45, label=f"{_LABELS[mode]}, {p}")
            ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
            ax.set_xticks(range(len(names)), [v.replace(": ", ":\n") for v in names], fontsize=8)
            ax.set_ylim(0.4, 1.02)
            ax.set_title(_angle_title(res, c), fontsize=10)
        axes[0].set_ylabel("final OOD accuracy")
        axes[-1].legend(fontsize=7, loc="upper right")
        fig.suptitle("Which part of the responses decides the error: accuracy with one part left out")
    return fig


def _accuracy(size, device):
    return plot_accuracy(experiment.downstream_result(size, device))


def _response(size, device):
    return plot_response(experiment.downstream_result(size, device))


def _ablation(size, device):
    return plot_ablation(experiment.downstream_result(size, device))


FIGURES = [
    FigureSpec("downstream-accuracy", "Figure 1's OOD accuracy (adapt and transfer heads, single vs multi) for the paper's "
               "ν = 2e₁ and for a ν of the same norm at cos(ν, μ) = 0.05, which meets the condition ⟨ν, μ⟩ = O(‖μ‖²/√d) "
               "of Sec. 3.3; and the final accuracy against that condition", CHAPTER, LABEL, _accuracy),
    FigureSpec("downstream-response", "The parts of a feature's OOD responses at the end of training (Eq. 11): spread of "
               "the noise response ⟨w_r, ζ⟩ and size of the signal response ⟨w_r, ν⟩, by initialisation, signal and "
               "memorised part, against the scales 1/√d and 1/√(dn) of App. C.3/D.3", CHAPTER, LABEL,
               _response),
    FigureSpec("downstream-ablation", "Final OOD accuracy with one part of the responses left out: which part decides "
               "each protocol's error, for both modes and both directions of ν", CHAPTER, LABEL,
               _ablation),
]
