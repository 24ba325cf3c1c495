"""Figures of the chapter :ref:`Single-modal learning, stage 1 <sec-single-stage1>`: drawing only.

The runs are :mod:`mmcl.experiments.single_stage1`'s; the computations are the stage-1
diagnostics of :mod:`mmcl.proofs.single_stage1`
(:func:`~mmcl.experiments.single_stage1.recursion_vs_gd`, :func:`~mmcl.proofs.single_stage1.noise_growth`,
:func:`~mmcl.proofs.single_stage1.sign_set_report`, :func:`~mmcl.proofs.single_stage1.b_coefficient_medians`);
this module draws them and registers the four figures.  The chapter calls the same functions on
the numbers it prints:

* :func:`draw_recursion_vs_gd` -- Lemma 5.1, the recursion next to gradient descent (seed 0);
* :func:`draw_noise_growth` -- Lemma 5.2, the growth of ``N_i(t)`` and the end of stage 1;
* :func:`draw_sign_sets` -- Lemmas C.3 and C.7 on the Figure 1 data and on orthogonal noise;
* :func:`draw_b_dynamics` -- Sec. 5.1, the coefficients ``a``, ``b`` and ``b/a`` of the class totals.
"""
from __future__ import annotations

import torch

from mmcl.experiments.single_stage1 import (BDynamicsLines, RecursionCheck, b_dynamics_lines, recursion_check,
                                            stage1_runs)
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, headline, keep_inside, style
from mmcl.model.config import SyntheticConfig
from mmcl.proofs import single_stage1 as dg

__all__ = ["draw_recursion_vs_gd", "draw_noise_growth", "draw_sign_sets", "draw_b_dynamics", "FIGURES"]

LABEL = "sec-single-stage1"
CHAPTER = chapter_of(__name__)
#: The claim the takeaway figure states, its title (``draw_noise_growth``).
CLAIM = "Every sample is memorised early, at half Lemma 5.2's guaranteed rate"


def draw_recursion_vs_gd(check: RecursionCheck):
    """Lemma 5.1: ``gamma_r(t)`` of the three neurons with the largest final ``|gamma_r|`` and
    ``rho_{r,i}(t)`` of three pairs (the largest final ``rho``, the largest and the smallest of the
    first two of those neurons), from the recursion (lines) and from decomposing gradient descent's
    weights (circles)."""
    import matplotlib.pyplot as plt

    rec, dec, k_gd = check.rec, check.dec, check.steps
    r_show = torch.argsort(rec.gamma[-1].abs(), descending=True)[:3].tolist()
    pairs = [tuple(int(v) for v in (rec.rho[-1] == rec.rho[-1].max()).nonzero()[0])]
    pairs += [(r_show[0], int(rec.rho[-1, r_show[0]].argmax())), (r_show[1], int(rec.rho[-1, r_show[1]].argmin()))]
    t_all = rec.steps.cpu()
    # all single-modal: three shades of the single-modal colour, told apart by the line style
    shades = (COLORS["single"], palette.EXTRA[0], palette.EXTRA[2])
    dashes = ("-", "--", ":")
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.6), constrained_layout=True)
        for k, r in enumerate(r_show):
            axes[0].plot(t_all, rec.gamma[:, r].cpu(), color=shades[k], ls=dashes[k],
                         label=f"neuron {r}")
            axes[0].plot(k_gd.cpu(), dec.gamma[:, r].cpu(), "o", color=shades[k], mfc="none", ms=6)
        for k, (r, i) in enumerate(pairs):
            axes[1].plot(t_all, rec.rho[:, r, i].cpu(), color=shades[k], ls=dashes[k],
                         label=f"neuron {r}, sample {i}")
            axes[1].plot(k_gd.cpu(), dec.rho[:, r, i].cpu(), "o", color=shades[k], mfc="none", ms=6)
        axes[0].set_title(r"signal learning $\gamma_r^{(t)}$", fontsize="medium")
        axes[1].set_title(r"noise memorisation $\rho_{r,i}^{(t)}$", fontsize="medium")
        for ax, loc in zip(axes, ("center right", "center right")):
            ax.set_xlabel("step t")
            ax.legend(loc=loc, fontsize="small", title="lines: recursion; circles: GD",
                      title_fontsize="small")
    return fig


def draw_noise_growth(growth: dg.NoiseGrowth, cfg: SyntheticConfig):
    """Lemma 5.2.  Left: ``N_i(t)`` (median and 10-90 % band over samples and draws) against the
    lemma's bound ``(1 + 0.96 s)^t N(0)`` and the rate ``(a - b) s`` of the class totals.  Right:
    ``min_i max_r rho_{r,i}`` and ``max_r |gamma_r|`` per draw, with the formula's and the measured
    ``T1``."""
    import matplotlib.pyplot as plt

    g = growth
    steps, N, N_med = g.steps, g.N, g.N_med
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 4.4), constrained_layout=True)
        ax = axes[0]
        lo, hi = N.quantile(0.1, dim=-1), N.quantile(0.9, dim=-1)  # over samples, (S, K)
        ax.fill_between(steps, lo.min(0).values, hi.max(0).values, color=COLORS["single"], alpha=0.2, lw=0,
                        label=r"10-90% of samples")
        ax.plot(steps, N_med.median(0).values, color=COLORS["single"], label=r"median $N_i^{(t)}$")
        tt = steps.double()
        ax.plot(steps, N_med[:, 0].median() * (1 + g.rate_lemma) ** tt, color=COLORS["reference"], ls="--",
                label=r"Lemma 5.2: $(1+0.96s)^t$")
        ax.plot(steps, N_med[:, 0].median() * (1 + float(g.rate_ab.median())) ** tt, color=COLORS["accent"], ls=":",
                label=r"class totals: $(1+(a-b)s)^t$")
        ax.axhline(3, color=COLORS["reference"], lw=0.8)
        ax.text(2, 3.3, "the proof's level 3", fontsize="small")
        ax.axvline(g.T1, color=COLORS["reference"], lw=0.8, ls="-.")
        ax.set_yscale("log")
        ax.set_ylim(0.03, 12)
        ax.set_xlabel("step t")
        ax.set_title("average memorisation of a sample", fontsize="medium")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize="small", ncol=2,
                  frameon=False)
        ax = axes[1]
        for s in range(g.rho_min_max.shape[0]):
            ax.plot(steps, g.rho_min_max[s], color=COLORS["single"], alpha=0.7,
                    label=r"$\min_i\max_r\rho_{r,i}$" if s == 0 else None)
            ax.plot(steps, g.gamma_max[s], color=COLORS["single"], alpha=0.7, ls="--",
                    label=r"$\max_r|\gamma_r|$" if s == 0 else None)
        ax.axhline(1, color=COLORS["reference"], lw=0.8)
        ax.axhline(cfg.n ** -0.5, color=COLORS["reference"], lw=0.8, ls=":")
        ax.text(float(steps[-1]) * 3 / 4, 1.15 * cfg.n ** -0.5, r"$1/\sqrt{n}$", fontsize="medium",
                color=COLORS["reference"])
        ax.axvline(g.T1, color=COLORS["reference"], lw=0.8, ls="-.", label=r"Lemma 5.2: $T_1$")
        ax.plot(g.t1_measured, torch.ones_like(g.t1_measured), "v", color=palette.INK, ms=8, label=r"measured $T_1$")
        ax.set_yscale("log")
        ax.set_ylim(3e-3, 5)
        ax.set_xlabel("step t")
        ax.set_title("every sample memorised, signal small", fontsize="medium")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize="small", ncol=2,
                  frameon=False)
        headline(fig, CLAIM)
    return fig


def draw_sign_sets(reports: dict, seed: int = 0):
    """Lemmas C.3 and C.7.  Left: ``<w_r(t), mu>`` of every neuron of draw ``seed`` of
    ``reports["Figure 1 data"]``, coloured where the neuron leaves ``U_+`` or ``U_-``.  Right:
    ``max |rho_{r,i}(t)|`` over the pairs starting in ``I_{r,-}(0)`` (median and range over the
    draws) for ``reports["Figure 1 data"]`` and ``reports["orthogonal noise"]``
    (:class:`~mmcl.proofs.single_stage1.SignSetReport` each)."""
    import matplotlib.pyplot as plt

    fd = reports["Figure 1 data"]
    steps = fd.steps
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), constrained_layout=True)
        ax = axes[0]
        sig0, fl0 = fd.signal[seed], fd.flipped[seed]  # (K, m), (m,)
        for r in range(sig0.shape[-1]):
            ax.plot(steps, sig0[:, r], color=COLORS["single"] if fl0[r] else palette.FAINT, lw=2 if fl0[r] else 0.8,
                    zorder=3 if fl0[r] else 1)
        ax.axhline(0, color=palette.INK, lw=0.8)
        ax.set_ylim(-0.25, 0.25)
        keep_inside(ax)
        ax.set_xlabel("step t")
        ax.set_title(rf"$\langle w_r^{{(t)}}, \mu\rangle$, seed {seed}" "\n"
                     r"(coloured: leaves $U_\pm$)", fontsize="medium")
        ax = axes[1]
        for name, c, ls in (("Figure 1 data", COLORS["single"], "-"), ("orthogonal noise", COLORS["accent"], "--")):
            v = reports[name].neg_init
            ax.plot(steps, v.median(0).values, color=c, ls=ls, label=name)
            ax.fill_between(steps, v.min(0).values, v.max(0).values, color=c, alpha=0.2, lw=0)
        ax.set_xlabel("step t")
        ax.set_title(r"$\max|\rho_{r,i}^{(t)}|$ over pairs" "\n" r"with $i\in I_{r,-}^{(0)}$",
                     fontsize="medium")
        ax.legend(loc="center right", fontsize="small")
    return fig


def draw_b_dynamics(medians: dg.CoefficientMedians, lines: BDynamicsLines):
    """Sec. 5.1: the medians of the self coefficient ``a``, the cross coefficient ``b`` and ``b/a``
    over the steps, with the paper's ``1/2``, the uniform-derivative ``M/(M+1)`` and Lemma 5.2's
    ``T1`` (``lines``: :func:`~mmcl.experiments.single_stage1.b_dynamics_lines`)."""
    import matplotlib.pyplot as plt

    a_pred = lines.self_share
    steps = medians.steps
    with style():
        fig, ax = plt.subplots(figsize=(7.5, 4.2), constrained_layout=True)
        ax.plot(steps, medians.a, color=COLORS["single"], label="self coefficient $a$")
        ax.plot(steps, medians.b, color=COLORS["single"], ls="--", label="cross coefficient $b$")
        ax.plot(steps, medians.ratio, color=COLORS["accent"], lw=2.5, label="$b/a$")
        ax.axhline(0.5, color=COLORS["reference"], ls="--", lw=1)
        ax.text(float(steps[-1]) * 3 / 10, 0.52, r"$\frac{1}{2}$ (Sec. 5.1)", fontsize="large")
        ax.axhline(a_pred, color=COLORS["single"], ls=":", lw=1, label="$M/(M+1)$")
        ax.axvline(lines.t1, color=COLORS["reference"], lw=0.8, ls="-.")
        ax.set_xlabel("step t")
        ax.set_ylabel("median over neurons, classes, seeds")
        ax.set_ylim(0, 1.05)
        ax.legend(loc="center right", bbox_to_anchor=(1.0, 0.72), fontsize="small")
    return fig


def _recursion(size, device):
    return draw_recursion_vs_gd(recursion_check(size, device))


def _growth(size, device):
    r = stage1_runs(size, device)
    return draw_noise_growth(r["growth"], r["cfg"])


def _signs(size, device):
    return draw_sign_sets(stage1_runs(size, device)["reports"])


def _b(size, device):
    r = stage1_runs(size, device)
    return draw_b_dynamics(r["medians"], b_dynamics_lines(r["cfg"]))


FIGURES = [
    FigureSpec("stage1-recursion-vs-gd", "Lemma 5.1: γ_r and ρ_{r,i} from the coefficient recursion (lines) and from "
               "decomposing gradient descent's weights (circles), float64, seed 0", CHAPTER, LABEL, _recursion),
    FigureSpec("stage1-noise-growth", "Lemma 5.2: average memorisation N_i(t) against the lemma's bound "
               "(1 + 0.96 s)^t and the rate (a − b)s of the class totals; min_i max_r ρ_{r,i} and max_r γ_r with "
               "the formula's and the measured T1, 5 seeds", CHAPTER, LABEL, _growth,
               takeaway=True),
    FigureSpec("stage1-sign-sets", "Lemmas C.3/C.7: ⟨w_r(t), μ⟩ of every neuron (those leaving U_± coloured), and "
               "max ρ_{r,i} over pairs starting in I_{r,−}, Figure 1 data vs the same draws with orthogonal noise",
               CHAPTER, LABEL, _signs),
    FigureSpec("stage1-b-dynamics", "Sec. 5.1: measured self and cross coefficients a, b of the class totals B_{r,±} "
               "and their ratio b/a ≈ 1/2, median over neurons, classes and 5 seeds", CHAPTER, LABEL, _b),
]
