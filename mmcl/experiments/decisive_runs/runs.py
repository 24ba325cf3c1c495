"""The decisive runs: both theorems measured where every premise a computer can reach holds, with
the test distribution of Sec. 3.3 (the book's chapter "The decisive runs").

**The scaling** (:func:`~mmcl.experiments.decisive_runs.decisive_config`).  The chapter scaling
of :mod:`mmcl.experiments.theorems_regime.scalings` with ``d`` raised to Lemma B.2's bound
(``DECISIVE_SCALING``, ``d_rule="b2"``: ``d = 5.9e21`` at ``n = 10^4``, drawn exactly by span
draws, :mod:`mmcl.model.span`), and ``nu`` tilted away from ``mu`` so that Sec. 3.3's condition holds:
``nu_cos = SEC33_RATIO / (nu_ratio sqrt(d))`` makes ``<nu, mu>/(||mu||^2/sqrt(d))`` equal to
``SEC33_RATIO = 1`` (ours: the largest ratio the condition allows with its constant 1,
:data:`mmcl.proofs.assumptions.NU_CONDITION_MAX`, less ``1e-9`` for rounding).  At every ``n >= 9224``
(4a: ``n >= 2500 log(4/delta)``, ``n`` even) every condition of Assumption 4.1 holds but 4b
(``n >= 1.28e6 log(4/delta)``, used only by the proof of Lemma D.8), with Sec. 3.3's condition and
Lemma C.6's; Lemma C.10's condition on ``n`` (about ``2e11``) holds at no ``n`` a computer reaches.
The constants that are ours are those of :class:`~mmcl.experiments.theorems_regime.RegimeScaling`
(``m = 50``, ``tau = 0.1``, ``sigma_eps = 0.1``, ``n SNR^2 = 1.75``, ``C_mu = 3``,
``||nu|| = 0.4 ||mu||``, ``sigma0`` at 0.9 of item 3a's bound, ``eta = 0.2 n/d``, ``M = n/2``,
``delta = 0.1``, 200 steps) and ``SEC33_RATIO``.

**Both nu on one network.**  ``nu`` changes only the evaluation.  The span basis of modality 1 holds
``mu`` along its first column and the tilted ``nu`` in the first two; each network is trained once
on that draw and scored on two OOD sets that share their labels and noise ``zeta``: the tilted
``nu`` (``"sec33"``) and the paper's ``nu = ||nu|| mu/||mu||`` in the same basis (``"parallel"``,
:func:`~mmcl.experiments.decisive_runs.parallel_ood`).

**The measurements** (:func:`~mmcl.experiments.decisive_runs.run_decisive`, one ``n``;
:func:`~mmcl.experiments.decisive_runs.run_decisive_sweep`, several): per mode the training loss
(Theorems 4.2 (1)/4.3 (1)), the OOD error of both protocols under both ``nu`` (4.2 (2)/4.3 (2)),
the coefficients at Lemma 5.2's/5.4's ``T1`` and at the end, the OOD response split into its
init, signal and memorised parts (:func:`mmcl.downstream.response.ood_response`) with the
ablations that say which part decides the error (:func:`mmcl.downstream.response.ablated_accuracy`),
and Lemmas C.9/C.10 at initialisation (:func:`mmcl.proofs.single_stage1.init_noise_totals`).
:func:`~mmcl.experiments.decisive_runs.decisive_chains` re-takes App. C.2 and D.2 (Lemmas
C.14-C.18, D.11-D.15) on every-step runs at small ``n`` of the same scaling.

Public: every name in ``__all__``, importable from :mod:`mmcl.experiments.decisive_runs`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_int, check_number
from mmcl.downstream.evaluation import PROTOCOLS
from mmcl.downstream.response import PARTS, ablated_accuracy, ood_response
from mmcl.downstream.tilt import TiltCurves, cos_grid, tilt_curves
from mmcl.dynamics import MODES, simulate
from mmcl.fits import LogLogFit, loglog_fit
from mmcl.experiments.theorems_regime.scalings import RegimeScaling, check_n, regime_config
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import OODData, SyntheticData, sample_synthetic_batch
from mmcl.proofs.assumptions import AssumptionConfig, Condition, check_assumption41, premise_conditions
from mmcl.proofs.multi_stage1 import loss_derivative_spread_at
from mmcl.proofs.predictions import b_init_mean, lemma_c9_bound, measured_t1, t1_formula
from mmcl.proofs.single_stage1 import init_noise_totals

__all__ = ["DECISIVE_SCALING", "SEC33_RATIO", "NUS", "N_DECISIVE", "decisive_config", "parallel_ood",
           "decisive_conditions", "mode_premises", "ModeResult", "DecisiveRun", "run_decisive", "DecisiveSweep",
           "run_decisive_sweep", "error_trend", "ErrorTrend", "DecisiveChains", "decisive_chains"]

#: The decisive scaling: the chapter scaling with ``d`` at Lemma B.2's bound.
DECISIVE_SCALING = RegimeScaling(d_rule="b2")
#: ``<nu, mu>/(||mu||^2/sqrt(d))`` of the decisive runs' test distribution (ours: Sec. 3.3's bound with constant 1).
SEC33_RATIO = 1.0
#: The two test distributions scored: Sec. 3.3's tilted ``nu`` and the paper's ``nu`` parallel to ``mu``.
NUS = ("sec33", "parallel")
#: The smallest ``n`` at which every condition but 4b holds (4a: ``n >= 2500 log(40) = 9222.2``, ``n`` even).
N_DECISIVE = 9224



def decisive_config(n: int, scaling: RegimeScaling = DECISIVE_SCALING, sec33_ratio: float = SEC33_RATIO) -> SyntheticConfig:
    """:func:`~mmcl.experiments.theorems_regime.regime_config` at ``n`` with ``nu`` tilted so that
    ``cfg.nu_condition`` is ``sec33_ratio`` (less ``1e-9``; ``sec33_ratio`` in ``(0, 1]`` keeps Sec.
    3.3's condition with constant 1): ``nu_cos = sec33_ratio/(nu_ratio sqrt(d))``."""
    check_number("sec33_ratio", sec33_ratio, 0, 1, high_closed=True)
    cfg = regime_config(n, scaling)
    return cfg.replace(nu_cos=sec33_ratio * (1 - 1e-9) / (scaling.nu_ratio * math.sqrt(cfg.d)))


def parallel_ood(ood: OODData, cfg: SyntheticConfig) -> OODData:
    """The OOD set of the paper's ``nu = ||nu|| mu/||mu||`` in the span basis of ``ood`` (a span OOD
    set of ``cfg``, batched or not, whose first column is ``mu``'s direction): the same labels and
    noise, ``nu`` replaced."""
    if not isinstance(ood, OODData):
        raise ValueError(f"ood must be an OODData, got {type(ood).__name__}")
    nu = torch.zeros_like(ood.nu)
    nu[..., 0] = cfg.nu_norm
    return OODData(nu=nu, y_fit=ood.y_fit, zeta_fit=ood.zeta_fit, y_eval=ood.y_eval, zeta_eval=ood.zeta_eval)


def decisive_conditions(cfg: SyntheticConfig, delta: float = 0.1) -> List[Condition]:
    """The 22 conditions of Assumption 4.1 and the premises beyond it (Sec. 3.3's, Lemmas C.6's and
    C.10's: :func:`mmcl.proofs.assumptions.premise_conditions`) at ``cfg``."""
    acfg = AssumptionConfig(delta=delta)
    return check_assumption41(cfg, acfg) + premise_conditions(cfg, acfg)


def mode_premises(mode: str) -> Tuple[str, ...]:
    """The premise keys that ``mode``'s theorem rests on, as the paper's blueprint lists them
    (:func:`mmcl.proofs.blueprint.premise_keys` of Theorem 4.2 (2) or 4.3 (2): the conditions every
    proof it uses states, transitively); the register judges the chapter's rows by the same lists."""
    from mmcl.proofs.blueprint import premise_keys

    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is unknown; valid: 'single', 'multi'")
    return premise_keys("Theorem 4.2 (2)" if mode == "single" else "Theorem 4.3 (2)")


@dataclass
class ModeResult:
    """One mode at one ``n`` (``S`` seeds; tensors ``(S,)`` float64 on the CPU).

    ``loss``, ``loss0``: training loss at the end and at step 0; ``t1``: measured end of stage 1
    (:func:`mmcl.proofs.predictions.measured_t1`), ``t1_formula``: Lemma 5.2's/5.4's ``T1``;
    ``gamma_T1``, ``rho_T1``: ``max_r |gamma_r|`` and ``max_{r,i} rho_{r,i}`` up to ``floor(T1)``,
    ``gamma_T``, ``rho_T`` at the end; ``error[(nu, protocol)]``: the OOD test error;
    ``parts[(v, part)]``: the root mean square over neurons (and held-out inputs) of each part of
    ``<w_r, v>`` for ``v`` in ``"sec33"``, ``"parallel"`` (the two ``nu``) and ``"zeta"`` (the
    noise of the held-out inputs; the same for both ``nu``); ``ablation[nu][variant][protocol]``:
    :func:`mmcl.downstream.response.ablated_accuracy`; ``tilt``: the OOD errors of the same network as
    the test signal tilts from Sec. 3.3's angle to ``mu`` (:func:`mmcl.downstream.tilt.tilt_curves` on
    :func:`mmcl.downstream.tilt.cos_grid`; its first angle is Sec. 3.3's ``nu``, its last the
    parallel one, scored on the same labels and noise); ``c_ell_T1 (S,)``: the smallest ``C_l`` of Lemma
    C.2/D.1 at ``floor(T1)`` (:func:`mmcl.proofs.multi_stage1.loss_derivative_spread_at`), the constant
    item 4c and Lemma D.4 take."""

    loss: torch.Tensor
    loss0: torch.Tensor
    t1: torch.Tensor
    t1_formula: float
    gamma_T1: torch.Tensor
    rho_T1: torch.Tensor
    gamma_T: torch.Tensor
    rho_T: torch.Tensor
    error: Dict[Tuple[str, str], torch.Tensor] = field(default_factory=dict)
    parts: Dict[Tuple[str, str], torch.Tensor] = field(default_factory=dict)
    ablation: Dict[str, Dict[str, Dict[str, torch.Tensor]]] = field(default_factory=dict)
    tilt: Optional[TiltCurves] = None
    c_ell_T1: Optional[torch.Tensor] = None


@dataclass
class DecisiveRun:
    """One ``n`` of the decisive scaling (:func:`~mmcl.experiments.decisive_runs.run_decisive`): ``cfg`` (Sec. 3.3's ``nu``),
    ``seeds``, ``conditions`` (:func:`~mmcl.experiments.decisive_runs.decisive_conditions`), ``modes[mode]`` a :class:`~mmcl.experiments.decisive_runs.ModeResult`,
    Lemmas C.9/C.10 at initialisation (``B_plus0 (S, m)``, ``c9_bound``, ``b0_mean``,
    ``c10_fraction (S,)``) and the ``seconds`` the run took."""

    n: int
    cfg: SyntheticConfig
    seeds: List[int]
    conditions: List[Condition]
    modes: Dict[str, ModeResult]
    B_plus0: torch.Tensor
    c9_bound: float
    b0_mean: float
    c10_fraction: torch.Tensor
    seconds: float

    @property
    def failing(self) -> List[str]:
        """The keys of the failing conditions."""
        return [c.key for c in self.conditions if not c.holds]

    def failing_for(self, mode: str) -> List[str]:
        """The failing conditions that ``mode``'s theorem uses (:func:`~mmcl.experiments.decisive_runs.mode_premises`)."""
        keys = mode_premises(mode)
        return [k for k in self.failing if k in keys]

    @property
    def sec33_ratio(self) -> float:
        """``<nu, mu>/(||mu||^2/sqrt(d))`` of the tilted ``nu``."""
        return self.cfg.nu_condition

    def to_json(self) -> dict:
        """The run as plain numbers: per mode ``failing_conditions``, ``sec33`` (``ratio``, ``holds``),
        ``loss`` (mean over seeds) and ``ood_error[nu][protocol]`` (mean), with the per-seed values,
        the coefficients and the response parts beside them; ``config`` and ``seconds``."""
        def lst(t):
            return [float(v) for v in t]

        holds33 = next(c.holds for c in self.conditions if c.key == "3.3")
        out = {"n": self.n, "seeds": self.seeds, "seconds": self.seconds,
               "config": {k: (v if isinstance(v, (bool, str)) else float(v) if isinstance(v, float) else int(v))
                          for k, v in vars(self.cfg).items()},
               "lemma_c9": {"bound": self.c9_bound, "mean_B_plus0": self.b0_mean,
                            "B_plus0_mean_measured": float(self.B_plus0.mean()),
                            "c10_fraction": lst(self.c10_fraction)}}
        for mode, r in self.modes.items():
            out[mode] = {
                "failing_conditions": self.failing_for(mode),
                "failing_conditions_all": self.failing,
                "sec33": {"ratio": self.sec33_ratio, "holds": bool(holds33)},
                "loss": float(r.loss.mean()), "loss_per_seed": lst(r.loss),
                "ood_error": {nu: {p: float(r.error[nu, p].mean()) for p in PROTOCOLS} for nu in NUS},
                "ood_error_per_seed": {nu: {p: lst(r.error[nu, p]) for p in PROTOCOLS} for nu in NUS},
                "coefficients": {"t1_measured": lst(r.t1), "t1_formula": r.t1_formula, "gamma_T1": lst(r.gamma_T1),
                                 "rho_T1": lst(r.rho_T1), "gamma_T": lst(r.gamma_T), "rho_T": lst(r.rho_T)},
                "response_rms": {v: {p: float(r.parts[v, p].mean()) for p in PARTS} for v in NUS + ("zeta",)},
                "ablation_error": {nu: {var: {p: float(1 - acc.mean()) for p, acc in d.items()}
                                        for var, d in r.ablation[nu].items()} for nu in NUS},
            }
        return out


def _rms(t: torch.Tensor) -> torch.Tensor:
    """Root mean square over every dimension but the first (seeds)."""
    return t.double().pow(2).flatten(1).mean(-1).sqrt().cpu()


def _mode_run(cfg: SyntheticConfig, data: SyntheticData, oods: Dict[str, OODData], mode: str,
              progress: bool) -> ModeResult:
    f64 = torch.float64
    t1f = t1_formula(cfg, mode)
    k1 = max(1, min(cfg.n_epochs, math.floor(t1f)))
    traj = simulate(cfg, data, mode, "recursion", record_every=k1, t1_every=1, progress=progress)
    upto = traj.steps <= k1
    g, r = traj.gamma.to(f64), traj.rho.to(f64)
    res = ModeResult(loss=traj.loss[:, -1].to(f64).cpu(), loss0=traj.loss[:, 0].to(f64).cpu(),
                     t1=measured_t1(traj).to(f64).cpu(), t1_formula=t1f,
                     gamma_T1=g[:, upto].abs().amax((-1, -2)).cpu(), rho_T1=r[:, upto].amax((-1, -2, -3)).cpu(),
                     gamma_T=g[:, -1].abs().amax(-1).cpu(), rho_T=r[:, -1].amax((-1, -2)).cpu())
    for k, nu in enumerate(NUS):
        resp = ood_response(traj, data, ood=oods[nu])
        for p in PARTS:
            res.parts[nu, p] = _rms(getattr(resp.nu, p))
            if k == 0:
                res.parts["zeta", p] = _rms(getattr(resp.zeta, p))
        abl = ablated_accuracy(traj, data, ood=oods[nu])
        res.ablation[nu] = abl
        for p in PROTOCOLS:
            res.error[nu, p] = (1 - abl["trained"][p]).to(f64)
    res.tilt = tilt_curves(traj, data, cos_grid(cfg.nu_cos), cfg.sigma_xi, ood=oods["sec33"])
    k = int((traj.steps <= k1).nonzero().max())  # the recorded step at floor(T1)
    extra = (traj.gamma_tilde[:, k], traj.rho_tilde[:, k]) if mode == "multi" else ()
    res.c_ell_T1 = loss_derivative_spread_at(data, mode, cfg.tau, traj.gamma[:, k], traj.rho[:, k], *extra).cpu()
    return res


def run_decisive(n: int, seeds: int = 1, scaling: RegimeScaling = DECISIVE_SCALING, *,
                 sec33_ratio: float = SEC33_RATIO, device="cpu", dtype="float32", progress: bool = False,
                 modes: Sequence[str] = MODES) -> DecisiveRun:
    """Both modes (or ``modes``) at ``n`` with seeds ``0..seeds-1`` (one batch of span draws) on the
    decisive scaling (:func:`~mmcl.experiments.decisive_runs.decisive_config`), scored under both ``nu`` (``NUS``) and both
    protocols; see :class:`~mmcl.experiments.decisive_runs.DecisiveRun`.  float32 by default: at these ``d`` it agrees with float64
    to about ``1e-6`` in the loss and the coefficients (the tests compare them at one size)."""
    if not isinstance(scaling, RegimeScaling):
        raise ValueError(f"scaling must be a RegimeScaling, got {type(scaling).__name__}")
    modes = tuple(modes)
    if not modes or any(m not in MODES for m in modes) or len(set(modes)) != len(modes):
        raise ValueError(f"modes={modes!r} must be distinct modes among {MODES}")
    check_int("seeds", seeds)
    n = check_n(n)
    t0 = time.perf_counter()
    cfg = decisive_config(n, scaling, sec33_ratio)
    data = sample_synthetic_batch(cfg, range(seeds), span=True, dtype=dtype, device=device)
    oods = {"sec33": data.ood, "parallel": parallel_ood(data.ood, cfg)}
    init = init_noise_totals(data)
    modes = {mode: _mode_run(cfg, data, oods, mode, progress) for mode in modes}
    return DecisiveRun(n=n, cfg=cfg, seeds=list(range(seeds)), conditions=decisive_conditions(cfg, scaling.delta),
                       modes=modes, B_plus0=init.B_plus, c9_bound=lemma_c9_bound(cfg, scaling.delta),
                       b0_mean=b_init_mean(cfg), c10_fraction=init.c10_fraction,
                       seconds=time.perf_counter() - t0)


@dataclass
class ErrorTrend:
    """The trend of one OOD error with ``n``: ``fit`` (:func:`~mmcl.fits.loglog_fit` of the mean error, floored at
    ``1e-3``: a slope and its bootstrap interval), ``difference`` (mean error at the largest ``n``
    minus at the smallest) with its standard error ``difference_se`` (seeds and the held-out set's
    binomial spread), and ``last``/``last_se`` the mean error at the largest ``n`` and its standard error."""

    fit: LogLogFit
    difference: float
    difference_se: float
    last: float
    last_se: float


def _se(err: torch.Tensor, n_eval: int) -> float:
    """Standard error of a mean error over seeds: the seeds' spread, or at one seed the binomial one."""
    m = float(err.mean())
    binom = math.sqrt(max(m * (1 - m), 1e-12) / n_eval) / math.sqrt(err.numel())
    seeds = float(err.std()) / math.sqrt(err.numel()) if err.numel() > 1 else 0.0
    return max(seeds, binom)


def error_trend(sizes: Sequence[int], errors: Sequence[torch.Tensor], n_eval: int) -> ErrorTrend:
    """:class:`~mmcl.experiments.decisive_runs.ErrorTrend` of per-seed errors ``errors[k]`` at ``sizes[k]`` (``n_eval`` held-out inputs)."""
    check_int("n_eval", n_eval)
    fit = loglog_fit(sizes, errors, floor=1e-3)
    a, b = errors[0], errors[-1]
    sa, sb = _se(a, n_eval), _se(b, n_eval)
    return ErrorTrend(fit=fit, difference=float(b.mean() - a.mean()), difference_se=math.hypot(sa, sb),
                      last=float(b.mean()), last_se=sb)


@dataclass
class DecisiveSweep:
    """:func:`~mmcl.experiments.decisive_runs.run_decisive` at several ``n``: ``sizes``, ``by_n[n]`` a :class:`~mmcl.experiments.decisive_runs.DecisiveRun`."""

    sizes: List[int]
    by_n: Dict[int, DecisiveRun]

    def errors(self, mode: str, nu: str, protocol: str) -> List[torch.Tensor]:
        """The per-seed OOD errors at every size."""
        return [self.by_n[n].modes[mode].error[nu, protocol] for n in self.sizes]

    def trend(self, mode: str, nu: str, protocol: str) -> ErrorTrend:
        """:func:`~mmcl.experiments.decisive_runs.error_trend` of one error."""
        return error_trend(self.sizes, self.errors(mode, nu, protocol), self.by_n[self.sizes[-1]].cfg.n_heldout)

    def values(self, mode: str, name: str) -> List[torch.Tensor]:
        """A per-seed field of :class:`~mmcl.experiments.decisive_runs.ModeResult` (``loss``, ``gamma_T1``, ...) at every size."""
        return [getattr(self.by_n[n].modes[mode], name) for n in self.sizes]

    def parts(self, mode: str, v: str, part: str) -> List[float]:
        """The mean over seeds of a response part's root mean square at every size."""
        return [float(self.by_n[n].modes[mode].parts[v, part].mean()) for n in self.sizes]


def run_decisive_sweep(seeds: Mapping[int, int], scaling: RegimeScaling = DECISIVE_SCALING, *,
                       device="cpu", dtype="float32", progress: bool = False) -> DecisiveSweep:
    """:func:`~mmcl.experiments.decisive_runs.run_decisive` at every ``n`` of ``seeds`` (``n -> number of seeds``, at least two sizes)."""
    if not isinstance(seeds, Mapping) or len(seeds) < 2:
        raise ValueError(f"seeds must map at least 2 values of n to a number of seeds, got {seeds!r}")
    sizes = sorted(check_n(n) for n in seeds)
    by_n = {n: run_decisive(n, check_int(f"seeds[{n}]", seeds[n]), scaling, device=device, dtype=dtype,
                            progress=progress) for n in sizes}
    return DecisiveSweep(sizes=sizes, by_n=by_n)


# --------------------------------------------------------------------------------------------
# App. C.2 and D.2 re-taken on the decisive scaling (every-step runs, small n)
# --------------------------------------------------------------------------------------------
@dataclass
class DecisiveChains:
    """Lemmas C.14-C.18 (single) and D.11-D.15 (multi) at one ``n`` of the decisive scaling.

    Single (:func:`mmcl.proofs.single_stage2.comparator_chain` from ``ceil(T1)``): ``feasible16``,
    ``factor17`` (the paper's: 2), ``c18_holds`` whether Lemma C.18's averaged loss stays below its
    bound at every step.  Multi (:func:`mmcl.proofs.multi_stage2.multi_comparator_chain` with the
    paper's signs): ``feasible13`` (pair), ``d12_ratio`` (pair: ``||W(T1) - W*||_F`` over
    ``sqrt(m)/||mu||``, mean over seeds), ``d14_fail`` the share of steps where Lemma D.14's slack is
    negative, ``factor14``, ``d15_holds`` whether Lemma D.15's averaged loss stays below its bound,
    ``horizon_single``/``horizon_multi`` the horizons of Lemmas C.18/D.15 (steps, per seed)."""

    n: int
    cfg: SyntheticConfig
    feasible16: Tuple[float, float]
    factor17: float
    c18_holds: bool
    feasible13: tuple
    d12_ratio: Tuple[float, float]
    d14_fail: float
    factor14: float
    d15_holds: bool
    horizon_single: list
    horizon_multi: list


def decisive_chains(n: int, seeds: int = 2, scaling: RegimeScaling = DECISIVE_SCALING, *, epsilon: float = 0.05,
                    device="cpu") -> DecisiveChains:
    """App. C.2 and D.2 along every-step float64 runs at ``n`` (memory ``O(T n^2 M)``: small ``n``
    only) of :func:`~mmcl.experiments.decisive_runs.decisive_config`, target loss ``epsilon``; see :class:`~mmcl.experiments.decisive_runs.DecisiveChains`."""
    from mmcl.proofs import multi_stage2 as ms2
    from mmcl.proofs import single_stage2 as ss2
    from mmcl.proofs.predictions import t1_multi, t1_single

    check_int("seeds", seeds)
    check_number("epsilon", epsilon, 0, 1)
    cfg = decisive_config(check_n(n), scaling)
    data = sample_synthetic_batch(cfg, range(seeds), span=True, dtype="float64", device=device, with_ood=False)
    ccfg = ss2.ComparatorConfig(epsilon=epsilon)
    single = simulate(cfg, data, "single", "recursion")
    k1s = math.ceil(t1_single(cfg))
    ch = ss2.comparator_chain(single.between(k1s, cfg.n_epochs), data, cfg, ccfg, k1s)
    c18 = bool((ch.avg_loss <= ch.avg_bound).all())
    out_single = (tuple(ch.feasible16), float(ch.factor17), c18, list(ch.horizon))
    del single, ch
    multi = simulate(cfg, data, "multi", "recursion", record_derivatives=True)
    k1m = math.ceil(t1_multi(cfg))
    mc = ms2.multi_comparator_chain(multi, data, cfg, ccfg, k1m)
    ratio = tuple(float(dist.mean() / sc) for dist, sc in zip(mc.distance_t1, mc.d12_scale))
    k = mc.slack.shape[-1]
    steps = torch.arange(k)
    tail = mc.slack[..., steps >= k1m]
    return DecisiveChains(n=n, cfg=cfg, feasible16=out_single[0], factor17=out_single[1], c18_holds=out_single[2],
                          feasible13=tuple(tuple(f) for f in mc.feasible13), d12_ratio=ratio,
                          d14_fail=float((tail < 0).double().mean()), factor14=float(mc.factor14),
                          d15_holds=bool((mc.avg_loss <= mc.avg_bound).all()), horizon_single=out_single[3],
                          horizon_multi=list(mc.horizon))
