"""The paper's synthetic experiment (Sec. 6, Figure 1): both modes over several seeds, batched.

:func:`run_figure1` draws the seeds, stacks them into one batch, runs single- and multi-modal
gradient descent as one tensor computation each, evaluates both downstream protocols, and
returns per-seed curves; :func:`mmcl.figures.figure1.draw_figure1` draws the four panels with mean +- 1 s.d.

What the figure depends on (the book's chapter "Side by side" and the assumptions chapter):

* :func:`one_at_a_time` -- one parameter of the Figure 1 setting varied over a list of values
  (through :func:`mmcl.experiments.sweep.sweep`), the final results of each mode as
  ``(values, seeds)`` tensors; :func:`sensitivity_sweep` does so for each of several parameters
  (the unstated constants ``tau``, ``sigma0``, ``M`` of Sec. 6; ``C_mu`` of Assumption 4.1(7));
* :func:`compare_protocols` -- the final OOD accuracy under variants of the downstream protocol of
  Sec. 3.3 (held-out or in-sample scoring, a head fit on OOD or on training data, the ridge strength);
* :func:`final_metrics` -- the final OOD accuracy and coefficients of one batched run, per seed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Sequence, Tuple

import torch

from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic_batch
from mmcl.dynamics import simulate
from mmcl.downstream.evaluation import PROTOCOLS, evaluate_all
from mmcl.dynamics.trajectory import Trajectory
from mmcl.experiments.sweep import sweep

__all__ = ["ModeCurves", "Figure1Result", "run_figure1", "SWEEP_METRICS", "one_at_a_time",
           "sensitivity_sweep", "ProtocolComparison", "protocol_names", "compare_protocols", "final_metrics"]


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
    data = sample_synthetic_batch(cfg, seeds, dtype=dtype, device=device)
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


# --------------------------------------------------------------------------------------------
# What Figure 1 depends on: one parameter at a time, and the downstream protocol
# --------------------------------------------------------------------------------------------
SWEEP_METRICS = {"loss": "loss", "adapt": "acc_adapt", "transfer": "acc_transfer", "gamma": "max_gamma",
                 "rho": "max_rho", "t1": "t1"}
"""The results :func:`one_at_a_time` returns, by short name, and the column of
:class:`mmcl.experiments.sweep.SweepTable` each comes from (final training loss, final OOD accuracy
under both protocols, final ``max_r gamma_r`` and ``max_{r,i} rho_{r,i}``, end of stage 1)."""


def one_at_a_time(name: str, values: Sequence, seeds: Sequence[int], modes=("single", "multi"), *,
                  base: SyntheticConfig = SyntheticConfig(), device="cpu", record_every: int = 1,
                  ) -> Dict[str, Dict[str, torch.Tensor]]:
    """Vary the one parameter ``name`` (a :class:`~mmcl.model.config.SyntheticConfig` field or a
    derived parameter such as ``c_mu``, see ``DERIVED`` in :mod:`mmcl.experiments.sweep`) over ``values``,
    every other one at ``base``, for every seed and mode, through :func:`mmcl.experiments.sweep.sweep`.

    Returns ``mode -> metric -> (len(values), len(seeds))`` float64 tensors, the metrics of
    :data:`SWEEP_METRICS` at the last step.  ``record_every`` as in the sweep (``base.n_epochs``
    records only the ends; the stage-1 time ``t1`` needs every step)."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a parameter name (a string), got {name!r}")
    values, seeds = list(values), list(seeds)
    modes = [modes] if isinstance(modes, str) else list(modes)
    table = sweep({name: values}, seeds, modes, device=device, base=base, record_every=record_every,
                  progress=False)
    # rows: value, mode, seed
    return {mode: {k: torch.tensor(table.filter(mode=mode).column(col), dtype=torch.float64).reshape(len(values), -1)
                   for k, col in SWEEP_METRICS.items()} for mode in modes}


def sensitivity_sweep(grid: Mapping[str, Sequence], seeds: Sequence[int], *, base: SyntheticConfig = SyntheticConfig(),
                      device="cpu") -> Dict[str, Dict[str, Dict[str, torch.Tensor]]]:
    """:func:`one_at_a_time` for each parameter of ``grid`` (name -> values) and both modes, scoring
    only the last step: ``name -> mode -> metric -> (values, seeds)``.  The book varies the constants
    that Sec. 6 of the paper leaves unstated (``tau``, ``sigma0``, ``M``) around Figure 1's setting."""
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError(f"grid must be a non-empty dict from parameter names to lists of values, got {grid!r}")
    return {name: one_at_a_time(name, values, seeds, ("single", "multi"), base=base, device=device,
                                record_every=base.n_epochs)
            for name, values in grid.items()}


@dataclass
class ProtocolComparison:
    """Final OOD accuracy per seed under each downstream protocol variant: ``accuracy[(name, mode)]``
    a ``(seeds,)`` tensor, ``names`` the variants in display order (see :func:`protocol_names`)."""

    seeds: list
    names: List[str]
    accuracy: Dict[Tuple[str, str], torch.Tensor]


def protocol_names(l2s: Sequence[float] = (1e-4, 1e-2, 1.0), default_l2: float = 1e-2) -> List[str]:
    """The variants :func:`compare_protocols` scores: ``"adapt"`` (head fit on labelled OOD samples,
    scored on fresh ones), ``"adapt, in-sample"`` (scored on the samples it was fit on),
    ``"transfer"`` (head fit on the training embeddings), then ``"adapt, l2=..."`` for each ridge
    strength of ``l2s`` other than ``default_l2``."""
    l2s = [float(v) for v in l2s]
    if default_l2 not in l2s:
        raise ValueError(f"default_l2={default_l2!r} must be one of l2s={l2s!r}")
    return ["adapt", "adapt, in-sample", "transfer"] + [f"adapt, l2={v:g}" for v in l2s if v != default_l2]


def compare_protocols(cfg: SyntheticConfig, seeds: Sequence[int], *, device="cpu",
                      l2s: Sequence[float] = (1e-4, 1e-2, 1.0), default_l2: float = 1e-2) -> ProtocolComparison:
    """Score the final features of both modes (every seed of ``seeds`` in one batch, the exact
    recursion of Lemmas 5.1/5.3) under the protocol variants of :func:`protocol_names`, through
    :func:`mmcl.downstream.evaluation.evaluate_all` with each ridge strength of ``l2s``.  The paper's
    Sec. 3.3/6 says only that a logistic regression is fit "on the learned features of the test
    samples"; the variants bracket the readings."""
    names = protocol_names(l2s, default_l2)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    data = sample_synthetic_batch(cfg, seeds, device=device)
    acc = {}
    for mode in ("single", "multi"):
        traj = simulate(cfg, data, mode, "recursion", record_every=cfg.n_epochs).last()
        for l2 in l2s:
            ev = evaluate_all(traj, data, l2=l2)
            if l2 == default_l2:
                acc[("adapt", mode)] = ev["adapt"].accuracy[:, -1]
                acc[("adapt, in-sample", mode)] = ev["adapt"].fit_accuracy[:, -1]
                acc[("transfer", mode)] = ev["transfer"].accuracy[:, -1]
            else:
                acc[(f"adapt, l2={l2:g}", mode)] = ev["adapt"].accuracy[:, -1]
    return ProtocolComparison(seeds=seeds, names=names, accuracy=acc)


def final_metrics(traj: Trajectory, data: SyntheticData) -> Dict[str, torch.Tensor]:
    """The end of a batched run, per seed (float64, CPU): OOD accuracy under both protocols
    (``"adapt"``, ``"transfer"``, :func:`mmcl.downstream.evaluation.evaluate_all` at the last step),
    ``"gamma"`` (``max_r gamma_r``) and ``"rho"`` (``max_{r,i} rho_{r,i}``)."""
    if not data.batched:
        raise ValueError("final_metrics needs a batch of seeds: data must be SyntheticData.stack([...])")
    ev = evaluate_all(traj.last(), data)
    return {"adapt": ev["adapt"].accuracy[:, -1].double().cpu(),
            "transfer": ev["transfer"].accuracy[:, -1].double().cpu(),
            "gamma": traj.gamma[:, -1].amax(-1).double().cpu(),
            "rho": traj.rho[:, -1].amax((-1, -2)).double().cpu()}
