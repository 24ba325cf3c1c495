"""Figures of the chapter "Alternating gradient descent on the factorisation"
(``book/11_alternating_gd.md``).

The computations are :mod:`mmcl.wider.agd` at the sizes of the tables below:
:func:`init_curves` (:func:`mmcl.wider.agd.runs_on_test_matrices`), :func:`condition_result`
(:func:`mmcl.wider.agd.condition_scan`), :func:`step_result` (:func:`mmcl.wider.agd.step_scan`) and
:func:`ptilde_result` (:func:`mmcl.wider.agd.excess_trajectory` on the normalised co-occurrence
matrices of two worlds of :mod:`mmcl.wider.graphs`).  The drawings are :func:`draw_curves`,
:func:`draw_kappa` and :func:`draw_ptilde`.
"""
from __future__ import annotations

import dataclasses
import functools

import torch

from mmcl.figures.registry import FigureSpec
from mmcl.figures.theme import COLORS, style
from mmcl.wider import agd
from mmcl.wider import factorisation as fz
from mmcl.wider import graphs

__all__ = ["SEEDS", "KAPPAS", "STEP_SCALES", "N_STEPS", "INIT_STYLE", "init_curves", "condition_result",
           "step_result", "ptilde_result", "draw_curves", "draw_kappa", "draw_ptilde", "FIGURES"]

#: Draws per setting, by size (the chapter shows 5, 20 with ``MMCL_BOOK_FULL=1``); the step scan uses the first 3.
SEEDS = {"tiny": 2, "default": 5, "full": 20}
#: The condition numbers of the scan, by size.
KAPPAS = {"tiny": (2.0, 4.0), "default": (2.0, 4.0, 8.0, 16.0, 32.0, 64.0), "full": (2.0, 4.0, 8.0, 16.0, 32.0, 64.0)}
#: The steps ``eta sigma_1`` of the step scan, by size.
STEP_SCALES = {"tiny": (0.5, 1.0), "default": (0.05, 0.1, 0.2, 0.5, 1.0), "full": (0.05, 0.1, 0.2, 0.5, 1.0)}
#: AGD steps on ``P~``, by size.
N_STEPS = {"tiny": 40, "default": 150, "full": 150}

_C = COLORS
#: Colour and legend label of each initialisation.
INIT_STYLE = {"ward_kolda": dict(color=_C["multi"], label="Ward–Kolda init"),
              "gaussian": dict(color=_C["single"], label="small Gaussian init")}


@functools.lru_cache(maxsize=6)
def init_curves(init: str, size: str = "default", device: str = "cpu") -> list:
    """:data:`SEEDS` runs of :func:`mmcl.wider.agd.agd` from ``init`` on rank-5 ``100 x 100`` test
    matrices with ``sigma_1/sigma_5 = 10``, width 10, to ``1e-6`` (CPU whatever ``device``)."""
    return agd.runs_on_test_matrices(range(SEEDS[size]), init, m=100, n=100, r=5, d=10, kappa=10.0, tol=1e-6)


@functools.lru_cache(maxsize=3)
def condition_result(size: str = "default", device: str = "cpu") -> agd.ConditionScan:
    """Iterations to ``1e-6`` against ``kappa`` in :data:`KAPPAS`, :data:`SEEDS` draws, both inits
    (:func:`mmcl.wider.agd.condition_scan`, batched on ``device``)."""
    return agd.condition_scan(KAPPAS[size], range(SEEDS[size]), m=100, n=100, r=5, d=10, tol=1e-6,
                              max_iter=20000, device=device, progress=True)


@functools.lru_cache(maxsize=3)
def step_result(size: str = "default", device: str = "cpu") -> agd.StepScan:
    """Iterations to ``1e-6`` at ``kappa = 8`` against the steps :data:`STEP_SCALES` ``/ sigma_1``,
    the first three seeds (:func:`mmcl.wider.agd.step_scan` on ``device``)."""
    return agd.step_scan(STEP_SCALES[size], list(range(SEEDS[size]))[:3], kappa=8.0, max_iter=20000, device=device)


@functools.lru_cache(maxsize=3)
def ptilde_result(size: str = "default", device: str = "cpu") -> dict:
    """AGD on ``P~`` of two worlds (CPU): the default :class:`mmcl.wider.graphs.JointConfig` and one
    with Dirichlet concentration 0.3, seed 0, width ``k = C``, :data:`N_STEPS` steps from both inits.

    Returns a dict: ``worlds`` (name -> config), ``problems`` (name -> ``(P~, s)``, ``s`` its
    singular values), ``traj`` ((name, init) -> :func:`mmcl.wider.agd.excess_trajectory`),
    ``n_steps``."""
    worlds = {"default world": graphs.JointConfig(),
              "concentration 0.3": dataclasses.replace(graphs.JointConfig(), concentration=0.3)}
    n_steps = N_STEPS[size]
    traj, problems = {}, {}
    for wname, wcfg in worlds.items():
        Pt = fz.normalized_cooccurrence(graphs.sample_joint(wcfg, seed=0).P)
        _, s, _ = torch.linalg.svd(Pt, full_matrices=False)
        problems[wname] = (Pt, s)
        for init in agd.INITS:
            traj[wname, init] = agd.excess_trajectory(Pt, wcfg.n_classes, init, n_steps, seed=0)
    return dict(worlds=worlds, problems=problems, traj=traj, n_steps=n_steps)


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


def draw_kappa(scan: agd.ConditionScan, steps: agd.StepScan):
    """Left: iterations against ``kappa`` (draws, medians with fitted exponents, the theorem's
    ``kappa^2 log(1/eps)``); right: iterations against the step (figure ``agd-kappa``)."""
    import matplotlib
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, 2, figsize=(12.0, 4.8))
        ax = axes[0]
        K = torch.tensor(scan.kappas)
        for init, T in scan.iterations.items():
            st = INIT_STYLE[init]
            for j in range(T.shape[1]):
                ax.loglog(K * (1 + 0.03 * (j - T.shape[1] / 2)), T[:, j], "o", color=st["color"], alpha=0.35, ms=5)
            ax.loglog(K, T.double().median(1).values, "-", color=st["color"],
                      label=f"{st['label']}: slope {scan.slopes[init]:.2f}")
        ax.loglog(K, scan.bound, "--", color=_C["reference"], label=r"$\kappa^2\log(1/\epsilon)$ (theorem, constant 1)")
        ax.set_xticks(scan.kappas, [f"{k_:g}" for k_ in scan.kappas])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(r"condition number $\kappa = \sigma_1/\sigma_r$")
        ax.set_ylabel(r"iterations to $\epsilon = 10^{-6}$")
        ax.legend(loc="upper left", fontsize=10)
        ax.set_title(r"step $\eta = 0.5/\sigma_1$")
        ax = axes[1]
        S = torch.tensor(steps.step_scales)
        for init, T in steps.iterations.items():
            st = INIT_STYLE[init]
            ax.loglog(S, T.double().median(1).values, "o-", color=st["color"],
                      label=f"{st['label']}: slope {steps.slopes[init]:.2f}")
        ax.set_xticks(steps.step_scales, [f"{c:g}" for c in steps.step_scales])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(r"step $\eta\,\sigma_1$")
        ax.set_ylabel(r"iterations to $\epsilon = 10^{-6}$")
        ax.legend(loc="upper right", fontsize=10)
        ax.set_title(rf"$\kappa = {steps.kappa:g}$")
    return fig


def draw_ptilde(traj: dict):
    """Excess relative error and largest principal angle along AGD on ``P~``, ``traj`` =
    (world, init) -> :func:`mmcl.wider.agd.excess_trajectory` (figure ``agd-ptilde``)."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, 2, figsize=(12.0, 4.6))
        for (wname, init), tr in traj.items():
            st = INIT_STYLE[init]
            ls = "-" if wname == "default world" else "--"
            lab = f"{st['label']}, {wname}"
            axes[0].semilogy(torch.tensor(tr["excess"]).clamp_min(1e-16).numpy(), ls, color=st["color"], label=lab)
            axes[1].semilogy(torch.tensor(tr["angle"]).clamp_min(1e-16).numpy(), ls, color=st["color"], label=lab)
        axes[0].set_ylabel("excess relative error")
        axes[1].set_ylabel("largest principal angle (rad)")
        for ax in axes:
            ax.set_xlabel("AGD iteration")
            ax.set_ylim(1e-15, 3)
        axes[0].legend(loc="upper right", fontsize=10)
    return fig


def _curves(size, device):
    return draw_curves({init: init_curves(init, size, device) for init in agd.INITS})


def _kappa(size, device):
    return draw_kappa(condition_result(size, device), step_result(size, device))


def _ptilde(size, device):
    return draw_ptilde(ptilde_result(size, device)["traj"])


_CH, _LABEL = "11_alternating_gd", "sec-alternating-gd"
FIGURES = [
    FigureSpec("agd-curves", "Relative error of alternating gradient descent from the Ward–Kolda and the small "
               "Gaussian initialisation, rank-5 100 × 100 matrix with σ₁/σ₅ = 10, five draws", _CH, _LABEL, _curves),
    FigureSpec("agd-kappa", "Iterations to ε = 1e-6 against the condition number (with fitted exponents and the "
               "theorem's κ² log(1/ε)), and against the step size at κ = 8, both initialisations", _CH, _LABEL,
               _kappa),
    FigureSpec("agd-ptilde", "AGD on the multi-modal factorisation of P̃: excess relative error and largest "
               "principal angle to the optimal image subspace, two caption worlds, both initialisations",
               _CH, _LABEL, _ptilde),
]
