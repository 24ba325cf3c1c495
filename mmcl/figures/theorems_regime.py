"""Figures of the chapter "Inside the theorems' regime" (``book/12_theorems_regime.md``): drawing only.

The runs are those of the chapter's experiment (:mod:`mmcl.experiments.theorems_regime.chapter`,
re-exported by :mod:`mmcl.experiments.theorems_regime`): the conditions of Assumption 4.1 along
the scaling (:func:`~mmcl.experiments.theorems_regime.regime_conditions`), the sweep over ``n``
(:func:`~mmcl.experiments.theorems_regime.regime_sweep`), the control at the dimension Lemma B.2
asks (:func:`~mmcl.experiments.theorems_regime.regime_control`) and the stage chapters' verdicts
re-taken (:func:`~mmcl.experiments.theorems_regime.regime_verdicts`), each cached per
``(size, device)``.  This module draws the three figures and registers them:

* :func:`draw_conditions` -- every explicit condition of Assumption 4.1 at every ``n``;
* :func:`draw_scaling` -- the sweep over ``n``, with fitted log-log slopes;
* :func:`draw_verdicts` -- the stage chapters' verdicts against ``n``.
"""
from __future__ import annotations

import math
from typing import Mapping

from mmcl.experiments import theorems_regime as tr
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style

__all__ = ["draw_conditions", "draw_scaling", "draw_verdicts", "FIGURES"]

LABEL = "sec-theorems-regime"
CHAPTER = chapter_of(__name__)


# --------------------------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------------------------
def draw_conditions(conditions: Mapping[int, list]):
    """Every explicit condition of Assumption 4.1 (rows) at every ``n`` (columns): the colour is
    ``log10`` of the margin factor (>= 0 where it holds), the cell says whether it holds."""
    import matplotlib.pyplot as plt
    import numpy as np

    sizes = list(conditions)
    keys = [c.key for c in conditions[sizes[0]]]
    F = np.array([[math.log10(max(c.factor, 1e-300)) if math.isfinite(c.factor) else 3.0 for c in conditions[n]]
                  for n in sizes]).T
    with style():
        fig, ax = plt.subplots(figsize=(1.4 * len(sizes) + 3.5, 0.34 * len(keys) + 1.4), constrained_layout=True)
        lim = 3.0
        mesh = ax.imshow(np.clip(F, -lim, lim), cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        for i in range(len(keys)):
            for j, n in enumerate(sizes):
                ok = conditions[n][i].holds
                ax.text(j, i, "holds" if ok else "fails", ha="center", va="center", fontsize=8,
                        color="black" if abs(F[i, j]) < 2 else "white", fontweight="normal" if ok else "bold")
        ax.set_xticks(range(len(sizes)), [f"n = {n}" for n in sizes])
        ax.set_yticks(range(len(keys)), keys)
        ax.set_title("Assumption 4.1 along the scaling (δ = 0.1)")
        fig.colorbar(mesh, ax=ax, label="log10 of the margin factor (clipped at ±3)")
    return fig


def _errbar(ax, sizes, vals, color, label, marker="o", ls="-"):
    import numpy as np

    means = np.array([float(v[~v.isnan()].mean()) for v in vals])
    sds = np.array([float(v[~v.isnan()].std()) if int((~v.isnan()).sum()) > 1 else 0.0 for v in vals])
    ax.errorbar(sizes, means, yerr=sds, color=color, marker=marker, ls=ls, capsize=3, label=label)


def _fitline(ax, fit: tr.LogLogFit, color):
    import numpy as np

    xs = np.geomspace(min(fit.x), max(fit.x), 20)
    ax.plot(xs, fit.predict(xs).numpy(), color=color, ls=":", lw=1.2)


def _fitted(ax, sweep: tr.RegimeSweep, mode: str, q: str, color, label: str, power: float = 0.0):
    """``q * n^power`` of ``mode`` (mean ± s.d.) with its log-log fit dotted; the label ends with the slope."""
    f = sweep.fit(mode, q, power)
    _errbar(ax, sweep.sizes, sweep.scaled(mode, q, power), color, f"{label}, slope {f.slope:+.2f}")
    _fitline(ax, f, color)


def draw_scaling(sweep: tr.RegimeSweep):
    """The sweep over ``n``, log-log, mean ± 1 s.d. over seeds, fitted lines dotted: (a) the
    single-modal ``max gamma * sqrt(n)`` up to ``T1`` and the multi-modal ``max gamma``; (b) the
    multi-modal ``max rho(T1) * sqrt(n)`` and the single-modal ``min_i max_r rho(T1)``; (c) the
    measured ``T1`` against Lemma 5.2's/5.4's formula; (d) the final training losses; (e) the OOD
    test errors; (f) the best feature's OOD signal-to-noise ratio."""
    import matplotlib.pyplot as plt

    n = sweep.sizes
    c_s, c_m = COLORS["single"], COLORS["multi"]
    with style():
        fig, axes = plt.subplots(2, 3, figsize=(17, 9), constrained_layout=True)
        ax = axes[0, 0]
        _fitted(ax, sweep, "single", "gamma_T1", c_s, "single: max γ(≤T1)·√n", 0.5)
        _fitted(ax, sweep, "multi", "gamma_T1", c_m, "multi: max γ(T1)")
        ax.set_title("signal learning (Lemmas 5.2, 5.4)")
        ax = axes[0, 1]
        _fitted(ax, sweep, "multi", "rho_T1", c_m, "multi: max ρ(≤T1)·√n", 0.5)
        _fitted(ax, sweep, "single", "rho_minmax_T1", c_s, "single: min_i max_r ρ(T1)")
        ax.set_title("noise memorisation (Lemmas 5.2, 5.4)")
        ax = axes[0, 2]
        for mode, c in (("single", c_s), ("multi", c_m)):
            try:
                slope = f", slope {sweep.fit(mode, 't1').slope:+.2f}"
            except ValueError:  # stage 1 not over within the run at some n
                slope = ""
            _errbar(ax, n, sweep.values(mode, "t1"), c, f"{mode}: measured T1{slope}")
            ax.plot(n, [sweep.by_n[k].t1_formula[mode] for k in n], color=c, ls="--", marker="s",
                    label=f"{mode}: formula")
        ax.set_title("end of stage 1")
        ax = axes[1, 0]
        for mode, c in (("single", c_s), ("multi", c_m)):
            _fitted(ax, sweep, mode, "loss", c, mode)
        ax.set_title(f"training loss after {sweep.scaling.n_epochs} steps")
        ax = axes[1, 1]
        _errbar(ax, n, sweep.values("single", "err_transfer"), c_s, "single, transfer")
        _errbar(ax, n, [v.clamp_min(1e-4) for v in sweep.values("single", "err_adapt")], c_s, "single, adapt",
                marker="^", ls="--")
        for k, p in enumerate(("adapt", "transfer")):
            _errbar(ax, n, [v.clamp_min(1e-4) for v in sweep.values("multi", f"err_{p}")], c_m,
                    f"multi, {p}", marker="o^"[k], ls="-" if p == "transfer" else "--")
        ax.axhline(1e-4, color=COLORS["reference"], lw=0.8, ls=":", label="0 (drawn at 1e-4)")
        ax.set_title("OOD test error at the end")
        ax = axes[1, 2]
        for mode, c in (("single", c_s), ("multi", c_m)):
            _fitted(ax, sweep, mode, "feature_snr", c, mode)
        ax.set_title("best feature: |⟨w_r, ν⟩| / sd⟨w_r, ζ⟩")
        for ax in axes.flat:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(n, [str(k) for k in n], minor=False)
            ax.set_xticks([], minor=True)
            ax.set_xlabel("n  (d = n² log(6n²/δ))")
            ax.legend(fontsize=8)
    return fig


def draw_verdicts(verdicts: Mapping[int, tr.SizeVerdicts]):
    """The stage chapters' verdicts against ``n`` (one point per seed): Lemma 5.2's growth rate over
    its guarantee, the sign-set breaks of Lemmas C.3/C.7, the comparator factor of Lemma C.17, the
    loss-derivative spread of Lemma D.1 at ``T1``, the share of pairs keeping cases (1)-(3) of Lemma
    D.9 and the step at which Lemma D.4's bound fails against ``T1``."""
    import matplotlib.pyplot as plt

    ns = list(verdicts)
    c_s, c_m, c_r = COLORS["single"], COLORS["multi"], COLORS["reference"]

    def pts(ax, get, color, label, marker="o"):
        for k, n in enumerate(ns):
            v = get(verdicts[n])
            vals = v.tolist() if hasattr(v, "tolist") else [v]
            vals = vals if isinstance(vals, list) else [vals]
            ax.plot([n] * len(vals), vals, marker, color=color, alpha=0.7, label=label if k == 0 else None)

    with style():
        fig, axes = plt.subplots(2, 3, figsize=(17, 8.5), constrained_layout=True)
        ax = axes[0, 0]
        pts(ax, lambda v: v.rate_ratio, c_s, "measured rate / 0.96 s")
        pts(ax, lambda v: v.rate_ab_ratio, c_r, "(a − b) s / 0.96 s", "x")
        ax.axhline(1, color=c_r, ls="--", lw=1, label="Lemma 5.2's guarantee")
        ax.set_ylim(0, 1.2)
        ax.set_title("stage 1: noise growth in stage 1")
        ax = axes[0, 1]
        pts(ax, lambda v: v.left_fraction, c_s, "pairs leaving I_{r,−}(0) (C.7)")
        pts(ax, lambda v: v.neg_init_ratio, c_r, "max |ρ| on I_{r,−}(0) / max ρ (C.7)", "x")
        pts(ax, lambda v: v.flipped.double() / v.cfg.m + 1e-4, COLORS["accent"], "neurons leaving U± (C.3), +1e-4", "s")
        ax.set_yscale("log")
        ax.set_title("stage 1: sign sets")
        ax = axes[0, 2]
        chained = {n: v for n, v in verdicts.items() if math.isfinite(v.factor17)}
        ax.plot(list(chained), [v.factor17 for v in chained.values()], "o-", color=c_s,
                label="factor Lemma C.17 needs")
        ax.plot(list(chained), [v.feasible16[0] / v.feasible16[1] for v in chained.values()], "s--", color=c_r,
                label="Lemma C.16: lo/hi of the λ interval (> 1: empty)")
        ax.axhline(2, color=c_r, ls=":", lw=1, label="paper's factor 2")
        ax.set_title("stage 2: comparator chain")
        ax = axes[1, 0]
        pts(ax, lambda v: v.spread0, c_m, "C_ℓ at t = 0", "x")
        pts(ax, lambda v: v.spread_T1, c_m, "C_ℓ at T1")
        ax.axhline(1.01, color=c_r, ls="--", lw=1, label="proof's C_ℓ = 1.01")
        ax.set_yscale("log")
        ax.set_title("multi: loss-derivative band (Lemma D.1)")
        ax = axes[1, 1]
        for c, mk in ((1, "o"), (2, "^"), (3, "v")):
            pts(ax, lambda v, c=c: v.cases[:, c - 1], c_m, f"case ({c})", mk)
        ax.axhline(1, color=c_r, ls="--", lw=1)
        ax.set_title("multi: Lemma D.9, share of pairs that keep their case")
        ax = axes[1, 2]
        pts(ax, lambda v: v.d4_violation / v.T1_multi, c_m, "first failure of Lemma D.4's bound / T1")
        pts(ax, lambda v: v.rho_T1 * v.n ** 0.5, c_s, "max ρ(T1)·√n (Lemma 5.4: Õ(1))", "s")
        ax.axhline(1, color=c_r, ls="--", lw=1)
        ax.set_yscale("log")
        ax.set_title("multi: Lemmas D.4 and 5.4")
        for ax in axes.flat:
            ax.set_xscale("log")
            ax.set_xticks(ns, [str(n) for n in ns])
            ax.minorticks_off()
            ax.set_xlabel("n")
            ax.legend(fontsize=8)
    return fig


FIGURES = [
    FigureSpec("regime-conditions", "Assumption 4.1's explicit conditions along the scaling d = n² log(6n²/δ), "
               "σ₀ at 0.9 of condition (3a), n·SNR² = 1.75, C_μ = 3, η = 0.2 n/d: which hold at each n",
               CHAPTER, LABEL, lambda size, device: draw_conditions(tr.regime_conditions(size))),
    FigureSpec("regime-scaling", "Inside the regime, as n grows: signal learning, noise memorisation, the end of "
               "stage 1 against Lemmas 5.2/5.4, the training losses, the OOD errors and the best feature's OOD "
               "signal-to-noise ratio, single- vs multi-modal, with fitted log-log slopes", CHAPTER, LABEL,
               lambda size, device: draw_scaling(tr.regime_sweep(size, device))),
    FigureSpec("regime-verdicts", "The verdicts of the stage chapters re-taken inside the regime: Lemma 5.2's rate, "
               "the sign sets of Lemmas C.3/C.7, the comparator of Lemmas C.16/C.17, the band of Lemma D.1, "
               "Lemma D.9's cases, Lemma D.4's bound and Lemma 5.4's noise half, against n", CHAPTER, LABEL,
               lambda size, device: draw_verdicts(tr.regime_verdicts(size, device))),
]
