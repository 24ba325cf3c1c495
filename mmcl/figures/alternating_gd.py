"""Figures of the chapter :ref:`Alternating gradient descent on the factorisation
<sec-alternating-gd>`: drawing only.

The runs are :mod:`mmcl.experiments.alternating_gd`'s (its sizes and
:func:`~mmcl.experiments.alternating_gd.init_curves`,
:func:`~mmcl.experiments.alternating_gd.condition_result`,
:func:`~mmcl.experiments.alternating_gd.step_result`,
:func:`~mmcl.experiments.alternating_gd.ptilde_result`); the computations are
:mod:`mmcl.wider.agd`.  This module draws them and registers the four figures; the chapter calls
the same drawing functions:

* :func:`draw_kappa` -- iterations against the condition number (the chapter's takeaway);
* :func:`draw_curves` -- the relative error along AGD from the two initialisations;
* :func:`draw_step` -- iterations against the step;
* :func:`draw_ptilde` -- AGD on ``P~``: excess error and largest principal angle.

:data:`INIT_STYLE` is the colour and legend label of each initialisation.
"""
from __future__ import annotations

import torch

from mmcl.experiments.alternating_gd import condition_result, init_curves, ptilde_result, step_result
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style
from mmcl.wider import agd

__all__ = ["INIT_STYLE", "draw_kappa", "draw_curves", "draw_step", "draw_ptilde", "FIGURES"]

LABEL = "sec-alternating-gd"
CHAPTER = chapter_of(__name__)

_C = COLORS
#: Colour and legend label of each initialisation.
#: Neither initialisation is a modality, so neither takes the single/multi colours: the
#: Ward-Kolda start takes the accent green, the Gaussian one a reddish purple.
INIT_STYLE = {"ward_kolda": dict(color=_C["accent"], label="Ward–Kolda init"),
              "gaussian": dict(color=palette.EXTRA[0], label="small Gaussian init")}


def draw_curves(curves: dict, tol: float = 1e-6,
                title: str = r"rank 5, $100\times100$, $\sigma_1/\sigma_5 = 10$, width $d = 10$"):
    """The relative error along AGD, one line per run, ``curves`` = init -> list of
    :class:`mmcl.wider.agd.AGDResult` (figure ``agd-curves``)."""
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(7.5, 4.4))
        for init, runs in curves.items():
            for j, r in enumerate(runs):
                ax.semilogy(r.rel_error.numpy(), lw=1.6, alpha=0.75, **(INIT_STYLE[init] if j == 0 else
                                                                        {"color": INIT_STYLE[init]["color"]}))
        ax.axhline(tol, color=_C["reference"], lw=1, ls=":")
        ax.text(5, 2 * tol, r"$\epsilon = 10^{-6}$" if tol == 1e-6 else rf"$\epsilon = {tol:g}$", color=_C["reference"])
        ax.set_xlabel("iteration t")
        ax.set_ylabel(r"$\|A - X_tY_t^\top\|_F^2\,/\,\|A\|_F^2$")
        ax.set_title(title)
        ax.legend(loc="upper right")
    return fig


def draw_kappa(scan: agd.ConditionScan):
    """Iterations against ``kappa``: the draws, the medians with their fitted exponents and the
    theorem's ``kappa^2 log(1/eps)`` with its constant set to 1 (figure ``agd-kappa``, the
    chapter's takeaway)."""
    import matplotlib
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(7.0, 4.6))
        K = torch.tensor(scan.kappas)
        for init, T in scan.iterations.items():
            st = INIT_STYLE[init]
            for j in range(T.shape[1]):
                jitter = 1 + 0.03 * (j - T.shape[1] / 2)
                ax.loglog(K * jitter, T[:, j], "o", color=st["color"], alpha=0.35, ms=5)
            ax.loglog(K, T.double().median(1).values, "-", color=st["color"],
                      label=f"{st['label']}: slope {scan.slopes[init]:.2f}")
        ax.loglog(K, scan.bound, "--", color=_C["reference"],
                  label=r"theorem: $\kappa^2\log(1/\epsilon)$, constant 1, slope 2")
        ax.set_xticks(scan.kappas, [f"{k_:g}" for k_ in scan.kappas])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(r"condition number $\kappa = \sigma_1/\sigma_r$")
        ax.set_ylabel(r"iterations to $\epsilon = 10^{-6}$")
        ax.legend(loc="upper left", fontsize="small")
        ax.set_title(r"AGD needs about $\kappa$ iterations, not $\kappa^2$ (step $0.5/\sigma_1$)")
    return fig


def draw_step(steps: agd.StepScan):
    """Median iterations against the step ``eta sigma_1`` at one ``kappa``, with the fitted
    exponents (figure ``agd-step``)."""
    import matplotlib
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        S = torch.tensor(steps.step_scales)
        for init, T in steps.iterations.items():
            st = INIT_STYLE[init]
            ax.loglog(S, T.double().median(1).values, "o-", color=st["color"],
                      label=f"{st['label']}: slope {steps.slopes[init]:.2f}")
        ax.set_xticks(steps.step_scales, [f"{c:g}" for c in steps.step_scales])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(r"step $\eta\,\sigma_1$")
        ax.set_ylabel(r"iterations to $\epsilon = 10^{-6}$")
        ax.legend(loc="upper right", fontsize="small")
        ax.set_title(rf"$\kappa = {steps.kappa:g}$")
    return fig


def draw_ptilde(traj: dict):
    """Excess relative error and largest principal angle along AGD on ``P~``, ``traj`` =
    (world, init) -> :func:`mmcl.wider.agd.excess_trajectory` (figure ``agd-ptilde``; one legend
    below both panels)."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 4.2))
        for (wname, init), tr in traj.items():
            st = INIT_STYLE[init]
            ls = "-" if wname == "default world" else "--"
            lab = f"{st['label']}, {wname}"
            excess = torch.tensor(tr["excess"]).clamp_min(1e-16).numpy()
            angle = torch.tensor(tr["angle"]).clamp_min(1e-16).numpy()
            axes[0].semilogy(excess, ls, color=st["color"], label=lab)
            axes[1].semilogy(angle, ls, color=st["color"])
        axes[0].set_ylabel("excess relative error")
        axes[1].set_ylabel("largest principal angle (rad)")
        for ax in axes:
            ax.set_xlabel("AGD iteration")
            ax.set_ylim(1e-15, 3)
        fig.legend(loc="outside lower center", ncol=2, fontsize="small")
    return fig


def _curves(size, device):
    return draw_curves({init: init_curves(init, size, device) for init in agd.INITS})


def _kappa(size, device):
    return draw_kappa(condition_result(size, device))


def _step(size, device):
    return draw_step(step_result(size, device))


def _ptilde(size, device):
    return draw_ptilde(ptilde_result(size, device)["traj"])


FIGURES = [
    FigureSpec("agd-kappa", "Iterations of alternating gradient descent to ε = 1e-6 against the "
               "condition number, both initialisations, with fitted exponents and the theorem's "
               "κ² log(1/ε) (constant 1): the count grows about linearly, far below the bound",
               CHAPTER, LABEL, _kappa, takeaway=True),
    FigureSpec("agd-curves", "Relative error of alternating gradient descent from the Ward–Kolda "
               "and the small Gaussian initialisation, rank-5 100 × 100 matrix with σ₁/σ₅ = 10, "
               "five draws", CHAPTER, LABEL, _curves),
    FigureSpec("agd-step", "Iterations to ε = 1e-6 against the step size at κ = 8, both "
               "initialisations, with fitted exponents", CHAPTER, LABEL, _step),
    FigureSpec("agd-ptilde", "AGD on the multi-modal factorisation of P̃: excess relative error "
               "and largest principal angle to the optimal image subspace, two caption worlds, "
               "both initialisations", CHAPTER, LABEL, _ptilde),
]
