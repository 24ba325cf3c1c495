"""Figures of the chapter :ref:`Inside the theorems' regime <sec-theorems-regime>`: drawing only.

The runs are those of the chapter's experiment (:mod:`mmcl.experiments.theorems_regime.chapter`,
re-exported by :mod:`mmcl.experiments.theorems_regime`): the conditions of Assumption 4.1 along
the scaling (:func:`~mmcl.experiments.theorems_regime.regime_conditions`), the sweep over ``n``
(:func:`~mmcl.experiments.theorems_regime.regime_sweep`), the control at the dimension Lemma B.2
asks (:func:`~mmcl.experiments.theorems_regime.regime_control`) and the stage chapters' verdicts
re-taken (:func:`~mmcl.experiments.theorems_regime.regime_verdicts`), each cached per
``(size, device)``.  This module draws the chapter's figures, one question each, and registers them:

* :func:`draw_conditions` -- every explicit condition of Assumption 4.1 at every ``n``;
* :func:`draw_learning` -- signal and noise of both modes against ``n`` (Lemmas 5.2, 5.4): the
  chapter's takeaway figure;
* :func:`draw_training` -- the end of stage 1 and the training loss against ``n``;
* :func:`draw_downstream` -- the OOD errors and the best feature's OOD signal-to-noise ratio;
* :func:`draw_single_verdicts`, :func:`draw_multi_verdicts` -- the proof walk's verdicts, re-taken
  against ``n``, single- and multi-modal.
"""
from __future__ import annotations

import math
from typing import Mapping

from mmcl.experiments import theorems_regime as tr
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, headline, style

__all__ = ["draw_conditions", "draw_learning", "draw_training", "draw_downstream",
           "draw_single_verdicts", "draw_multi_verdicts", "FIGURES"]

LABEL = "sec-theorems-regime"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_learning``).
CLAIM = "As n grows, the multi-modal noise outgrows Lemma 5.4's 1/√n scale"


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
        width = min(8.0, 0.9 * len(sizes) + 3.5)  # the book's column shows at most 8 in
        fig, ax = plt.subplots(figsize=(width, 0.3 * len(keys) + 1.4), constrained_layout=True)
        lim = 3.0
        mesh = ax.imshow(np.clip(F, -lim, lim), cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        for i in range(len(keys)):
            for j, n in enumerate(sizes):
                ok = conditions[n][i].holds
                ax.text(j, i, "holds" if ok else "fails", ha="center", va="center", fontsize="x-small",
                        color=palette.INK if abs(F[i, j]) < 2 else palette.BACKGROUND, fontweight="normal" if ok else "bold")
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


def _loglog_n(ax, n, xlabel="n  (d = n² log(6n²/δ))", room=0.0, plain=True):
    """Log-log axes with ``n`` ticks, plain numbers on the y axis, and ``room`` (a fraction of the
    decades shown) added above the data for a legend in the upper corner."""
    from matplotlib.ticker import FormatStrFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(n, [str(k) for k in n], minor=False)
    ax.set_xticks([], minor=True)
    ax.set_xlabel(xlabel)
    from matplotlib.ticker import LogLocator, NullFormatter

    lo, hi = ax.get_ylim()
    if room:
        hi = hi * (hi / lo) ** room
        ax.set_ylim(lo, hi)
    if plain:  # plain numbers at 1, 2, 5 times a power of ten
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def draw_learning(sweep: tr.RegimeSweep):
    """What Lemmas 5.2 and 5.4 predict as ``n`` grows, log-log, mean ± 1 s.d. over seeds, fitted
    lines dotted: (a) signal learning, the single-modal ``max gamma * sqrt(n)`` up to ``T1`` (Õ(1)
    by Lemma 5.2) and the multi-modal ``max gamma(T1)`` (Ω(1) by Lemma 5.4); (b) noise
    memorisation, the multi-modal ``max rho(T1) * sqrt(n)`` (Õ(1) by Lemma 5.4) and the
    single-modal ``min_i max_r rho(T1)`` (Ω(1) by Lemma 5.2)."""
    import matplotlib.pyplot as plt

    c_s, c_m = COLORS["single"], COLORS["multi"]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), constrained_layout=True)
        ax = axes[0]
        _fitted(ax, sweep, "single", "gamma_T1", c_s, "single: max γ(≤T1)·√n", 0.5)
        _fitted(ax, sweep, "multi", "gamma_T1", c_m, "multi: max γ(T1)")
        ax.set_title("signal")
        ax = axes[1]
        _fitted(ax, sweep, "multi", "rho_T1", c_m, "multi: max ρ(≤T1)·√n", 0.5)
        _fitted(ax, sweep, "single", "rho_minmax_T1", c_s, "single: minᵢ maxᵣ ρ(T1)")
        ax.set_title("noise memorisation")
        for ax in axes:
            _loglog_n(ax, sweep.sizes, "n", room=0.5)
            ax.legend(fontsize="x-small", loc="upper left")
        axes[0].set_ylabel("mean over seeds")
        headline(fig, CLAIM)
    return fig


def draw_training(sweep: tr.RegimeSweep):
    """How long training takes as ``n`` grows, mean ± 1 s.d. over seeds: (a) the measured end of
    stage 1 against Lemma 5.2's and 5.4's formula for ``T1``; (b) the training loss after the
    run's steps (Theorems 4.2 (1), 4.3 (1)), log-log with fitted lines dotted."""
    import matplotlib.pyplot as plt

    n = sweep.sizes
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
        ax = axes[0]
        for mode in ("single", "multi"):
            c = COLORS[mode]
            try:
                slope = f", slope {sweep.fit(mode, 't1').slope:+.2f}"
            except ValueError:  # stage 1 not over within the run at some n
                slope = ""
            _errbar(ax, n, sweep.values(mode, "t1"), c, f"{mode}: measured{slope}")
            ax.plot(n, [sweep.by_n[k].t1_formula[mode] for k in n], color=c, ls="--",
                    marker="s", label=f"{mode}: formula")
        ax.set_title("end of stage 1, T1 (steps)")
        ax.set_ylabel("steps")
        ax = axes[1]
        for mode in ("single", "multi"):
            _fitted(ax, sweep, mode, "loss", COLORS[mode], mode)
        ax.set_title(f"training loss after {sweep.scaling.n_epochs} steps")
        _n_axis(axes[0], n)  # steps on a linear scale
        axes[0].set_ylim(0, 1.5 * axes[0].get_ylim()[1])
        _loglog_n(axes[1], n, "n", room=0.6)
        for ax in axes:
            ax.legend(fontsize="x-small", loc="upper left")
    return fig


def draw_downstream(sweep: tr.RegimeSweep):
    """The OOD test (Theorems 4.2 (2), 4.3 (2)) as ``n`` grows, mean ± 1 s.d. over seeds: (a) the
    OOD test error of both modes under both protocols (0 drawn at 1e-4); (b) the best feature's
    OOD signal-to-noise ratio ``|<w_r, nu>| / sd <w_r, zeta>``, log-log with fitted lines dotted."""
    import matplotlib.pyplot as plt

    n = sweep.sizes
    c_s, c_m = COLORS["single"], COLORS["multi"]
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 4.0), constrained_layout=True)
        ax = axes[0]
        _errbar(ax, n, sweep.values("single", "err_transfer"), c_s, "single, transfer")
        _errbar(ax, n, [v.clamp_min(1e-4) for v in sweep.values("single", "err_adapt")], c_s,
                "single, adapt", marker="^", ls="--")
        for k, p in enumerate(("adapt", "transfer")):
            _errbar(ax, n, [v.clamp_min(1e-4) for v in sweep.values("multi", f"err_{p}")], c_m,
                    f"multi, {p}", marker="o^"[k], ls="-" if p == "transfer" else "--")
        ax.axhline(1e-4, color=COLORS["reference"], lw=0.8, ls=":", label="0 (drawn at 1e-4)")
        ax.set_title("OOD test error")
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
        ax = axes[1]
        for mode in ("single", "multi"):
            _fitted(ax, sweep, mode, "feature_snr", COLORS[mode], mode)
        ax.set_title("best feature: |⟨w, ν⟩| / sd⟨w, ζ⟩")
        _loglog_n(axes[0], n, "n", plain=False)
        _loglog_n(axes[1], n, "n", room=0.4)
        axes[1].legend(fontsize="x-small", loc="upper left")
    return fig


def _points(ax, verdicts, get, color, label, marker="o"):
    """One point per seed at each ``n`` of ``verdicts``."""
    for k, n in enumerate(verdicts):
        v = get(verdicts[n])
        vals = v.tolist() if hasattr(v, "tolist") else [v]
        vals = vals if isinstance(vals, list) else [vals]
        ax.plot([n] * len(vals), vals, marker, color=color, alpha=0.7,
                label=label if k == 0 else None)


def _n_axis(ax, ns):
    ax.set_xscale("log")
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_xlabel("n")


def draw_single_verdicts(verdicts: Mapping[int, tr.SizeVerdicts]):
    """The single-modal verdicts of the proof walk against ``n`` (one point per seed): (a) Lemma
    5.2's noise growth rate over its guarantee ``0.96 s``, with the ``(a - b) s`` that the B
    dynamics predict; (b) neurons leaving their signal set (Lemma C.3); (c) the pairs leaving
    ``I_{r,-}(0)`` and the largest memorisation on them (Lemma C.7); (d) the comparator chain of
    stage 2 (Lemmas C.16, C.17)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    ns = list(verdicts)
    c_s, c_r, c_a = COLORS["single"], COLORS["reference"], COLORS["accent"]
    with style():
        fig, axes = plt.subplots(2, 2, figsize=(8.0, 6.0), constrained_layout=True)
        ax = axes[0, 0]
        _points(ax, verdicts, lambda v: v.rate_ratio, c_s, "measured rate / 0.96 s")
        _points(ax, verdicts, lambda v: v.rate_ab_ratio, c_a, "(a − b) s / 0.96 s", "x")
        ax.axhline(1, color=c_r, ls="--", lw=1, label="Lemma 5.2's guarantee")
        ax.set_ylim(0, 1.2)
        ax.set_title("Lemma 5.2: noise growth rate")
        ax.legend(fontsize="x-small", loc="lower right")
        ax = axes[0, 1]
        _points(ax, verdicts, lambda v: v.flipped.double(), c_s, "per seed, of m = 50")
        ax.set_ylim(-0.3, max(2.0, ax.get_ylim()[1]))
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_title("Lemma C.3: neurons leaving U±")
        ax.legend(fontsize="x-small")
        ax = axes[1, 0]
        _points(ax, verdicts, lambda v: v.left_fraction, c_s, "share of pairs leaving")
        _points(ax, verdicts, lambda v: v.neg_init_ratio, c_a, "max |ρ| on them / max ρ", "x")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title("Lemma C.7: pairs in I_{r,−}(0)")
        ax.legend(fontsize="x-small")
        ax = axes[1, 1]
        chained = {n: v for n, v in verdicts.items() if math.isfinite(v.factor17)}
        ax.plot(list(chained), [v.factor17 for v in chained.values()], "o-", color=c_s,
                label="factor Lemma C.17 needs")
        ax.plot(list(chained), [v.feasible16[0] / v.feasible16[1] for v in chained.values()],
                "s--", color=c_a, label="C.16: λ interval's lo/hi (> 1: empty)")
        ax.axhline(2, color=c_r, ls=":", lw=1, label="the paper's factor 2")
        ax.axhline(1, color=c_r, ls="--", lw=0.8)
        ax.set_ylim(bottom=0)
        ax.set_title("Lemmas C.16, C.17: stage 2")
        ax.legend(fontsize="x-small", loc="lower right")
        for ax in axes.flat:
            _n_axis(ax, ns)
    return fig


def draw_multi_verdicts(verdicts: Mapping[int, tr.SizeVerdicts]):
    """The multi-modal verdicts of the proof walk against ``n`` (one point per seed): (a) the
    loss-derivative spread ``C_l`` at ``t = 0`` and at ``floor(T1)`` (Lemma D.1) against the 1.01
    the proof of Lemma D.8 takes; (b) the first step at which Lemma D.4's lower bound fails, over
    ``T1``; (c) the share of pairs keeping cases (1)-(3) of Lemma D.9; (d) ``max rho(T1) sqrt(n)``,
    which Lemma 5.4 says is Õ(1), and the proof's explicit bound on ``max rho(T1)`` times ``sqrt(n)``."""
    import matplotlib.pyplot as plt

    ns = list(verdicts)
    c_m, c_r = COLORS["multi"], COLORS["reference"]
    with style():
        fig, axes = plt.subplots(2, 2, figsize=(8.0, 6.0), constrained_layout=True)
        ax = axes[0, 0]
        _points(ax, verdicts, lambda v: v.spread0, c_m, "C_ℓ at t = 0", "x")
        _points(ax, verdicts, lambda v: v.spread_T1, c_m, "C_ℓ at ⌊T1⌋")
        ax.axhline(1.01, color=c_r, ls="--", lw=1, label="proof's C_ℓ = 1.01")
        ax.set_yscale("log")
        ax.set_title("Lemma D.1: loss-derivative band")
        ax.legend(fontsize="x-small", loc="best")
        ax = axes[0, 1]
        _points(ax, verdicts, lambda v: v.d4_violation / v.T1_multi, c_m,
                "first step it fails / T1")
        ax.axhline(1, color=c_r, ls="--", lw=1, label="T1")
        ax.set_ylim(0, 1.2)
        ax.set_title("Lemma D.4: lower bound (43)")
        ax.legend(fontsize="x-small", loc="lower right")
        ax = axes[1, 0]
        for c, mk in ((1, "o"), (2, "^"), (3, "v")):
            _points(ax, verdicts, lambda v, c=c: v.cases[:, c - 1], c_m, f"case ({c})", mk)
        ax.axhline(1, color=c_r, ls="--", lw=1)
        ax.set_title("Lemma D.9: pairs keeping their case")
        ax.legend(fontsize="x-small", loc="best")
        ax = axes[1, 1]
        _points(ax, verdicts, lambda v: v.rho_T1 * v.n ** 0.5, c_m, "max ρ(T1)·√n", "o")
        _points(ax, verdicts, lambda v: v.noise_bound * v.n ** 0.5, c_r,
                "the proof's bound ·√n", "s")
        ax.set_yscale("log")
        ax.set_title("Lemma 5.4: noise at T1 (Õ(1) claimed)")
        ax.legend(fontsize="x-small", loc="center right")
        for ax in axes.flat:
            _n_axis(ax, ns)
    return fig


def _regime(make):
    return lambda size, device: make(tr.regime_sweep(size, device))


def _verdicts(make):
    return lambda size, device: make(tr.regime_verdicts(size, device))


FIGURES = [
    FigureSpec("regime-learning", "Inside the regime, as n grows: the single-modal signal stays "
               "Õ(1/√n) and the multi-modal one Ω(1), as Lemmas 5.2 and 5.4 say, but the "
               "multi-modal noise max ρ(T1)·√n grows instead of staying Õ(1) (mean ± s.d. over "
               "seeds, fitted log-log slopes)", CHAPTER, "sec-regime-sweep",
               _regime(draw_learning), takeaway=True),
    FigureSpec("regime-conditions", "Assumption 4.1's explicit conditions along the scaling "
               "d = n² log(6n²/δ), σ₀ at 0.9 of condition (3a), n·SNR² = 1.75, C_μ = 3, "
               "η = 0.2 n/d: which hold at each n", CHAPTER, "sec-regime-scalings",
               lambda size, device: draw_conditions(tr.regime_conditions(size))),
    FigureSpec("regime-training", "Inside the regime, as n grows: the measured end of stage 1 "
               "against Lemma 5.2's and 5.4's formula, and the training loss after 200 steps "
               "(Theorems 4.2 (1), 4.3 (1)), single- vs multi-modal", CHAPTER, "sec-regime-sweep",
               _regime(draw_training)),
    FigureSpec("regime-downstream", "Inside the regime, as n grows: the OOD test errors of both "
               "modes under both protocols, and the best feature's OOD signal-to-noise ratio "
               "(Theorems 4.2 (2), 4.3 (2))", CHAPTER, "sec-regime-sweep",
               _regime(draw_downstream)),
    FigureSpec("regime-single-verdicts", "The single-modal verdicts of the proof walk re-taken "
               "inside the regime, against n: Lemma 5.2's rate, the sign sets of Lemmas C.3 and "
               "C.7, the comparator of Lemmas C.16 and C.17", CHAPTER, "sec-regime-verdicts",
               _verdicts(draw_single_verdicts)),
    FigureSpec("regime-multi-verdicts", "The multi-modal verdicts of the proof walk re-taken "
               "inside the regime, against n: the band of Lemma D.1, Lemma D.4's bound, Lemma "
               "D.9's cases and Lemma 5.4's noise half", CHAPTER, "sec-regime-verdicts",
               _verdicts(draw_multi_verdicts)),
]
