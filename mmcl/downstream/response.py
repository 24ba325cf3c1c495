"""What a feature reads from an OOD input, split by Eq. (11) (App. C.3/D.3, Theorems 4.2/4.3).

The downstream step of the paper (Appendix C.3 for single-modal, D.3 for multi-modal learning)
reads the trained features on the OOD inputs ``x_test = [y nu, zeta]`` of Sec. 3.3 through the
embedding ``h_r(x_test) = sigma(<w_r, y nu>) + sigma(<w_r, zeta>)``.  By Eq. (11) each response
of a feature is a sum of three parts:

``<w_r(t), v> = <w_r(0), v>  +  gamma_r <mu, v>/||mu||^2  +  sum_i rho_{r,i} <xi_i, v>/||xi_i||^2``

(*init*, *signal* and *memorised* parts), for ``v = nu`` (the signal response) and for ``v = zeta``
(the noise response).  App. C.3/D.3 bound the responses through ``gamma`` and ``rho`` alone; the
initialisation part, which the appendix does not mention, is measured here beside them.

* :func:`response_parts` -- the three parts and their sum for any vectors, from the coefficients
  (:func:`mmcl.dynamics.forward.preactivations`, exact for every engine: the parts are the same
  products with the initial weights or the coefficients set to zero);
* :func:`ood_response` -- the parts of ``<w_r, nu>`` and of ``<w_r, zeta>`` on the held-out OOD
  inputs at one recorded step of a run;
* :func:`ablated_accuracy` -- the OOD accuracy of both protocols of
  :func:`mmcl.downstream.evaluation.evaluate_all` when parts of the responses are left out
  (:data:`VARIANTS`): which part decides each protocol's error;
* :func:`decisive_part` -- from the ablations, the part of the noise response whose removal
  raises a protocol's accuracy most;
* :func:`run_downstream` -- the experiment of the book's chapter "The downstream theorems": both
  modes on the same draws, scored on OOD sets whose signal ``nu`` makes several angles with
  ``mu`` (``SyntheticConfig.nu_cos``; the paper's ``nu = 2 e1`` is ``nu_cos = 1``, the condition of
  Sec. 3.3 asks ``<nu, mu> = O(||mu||^2/sqrt(d))``), with the decomposition and the ablations.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Dict, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_int, check_number
from mmcl.downstream.evaluation import PROTOCOLS, features, embeddings, evaluate_all, fit_logistic
from mmcl.dynamics import simulate
from mmcl.dynamics.forward import preactivations
from mmcl.dynamics.trajectory import Trajectory
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model.data import OODData, SyntheticData, sample_ood, sample_synthetic_batch

__all__ = ["signal_reading_error", "PARTS", "VARIANTS", "ResponseParts", "OODResponse", "response_parts", "ood_response",
           "ablated_accuracy", "decisive_part", "DownstreamResult", "run_downstream"]

#: The three parts of a response in Eq. (11), in this order (initial weights, signal learning, noise memorisation).
PARTS = ("init", "signal", "memorised")

#: The variants :func:`ablated_accuracy` scores: name -> (parts of ``<w_r, nu>`` kept, parts of
#: ``<w_r, zeta>`` kept).  ``"trained"`` keeps everything (the features as trained); ``"learned only"``
#: removes both initialisation parts, the features App. C.3/D.3 reason about (``gamma`` and ``rho`` alone).
VARIANTS = {
    "trained": (PARTS, PARTS),
    "zeta: without init": (PARTS, ("signal", "memorised")),
    "zeta: without signal": (PARTS, ("init", "memorised")),
    "zeta: without memorised": (PARTS, ("init", "signal")),
    "nu: without signal": (("init", "memorised"), PARTS),
    "learned only": (("signal", "memorised"), ("signal", "memorised")),
}


@dataclass
class ResponseParts:
    """``<w_r, v>`` for a set of vectors ``v`` split by Eq. (11), each ``(..., m, k)``:
    ``init = <w_r(0), v>``, ``signal = gamma_r <mu, v>/||mu||^2``,
    ``memorised = sum_i rho_{r,i} <xi_i, v>/||xi_i||^2`` and ``total = <w_r(t), v>``."""

    init: torch.Tensor
    signal: torch.Tensor
    memorised: torch.Tensor
    total: torch.Tensor

    @property
    def residual(self) -> torch.Tensor:
        """``total - (init + signal + memorised)``: zero up to round-off."""
        return self.total - (self.init + self.signal + self.memorised)

    def keep(self, parts: Sequence[str]) -> torch.Tensor:
        """The sum of the named ``parts`` (a subset of :data:`PARTS`); all three is ``total``."""
        parts = tuple(parts)
        bad = [p for p in parts if p not in PARTS]
        if bad:
            raise ValueError(f"unknown part(s) {bad}; valid: {', '.join(PARTS)}")
        if set(parts) == set(PARTS):
            return self.total
        out = torch.zeros_like(self.total)
        for p in parts:
            out = out + getattr(self, p)
        return out


def _without_init(data: SyntheticData, tilde: bool) -> SyntheticData:
    """``data`` with the initial weights of one modality set to zero (every other tensor shared)."""
    values = {f.name: getattr(data, f.name) for f in fields(data)}
    name = "W0_tilde" if tilde else "W0"
    values[name] = torch.zeros_like(values[name])
    return SyntheticData._unchecked(**values)


def response_parts(data: SyntheticData, gamma: torch.Tensor, rho: torch.Tensor, vectors: torch.Tensor,
                   tilde: bool = False) -> ResponseParts:
    """The three parts of ``<w_r, v>`` (Eq. 11) for the rows ``v`` of ``vectors (..., k, d)``, at the
    coefficients ``gamma (..., m)``, ``rho (..., m, n)`` (shapes as in
    :func:`mmcl.dynamics.forward.preactivations`, which computes every part: the initialisation
    part with both coefficients zero, the other two with the initial weights zero).
    ``tilde=True``: the second network's."""
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if tilde and not data.has_tilde:
        raise ValueError("tilde=True needs the second modality: data.mu_tilde is None")
    if gamma.shape != rho.shape[:-1]:
        raise ValueError(f"gamma {tuple(gamma.shape)} and rho {tuple(rho.shape)} disagree (rho is gamma's shape + (n,))")
    g0, r0 = torch.zeros_like(gamma), torch.zeros_like(rho)
    zero = _without_init(data, tilde)
    return ResponseParts(init=preactivations(data, g0, r0, vectors, tilde),
                         signal=preactivations(zero, gamma, r0, vectors, tilde),
                         memorised=preactivations(zero, g0, rho, vectors, tilde),
                         total=preactivations(data, gamma, rho, vectors, tilde))


@dataclass
class OODResponse:
    """The OOD responses of every feature at one recorded step ``step``: ``nu`` the parts of the
    signal response ``<w_r, nu>`` (``(B.., m, 1)``) and ``zeta`` those of the noise response
    ``<w_r, zeta_k>`` over the held-out OOD noise (``(B.., m, N)``)."""

    step: int
    nu: ResponseParts
    zeta: ResponseParts

    def spread(self) -> Dict[str, torch.Tensor]:
        """Per part (and ``"total"``), the standard deviation over the held-out inputs of the noise
        response of each feature, ``(B.., m)``."""
        return {p: getattr(self.zeta, p).std(-1, correction=0) for p in PARTS + ("total",)}

    def signal(self) -> Dict[str, torch.Tensor]:
        """Per part (and ``"total"``), the signal response ``<w_r, nu>`` of each feature, ``(B.., m)``."""
        return {p: getattr(self.nu, p)[..., 0] for p in PARTS + ("total",)}


def _state(traj: Trajectory, index: int):
    """``(gamma, rho, step)`` at the recorded index ``index`` (negative from the end)."""
    K = traj.steps.shape[0]
    if isinstance(index, bool) or not isinstance(index, int) or not -K <= index < K:
        raise ValueError(f"index must be an integer in [-{K}, {K - 1}] (a recorded step of traj), got {index!r}")
    return traj.gamma.select(-2, index), traj.rho.select(-3, index), int(traj.steps[index])


def _check_run(traj, data, ood) -> OODData:
    if not isinstance(traj, Trajectory):
        raise ValueError(f"traj must be a Trajectory, got {type(traj).__name__}")
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    ood = ood if ood is not None else data.ood
    if ood is None:
        raise ValueError("an OOD set is needed: data.ood is None, pass ood=OODData(...)")
    if not isinstance(ood, OODData):
        raise ValueError(f"ood must be an OODData, got {type(ood).__name__}")
    return ood


def ood_response(traj: Trajectory, data: SyntheticData, index: int = -1, *,
                 ood: Optional[OODData] = None) -> OODResponse:
    """The parts of the OOD responses of the first network's features at the recorded step
    ``traj.steps[index]`` (default: the last), on the held-out inputs of ``ood`` (default
    ``data.ood``): ``<w_r, nu>`` and ``<w_r, zeta_k>`` by :func:`response_parts`."""
    ood = _check_run(traj, data, ood)
    gamma, rho, step = _state(traj, index)
    data = data.to(device=gamma.device, dtype=gamma.dtype)
    ood = ood.to(device=gamma.device, dtype=gamma.dtype)
    return OODResponse(step=step, nu=response_parts(data, gamma, rho, ood.nu[..., None, :]),
                       zeta=response_parts(data, gamma, rho, ood.zeta_eval))


def ablated_accuracy(traj: Trajectory, data: SyntheticData, variants: Sequence[str] = tuple(VARIANTS), *,
                     index: int = -1, ood: Optional[OODData] = None, l2: float = 1e-2
                     ) -> Dict[str, Dict[str, torch.Tensor]]:
    """OOD accuracy under both protocols of :func:`mmcl.downstream.evaluation.evaluate_all` at the
    recorded step ``index`` when the OOD embeddings ``sigma(<w_r, y nu>) + sigma(<w_r, zeta>)`` are
    formed from some parts of the responses only (:data:`VARIANTS`: name -> parts kept).

    ``adapt``: the head is refit on the ablated embeddings of the labelled OOD samples and scored
    on the ablated held-out ones; ``transfer``: the head fit on the (unchanged) training embeddings
    is scored on the ablated held-out ones.  ``"trained"`` reproduces ``evaluate_all``.  Returns
    ``variant -> protocol -> (B..)`` float64 on the CPU."""
    ood = _check_run(traj, data, ood)
    variants = tuple(variants)
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        raise ValueError(f"unknown variant(s) {bad}; valid: {', '.join(map(repr, VARIANTS))}")
    gamma, rho, _ = _state(traj, index)
    data = data.to(device=gamma.device, dtype=gamma.dtype)
    ood = ood.to(device=gamma.device, dtype=gamma.dtype)
    f64 = torch.float64
    nu = response_parts(data, gamma, rho, ood.nu[..., None, :])
    z_fit = response_parts(data, gamma, rho, ood.zeta_fit)
    z_eval = response_parts(data, gamma, rho, ood.zeta_eval)
    # the transfer head, fit once on the training embeddings h(x_i), x_i = [y_i mu, xi_i]
    X_tr = embeddings(data, gamma, rho, data.mu, data.y, data.xi).to(f64)
    head_tr = fit_logistic(X_tr, data.y.to(f64).expand(X_tr.shape[:-1]), l2=l2)
    out: Dict[str, Dict[str, torch.Tensor]] = {}
    for name in variants:
        keep_nu, keep_zeta = VARIANTS[name]
        a = nu.keep(keep_nu)[..., 0]
        X_fit = features(a, ood.y_fit, z_fit.keep(keep_zeta)).to(f64)
        X_eval = features(a, ood.y_eval, z_eval.keep(keep_zeta)).to(f64)
        y_fit = ood.y_fit.to(f64).expand(X_fit.shape[:-1])
        y_eval = ood.y_eval.to(f64).expand(X_eval.shape[:-1])
        head = fit_logistic(X_fit, y_fit, l2=l2)
        out[name] = {"adapt": head.accuracy(X_eval, y_eval).cpu(),
                     "transfer": head_tr.accuracy(X_eval, y_eval).cpu()}
    return out


def signal_reading_error(cfg: SyntheticConfig) -> float:
    """``Phi(-||nu|| / sigma_xi)``: the error of the rule that reads the test input's signal
    coordinate ``y ||nu|| + zeta_1`` (its signal plus the noise along the same direction) and takes
    its sign, the floor a head reading only the direction of ``nu`` meets (App. C.3/D.3)."""
    check_config(cfg)
    return 0.5 * math.erfc(cfg.nu_norm / cfg.sigma_xi / math.sqrt(2))


def decisive_part(ablation: Dict[str, Dict[str, torch.Tensor]], protocol: str, min_gain: float = 0.05
                  ) -> Tuple[Optional[str], float]:
    """The part of the noise response ``<w_r, zeta>`` (one of :data:`PARTS`) whose removal raises
    the mean accuracy of ``protocol`` the most in ``ablation`` (a result of
    :func:`ablated_accuracy` with the variants ``"zeta: without <part>"``), and that gain over
    ``"trained"``; the part is None where no removal gains ``min_gain`` (ours: 0.05).  Returns
    ``(part, gain)``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol={protocol!r} is unknown; valid: {', '.join(map(repr, PROTOCOLS))}")
    check_number("min_gain", min_gain, 0, 1, low_closed=True)
    names = {p: f"zeta: without {p}" for p in PARTS}
    missing = [v for v in ("trained",) + tuple(names.values()) if v not in ablation]
    if missing:
        raise ValueError(f"ablation lacks the variant(s) {missing}; run ablated_accuracy with them")
    base = float(ablation["trained"][protocol].mean())
    gains = {p: float(ablation[v][protocol].mean()) - base for p, v in names.items()}
    best = max(gains, key=gains.get)
    return (best if gains[best] >= min_gain else None), gains[best]


@dataclass
class DownstreamResult:
    """The experiment of :func:`run_downstream` (float64 on the CPU; ``S`` seeds, ``E`` scored steps).

    * ``cfg``, ``seeds``, ``nu_cos`` (the angles scored), ``eval_steps (E,)``;
    * ``accuracy[(c, mode, protocol)] (S, E)`` -- OOD accuracy along training for each ``nu_cos`` ``c``;
    * ``final[(c, mode, protocol)] (S,)`` -- the same at the last step, and ``fit_final`` the
      accuracy of the same heads on the samples they were fit on;
    * ``response[(c, mode)]`` -- :class:`OODResponse` at the last step (batched over seeds);
    * ``ablation[(c, mode)]`` -- :func:`ablated_accuracy` at the last step;
    * ``max_gamma[mode]``, ``max_rho[mode]``, ``loss[mode]`` ``(S,)`` -- the end of training;
    * ``condition[c]`` -- ``|<nu, mu>| / (||mu||^2/sqrt(d))`` (``SyntheticConfig.nu_condition``).
    """

    cfg: SyntheticConfig
    seeds: list
    nu_cos: Tuple[float, ...]
    eval_steps: torch.Tensor
    accuracy: Dict[tuple, torch.Tensor] = field(default_factory=dict)
    final: Dict[tuple, torch.Tensor] = field(default_factory=dict)
    fit_final: Dict[tuple, torch.Tensor] = field(default_factory=dict)
    response: Dict[tuple, OODResponse] = field(default_factory=dict)
    ablation: Dict[tuple, Dict[str, Dict[str, torch.Tensor]]] = field(default_factory=dict)
    max_gamma: Dict[str, torch.Tensor] = field(default_factory=dict)
    max_rho: Dict[str, torch.Tensor] = field(default_factory=dict)
    loss: Dict[str, torch.Tensor] = field(default_factory=dict)
    condition: Dict[float, float] = field(default_factory=dict)


def _cpu(parts: ResponseParts) -> ResponseParts:
    return ResponseParts(**{f.name: getattr(parts, f.name).double().cpu() for f in fields(parts)})


def run_downstream(cfg: SyntheticConfig = SyntheticConfig(), seeds: Sequence[int] = range(5),
                   nu_cos: Sequence[float] = (1.0, 0.05), *, modes=("single", "multi"),
                   engine: str = "recursion", eval_every: int = 10, device="cpu", dtype=torch.float32,
                   l2: float = 1e-2) -> DownstreamResult:
    """Train both modes once per seed on the draws ``sample_synthetic(cfg, seed)`` (all seeds in one
    batch, as :func:`mmcl.experiments.figure1.run_figure1`) and score them on the OOD set of every
    angle of ``nu_cos``: ``sample_ood(cfg.replace(nu_cos=c), seed)``, whose labels and noise do
    not depend on ``c`` (only ``nu`` turns), so the angles differ in ``nu`` alone.  ``nu_cos = 1``
    is Figure 1 (``cfg.nu_cos`` is ignored).  Scored every ``eval_every`` steps under both protocols
    (:func:`mmcl.downstream.evaluation.evaluate_all`); at the last step also the decomposition of
    the responses (:func:`ood_response`) and the ablations (:func:`ablated_accuracy`)."""
    check_config(cfg)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    angles = tuple(check_number("nu_cos", c, -1, 1, low_closed=True, high_closed=True) for c in nu_cos)
    if not angles:
        raise ValueError("nu_cos must name at least one angle")
    check_int("eval_every", eval_every)
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    data = sample_synthetic_batch(cfg, seeds, dtype=dtype, device=device, with_ood=False)
    oods = {c: OODData(**{f.name: torch.stack([getattr(sample_ood(cfg.replace(nu_cos=c), s, dtype=dtype, device=device), f.name)
                                               for s in seeds]) for f in fields(OODData)})
            for c in angles}
    res = DownstreamResult(cfg=cfg, seeds=seeds, nu_cos=angles, eval_steps=torch.empty(0),
                           condition={c: cfg.replace(nu_cos=c).nu_condition for c in angles})
    for mode in modes:
        traj = simulate(cfg, data, mode, engine)
        res.loss[mode] = traj.loss[:, -1].double().cpu()
        res.max_gamma[mode] = traj.gamma[:, -1].amax(-1).double().cpu()
        res.max_rho[mode] = traj.rho[:, -1].amax((-1, -2)).double().cpu()
        for c in angles:
            evs = evaluate_all(traj, data, PROTOCOLS, every=eval_every, ood=oods[c], l2=l2)
            res.eval_steps = evs[PROTOCOLS[0]].steps.cpu()
            for p, ev in evs.items():
                res.accuracy[(c, mode, p)] = ev.accuracy.double().cpu()
                res.final[(c, mode, p)] = ev.accuracy[:, -1].double().cpu()
                res.fit_final[(c, mode, p)] = ev.fit_accuracy[:, -1].double().cpu()
            r = ood_response(traj, data, ood=oods[c])
            res.response[(c, mode)] = OODResponse(step=r.step, nu=_cpu(r.nu), zeta=_cpu(r.zeta))
            res.ablation[(c, mode)] = ablated_accuracy(traj, data, ood=oods[c], l2=l2)
    return res
