"""Inside the theorems' regime: scalings in which Assumption 4.1 holds as ``n`` grows, a sweep over
``n`` with span draws, the paper's asymptotic claims measured with fitted log-log slopes, and the
verdicts of the stage chapters re-taken there (the book's chapter "Inside the theorems' regime").

**The scalings** (:class:`RegimeScaling`, :func:`regime_config`).  For each ``n``, with ``m``,
``tau``, ``sigma_xi = sigma_xi~ = 1``, ``sigma_eps`` and the failure probability ``delta`` held
fixed, and the item of Assumption 4.1 (:func:`mmcl.proofs.assumptions.check_assumption41`) each
choice serves:

* (1) ``d = d~ = ceil(n^2 log(6 n^2/delta))`` (item 1a's own bound; ``d_rule="n2log"``, the
  default), at which item 1b (Lemma B.2) fails by a factor that does not depend on ``n``; or
  ``d_rule="b2"``, raised to what 1b asks (with ``sigma0 ~ 1/sqrt(d)`` item 1b reads
  ``d >= c(n) sqrt(d)``, i.e. ``d >= c(n)^2``, :func:`b2_dimension`: ``2.8e17`` at ``n = 100``).
  Span draws take ``d < 2^63`` (their degrees of freedom are formed as int64), which ``"b2"``
  exceeds from ``n = 562`` on: :func:`regime_config` refuses it there;
* (2) ``eta = step * n/d`` (``step = 0.2``, the Figure 1 value at ``n = 100``, ``d = 2000``):
  the per-step noise growth ``eta sigma_xi^2 d/(n m tau) = step/(m tau)`` and the signal growth
  ``eta ||mu||^2/(m tau) = step n SNR^2/(m tau)`` are held fixed, so the step is as stable at
  ``d = 10^20`` as at Figure 1 (the benchmark ``benchmarks/bench_span.py`` scales the same way);
  2a needs ``step <= m tau/12``;
* (3) ``sigma0 = init_fraction / (2 sqrt(log(8 m n/delta)) sigma_xi sqrt(d))``: a fraction of item 3a's
  bound (3b and 3c follow);
* (4) ``M = n/2`` (every opposite-label sample, as the proofs take it); 4c (``M >= 100 C_l - 1``)
  then holds from ``n = 200``; 4a and 4b (``n >= 2500 log(4/delta)``, ``n >= 1.28e6 log(4/delta)``)
  are conditions on ``n`` alone;
* (6) ``||mu|| = sqrt(n_snr2 sigma_xi^2 d/n)`` with ``n SNR^2 = 1.75``, inside the window
  ``[1.7, 1.8]`` where both proofs' conditions 6a and 6b hold;
* (7) ``||mu~|| = C_mu ||mu||`` with ``C_mu = 3``; the OOD signal ``||nu|| = nu_ratio ||mu||``
  (``0.4``, Figure 1's ``2/5``; parallel to ``mu`` as in Figure 1, so Sec. 3.3's
  ``<nu, mu> = O(||mu||^2/sqrt(d))`` fails as it does there: it is not an item of Assumption 4.1).

**The sweep** (:func:`run_regime_sweep`): span draws (``sample_synthetic(cfg, seed, span=True)``,
cost independent of ``d``), batched over seeds, both modes, the recursion, recorded at ``floor(T1)``
of Lemma 5.2 / 5.4 (:func:`mmcl.proofs.predictions.t1_formula`) and at the end, with the end of
stage 1 recorded at every step (``t1_every=1``); both downstream protocols on the final state
(:func:`mmcl.downstream.evaluation.evaluate_all`).  :func:`loglog_fit` fits ``log y = a + b log n``
to the means over seeds, with the slope's standard error and a bootstrap over seeds.

**The verdicts** (:func:`revisit_verdicts`): every-step runs at a few sizes, measured by the same
functions the stage chapters use (:mod:`mmcl.proofs.single_stage1`,
:mod:`mmcl.proofs.single_stage2`, :mod:`mmcl.proofs.multi_stage1`), kept as per-size summaries.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_bool, check_int, check_number
from mmcl.downstream.evaluation import evaluate_all
from mmcl.dynamics import Trajectory, simulate
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData, sample_synthetic
from mmcl.proofs import multi_stage1 as _ms1
from mmcl.proofs import single_stage1 as _ss1
from mmcl.proofs import predictions as _pred
from mmcl.proofs import single_stage2 as _ss2
from mmcl.proofs.assumptions import AssumptionConfig, Condition, check_assumption41, lemma_b2_min_d
from mmcl.proofs.predictions import measured_t1, t1_formula

__all__ = ["RegimeScaling", "regime_dimension", "b2_dimension", "regime_config", "conditions_by_n",
           "failing_by_n", "n_threshold", "D_MAX", "MODES", "LogLogFit", "loglog_fit", "RegimeSize", "RegimeSweep",
           "run_regime_sweep", "QUANTITIES", "SizeVerdicts", "revisit_verdicts", "stage_slice"]

MODES = ("single", "multi")
#: The largest dimension a span draw takes, ``2^63`` (its chi-square degrees of freedom are formed as int64).
D_MAX = 2 ** 63
_D_RULES = ("b2", "n2log")


@dataclass(frozen=True)
class RegimeScaling:
    """The scalings of the module docstring: everything but ``n`` (and what follows from it).

    ``m`` neurons, temperature ``tau``, augmentation noise ``sigma_eps``, ``n_snr2`` (= ``n SNR^2``,
    Assumption 4.1(6)), ``c_mu`` (4.1(7)), ``nu_ratio`` = ``||nu||/||mu||``, ``init_fraction``
    (``sigma0`` as this fraction of item 3a's bound, in ``(0, 1]``), ``step`` (``eta = step n/d``),
    ``delta`` (the failure probability the conditions are evaluated at), ``d_rule`` (``"b2"`` or
    ``"n2log"``), ``n_epochs`` and ``M_fraction`` (``M = floor(M_fraction n)``, at most ``n/2``)."""

    m: int = 50
    tau: float = 0.1
    sigma_eps: float = 0.1
    n_snr2: float = 1.75
    c_mu: float = 3.0
    nu_ratio: float = 0.4
    init_fraction: float = 0.9
    step: float = 0.2
    delta: float = 0.1
    d_rule: str = "n2log"
    n_epochs: int = 200
    M_fraction: float = 0.5

    def __post_init__(self) -> None:
        check_int("RegimeScaling.m", self.m)
        check_int("RegimeScaling.n_epochs", self.n_epochs)
        for name in ("tau", "sigma_eps", "n_snr2", "c_mu", "nu_ratio", "step"):
            check_number(f"RegimeScaling.{name}", getattr(self, name), 0)
        check_number("RegimeScaling.init_fraction", self.init_fraction, 0, 1, high_closed=True)
        check_number("RegimeScaling.delta", self.delta, 0, 1)
        check_number("RegimeScaling.M_fraction", self.M_fraction, 0, 0.5, high_closed=True)
        if self.d_rule not in _D_RULES:
            raise ValueError(f"RegimeScaling.d_rule={self.d_rule!r} is unknown; valid: {', '.join(map(repr, _D_RULES))}")

    @property
    def noise_step(self) -> float:
        """``eta sigma_xi^2 d/(n m tau) = step/(m tau)``, the per-step noise growth held fixed."""
        return self.step / (self.m * self.tau)


def _check_n(n) -> int:
    check_int("n", n, 2)
    if n % 2:
        raise ValueError(f"n must be even (balanced labels), got {n}")
    return n


def _sigma0_sqrt_d(n: int, s: RegimeScaling) -> float:
    """``sigma0 sigma_xi sqrt(d)`` of the scaling (``sigma_xi = 1``): ``init_fraction`` times 3a's bound."""
    return s.init_fraction / (2 * math.sqrt(math.log(8 * s.m * n / s.delta)))


def _build(n: int, d: int, s: RegimeScaling) -> SyntheticConfig:
    mu = math.sqrt(s.n_snr2 * d / n)
    return SyntheticConfig(n=n, d=d, d_tilde=d, m=s.m, M=max(1, int(s.M_fraction * n)), n_epochs=s.n_epochs,
                           lr=s.step * n / d, tau=s.tau, sigma0=_sigma0_sqrt_d(n, s) / math.sqrt(d),
                           mu_norm=mu, mu_tilde_norm=s.c_mu * mu, nu_norm=s.nu_ratio * mu,
                           sigma_eps=s.sigma_eps)


def b2_dimension(n: int, scaling: RegimeScaling = RegimeScaling()) -> int:
    """The smallest ``d`` at which Lemma B.2's condition (item 1b, :func:`mmcl.proofs.assumptions.lemma_b2_min_d`)
    holds under the scaling: with ``sigma0 = c0/sqrt(d)`` its right side is ``c(n) sqrt(d)``, so
    ``d >= c(n)^2`` (about ``2.8e17`` at ``n = 100``, ``4e19`` at ``n = 1000``)."""
    n = _check_n(n)
    probe = _build(n, 10 ** 6, scaling)  # any d: the bound's ratio to sqrt(d) does not depend on it
    c = lemma_b2_min_d(probe, scaling.delta) / math.sqrt(probe.d)
    return max(2, math.ceil(c * c * (1 + 1e-9)))


def regime_dimension(n: int, scaling: RegimeScaling = RegimeScaling()) -> int:
    """``d`` of the scaling at ``n``: ``ceil(n^2 log(6 n^2/delta))`` (item 1a), and at least
    :func:`b2_dimension` with ``d_rule="b2"``."""
    n = _check_n(n)
    d = math.ceil(n * n * math.log(6 * n * n / scaling.delta) * (1 + 1e-12))
    return max(d, b2_dimension(n, scaling)) if scaling.d_rule == "b2" else d


def regime_config(n: int, scaling: RegimeScaling = RegimeScaling(), *, for_span: bool = True) -> SyntheticConfig:
    """The :class:`~mmcl.model.config.SyntheticConfig` of the scaling at ``n`` (module docstring).
    ``for_span``: refuse a ``d`` that span draws cannot take (``d >= 2^63``); ``False`` for a
    configuration that is only evaluated (:func:`conditions_by_n`), never drawn."""
    if not isinstance(scaling, RegimeScaling):
        raise ValueError(f"scaling must be a RegimeScaling, got {type(scaling).__name__}")
    check_bool("for_span", for_span)
    n = _check_n(n)
    d = regime_dimension(n, scaling)
    if for_span and d >= D_MAX:
        raise ValueError(f"d={d:.3e} (d_rule={scaling.d_rule!r} at n={n}) exceeds what span draws take, d < 2^63; "
                         f"use d_rule='n2log' or a smaller n")
    return _build(n, d, scaling)


def conditions_by_n(sizes: Sequence[int], scaling: RegimeScaling = RegimeScaling(),
                    delta: Optional[float] = None) -> Dict[int, List[Condition]]:
    """:func:`mmcl.proofs.assumptions.check_assumption41` of :func:`regime_config` at each ``n``,
    at failure probability ``delta`` (default: the scaling's; ``"1/d"`` for the theorems' own)."""
    out = {}
    for n in sizes:
        cfg = regime_config(n, scaling, for_span=False)
        dl = scaling.delta if delta is None else (1.0 / cfg.d if delta == "1/d" else delta)
        out[n] = check_assumption41(cfg, AssumptionConfig(delta=dl))
    return out


def failing_by_n(conditions: Mapping[int, List[Condition]]) -> Dict[int, List[str]]:
    """The keys of the failing conditions at each ``n`` of :func:`conditions_by_n`."""
    return {n: [c.key for c in cs if not c.holds] for n, cs in conditions.items()}


def n_threshold(key: str, scaling: RegimeScaling = RegimeScaling()) -> float:
    """The smallest ``n`` at which a sample-size item holds (``"4a"``: ``2500 log(4/delta)``,
    ``"4b"``: ``1.28e6 log(4/delta)``, ``"4c"``: ``n`` with ``M_fraction n >= 100 C_l - 1``,
    ``C_l`` the default of :class:`~mmcl.proofs.assumptions.AssumptionConfig`)."""
    L = math.log(4 / scaling.delta)
    if key == "4a":
        return 2500 * L
    if key == "4b":
        return 1.28e6 * L
    if key == "4c":
        return (100 * AssumptionConfig().c_ell - 1) / scaling.M_fraction
    raise ValueError(f"key={key!r} is unknown; valid: '4a', '4b', '4c'")


# --------------------------------------------------------------------------------------------
# Log-log fits with their uncertainty
# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# The sweep over n
# --------------------------------------------------------------------------------------------
#: The per-seed quantities of :class:`RegimeSize` (in each mode), each with what it is.
QUANTITIES = {
    "gamma_T1": "max_r |gamma_r| up to floor(T1)",
    "gamma_T": "max_r |gamma_r| at the end",
    "rho_T1": "max_{r,i} rho_{r,i} up to floor(T1)",
    "rho_minmax_T1": "min_i max_r rho_{r,i} at floor(T1)",
    "t1": "measured end of stage 1 (measured_t1, level 1)",
    "loss": "training loss at the end",
    "loss0": "training loss at step 0",
    "err_adapt": "OOD test error, adapt head",
    "err_transfer": "OOD test error, transfer head",
    "feature_snr": "best feature's |<w_r, nu>| / sd <w_r, zeta> at the end",
}


@dataclass
class RegimeSize:
    """One ``n`` of the sweep: its ``cfg``, ``seeds``, Lemma 5.2's and 5.4's ``T1`` (``t1_formula[mode]``)
    and ``values[mode][q]`` a ``(S,)`` float64 tensor per quantity ``q`` of :data:`QUANTITIES`."""

    n: int
    cfg: SyntheticConfig
    seeds: List[int]
    t1_formula: Dict[str, float]
    values: Dict[str, Dict[str, torch.Tensor]]


@dataclass
class RegimeSweep:
    """The sweep over ``n`` (:func:`run_regime_sweep`): ``sizes``, ``by_n[n]`` a :class:`RegimeSize`,
    the ``scaling`` and the seconds each size took (``seconds[n]``)."""

    sizes: List[int]
    by_n: Dict[int, RegimeSize]
    scaling: RegimeScaling
    seconds: Dict[int, float] = field(default_factory=dict)

    def values(self, mode: str, q: str) -> List[torch.Tensor]:
        """The per-seed values of ``q`` in ``mode`` at every size, in order."""
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")
        if q not in QUANTITIES:
            raise ValueError(f"q={q!r} is unknown; valid: {', '.join(QUANTITIES)}")
        return [self.by_n[n].values[mode][q] for n in self.sizes]

    def scaled(self, mode: str, q: str, power: float = 0.5) -> List[torch.Tensor]:
        """``q * n^power`` per seed at every size (``gamma * sqrt(n)``, ``rho * sqrt(n)``)."""
        return [v * n ** power for v, n in zip(self.values(mode, q), self.sizes)]

    def fit(self, mode: str, q: str, power: float = 0.0, **kw) -> LogLogFit:
        """:func:`loglog_fit` of ``q * n^power`` against ``n``."""
        return loglog_fit(self.sizes, self.scaled(mode, q, power), **kw)

    def mean(self, mode: str, q: str) -> List[float]:
        """The mean over seeds of ``q`` at every size."""
        return [float(v[~torch.isnan(v)].mean()) if bool((~torch.isnan(v)).any()) else math.nan
                for v in self.values(mode, q)]


def _size_run(n: int, seeds: Sequence[int], scaling: RegimeScaling, device, dtype) -> RegimeSize:
    from mmcl.proofs.single_stage2 import ood_feature_snr

    cfg = regime_config(n, scaling)
    data = SyntheticData.stack([sample_synthetic(cfg, s, span=True, dtype=dtype, device=device) for s in seeds])
    f64 = torch.float64
    t1f, vals = {}, {}
    for mode in MODES:
        t1f[mode] = t1_formula(cfg, mode)
        k1 = max(1, min(cfg.n_epochs, math.floor(t1f[mode])))
        traj = simulate(cfg, data, mode, "recursion", record_every=k1, t1_every=1)
        upto = traj.steps <= k1  # steps 0, k1 (and the end)
        g, r = traj.gamma.to(f64), traj.rho.to(f64)  # (S, K, m), (S, K, m, n)
        ev = evaluate_all(traj.last(), data)
        vals[mode] = {
            "gamma_T1": g[:, upto].abs().amax((-1, -2)),
            "gamma_T": g[:, -1].abs().amax(-1),
            "rho_T1": r[:, upto].amax((-1, -2, -3)),
            "rho_minmax_T1": r[:, int(upto.sum()) - 1].amax(-2).amin(-1),
            "t1": measured_t1(traj).to(f64),
            "loss": traj.loss[:, -1].to(f64),
            "loss0": traj.loss[:, 0].to(f64),
            "err_adapt": 1 - ev["adapt"].accuracy[:, -1].to(f64),
            "err_transfer": 1 - ev["transfer"].accuracy[:, -1].to(f64),
            "feature_snr": ood_feature_snr(traj, data).to(f64),
        }
        vals[mode] = {k: v.cpu() for k, v in vals[mode].items()}
    return RegimeSize(n=n, cfg=cfg, seeds=list(seeds), t1_formula=t1f, values=vals)


def run_regime_sweep(sizes: Sequence[int], seeds: Mapping[int, int], scaling: RegimeScaling = RegimeScaling(), *,
                     device="cpu", dtype="float32") -> RegimeSweep:
    """Both modes at every ``n`` of ``sizes`` with ``seeds[n]`` seeds (``0..seeds[n]-1``), span draws
    batched over seeds, the recursion: see the module docstring and :class:`RegimeSize`.  float32
    is the default (the quantities agree with float64 to the digits the book prints; the tests check
    one size)."""
    import time

    if not isinstance(scaling, RegimeScaling):
        raise ValueError(f"scaling must be a RegimeScaling, got {type(scaling).__name__}")
    sizes = [_check_n(n) for n in sizes]
    if len(sizes) < 2 or len(set(sizes)) != len(sizes):
        raise ValueError(f"sizes must hold at least 2 distinct values of n, got {sizes}")
    if not isinstance(seeds, Mapping) or set(seeds) != set(sizes):
        raise ValueError(f"seeds must map every n of sizes {sizes} to a number of seeds")
    by_n, secs = {}, {}
    for n in sizes:
        t0 = time.perf_counter()
        by_n[n] = _size_run(n, range(check_int(f"seeds[{n}]", seeds[n])), scaling, device, dtype)
        secs[n] = time.perf_counter() - t0
    return RegimeSweep(sizes=sizes, by_n=by_n, scaling=scaling, seconds=secs)


# --------------------------------------------------------------------------------------------
# The verdicts of chapters 3-5, re-taken inside the regime
# --------------------------------------------------------------------------------------------
def stage_slice(traj: Trajectory, start: int, stop: Optional[int] = None) -> Trajectory:
    """The part of a run recorded at every step with ``start <= step <= stop`` (``stop``: the end):
    the states (and loss derivatives) narrowed, ``loss`` kept whole (functions index it by step).
    The comparator chain of stage 2 (:func:`mmcl.proofs.single_stage2.comparator_chain`) needs only
    ``[T1, T]``, and its cost grows with the number of recorded steps."""
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    steps = traj.steps
    stop = int(steps[-1]) if stop is None else stop
    check_int("start", start, 0)
    check_int("stop", stop, 0)
    sel = ((steps >= start) & (steps <= stop)).nonzero()[:, 0]
    if sel.numel() < 2:
        raise ValueError(f"fewer than 2 recorded steps in [{start}, {stop}]")
    a, b = int(sel[0]), int(sel[-1]) + 1
    axis = 1 if traj.loss.dim() == 2 else 0
    fields_ = {name: (None if getattr(traj, name) is None else getattr(traj, name).narrow(axis, a, b - a))
               for name in Trajectory._PER_RECORD}
    return replace(traj, steps=steps[a:b], **fields_)


@dataclass
class SizeVerdicts:
    """The stage chapters' verdicts at one ``n`` (per seed where a tensor), as their functions measure them.

    Chapter 3 (:mod:`mmcl.proofs.single_stage1`, ``noise_growth`` and ``sign_set_report``):
    ``rate_ratio`` measured rate of the median ``N_i`` (steps 1-20) over Lemma 5.2's ``0.96 s``;
    ``rate_ab_ratio`` ``(a - b) s`` over ``0.96 s``; ``frac_bound`` the fraction of samples with
    ``N_i(t) >= (1 + 0.96 s)^t N_i(0)`` at ``t = 1, 5, 20``; ``N_max`` the largest ``N_i`` of the run
    (the proof needs 3); ``t1_single`` measured ``T1`` and ``T1_single`` the formula's;
    ``flipped`` neurons leaving ``U_+``/``U_-`` per seed, ``neg_init_ratio`` max ``|rho|`` on
    ``I_{r,-}(0)`` over max ``rho``, ``left_fraction`` the share of the pairs starting in ``I_{r,-}(0)``
    that leave it.

    Chapter 4 (:func:`mmcl.proofs.single_stage2.comparator_chain` on ``[T1, T]``, ``eps = 0.05``):
    ``feasible16`` the ``lambda`` interval of Lemma C.16 (empty when ``lo > hi``), ``factor17`` the
    factor Lemma C.17 needs (paper: 2), ``c17_fail`` the share of steps of ``[T1, T)`` where C.17 fails
    with the paper's factor, ``loss_T`` the final loss.

    Chapter 5 (:mod:`mmcl.proofs.multi_stage1`): ``opposite`` and ``stalled`` neuron counts (Lemma
    D.3), ``spread0`` and ``spread_T1`` the loss-derivative spread ``C_l`` at 0 and ``floor(T1)``
    (Lemma D.1; the proof of Lemma D.8 takes 1.01), ``d4_violation`` the first step where Lemma
    D.4's lower bound fails (``nan``: never) and ``T1_multi``; ``cases`` the share of pairs for which
    each case of Lemma D.9 held (``(S, 4)``); ``rho_T1`` max ``rho`` at ``floor(T1)`` and
    ``noise_bound`` the proof's explicit bound on it (:func:`mmcl.proofs.multi_stage1.lemma54_noise_bound`)."""

    n: int
    cfg: SyntheticConfig
    rate_ratio: torch.Tensor
    rate_ab_ratio: torch.Tensor
    frac_bound: List[float]
    N_max: float
    t1_single: torch.Tensor
    T1_single: float
    flipped: torch.Tensor
    neg_init_ratio: torch.Tensor
    left_fraction: torch.Tensor
    feasible16: Tuple[float, float]
    factor17: float
    c17_fail: float
    loss_T: torch.Tensor
    opposite: int
    stalled: int
    spread0: torch.Tensor
    spread_T1: torch.Tensor
    d4_violation: torch.Tensor
    T1_multi: float
    cases: torch.Tensor
    rho_T1: torch.Tensor
    noise_bound: float


def _verdicts_at(n: int, seeds, scaling: RegimeScaling, device, dtype, chain: bool) -> SizeVerdicts:
    cfg = regime_config(n, scaling)
    for mode, t1 in (("single", _pred.t1_single(cfg)), ("multi", _pred.t1_multi(cfg))):
        if not t1 < cfg.n_epochs - 1:
            raise ValueError(f"at n = {n} the {mode}-modal T1 of the paper's formula is {t1:.1f} steps, beyond "
                             f"RegimeScaling.n_epochs = {cfg.n_epochs}: the stage-2 verdicts need a run past T1; "
                             f"raise n_epochs above {math.ceil(t1) + 1} (or RegimeScaling.step)")
    data = SyntheticData.stack([sample_synthetic(cfg, s, span=True, dtype=dtype, device=device) for s in seeds])
    # chapter 3: stage 1, single-modal
    traj = simulate(cfg, data, "single", "recursion", record_derivatives=True)
    hist = _ss1.preactivation_history(traj, data, with_augmented=True)
    bc = _ss1.b_coefficients(traj, data, cfg, history=hist)
    growth = _ss1.noise_growth(traj, data, cfg, coefficients=bc, window=(1, 20))
    N = growth.N
    frac = [float((N[:, k] >= (1 + growth.rate_lemma) ** k * N[:, 0]).double().mean()) for k in (1, 5, 20)]
    signs = _ss1.sign_set_report(traj, data, history=hist)
    P0 = (data.W0 @ data.xi.transpose(-1, -2)).cpu()  # (S, m, n): the pairs starting in I_{r,-}(0)
    left_frac = signs.left.double() / (P0 < 0).flatten(1).sum(-1).double()
    del hist, bc
    # chapter 4: stage 2, single-modal, on [T1, T]
    T1s = growth.T1
    k1s = math.ceil(T1s)  # < n_epochs: checked above
    if chain:
        ch = _ss2.comparator_chain(stage_slice(traj, k1s), data, cfg, _ss2.ComparatorConfig(epsilon=0.05), k1s)
        feas, f17, fail17 = ch.feasible16, ch.factor17, float((ch.slack < 0).double().mean())
        del ch
    else:
        feas, f17, fail17 = (math.nan, math.nan), math.nan, math.nan
    loss_T = traj.loss[:, -1].double().cpu()
    del traj
    # chapter 5: multi-modal
    multi = simulate(cfg, data, "multi", "recursion", record_derivatives=True)
    syn = _ms1.synchronisation(data, multi)
    end = _ms1.stage1_end(syn, multi, cfg)
    cases = _ms1.noise_cases(data, multi, cfg)
    frac_cases = torch.stack([cases.fraction(c).double().cpu() for c in (1, 2, 3, 4)], -1)
    k1 = end.k1
    return SizeVerdicts(
        n=n, cfg=cfg, rate_ratio=(growth.fit.rate / growth.rate_lemma).double(),
        rate_ab_ratio=(growth.rate_ab / growth.rate_lemma).double(), frac_bound=frac, N_max=float(N.max()),
        t1_single=growth.t1_measured.double(), T1_single=T1s, flipped=signs.flipped.sum(-1),
        neg_init_ratio=(signs.neg_init.amax(-1) / signs.rho_max).double(), left_fraction=left_frac,
        feasible16=tuple(feas), factor17=f17, c17_fail=fail17, loss_T=loss_T,
        opposite=int(syn.opposite0.sum()), stalled=int(syn.stalled.sum()),
        spread0=end.spread[:, 0].double().cpu(), spread_T1=end.spread[:, k1].double().cpu(),
        d4_violation=torch.tensor([math.nan if v is None else float(v) for v in end.first_violation], dtype=torch.float64),
        T1_multi=end.t1, cases=frac_cases, rho_T1=multi.rho[:, k1].amax((-1, -2)).double().cpu(),
        noise_bound=_ms1.lemma54_noise_bound(cfg, scaling.delta))


def revisit_verdicts(sizes: Sequence[int], seeds: Mapping[int, int], scaling: RegimeScaling = RegimeScaling(), *,
                     chain_sizes: Optional[Sequence[int]] = None, device="cpu",
                     dtype="float64") -> Dict[int, SizeVerdicts]:
    """The stage chapters' verdicts at each ``n`` of ``sizes`` (``seeds[n]`` seeds), from every-step
    runs of both modes with the loss derivatives recorded: see :class:`SizeVerdicts`.  The comparator
    chain of chapter 4 is evaluated at ``chain_sizes`` only (default: all; it costs ``O(T n^2 m)``
    memory per seed), elsewhere its fields are ``nan``.  float64, as the stage chapters."""
    if not isinstance(scaling, RegimeScaling):
        raise ValueError(f"scaling must be a RegimeScaling, got {type(scaling).__name__}")
    sizes = [_check_n(n) for n in sizes]
    if not sizes:
        raise ValueError("sizes must hold at least one n")
    if not isinstance(seeds, Mapping) or not set(sizes) <= set(seeds):
        raise ValueError(f"seeds must map every n of sizes {sizes} to a number of seeds")
    chain_sizes = set(sizes if chain_sizes is None else chain_sizes)
    return {n: _verdicts_at(n, range(check_int(f"seeds[{n}]", seeds[n])), scaling, device, dtype, n in chain_sizes)
            for n in sizes}
