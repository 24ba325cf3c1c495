"""Figures of the chapter "What holds instead": drawing only.

The runs are the decisive runs of :mod:`mmcl.experiments.decisive_runs` (each carries its errors on a
grid of ``cos(nu, mu)``) and the ``sigma0`` sweeps of :mod:`mmcl.experiments.window`.

* :func:`draw_errors` -- the OOD error against ``cos(nu, mu)`` at one ``n``: both modes, both
  protocols, the closed form's prediction, Sec. 3.3's angle and the paper's parallel ``nu`` marked,
  the window shaded;
* :func:`draw_thresholds` -- the angles where the errors fall to 1/4 against ``n``, predicted and
  measured: the window as ``n`` grows;
* :func:`draw_collapse` -- every run's ``adapt`` error against the closed form's discriminability:
  all ``n``, ``sigma0`` and both modes on one curve.
"""
from __future__ import annotations

import math

from mmcl.experiments import window as experiment
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, headline, keep_inside, legend_below, style

__all__ = ["draw_errors", "draw_thresholds", "draw_collapse", "FIGURES"]

CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_errors``).
CLAIM = 'Multi-modal wins only in a window of test signals tilted towards μ'
_PROTOCOL_TITLE = {"adapt": "head refit on 200 OOD samples (adapt)",
                   "transfer": "head from the training data (transfer)"}
# single-modal drawn wide and light under the multi-modal line, so that both stay visible where they
# coincide (at chance, left of the window)
_LINE = {"single": dict(lw=3.2, alpha=0.55, zorder=2), "multi": dict(lw=1.6, alpha=1.0, zorder=3)}


def _band(ax, x, err, color, **kw):
    import numpy as np

    e = err.numpy()
    mean = e.mean(0)
    ax.plot(x, mean, color=color, **kw)
    if e.shape[0] > 1:
        ax.fill_between(x, e.min(0), e.max(0), color=color, alpha=0.15, lw=0, zorder=1)
    return np.asarray(mean)


def draw_errors(run, protocols=("adapt", "transfer")):
    """The OOD error (mean over seeds, the band their range) against ``cos(nu, mu)`` for both modes,
    one panel per protocol; the closed form's prediction (``adapt``) and the trained head's
    Gaussian-equivalent error (``transfer``) dotted; Sec. 3.3's angle and the paper's parallel
    ``nu`` (``cos = 1``) marked; the measured window shaded."""
    import matplotlib.pyplot as plt

    with style():
        fig, axes = plt.subplots(1, len(protocols), figsize=(8.0, 3.9), sharey=True, layout="constrained",
                                 squeeze=False)
        axes = axes[0]
        for ax, p in zip(axes, protocols):
            w = experiment.window(run, p) if all(m in run.modes for m in experiment.MODES) else None
            if w is not None:
                ax.axvspan(w[0], w[1], color=COLORS["accent"], alpha=0.12, lw=0,
                           label="window: multi small, single not")
            for mode in experiment.MODES:
                if mode not in run.modes:
                    continue
                t = run.modes[mode].tilt
                x = t.cos.numpy()
                _band(ax, x, t.error[p], COLORS[mode], label=f"{mode}-modal, measured", **_LINE[mode])
                pred = experiment.closed_form(run, mode) if p == "adapt" else t.gaussian[p].mean(0)
                ax.plot(x, pred.numpy(), color=COLORS[mode], ls=(0, (1.5, 1.5)), lw=1.3, zorder=4,
                        label=f"{mode}-modal, predicted")
            ax.axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":", zorder=0)
            ax.axhline(experiment.ERROR_TARGET, color=COLORS["reference"], lw=0.6, ls="--", zorder=0)
            ax.axvline(run.cfg.nu_cos, color=COLORS["reference"], lw=1.0, ls="-.", zorder=0)
            ax.axvline(1.0, color=COLORS["reference"], lw=1.0, ls="-", zorder=0)
            ax.text(run.cfg.nu_cos * 1.6, 0.03, "Sec. 3.3's ν", fontsize="x-small", color=COLORS["reference"])
            ax.text(0.9, 0.03, "paper's ν ∥ μ", fontsize="x-small", color=COLORS["reference"], ha="right")
            ax.set_xscale("log")
            ax.set_xlim(run.cfg.nu_cos / 3, 1.5)
            ax.set_ylim(-0.02, 0.62)
            ax.set_xlabel("cos(ν, μ)")
            ax.set_title(_PROTOCOL_TITLE[p], fontsize="small")
        axes[0].set_ylabel(f"OOD test error (n = {run.n:,})")
        legend_below(fig, axes, ncol=3)
        headline(fig, CLAIM)
    return fig


def draw_thresholds(runs, protocol: str = "adapt"):
    """For every run (``n -> DecisiveRun``), the ``cos(nu, mu)`` at which each mode's error falls to
    1/4, predicted (open markers, dotted) and measured (filled), and Sec. 3.3's angle: the window
    between the two modes' thresholds as ``n`` grows (a mode whose error never falls is drawn at the
    top edge)."""
    import matplotlib.pyplot as plt

    ns = sorted(runs)
    with style():
        fig, ax = plt.subplots(figsize=(7.0, 4.0), layout="constrained")
        top = 1.4
        for mode in experiment.MODES:
            meas, pred, xs = [], [], []
            for n in ns:
                if mode not in runs[n].modes:
                    continue
                th = experiment.thresholds(runs[n], mode, protocol)
                xs.append(n)
                meas.append(top if th.measured is None else th.measured)
                pred.append(top if th.predicted is None else th.predicted)
            ax.plot(xs, meas, color=COLORS[mode], marker="o", ms=5, lw=1.6, label=f"{mode}-modal, measured")
            ax.plot(xs, pred, color=COLORS[mode], marker="o", mfc=palette.BACKGROUND, ms=6, lw=1.0, ls=(0, (1.5, 1.5)),
                    label=f"{mode}-modal, predicted")
        ax.plot(ns, [runs[n].cfg.nu_cos for n in ns], color=COLORS["reference"], ls="-.", lw=1.0,
                label="Sec. 3.3's ν")
        ax.axhline(1.0, color=COLORS["reference"], lw=1.0, label="paper's ν ∥ μ (cos = 1)")
        ax.axhspan(1.0, top * 1.3, color=palette.SHADE, lw=0, zorder=0)
        ax.text(ns[0], 1.15, "never reaches 1/4", fontsize="x-small", color=COLORS["reference"])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(ns, [f"{n:,}" for n in ns])
        ax.minorticks_off()
        ax.set_ylim(min(runs[n].cfg.nu_cos for n in ns) / 3, top * 1.3)
        ax.set_xlabel("n")
        ax.set_ylabel(f"cos(ν, μ) where the {protocol} error falls to 1/4")
        legend_below(fig, [ax], ncol=3)
    return fig


def draw_collapse(points):
    """Every run's measured ``adapt`` error against the closed form's discriminability ``D``
    (:func:`mmcl.experiments.window.collapse`: one entry per run and mode, every seed and angle a
    point), with the curve ``Phi(-D/2)`` the closed form predicts; colour by mode, marker by ``sigma0``
    (its fraction of item 3a's bound)."""
    import matplotlib.pyplot as plt
    import numpy as np

    markers = ["o", "s", "^", "D", "v"]
    labels = sorted({p["label"] for p in points})
    with style():
        fig, ax = plt.subplots(figsize=(7.0, 4.0), layout="constrained")
        for p in points:
            D, e = p["D"].numpy().ravel(), p["error"].numpy().ravel()
            keep = D > 1e-3
            ax.plot(D[keep], e[keep], ls="none", marker=markers[labels.index(p["label"]) % len(markers)],
                    ms=3.5, mfc="none", mew=0.8, color=COLORS[p["mode"]], alpha=0.7,
                    label=f"{p['mode']}-modal, {p['label']}")
        x = np.geomspace(1e-2, 30, 200)
        ax.plot(x, [0.5 * math.erfc(v / 2 / math.sqrt(2)) for v in x], color=COLORS["reference"], lw=1.6,
                label="closed form: Φ(−D/2)")
        ax.set_xscale("log")
        ax.set_xlim(1e-2, 30)
        ax.set_ylim(-0.02, 0.56)
        keep_inside(ax)
        ax.set_xlabel("D: discriminability after the fit, from four numbers of the network")
        ax.set_ylabel("measured OOD error (adapt)")
        legend_below(fig, [ax], ncol=3)
    return fig


FIGURES = [
    FigureSpec("window-errors", "The window of test signals: the OOD error against cos(ν, μ) at the "
               "largest n with both modes, both heads, the closed form's prediction dotted; Sec. 3.3's "
               "angle at the left, the paper's ν ∥ μ at cos = 1", CHAPTER, "sec-window",
               lambda size, device: draw_errors(experiment.both_modes_run(size, device)), takeaway=True),
    FigureSpec("window-thresholds", "Where each mode's refit-head error falls to 1/4, predicted and "
               "measured, against n: the window between the modes widens as n grows, and Sec. 3.3's "
               "angle stays far below it", CHAPTER, "sec-window-measured",
               lambda size, device: draw_thresholds(experiment.large_n_runs(size, device))),
    FigureSpec("window-collapse", "Every run on one curve: the refit head's OOD error against the "
               "closed form's discriminability, for every n, three σ0 inside item 3 of Assumption 4.1 "
               "and both modes", CHAPTER, "sec-window-collapse",
               lambda size, device: draw_collapse(experiment.collapse_result(size, device))),
]
