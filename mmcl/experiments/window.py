"""The experiment of the chapter "What holds instead": the OOD error of the decisive runs' trained
networks as the test signal tilts from Sec. 3.3's angle to ``mu``, the closed form that predicts
it, and the window of angles where the paper's comparison is true.

The networks are the decisive runs' (:mod:`mmcl.experiments.decisive_runs`): each
records its errors on a grid of ``cos(nu, mu)`` (``ModeResult.tilt``,
:func:`mmcl.downstream.tilt.tilt_curves`), so the angle costs no training.  This module adds

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here;
* :func:`sigma0_sweeps` -- the same sweep at smaller ``sigma0`` (inside item 3 of Assumption 4.1),
  for the figure in which every run falls on one curve (cached);
* :func:`closed_form` -- the predicted ``adapt`` error of one run at every angle, from four numbers
  of its trained network (:func:`mmcl.downstream.window.window_dprime`);
* :func:`thresholds` -- the angle at which each error falls to ``ERROR_TARGET``, predicted (the
  closed form for ``adapt``; the trained head's Gaussian-equivalent error for ``transfer``) and
  measured;
* :func:`window` -- the angles where the multi-modal error is small and the single-modal one is not;
* :func:`floor_rows` -- the proposition's floor under Sec. 3.3's ``nu`` beside the measured errors;
* :func:`signal_trend` -- how ``sum_r gamma_r^2`` scales with ``n`` in one mode, and where that puts
  the single-modal end of the window at larger ``n``;
* :func:`collapse` -- every run's measured ``adapt`` error against the closed form's variable;
* :func:`window_json` -- what ``mmcl window`` writes.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

import torch

from mmcl.cache import load_or_compute
from mmcl.downstream.window import ERROR_TARGET, fitted_dprime, normal_cdf, threshold_on_grid, window_dprime, window_threshold
from mmcl.experiments.sizes import pick
from mmcl.experiments.decisive_runs.runs import DECISIVE_SCALING, DecisiveRun, DecisiveSweep, run_decisive_sweep
from mmcl.experiments.theorems_regime import RegimeScaling
from mmcl.fits import LogLogFit, loglog_fit

__all__ = ["WindowSizes", "BY_SIZE", "sizes", "MODES", "PROTOCOLS", "sigma0_sweeps", "network_numbers",
           "closed_form", "closed_form_dprime", "Thresholds", "thresholds", "window", "threshold_rows",
           "floor_rows", "floor_table", "collapse", "collapse_deviation", "collapse_summary", "window_json",
           "SignalTrend", "signal_trend", "trend_summary", "theorem_summary", "large_n_runs", "both_modes_run", "collapse_points", "collapse_result"]

MODES = ("single", "multi")
PROTOCOLS = ("adapt", "transfer")


@dataclass(frozen=True)
class WindowSizes:
    """What a size means for this chapter: ``sigma0_fractions`` (``sigma0`` as a fraction of item 3a's
    bound, besides the decisive scaling's 0.9) and the seeds at each ``n`` of their sweeps
    (``sigma0_seeds``, ``n -> seeds``).  The decisive sweep and point are the decisive chapter's, at
    the same size."""

    sigma0_fractions: Tuple[float, ...]
    sigma0_seeds: Mapping[int, int]


#: ``default``: two smaller ``sigma0`` (0.3 and 0.1 of item 3a's bound) at three ``n``, two seeds
#: each (about a minute of CPU).
BY_SIZE: Dict[str, WindowSizes] = {
    "tiny": WindowSizes(sigma0_fractions=(0.3,), sigma0_seeds={40: 1, 60: 1}),
    "default": WindowSizes(sigma0_fractions=(0.3, 0.1), sigma0_seeds={100: 2, 316: 2, 1000: 2}),
    "full": WindowSizes(sigma0_fractions=(0.3, 0.1), sigma0_seeds={100: 4, 316: 4, 1000: 3, 3162: 2}),
}


def sizes(size: str = "default") -> WindowSizes:
    """The :class:`WindowSizes` of ``size`` (a ValueError names the valid sizes)."""
    return pick(BY_SIZE, size)


@functools.lru_cache(maxsize=3)
def sigma0_sweeps(size: str = "default", device: str = "cpu") -> Dict[float, DecisiveSweep]:
    """The decisive sweep at every ``sigma0`` fraction of :func:`sizes` (``RegimeScaling.init_fraction``),
    cached in memory and on disk."""
    s = sizes(size)
    seeds = dict(s.sigma0_seeds)
    out = {}
    for f in s.sigma0_fractions:
        scaling = RegimeScaling(d_rule=DECISIVE_SCALING.d_rule, init_fraction=f)
        params = {"seeds": sorted(seeds.items()), "device": str(device), "init_fraction": f}
        out[f] = load_or_compute("window-sigma0", params,
                                 lambda sc=scaling: run_decisive_sweep(seeds, sc, device=device))
    return out


def _check(run: DecisiveRun, mode: str) -> None:
    if not isinstance(run, DecisiveRun):
        raise ValueError(f"run must be a DecisiveRun, got {type(run).__name__}")
    if mode not in run.modes:
        raise ValueError(f"mode={mode!r} did not run here; valid: {', '.join(map(repr, run.modes))}")
    if run.modes[mode].tilt is None:
        raise ValueError("the run has no tilted curves (ModeResult.tilt is None)")


def network_numbers(run: DecisiveRun, mode: str) -> Dict[str, float]:
    """The four numbers of a trained network that the closed form reads, and the geometry:
    ``gamma_sq`` (``sum_r gamma_r^2``, mean over seeds), ``m``, ``kappa = ||nu||/||mu||``, ``snr``,
    ``s0 = sigma0 sigma_xi sqrt(d)``, ``d`` and ``n_fit`` (the labelled OOD samples of ``adapt``)."""
    _check(run, mode)
    cfg, t = run.cfg, run.modes[mode].tilt
    return {"gamma_sq": float(t.gamma_sq.mean()), "m": cfg.m, "kappa": cfg.nu_norm / cfg.mu_norm,
            "snr": cfg.mu_norm / (cfg.sigma_xi * math.sqrt(cfg.d)), "s0": cfg.init_noise, "d": float(cfg.d),
            "n_fit": t.n_fit}


def closed_form_dprime(run: DecisiveRun, mode: str, cos: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The closed form's discriminability after the fit on ``n_fit`` samples at every angle
    (default: the run's grid), per seed ``(S, K)``: :func:`mmcl.downstream.window.window_dprime` with
    each seed's ``sum_r gamma_r^2``."""
    _check(run, mode)
    t = run.modes[mode].tilt
    cos = t.cos if cos is None else torch.as_tensor(cos, dtype=torch.float64)
    num = network_numbers(run, mode)
    num.pop("gamma_sq")
    return torch.stack([window_dprime(cos, gamma_sq=float(g), **num) for g in t.gamma_sq])


def closed_form(run: DecisiveRun, mode: str, cos: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The predicted ``adapt`` error ``Phi(-D/2)`` of :func:`closed_form_dprime`, mean over seeds, ``(K,)``."""
    return normal_cdf(-closed_form_dprime(run, mode, cos) / 2).mean(0)


@dataclass
class Thresholds:
    """The angles at which one error falls to ``ERROR_TARGET`` (None: not on the grid, or not at
    any ``cos <= 1``): ``predicted`` (``adapt``: the closed form; ``transfer``: the trained head's
    Gaussian-equivalent error, mean over seeds), ``gaussian`` (the Gaussian-equivalent curve, both
    protocols) and ``measured`` (the measured error, mean over seeds)."""

    predicted: Optional[float]
    gaussian: Optional[float]
    measured: Optional[float]


def thresholds(run: DecisiveRun, mode: str, protocol: str) -> Thresholds:
    """:class:`Thresholds` of one mode and protocol of ``run``."""
    _check(run, mode)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol={protocol!r} is unknown; valid: {', '.join(map(repr, PROTOCOLS))}")
    t = run.modes[mode].tilt
    gauss = threshold_on_grid(t.cos, t.gaussian[protocol].mean(0))
    measured = threshold_on_grid(t.cos, t.error[protocol].mean(0))
    if protocol == "adapt":
        predicted = window_threshold(**network_numbers(run, mode))
    else:
        predicted = gauss
    return Thresholds(predicted=predicted, gaussian=gauss, measured=measured)


def window(run: DecisiveRun, protocol: str, which: str = "measured") -> Optional[Tuple[float, float]]:
    """The window of angles where the paper's comparison holds: ``[low, high)`` with ``low`` the
    multi-modal threshold and ``high`` the single-modal one (1.0 where the single-modal error stays
    above ``ERROR_TARGET`` up to the parallel ``nu``, the window then closed at 1); None where the
    multi-modal error never falls or the single-modal one falls first.  ``which``: ``"measured"`` or
    ``"predicted"``."""
    if which not in ("measured", "predicted"):
        raise ValueError(f"which={which!r} is unknown; valid: 'measured', 'predicted'")
    lo = getattr(thresholds(run, "multi", protocol), which)
    hi = getattr(thresholds(run, "single", protocol), which)
    if lo is None:
        return None
    hi = 1.0 if hi is None else hi
    return (lo, hi) if hi > lo else None


def _fmt(c: Optional[float]) -> str:
    return "   none" if c is None else f"{c:7.3f}"


def threshold_rows(runs: Mapping[int, DecisiveRun]) -> str:
    """The thresholds of every run (``n -> run``), predicted beside measured, per mode and protocol,
    and the measured window; one line per ``n`` and protocol."""
    lines = [f"{'n':>6} {'protocol':<8}  {'multi pred':>10} {'meas':>7}  {'single pred':>11} {'meas':>7}   window"]
    for n, run in runs.items():
        for p in PROTOCOLS:
            if not all(m in run.modes for m in MODES):
                continue
            tm, ts = thresholds(run, "multi", p), thresholds(run, "single", p)
            w = window(run, p)
            if w is None:
                ws = "empty"
            else:
                ws = f"[{w[0]:.3f}, {w[1]:.3f}" + ("]" if ts.measured is None else ")")
            lines.append(f"{n:>6} {p:<8}  {_fmt(tm.predicted):>10} {_fmt(tm.measured)}  "
                         f"{_fmt(ts.predicted):>11} {_fmt(ts.measured)}   {ws}")
    return "\n".join(lines)


def floor_rows(runs: Mapping[int, DecisiveRun]) -> List[dict]:
    """Per ``n`` and mode, under Sec. 3.3's ``nu`` (the grid's first angle): the proposition's floor
    (the largest over seeds: the weakest bound), the smallest measured error of both protocols, and
    the Gaussian-equivalent ``adapt`` error (mean)."""
    rows = []
    for n, run in runs.items():
        for mode, r in run.modes.items():
            t = r.tilt
            rows.append({"n": n, "mode": mode, "floor": float(t.floor[:, 0].max()),
                         "measured_min": min(float(t.error[p][:, 0].min()) for p in PROTOCOLS),
                         "gaussian_adapt": float(t.gaussian["adapt"][:, 0].mean())})
    return rows


def collapse(runs: List[Tuple[str, DecisiveRun]]) -> List[dict]:
    """Every (labelled) run's measured ``adapt`` errors against the closed form's variable
    ``D`` (:func:`closed_form_dprime`): one dict per run and mode with ``label``, ``n``, ``mode``,
    ``init_fraction`` (``sigma0`` over item 3a's bound), ``D (S, K)`` and ``error (S, K)``; on the
    curve ``Phi(-D/2)`` if the closed form is right."""
    out = []
    for label, run in runs:
        for mode in run.modes:
            out.append({"label": label, "n": run.n, "mode": mode, "D": closed_form_dprime(run, mode),
                        "error": run.modes[mode].tilt.error["adapt"]})
    return out


def window_json(run: DecisiveRun) -> dict:
    """What ``mmcl window`` writes: ``config`` (the configuration's fields), ``seeds``, ``cos`` (the
    grid, ascending), ``sec33_cos`` (Sec. 3.3's value at this ``n``), ``target`` and
    ``modes[mode][protocol]`` with ``errors`` (one list per ``cos`` value, one error per seed),
    ``gaussian`` (the same shape: the Gaussian-equivalent prediction), ``predicted_threshold`` and
    ``measured_threshold`` (the ``cos`` at which the error falls to ``target``; null where it does not
    on the grid); ``windows[protocol]`` (``[low, high]`` or null), ``floor_sec33`` per mode (the
    proposition's floor under Sec. 3.3's ``nu``, per seed) and ``numbers`` per mode
    (:func:`network_numbers`)."""
    if not isinstance(run, DecisiveRun):
        raise ValueError(f"run must be a DecisiveRun, got {type(run).__name__}")
    first = next(iter(run.modes.values())).tilt
    out = {"config": {k: (v if isinstance(v, (bool, str)) else float(v) if isinstance(v, float) else int(v))
                      for k, v in vars(run.cfg).items()},
           "seeds": list(run.seeds), "seconds": run.seconds, "cos": [float(c) for c in first.cos],
           "sec33_cos": float(run.cfg.nu_cos), "target": ERROR_TARGET, "modes": {}, "floor_sec33": {},
           "numbers": {}}
    for mode, r in run.modes.items():
        t = r.tilt
        out["modes"][mode] = {}
        for p in PROTOCOLS:
            th = thresholds(run, mode, p)
            out["modes"][mode][p] = {"errors": [[float(v) for v in t.error[p][:, k]] for k in range(len(t.cos))],
                                     "gaussian": [[float(v) for v in t.gaussian[p][:, k]] for k in range(len(t.cos))],
                                     "predicted_threshold": th.predicted, "measured_threshold": th.measured}
        out["floor_sec33"][mode] = [float(v) for v in t.floor[:, 0]]
        out["numbers"][mode] = network_numbers(run, mode)
    if all(m in run.modes for m in MODES):
        out["windows"] = {p: (list(w) if (w := window(run, p)) is not None else None) for p in PROTOCOLS}
    return out


@dataclass
class SignalTrend:
    """``sum_r gamma_r^2`` of one mode against ``n`` (:func:`signal_trend`): ``fit`` (a log-log fit over
    seeds with its bootstrap interval), and ``n_cross`` the ``n`` at which the closed-form ``adapt``
    threshold, extrapolated as ``threshold ~ (sum_r gamma_r^2)^(-1/2)`` from the largest ``n``, reaches
    ``cos = 1`` (None where the fitted slope is not negative: no crossing), with ``n_cross_range`` from
    the interval's ends."""

    fit: LogLogFit
    n_cross: Optional[float]
    n_cross_range: Tuple[Optional[float], Optional[float]]


def signal_trend(runs: Mapping[int, DecisiveRun], mode: str = "single") -> SignalTrend:
    """:class:`SignalTrend` of ``mode`` over the runs ``n -> DecisiveRun`` (at least two ``n``)."""
    ns = sorted(n for n, r in runs.items() if mode in r.modes)
    if len(ns) < 2:
        raise ValueError(f"signal_trend needs runs of mode={mode!r} at two sizes at least, got {ns}")
    fit = loglog_fit(ns, [runs[n].modes[mode].tilt.gamma_sq for n in ns])
    last = runs[ns[-1]]
    th = thresholds(last, mode, "adapt").predicted

    def cross(slope):
        if th is None or slope >= 0:
            return None
        # threshold(n) = th (n/n_last)^(-slope/2) reaches 1
        return ns[-1] * th ** (2.0 / slope) if th < 1 else float(ns[-1])

    rng = (cross(fit.boot_low), cross(fit.boot_high))
    return SignalTrend(fit=fit, n_cross=cross(fit.slope), n_cross_range=rng)


def floor_table(runs: Mapping[int, DecisiveRun]) -> str:
    """:func:`floor_rows` as text: per ``n`` and mode, the proposition's floor under Sec. 3.3's ``nu``,
    the smallest measured error (both protocols, every seed) and the Gaussian-equivalent ``adapt``
    error."""
    lines = [f"{'n':>6} {'mode':<7} {'floor':>7} {'smallest measured':>18} {'Gaussian-equivalent':>20}"]
    for r in floor_rows(runs):
        lines.append(f"{r['n']:>6} {r['mode']:<7} {r['floor']:>7.3f} {r['measured_min']:>18.3f} "
                     f"{r['gaussian_adapt']:>20.3f}")
    return "\n".join(lines)


def trend_summary(trend: SignalTrend) -> str:
    """:class:`SignalTrend` in two lines."""
    f = trend.fit
    lo, hi = trend.n_cross_range
    rng = "" if lo is None or hi is None else f" (from the interval's ends: {min(lo, hi):,.0f} to {max(lo, hi):,.0f})"
    cross = "never (no decline)" if trend.n_cross is None else f"at n = {trend.n_cross:,.0f}{rng}"
    return (f"sum_r gamma_r^2 ~ n^{f.slope:.2f} (bootstrap interval {f.boot_low:.2f} .. {f.boot_high:.2f}) over "
            f"n = {', '.join(f'{x:,.0f}' for x in f.x)}\nthe refit head's threshold reaches cos = 1 {cross}")


def collapse_summary(points: List[dict]) -> str:
    """How far the measured ``adapt`` errors of :func:`collapse` lie from ``Phi(-D/2)``: the root mean
    square and the largest deviation over every run, seed and angle, and the number of points."""
    dev = collapse_deviation(points)
    return (f"{dev.numel()} points (runs x seeds x angles): measured minus Phi(-D/2) has root mean square "
            f"{float(dev.pow(2).mean().sqrt()):.3f}, largest {float(dev.abs().max()):.3f}")


def collapse_deviation(points: List[dict]) -> torch.Tensor:
    """Every point of :func:`collapse`: measured ``adapt`` error minus ``Phi(-D/2)``, flattened."""
    return torch.cat([(p["error"] - normal_cdf(-p["D"] / 2)).flatten() for p in points])


def theorem_summary(runs: Mapping[int, DecisiveRun]) -> str:
    """The ingredients of Our Theorem 1 at every ``n``: ``G^2 = sum_r gamma_r^2`` of both modes (mean
    over seeds), the Cantelli bound on the best multi-modal head's error at ``cos = 1`` and at the
    measured multi-modal threshold's double, and the measured errors there."""
    lines = [f"{'n':>6} {'G^2 multi':>10} {'G^2 single':>11} {'multi: Cantelli bound / measured at cos = 1':>44}"]
    for n, run in runs.items():
        if not all(m in run.modes for m in MODES):
            continue
        tm, ts = run.modes["multi"].tilt, run.modes["single"].tilt
        lines.append(f"{n:>6} {float(tm.gamma_sq.mean()):>10.2f} {float(ts.gamma_sq.mean()):>11.3f} "
                     f"{float(tm.upper[:, -1].max()):>30.2e} / {float(tm.error['adapt'][:, -1].max()):.3f}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# What the chapter's figures draw (mmcl.figures.window draws only)
# --------------------------------------------------------------------------------------------
def large_n_runs(size: str = "default", device: str = "cpu") -> Dict[int, DecisiveRun]:
    """The decisive sweep's runs by ``n`` (:func:`mmcl.experiments.decisive_runs.decisive_sweep`)
    with the decisive point added (:func:`mmcl.experiments.decisive_runs.decisive_point`): the
    figure ``window-thresholds``."""
    from mmcl.experiments import decisive_runs as decisive

    runs = dict(decisive.decisive_sweep(size, device).by_n)
    point = decisive.decisive_point(size, device)
    runs[point.n] = point
    return runs


def both_modes_run(size: str = "default", device: str = "cpu") -> DecisiveRun:
    """The run at the largest ``n`` with both modes (:func:`large_n_runs`): the sweep's largest,
    or the decisive point where it ran both; the figure ``window-errors``."""
    runs = large_n_runs(size, device)
    return runs[max(n for n, r in runs.items() if len(r.modes) == 2)]


def collapse_points(sweep: DecisiveSweep, sigma0_sweeps: Mapping[float, DecisiveSweep]) -> List[dict]:
    """The points of the figure ``window-collapse``: :func:`collapse` of the decisive sweep
    (``sigma0`` at the scaling's fraction of item 3a's bound) and of ``sigma0_sweeps`` (fraction ->
    sweep), each labelled by its ``sigma0``."""
    runs = [(f"σ0 at {DECISIVE_SCALING.init_fraction:g} of item 3a", r) for r in sweep.by_n.values()]
    for f, sw in sigma0_sweeps.items():
        runs += [(f"σ0 at {f:g} of item 3a", r) for r in sw.by_n.values()]
    return collapse(runs)


def collapse_result(size: str = "default", device: str = "cpu") -> List[dict]:
    """:func:`collapse_points` of the decisive sweep and :func:`sigma0_sweeps` at ``size``."""
    from mmcl.experiments import decisive_runs as decisive

    return collapse_points(decisive.decisive_sweep(size, device), sigma0_sweeps(size, device))
