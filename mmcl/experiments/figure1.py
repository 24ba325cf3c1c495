"""The paper's synthetic experiment (Sec. 6, Figure 1): both modes over several seeds, batched.

:func:`run_figure1` draws the seeds, stacks them into one batch, runs single- and multi-modal
gradient descent as one tensor computation each, evaluates both downstream protocols, and
returns per-seed curves; :func:`plot_figure1` draws the four panels with mean +- 1 s.d.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Sequence

import torch

from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic
from mmcl.dynamics import simulate
from mmcl.downstream.evaluation import PROTOCOLS, evaluate_all
from mmcl.figures import COLORS, save_figure, style

__all__ = ["ModeCurves", "Figure1Result", "run_figure1", "plot_figure1"]


@dataclass
class ModeCurves:
    """Per-seed curves of one mode (float64, CPU): ``loss (S, T+1)``, ``max_gamma (S, T+1)``
    (``max_r gamma_r``), ``max_rho (S, T+1)`` (``max_{r,i} rho_{r,i}``), ``eval_steps (E,)`` and
    ``accuracy[protocol] (S, E)``."""

    loss: torch.Tensor
    max_gamma: torch.Tensor
    max_rho: torch.Tensor
    eval_steps: torch.Tensor
    accuracy: Dict[str, torch.Tensor] = field(default_factory=dict)

    def final(self) -> Dict[str, float]:
        """Means over seeds of the final values."""
        out = {"loss": float(self.loss[:, -1].mean()), "max_gamma": float(self.max_gamma[:, -1].mean()),
               "max_rho": float(self.max_rho[:, -1].mean())}
        out.update({f"acc_{p}": float(a[:, -1].mean()) for p, a in self.accuracy.items()})
        return out


@dataclass
class Figure1Result:
    """``cfg``, ``seeds`` and the curves of each mode (``curves["single"]``, ``curves["multi"]``)."""

    cfg: SyntheticConfig
    seeds: list
    curves: Dict[str, ModeCurves]


def run_figure1(cfg: SyntheticConfig = SyntheticConfig(), seeds: Sequence[int] = range(5), *,
                engine: str = "recursion", device="cpu", dtype=torch.float32, eval_every: int = 10,
                modes=("single", "multi"), progress: bool = False) -> Figure1Result:
    """Figure 1's runs: every seed of ``seeds`` in one batch, for each of ``modes``; OOD accuracy
    under both protocols every ``eval_every`` steps."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    data = SyntheticData.stack([sample_synthetic(cfg, s, dtype=dtype, device=device) for s in seeds])
    curves = {}
    for mode in modes:
        traj = simulate(cfg, data, mode, engine, progress=progress)
        evs = evaluate_all(traj, data, PROTOCOLS, every=eval_every)
        accs = {p: ev.accuracy.double().cpu() for p, ev in evs.items()}
        steps = evs[PROTOCOLS[0]].steps.cpu()
        curves[mode] = ModeCurves(loss=traj.loss.double().cpu(),
                                  max_gamma=traj.gamma.amax(-1).double().cpu(),
                                  max_rho=traj.rho.amax((-1, -2)).double().cpu(),
                                  eval_steps=steps, accuracy=accs)
    return Figure1Result(cfg=cfg, seeds=seeds, curves=curves)


def _band(ax, x, Y, color, label, ls="-"):
    mean, sd = Y.mean(0), (Y.std(0, correction=0) if Y.shape[0] > 1 else torch.zeros_like(Y[0]))
    ax.plot(x, mean, color=color, ls=ls, label=label)
    ax.fill_between(x, mean - sd, mean + sd, color=color, alpha=0.2, lw=0)


def plot_figure1(result: Figure1Result, out_dir=None, name: str = "fig1-dynamics", ncols: int = 4,
                 save: bool = True):
    """The four panels of Figure 1 (training loss, OOD accuracy under both protocols, signal
    learning, noise memorisation; mean +- 1 s.d. over seeds), saved through
    :func:`mmcl.figures.save_figure`.  ``ncols=4`` is the paper's row (for slides), ``ncols=2`` a
    2x2 grid (for the page).  ``save=False`` only draws (e.g. for ``env.show``, which saves).
    Returns ``(fig, paths)`` (``paths`` empty when not saved)."""
    import matplotlib.pyplot as plt

    if ncols not in (1, 2, 4):
        raise ValueError(f"ncols must be 1, 2 or 4, got {ncols!r}")
    labels = {"single": "single-modal", "multi": "multi-modal"}
    nrows = 4 // ncols
    with style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3.6 * nrows + 0.3), squeeze=False)
        axes = axes.flatten()
        for mode, c in result.curves.items():
            t = torch.arange(c.loss.shape[1])
            _band(axes[0], t, c.loss, COLORS[mode], labels[mode])
            for protocol, ls in (("adapt", "-"), ("transfer", "--")):
                if protocol in c.accuracy:
                    _band(axes[1], c.eval_steps, c.accuracy[protocol], COLORS[mode], f"{labels[mode]}, {protocol}", ls)
            _band(axes[2], t, c.max_gamma, COLORS[mode], labels[mode])
            _band(axes[3], t, c.max_rho, COLORS[mode], labels[mode])
        titles = ["Training loss", "OOD test accuracy", r"Signal learning  max$_r\,\gamma_r$",
                  r"Noise memorisation  max$_{r,i}\,\rho_{r,i}$"]
        for ax, title in zip(axes, titles):
            ax.set_title(title)
            ax.set_xlabel("Epoch")
        axes[1].set_ylim(0.4, 1.02)
        axes[1].axhline(0.5, color=COLORS["reference"], lw=0.8, ls=":")
        from matplotlib.lines import Line2D
        modes = axes[0].legend(loc="upper right")
        axes[0].add_artist(modes)
        # the line styles of the accuracy panel are explained where there is room: in the loss panel
        axes[0].legend([Line2D([], [], color="k", ls="-"), Line2D([], [], color="k", ls="--")],
                       ["OOD acc.: adapt (head fit on OOD)", "OOD acc.: transfer (head fit on train)"],
                       loc="center right", fontsize=9)
        fig.suptitle(f"Single- vs multi-modal contrastive learning (mean $\\pm$ 1 s.d. over {len(result.seeds)} seeds)")
        paths = save_figure(fig, name, out_dir) if save else []
    return fig, paths
