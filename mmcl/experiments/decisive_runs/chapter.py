"""The experiment of the chapter :ref:`The decisive runs <sec-decisive-runs>`: its sizes and
its cached runs.  The computations are those of :mod:`mmcl.experiments.decisive_runs.runs`; the
drawings are in :mod:`mmcl.figures.decisive_runs`.

* :func:`~mmcl.experiments.decisive_runs.sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`~mmcl.experiments.decisive_runs.DecisiveSizes`, one per size in ``BY_SIZE``);
* :func:`~mmcl.experiments.decisive_runs.decisive_sweep` -- :func:`~mmcl.experiments.decisive_runs.run_decisive_sweep` at the
  size's ``n`` and seeds, cached per ``(size, device)``;
* :func:`~mmcl.experiments.decisive_runs.decisive_chains_by_n` -- :func:`~mmcl.experiments.decisive_runs.decisive_chains` at the
  size's ``chain_sizes`` (cached);
* :func:`~mmcl.experiments.decisive_runs.decisive_point` -- one seed at the size's decisive ``n`` (``9,224`` at the default size,
  multi-modal), cached;
* :func:`~mmcl.experiments.decisive_runs.premises_by_n` -- the failing premises at the sweep's ``n`` and at the decisive ones
  (``N_DECISIVE`` and ``10^4``, evaluated only);
* :func:`~mmcl.experiments.decisive_runs.error_table`, :func:`~mmcl.experiments.decisive_runs.point_summary` -- what the page prints of the sweep and of the point.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Dict, List, Mapping, Tuple

from mmcl.cache import load_or_compute
from mmcl.experiments.sizes import pick
from mmcl.experiments.decisive_runs.runs import (N_DECISIVE, NUS, DecisiveChains, DecisiveRun, DecisiveSweep,
                                               decisive_chains, decisive_conditions, decisive_config, run_decisive,
                                               run_decisive_sweep)

__all__ = ["DecisiveSizes", "BY_SIZE", "sizes", "decisive_sweep", "decisive_chains_by_n", "decisive_point",
           "premises_by_n", "error_table", "point_summary", "parts_table", "ablation_table",
           "chains_table", "init_table", "PREMISE_SIZES", "PARTS_SHOWN", "premise_comparison", "sec33_agreement"]

#: The ``n`` at which the premises are evaluated besides the sweep's: the first at which 4a holds and 10^4.
PREMISE_SIZES = (N_DECISIVE, 10000)


@dataclass(frozen=True)
class DecisiveSizes:
    """What a size means for this chapter: the seeds at each ``n`` of the sweep (``sweep_seeds``,
    ``n -> seeds``), the ``n`` at which App. C.2/D.2 are re-taken on every-step runs
    (``chain_sizes``, memory ``O(T n^2 M)``) and their seeds (``chain_seeds``), and the decisive
    point: one seed at ``point_n`` in ``point_modes`` (``point_n = 0``: the sweep's largest ``n``)."""

    sweep_seeds: Mapping[int, int]
    chain_sizes: Tuple[int, ...]
    chain_seeds: int
    point_n: int = 0
    point_modes: Tuple[str, ...] = ()


#: The chapter's sizes.  ``default``: the sweep stops at ``n = 1000`` (about 35 s of CPU), and the
#: decisive point is one multi-modal seed at ``n = 9,224``, the first ``n`` where every premise of
#: Theorem 4.3 (2) a computation can reach holds (about 4.5 minutes of CPU in float32 on one thread);
#: ``full`` adds ``n = 9,224`` and ``10^4`` to the sweep, both modes.
BY_SIZE: Dict[str, DecisiveSizes] = {
    "tiny": DecisiveSizes(sweep_seeds={40: 2, 60: 2}, chain_sizes=(40,), chain_seeds=1, point_n=80,
                          point_modes=("multi",)),
    "default": DecisiveSizes(sweep_seeds={100: 6, 178: 6, 316: 4, 562: 3, 1000: 2}, chain_sizes=(100,),
                             chain_seeds=2, point_n=N_DECISIVE, point_modes=("multi",)),
    "full": DecisiveSizes(sweep_seeds={100: 10, 316: 10, 1000: 5, 3162: 3, N_DECISIVE: 1, 10000: 2},
                          chain_sizes=(100, 200), chain_seeds=3),
}


def sizes(size: str = "default") -> DecisiveSizes:
    """The :class:`~mmcl.experiments.decisive_runs.DecisiveSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


@functools.lru_cache(maxsize=3)
def decisive_sweep(size: str = "default", device: str = "cpu") -> DecisiveSweep:
    """The decisive runs at the ``sweep_seeds`` of :func:`~mmcl.experiments.decisive_runs.sizes`, cached in memory and on disk
    (:func:`mmcl.cache.load_or_compute`): the reading guide draws the same runs first."""
    seeds = dict(sizes(size).sweep_seeds)
    params = {"seeds": sorted(seeds.items()), "device": str(device)}
    return load_or_compute("decisive-sweep", params, lambda: run_decisive_sweep(seeds, device=device))


@functools.lru_cache(maxsize=3)
def decisive_chains_by_n(size: str = "default", device: str = "cpu") -> Dict[int, DecisiveChains]:
    """App. C.2/D.2 at the ``chain_sizes`` of :func:`~mmcl.experiments.decisive_runs.sizes` (cached)."""
    s = sizes(size)
    return {n: decisive_chains(n, s.chain_seeds, device=device) for n in s.chain_sizes}


@functools.lru_cache(maxsize=3)
def decisive_point(size: str = "default", device: str = "cpu") -> DecisiveRun:
    """The decisive point of :func:`~mmcl.experiments.decisive_runs.sizes`: one seed at ``point_n`` in ``point_modes``, or, where
    ``point_n`` is 0, the sweep's run at its largest ``n``; cached in memory and on disk
    (:func:`mmcl.cache.load_or_compute`), so that the window chapter reads the decisive chapter's run."""
    s = sizes(size)
    if not s.point_n:
        sweep = decisive_sweep(size, device)
        return sweep.by_n[sweep.sizes[-1]]
    params = {"n": s.point_n, "modes": list(s.point_modes), "device": str(device)}
    return load_or_compute("decisive-point", params,
                           lambda: run_decisive(s.point_n, 1, device=device, modes=s.point_modes))


def premises_by_n(size: str = "default") -> Dict[int, List[str]]:
    """The keys of the failing premises (:func:`~mmcl.experiments.decisive_runs.decisive_conditions`)
    at every ``n`` of the sweep and at :data:`~mmcl.experiments.decisive_runs.chapter.PREMISE_SIZES`."""
    ns = sorted(set(sizes(size).sweep_seeds) | set(PREMISE_SIZES))
    return {n: [c.key for c in decisive_conditions(decisive_config(n)) if not c.holds] for n in ns}


_MODES = ("single", "multi")
_PROTOCOLS = ("adapt", "transfer")


def error_table(sweep: DecisiveSweep) -> str:
    """The mean OOD error over seeds at every ``n`` of ``sweep``: one row per ``n`` (with its
    number of seeds), one column per mode, ``nu`` (``NUS``: ``"sec33"`` and ``"parallel"``)
    and protocol, headed ``mode/nu/protocol`` (shortened); three decimals."""
    cols = [(m, nu, p) for m in _MODES for nu in NUS for p in _PROTOCOLS]
    head = f"{'n':>6} {'seeds':>5}  " + "  ".join(
        f"{m[:5]}/{nu[:3]}/{p[:5]:<5}" for m, nu, p in cols)
    rows = [head]
    for n in sweep.sizes:
        r = sweep.by_n[n]
        rows.append(f"{n:>6} {len(r.seeds):>5}  " + "  ".join(
            f"{float(r.modes[m].error[nu, p].mean()):>15.3f}" for m, nu, p in cols))
    return "\n".join(rows)


def point_summary(point: DecisiveRun) -> str:
    """What the decisive point measured, one line each: ``n``, ``d``, the failing premises, Sec.
    3.3's ratio and the run's seconds; then for every mode it ran, the final loss and, under both
    ``nu``, the OOD errors of both protocols and the parts of ``<w_r, nu>``; last, the parts of
    ``<w_r, zeta>`` (means over seeds, neurons and inputs)."""
    parts = ("init", "signal", "memorised")
    lines = [f"n = {point.n}, d = {point.cfg.d:.2e}; failing premises: "
             f"{', '.join(point.failing)}; Sec. 3.3's ratio {point.sec33_ratio:.6f}; "
             f"run took {point.seconds:.0f} s"]
    for mode, res in point.modes.items():
        lines.append(f"{mode}-modal: final loss {float(res.loss.mean()):.4f}")
        for nu in ("sec33", "parallel"):
            e = {p: float(res.error[nu, p].mean()) for p in _PROTOCOLS}
            by_part = ", ".join(f"{k} {float(res.parts[nu, k].mean()):.2g}" for k in parts)
            lines.append(f"  {nu:>8} nu: OOD error adapt {e['adapt']:.3f}, transfer "
                         f"{e['transfer']:.3f}; <w_r, nu> by part {by_part}")
        lines.append("  <w_r, zeta> by part " + ", ".join(
            f"{k} {float(res.parts['zeta', k].mean()):.2g}" for k in parts))
    return "\n".join(lines)


#: The parts of a feature's response that :func:`~mmcl.experiments.decisive_runs.parts_table` prints: ``(input, part)``.
PARTS_SHOWN = (("parallel", "signal"), ("sec33", "signal"), ("sec33", "init"), ("zeta", "init"),
               ("zeta", "signal"), ("zeta", "memorised"))


def parts_table(sweep: DecisiveSweep, mode: str = "multi") -> str:
    """At the sweep's largest ``n``: the root mean square (mean over seeds) of the parts of
    ``<w_r, v>`` that decide the OOD error (``PARTS_SHOWN``), one line each."""
    n = sweep.sizes[-1]
    res = sweep.by_n[n].modes[mode]
    return "\n".join(f"n = {n}: rms of the {part} part of <w, {v}>: {float(res.parts[v, part].mean()):.3g}"
                     for v, part in PARTS_SHOWN)


def ablation_table(sweep: DecisiveSweep, mode: str = "multi") -> str:
    """At the sweep's largest ``n``: the OOD error (mean over seeds) of every ablated feature
    (``ModeResult.ablation``), one line per test signal and variant, both protocols."""
    res = sweep.by_n[sweep.sizes[-1]].modes[mode]
    return "\n".join(f"{nu:>8} {variant:<26} " + "  ".join(
        f"{p} error {float(1 - acc[p].mean()):.3f}" for p in acc)
        for nu in NUS for variant, acc in res.ablation[nu].items())


def chains_table(chains: Dict[int, DecisiveChains]) -> str:
    """Appendices C.2 and D.2 re-taken at each ``n`` (``DecisiveChains``), one line per ``n``."""
    return "\n".join(
        f"n = {n}: C.16 interval {c.feasible16[0]:.2f} .. {c.feasible16[1]:.2f}, C.17 factor "
        f"{c.factor17:.2f}, C.18 holds: {c.c18_holds}; D.12 distance / (sqrt(m)/||mu||) "
        f"{c.d12_ratio[0]:.2f}, {c.d12_ratio[1]:.2f}; D.14 slack < 0 on {c.d14_fail:.0%} of "
        f"stage-2 steps (factor {c.factor14:.2f}); D.15 holds: {c.d15_holds}"
        for n, c in chains.items())


def init_table(sweep: DecisiveSweep) -> str:
    """Lemmas C.9 and C.10 at initialisation, at every ``n`` of the sweep: the mean of
    ``B_+(0)`` against its formula and Lemma C.9's bound, and the share of pairs where Lemma
    C.10 holds."""
    return "\n".join(
        f"n = {n:>5}: B_+(0) mean {float(r.B_plus0.mean()):.3g} (formula {r.b0_mean:.3g}) vs Lemma "
        f"C.9's bound {r.c9_bound:.3g}; Lemma C.10 holds for {float(r.c10_fraction.mean()):.1%} "
        "of the pairs"
        for n, r in ((n, sweep.by_n[n]) for n in sweep.sizes))


def premise_comparison(run: DecisiveRun, deltas=(0.1, 0.01)) -> str:
    """The premises at ``run``'s configuration under the paper's constants and under the ``C_l`` the
    run measured at ``T1`` (the largest over modes and seeds, ``ModeResult.c_ell_T1``), at each
    failure probability of ``deltas``: one line per premise that fails in some column, with the factor
    by which it fails (``lhs/rhs`` on the failing side), and whether Theorem 4.3 (2)'s proof uses it."""
    from mmcl.proofs.assumptions import AssumptionConfig, check_assumption41, premise_conditions
    from mmcl.proofs.blueprint import premise_keys

    c_ell = max(float(m.c_ell_T1.max()) for m in run.modes.values() if m.c_ell_T1 is not None)
    cols = [(f"delta = {dl:g}, C_l = {cl}", AssumptionConfig(delta=dl, c_ell=cv))
            for dl in deltas for cl, cv in (("1.01", 1.01), (f"{c_ell:.0f} (measured)", c_ell))]
    evals = [{c.key: c for c in check_assumption41(run.cfg, a) + premise_conditions(run.cfg, a)} for _, a in cols]
    keys = [k for k in evals[0] if any(not e[k].holds for e in evals)]
    used = set(premise_keys("Theorem 4.3 (2)"))
    head = f"{'premise':<8} {'used by Thm 4.3 (2)':<20}" + "".join(f"{name:>34}" for name, _ in cols)
    lines = [head]
    for k in keys:
        cells = []
        for e in evals:
            c = e[k]
            cells.append("holds" if c.holds else f"fails by x{1 / c.factor if c.factor < 1 else c.factor:.3g}")
        lines.append(f"{k:<8} {'yes' if k in used else 'no':<20}" + "".join(f"{x:>34}" for x in cells))
    return "\n".join(lines)


def sec33_agreement(sweep: DecisiveSweep, protocol: str = "adapt") -> List[float]:
    """Under Sec. 3.3's ``nu``, the largest difference over seeds between the single- and the
    multi-modal OOD error of ``protocol`` at every ``n`` of ``sweep``: at test time the two modes'
    trained features read the test input as their initial ones do, so the two errors agree."""
    return [float((r.modes["single"].error["sec33", protocol] - r.modes["multi"].error["sec33", protocol]).abs().max())
            for r in (sweep.by_n[n] for n in sweep.sizes)]
