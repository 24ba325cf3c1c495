"""Figures of the chapter :ref:`The decisive runs <sec-decisive-runs>`: drawing only.

The runs are those of the chapter's experiment (:mod:`mmcl.experiments.decisive_runs`: the
decisive sweep, cached per ``(size, device)``).  This module draws two figures and registers them:

* :func:`draw_errors` -- the OOD errors against ``n`` under Sec. 3.3's ``nu`` and the paper's
  parallel one, both modes and both protocols;
* :func:`draw_parts` -- the parts of the OOD responses (init, signal, memorised) against ``n``.
"""
from __future__ import annotations

from mmcl.experiments import decisive_runs as experiment
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, headline, style

__all__ = ["draw_errors", "draw_parts", "FIGURES"]

LABEL = "sec-decisive-runs"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_errors``).
CLAIM = "Under Sec. 3.3's ν multi-modal errs at chance; only ν ∥ μ gives zero"
_NU_TITLE = {"sec33": "Sec. 3.3's ν (⟨ν, μ⟩ = ‖μ‖²/√d)", "parallel": "the paper's ν ∥ μ"}


def _mean_sd(vals):
    import numpy as np

    return (np.array([float(v.mean()) for v in vals]),
            np.array([float(v.std()) if v.numel() > 1 else 0.0 for v in vals]))


def draw_errors(sweep):
    """The OOD test error (mean and spread over seeds) against ``n``: one panel per ``nu``, a colour
    per mode, solid for the ``adapt`` protocol and dashed for ``transfer``; chance at 0.5."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.6), sharey=True,
                                 constrained_layout=True)
        for ax, nu in zip(axes, ("sec33", "parallel")):
            for mode in ("single", "multi"):
                for protocol, ls, mk in (("adapt", "-", "o"), ("transfer", "--", "s")):
                    m, s = _mean_sd(sweep.errors(mode, nu, protocol))
                    ax.errorbar(sweep.sizes, m, yerr=s, color=COLORS[mode], ls=ls, marker=mk,
                                ms=4, capsize=2, label=f"{mode}-modal, {protocol}")
            ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":", label="chance")
            ax.set_xscale("log")
            ax.set_xticks(sweep.sizes, [str(n) for n in sweep.sizes])
            ax.minorticks_off()
            ax.set_xlabel("n")
            ax.set_title(_NU_TITLE[nu])
        axes[0].set_ylabel("OOD test error")
        axes[0].legend(fontsize="x-small", loc="lower right")
        axes[0].set_ylim(-0.03, 0.75)
        headline(fig, CLAIM)
    return fig


def draw_parts(sweep, mode: str = "multi"):
    """The root mean square of each part of the OOD responses of ``mode``'s features against ``n``:
    ``<w_r, nu>`` under both ``nu`` (signal and init parts) and ``<w_r, zeta>`` (init and memorised parts)."""
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(7, 4.2), constrained_layout=True)
        rows = [("parallel", "signal", COLORS[mode], "-", "⟨w, ν⟩ signal part, parallel ν"),
                ("sec33", "signal", COLORS[mode], "--", "⟨w, ν⟩ signal part, Sec. 3.3's ν"),
                ("sec33", "init", "0.45", "--", "⟨w, ν⟩ init part"),
                ("sec33", "memorised", palette.FAINT, ":", "⟨w, ν⟩ memorised part"),
                ("zeta", "init", "black", "-", "⟨w, ζ⟩ init part"),
                ("zeta", "memorised", "black", ":", "⟨w, ζ⟩ memorised part")]
        for v, part, color, ls, label in rows:
            ax.plot(sweep.sizes, sweep.parts(mode, v, part), color=color, ls=ls, marker="o", ms=3, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sweep.sizes, [str(n) for n in sweep.sizes])
        ax.minorticks_off()
        ax.set_xlabel("n")
        ax.set_ylabel("rms over neurons and inputs")
        ax.set_title(f"{mode}-modal features: what the OOD response is made of")
        ax.legend(fontsize="x-small", loc="best")
    return fig


FIGURES = [
    FigureSpec("decisive-errors", "The decisive runs (d at Lemma B.2's bound, every condition "
               "but 4a/4b holding from n = 316): the OOD test error against n under Sec. 3.3's ν "
               "and under the paper's ν parallel to μ, both modes and both protocols, on the same "
               "trained networks", CHAPTER, "sec-decisive-errors",
               lambda size, device: draw_errors(experiment.decisive_sweep(size, device)),
               takeaway=True),
    FigureSpec("decisive-parts", "What the multi-modal features read from an OOD input in the "
               "decisive runs: the init, signal and memorised parts of ⟨w_r, ν⟩ (both ν) and of "
               "⟨w_r, ζ⟩ against n", CHAPTER, "sec-decisive-parts",
               lambda size, device: draw_parts(experiment.decisive_sweep(size, device))),
]
