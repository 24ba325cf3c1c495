"""Figures of the chapter :ref:`The downstream theorems <sec-downstream>`: drawing only.

The run is :mod:`mmcl.experiments.downstream`'s (:func:`~mmcl.experiments.downstream.downstream_result`,
:func:`mmcl.downstream.response.run_downstream` at the chapter's sizes, cached per ``(size, device)``);
this module draws it and registers the figures: :func:`draw_condition` (the final accuracy
against the condition of Sec. 3.3, the chapter's takeaway), :func:`draw_accuracy` (Figure 1's
accuracy panel for the paper's ``nu`` and for a ``nu`` that meets that condition),
:func:`draw_response` (the parts of the OOD responses of the
features) and :func:`draw_ablation` (the accuracy when a part is left out)."""
from __future__ import annotations

import math

import torch

from mmcl.downstream.response import PARTS, VARIANTS, DownstreamResult
from mmcl.experiments import downstream as experiment
from mmcl.experiments.downstream import PAPER, TILTED
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, headline, legend_below, style

__all__ = ["draw_accuracy", "draw_condition", "draw_response", "draw_ablation", "FIGURES"]

LABEL = "sec-downstream"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_condition``).
CLAIM = "Multi-modal leads only where Sec. 3.3's condition on ν fails"

_LABELS = {"single": "single-modal", "multi": "multi-modal"}
_LS = {"adapt": "-", "transfer": "--"}


def _band(ax, x, Y, color, label, ls="-"):
    mean, sd = Y.mean(0), (Y.std(0, correction=0) if Y.shape[0] > 1 else torch.zeros_like(Y[0]))
    ax.plot(x, mean, color=color, ls=ls, label=label)
    ax.fill_between(x, mean - sd, mean + sd, color=color, alpha=0.2, lw=0)


def _angle_title(res: DownstreamResult, c: float) -> str:
    name = r"the paper's $\nu=2e_1$" if c == 1.0 else rf"$\cos(\nu,\mu)={c:g}$"
    return rf"{name}: $|\langle\nu,\mu\rangle|\,\sqrt{{d}}/\|\mu\|^2={res.condition[c]:.2g}$"


def draw_accuracy(res: DownstreamResult, angles=(PAPER, TILTED)):
    """OOD accuracy along training (mean +- 1 s.d. over seeds), both modes and protocols, one panel
    per angle of ``angles`` (at most four)."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, len(angles), figsize=(8.0, 3.8), sharey=True, layout="constrained",
                                 squeeze=False)
        axes = list(axes[0])
        for ax, c in zip(axes, angles):
            for mode in ("single", "multi"):
                for p in ("adapt", "transfer"):
                    _band(ax, res.eval_steps, res.accuracy[(c, mode, p)], COLORS[mode], f"{_LABELS[mode]}, {p}", _LS[p])
            ax.set_title(_angle_title(res, c), fontsize="medium")
            ax.set_xlabel("Epoch")
            ax.set_ylim(0.4, 1.02)
            ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":", label="chance")
        axes[0].set_ylabel("OOD test accuracy")
        legend_below(fig, axes, ncol=3)
    return fig


def draw_condition(res: DownstreamResult):
    """The final OOD accuracy (mean +- 1 s.d. over seeds; both modes and protocols) against the
    condition ratio ``|<nu, mu>| sqrt(d)/||mu||^2`` of Sec. 3.3, over every angle of ``res``: the
    multi-modal lead lives only where the condition fails."""
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
        cs = sorted(res.nu_cos, key=lambda c: res.condition[c])
        x = [res.condition[c] for c in cs]
        for mode in ("single", "multi"):
            for p in ("adapt", "transfer"):
                Y = torch.stack([res.final[(c, mode, p)] for c in cs], -1)  # (S, angles)
                ax.errorbar(x, Y.mean(0), yerr=Y.std(0, correction=0) if Y.shape[0] > 1 else None,
                            color=COLORS[mode], ls=_LS[p], marker="o", ms=4, capsize=2,
                            label=f"{_LABELS[mode]}, {p}")
        ax.set_xscale("symlog", linthresh=0.5)
        ax.axvline(1.0, color=COLORS["reference"], lw=1, ls="-.")
        ax.axvspan(min(x + [0.0]), 1.0, color=COLORS["reference"], alpha=0.08, lw=0)
        ax.text(0.95, 0.97, "Sec. 3.3's\ncondition met", fontsize="small", color=COLORS["reference"],
                ha="right", va="top", transform=ax.get_xaxis_transform())
        if PAPER in res.condition:
            ax.annotate("Figure 1's $\\nu$", (res.condition[PAPER], 0.45), ha="right", fontsize="small",
                        color=COLORS["reference"])
        ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        ax.set_ylim(0.4, 1.02)
        ax.set_xlabel(r"$|\langle\nu,\mu\rangle|\,/\,(\|\mu\|^2/\sqrt{d})$")
        ax.set_ylabel("final OOD accuracy")
        ax.legend(loc="center left", bbox_to_anchor=(0.0, 0.62), fontsize="small")
        headline(fig, CLAIM)
    return fig


def draw_response(res: DownstreamResult, angles=(PAPER, TILTED)):
    """The parts of a feature's OOD responses at the end of training (Eq. 11), one panel per mode:
    the spread over the held-out inputs of the noise response ``<w_r, zeta>`` by part, and the
    size of the signal response ``|<w_r, nu>|`` by part for each angle (means over features and
    seeds; log scale), with the scales ``1/sqrt(d)`` and ``1/sqrt(dn)`` of App. C.3/D.3."""
    import matplotlib.pyplot as plt

    cfg = res.cfg
    parts = PARTS + ("total",)
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.9), sharey=True, layout="constrained")
        width = 0.8 / (1 + len(angles))
        xs = torch.arange(len(parts), dtype=torch.float64)
        for ax, mode in zip(axes, ("single", "multi")):
            spread = res.response[(angles[0], mode)].spread()
            ax.bar(xs - 0.4 + width / 2, [float(spread[p].mean()) for p in parts], width,
                   color=COLORS["accent"], label=r"noise: sd of $\langle w_r,\zeta\rangle$")
            for k, c in enumerate(angles):
                sig = res.response[(c, mode)].signal()
                ax.bar(xs - 0.4 + width * (k + 1.5), [float(sig[p].abs().mean()) for p in parts], width,
                       color=COLORS[mode], alpha=1.0 - 0.55 * k,
                       label=rf"signal: $|\langle w_r,\nu\rangle|$, $\cos(\nu,\mu)={c:g}$ ({mode})")
            for val, txt in ((1 / math.sqrt(cfg.d), r"$1/\sqrt{d}$"), (1 / math.sqrt(cfg.d * cfg.n), r"$1/\sqrt{dn}$")):
                ax.axhline(val, color=COLORS["reference"], lw=1, ls=":")
                ax.text(len(parts) - 0.55, val * 1.1, txt, fontsize="small", color=COLORS["reference"], ha="right")
            ax.set_xticks(xs.tolist(), ["init", "signal", "memorised", "total"])
            ax.set_yscale("log")
            ax.set_title(f"{_LABELS[mode]} features", fontsize="medium")
        axes[0].set_ylabel("mean over features and seeds")
        legend_below(fig, axes, ncol=2)
    return fig


#: short tick labels for the variants of :data:`mmcl.downstream.response.VARIANTS`
_SHORT = {"trained": "trained", "zeta: without init": "ζ: no init", "zeta: without signal": "ζ: no signal",
          "zeta: without memorised": "ζ: no memor.", "nu: without signal": "ν: no signal"}


def draw_ablation(res: DownstreamResult, angles=(PAPER, TILTED)):
    """Final OOD accuracy when a part of the responses is left out (the variants of
    :data:`mmcl.downstream.response.VARIANTS`), both modes and protocols, one panel per angle
    (means over seeds, bars +- 1 s.d.)."""
    import matplotlib.pyplot as plt

    names = list(VARIANTS)
    bars = [(m, p) for m in ("single", "multi") for p in ("adapt", "transfer")]
    with style():
        fig, axes = plt.subplots(1, len(angles), figsize=(8.0, 4.0), sharey=True, layout="constrained",
                                 squeeze=False)
        axes = list(axes[0])
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
            ax.set_xticks(range(len(names)), [_SHORT.get(v, v) for v in names], rotation=90,
                          fontsize="small")
            ax.set_ylim(0.4, 1.02)
            ax.set_title(_angle_title(res, c), fontsize="medium")
        axes[0].set_ylabel("final OOD accuracy")
        legend_below(fig, axes, ncol=2)
    return fig


def _accuracy(size, device):
    return draw_accuracy(experiment.downstream_result(size, device))


def _condition(size, device):
    return draw_condition(experiment.downstream_result(size, device))


def _response(size, device):
    return draw_response(experiment.downstream_result(size, device))


def _ablation(size, device):
    return draw_ablation(experiment.downstream_result(size, device))


FIGURES = [
    FigureSpec("downstream-condition", "The final OOD accuracy of Figure 1's experiment (adapt and transfer heads, "
               "single vs multi) against the condition ⟨ν, μ⟩ = O(‖μ‖²/√d) of Sec. 3.3, as ν turns away from μ "
               "at fixed norm: the multi-modal lead lives only where the condition fails", CHAPTER, LABEL,
               _condition, takeaway=True),
    FigureSpec("downstream-accuracy", "Figure 1's OOD accuracy along training (adapt and transfer heads, single vs "
               "multi) for the paper's ν = 2e₁ and for a ν of the same norm at cos(ν, μ) = 0.05, which meets the "
               "condition of Sec. 3.3", CHAPTER, LABEL, _accuracy),
    FigureSpec("downstream-response", "The parts of a feature's OOD responses at the end of training (Eq. 11): spread of "
               "the noise response ⟨w_r, ζ⟩ and size of the signal response ⟨w_r, ν⟩, by initialisation, signal and "
               "memorised part, against the scales 1/√d and 1/√(dn) of App. C.3/D.3", CHAPTER, LABEL,
               _response),
    FigureSpec("downstream-ablation", "Final OOD accuracy with one part of the responses left out: which part decides "
               "each protocol's error, for both modes and both directions of ν", CHAPTER, LABEL,
               _ablation),
]
