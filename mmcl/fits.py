"""Least-squares fits of the growth laws the paper states, with the uncertainty the book reports.

* :func:`fit_growth_rate` -- the per-step rate ``r`` of a log-linear fit ``v(t) ~ C (1 + r)^t``
  along a run (:class:`GrowthFit`): the measured growth of noise memorisation against Lemma 5.2's;
* :func:`loglog_fit` -- ``log y = a + b log n`` fitted to the means over seeds along ``n``, with the
  slope's standard error and a bootstrap over seeds (:class:`LogLogFit`): the asymptotic claims
  measured along ``n`` (the chapters "Inside the theorems' regime" and "The decisive runs").

Public: every name in ``__all__``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_int, check_number

__all__ = ["GrowthFit", "fit_growth_rate", "LogLogFit", "loglog_fit"]


@dataclass
class GrowthFit:
    """``values ~ C (1 + rate)^t`` on a window: ``rate`` per step, ``log_c``, the window of steps
    ``[t_start, t_stop]`` and the coefficient of determination ``r2`` of the log-linear fit.
    Leading dimensions of the fitted values (e.g. a batch) are kept: tensors ``(...)``."""

    rate: torch.Tensor
    log_c: torch.Tensor
    r2: torch.Tensor
    t_start: int
    t_stop: int


def fit_growth_rate(values: torch.Tensor, steps: torch.Tensor, t_start: int, t_stop: int) -> GrowthFit:
    """Least-squares fit of ``log values(t) = log C + t log(1 + rate)`` over the recorded steps with
    ``t_start <= t <= t_stop``; ``values (..., K)``, ``steps (K,)``.  All fitted values must be > 0
    (a ValueError says where they are not).  Used to compare the measured growth of noise
    memorisation with the ``0.96 eta sigma_xi^2 d/(n m tau)`` of Lemma 5.2."""
    if not isinstance(values, torch.Tensor) or values.dim() < 1 or values.shape[-1] != steps.shape[0]:
        raise ValueError(f"values must be (..., K) with K={steps.shape[0]} = len(steps)")
    if not t_start < t_stop:
        raise ValueError(f"need t_start < t_stop, got {t_start} and {t_stop}")
    sel = (steps >= t_start) & (steps <= t_stop)
    if int(sel.sum()) < 2:
        raise ValueError(f"fewer than 2 recorded steps in [{t_start}, {t_stop}]")
    v = values[..., sel.to(values.device)].to(torch.float64)
    if not bool((v > 0).all()):
        raise ValueError(f"fit_growth_rate: values must be > 0 on [{t_start}, {t_stop}] (min {float(v.min()):.3g})")
    t = steps[sel].to(device=v.device, dtype=torch.float64)
    lv = v.log()
    tm, lm = t.mean(), lv.mean(-1, keepdim=True)
    slope = ((t - tm) * (lv - lm)).sum(-1) / ((t - tm) ** 2).sum()
    icpt = lm[..., 0] - slope * tm
    pred = icpt[..., None] + slope[..., None] * t
    ss_res = ((lv - pred) ** 2).sum(-1)
    ss_tot = ((lv - lm) ** 2).sum(-1)
    r2 = 1 - ss_res / ss_tot.clamp_min(1e-300)
    return GrowthFit(rate=torch.expm1(slope), log_c=icpt, r2=r2, t_start=int(t_start), t_stop=int(t_stop))


@dataclass
class LogLogFit:
    """``log y = intercept + slope log x`` fitted by least squares to the means over seeds.

    ``stderr``: the slope's standard error from the residuals (``nan`` with two sizes);
    ``boot_low``/``boot_high``: the 2.5 % and 97.5 % quantiles of the slope over ``n_boot``
    bootstrap resamples of the seeds at each size (sizes with one seed stay fixed); ``x``,
    ``y`` (the means that were fitted); ``floor``: the value small means were raised to (or None)."""

    slope: float
    intercept: float
    stderr: float
    boot_low: float
    boot_high: float
    x: List[float]
    y: List[float]
    floor: Optional[float] = None

    def predict(self, x) -> torch.Tensor:
        """The fitted ``y`` at ``x``."""
        return torch.exp(self.intercept + self.slope * torch.log(torch.as_tensor(x, dtype=torch.float64)))

    def __str__(self) -> str:
        return f"{self.slope:+.3f} ± {self.stderr:.3f} (bootstrap 95 %: {self.boot_low:+.3f} .. {self.boot_high:+.3f})"


def _ols(lx: torch.Tensor, ly: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Slopes and intercepts of ``ly (..., S) ~ lx (S,)``."""
    xm = lx.mean()
    sxx = ((lx - xm) ** 2).sum()
    slope = ((lx - xm) * (ly - ly.mean(-1, keepdim=True))).sum(-1) / sxx
    return slope, ly.mean(-1) - slope * xm


def loglog_fit(x: Sequence[float], values: Sequence, *, n_boot: int = 2000, seed: int = 0,
               floor: Optional[float] = None) -> LogLogFit:
    """Fit ``log(mean y) = a + b log x`` over the sizes ``x`` (at least 2, positive, distinct),
    ``values[k]`` the per-seed values at ``x[k]`` (a sequence or 1-d tensor, at least one finite
    value; ``nan`` are left out).  The means must be positive, unless ``floor > 0`` is given: then
    means below it are raised to it (for error rates that reach 0).  Returns a :class:`LogLogFit`
    with the slope's standard error and a bootstrap over seeds (``n_boot`` resamples, generator
    ``seed``)."""
    check_int("n_boot", n_boot)
    check_int("seed", seed, 0)
    if floor is not None:
        check_number("floor", floor, 0)
    xs = [check_number("x", v, 0) for v in x]
    if len(xs) < 2 or len(set(xs)) < 2:
        raise ValueError(f"x must hold at least 2 distinct positive sizes, got {list(x)!r}")
    if len(values) != len(xs):
        raise ValueError(f"values must hold one sequence per size: {len(values)} for {len(xs)} sizes")
    per = []
    for k, v in enumerate(values):
        t = torch.as_tensor(v, dtype=torch.float64).flatten()
        t = t[~torch.isnan(t)]
        if t.numel() == 0:
            raise ValueError(f"values[{k}] (x={xs[k]}) holds no finite value")
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"values[{k}] (x={xs[k]}) holds an infinite value")
        per.append(t)
    means = torch.stack([t.mean() for t in per])

    def _log(mv):
        if floor is not None:
            mv = mv.clamp_min(floor)
        return mv.log()

    if floor is None and not bool((means > 0).all()):
        k = int((means <= 0).nonzero()[0])
        raise ValueError(f"values: the mean at x={xs[k]} is {float(means[k]):.3g}; a log-log fit needs positive "
                         f"means (pass floor=... for rates that reach 0)")
    lx = torch.tensor(xs, dtype=torch.float64).log()
    ly = _log(means)
    slope, icpt = _ols(lx, ly)
    S = len(xs)
    if S > 2:
        resid = ly - (icpt + slope * lx)
        stderr = float(torch.sqrt((resid ** 2).sum() / (S - 2) / ((lx - lx.mean()) ** 2).sum()))
    else:
        stderr = math.nan
    gen = torch.Generator().manual_seed(seed)
    boot = torch.stack([t[torch.randint(0, t.numel(), (n_boot, t.numel()), generator=gen)].mean(-1) for t in per], -1)
    bs, _ = _ols(lx, _log(boot))
    bs = bs[torch.isfinite(bs)]
    lo, hi = (float(torch.quantile(bs, 0.025)), float(torch.quantile(bs, 0.975))) if bs.numel() else (math.nan, math.nan)
    return LogLogFit(slope=float(slope), intercept=float(icpt), stderr=stderr, boot_low=lo, boot_high=hi,
                     x=xs, y=[float(v) for v in means], floor=floor)
