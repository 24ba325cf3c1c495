"""The batch runner: :func:`~mmcl.experiments.sweep.sweep`, and the cache glue of its runs.

Runs whose tensors have equal shapes (``n, d, d~, m, M, n_epochs, n_test, n_heldout``) are
grouped, and each group is cut into batches that :func:`mmcl.dynamics.engines.simulate` runs as
*one* tensor computation with a leading batch dimension (``cfg`` may differ per batch element in
everything that is not a shape; the recursion engine also batches different ``d``, ``d~``, by
zero-padding).  Every run is cached on disk (:func:`mmcl.cache.load_or_compute`, namespace
``"sweep"``) under a hash of its full configuration, seed, mode, engine, precision and the code
version, so a rerun is instant and a changed parameter reruns only the runs it changes.
``client=`` (a ``dask.distributed.Client``) submits the batches to a cluster instead."""
from __future__ import annotations

import collections
import dataclasses
import time
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import torch

from mmcl._utils import resolve_device, resolve_dtype
from mmcl.cache import load_or_compute
from mmcl.downstream.evaluation import evaluate_all
from mmcl.dynamics.engines import as_batched, simulate
from mmcl.dynamics.trajectory import DivergenceError
from mmcl.experiments.sweep.draws import UnitDraws, make_draw
from mmcl.experiments.sweep.grid import check_modes, check_seeds, Run, expand_grid
from mmcl.experiments.sweep.options import SweepConfig
from mmcl.experiments.sweep.table import SweepTable
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import OODData, SyntheticData
from mmcl.proofs.predictions import measured_t1, t1_formula

__all__ = ["sweep"]

_SHAPE_FIELDS = ("n", "d", "d_tilde", "m", "M", "n_epochs", "n_test", "n_heldout", "balanced")
_CACHE_NAMESPACE = "sweep"
CACHE_FORMAT = 1  # bump when the cached per-run record changes


def _canonical(run: Run) -> Tuple[SyntheticConfig, float]:
    """The config and lambda with the parameters the mode never reads set to fixed values, so
    that runs differing only in those are computed once: a multi-modal run never reads ``eps``
    (``sigma_eps``, the view); a single-modal run never reads ``mu~``, ``xi~`` beyond their shape
    (``mu_tilde_norm``, ``sigma_xi_tilde``; ``d_tilde`` stays: it moves the random stream)."""
    ref = SyntheticConfig()
    if run.mode == "multi":
        return run.cfg.replace(sigma_eps=ref.sigma_eps), 1.0
    return run.cfg.replace(mu_tilde_norm=ref.mu_tilde_norm, sigma_xi_tilde=ref.sigma_xi_tilde), run.view


def _cache_params(cfg: SyntheticConfig, view: float, seed: int, mode: str, opts: SweepConfig) -> dict:
    params = {"format": CACHE_FORMAT, "cfg": dataclasses.asdict(cfg), "view_noise_scale": view, "seed": seed,
              "mode": mode, "engine": opts.engine, "dtype": opts.dtype, "protocols": list(opts.protocols),
              "t1_level": opts.t1_level, "record_every": opts.record_every, "score_init": opts.score_init}
    if opts.span:  # a span draw is another draw of the seed; explicit runs keep the keys they always had
        params["span"] = True
    return params


@dataclass
class _BatchSpec:
    """A batch of runs of equal shapes and mode, everything a worker needs (picklable)."""

    mode: str
    cfgs: List[SyntheticConfig]
    views: List[float]
    seeds: List[int]
    opts: SweepConfig
    device: str


def _bytes_per_run(cfg: SyntheticConfig, mode: str, opts: SweepConfig) -> int:
    """Rough memory of one run in a batch: data, recorded coefficients, evaluation temporaries.
    A span draw's tensors are as wide as its basis (at most ``2n + m + 2`` and ``n + m + 2``), not ``d``."""
    size = 8 if opts.dtype == "float64" else 4
    if opts.span:
        cfg = _Widths(cfg, d=min(cfg.d, 2 * cfg.n + cfg.m + 2), d_tilde=min(cfg.d_tilde, cfg.n + cfg.m + 2))
    ood = (cfg.n_test + cfg.n_heldout) * cfg.d
    data = 2 * cfg.n * cfg.d + cfg.m * cfg.d + ood + cfg.n * cfg.n
    traj = 2 * (cfg.m + cfg.m * cfg.n) + cfg.n_epochs + cfg.n_epochs // opts.record_every + 2  # 2 states, loss, T1 stat
    if mode == "multi":
        data += cfg.n * cfg.d_tilde + cfg.m * cfg.d_tilde
        traj *= 2
    # the engines' stacked patches and basis (mmcl.dynamics.grams._Network)
    data += (3 * cfg.n + 3) * cfg.d if mode == "single" else (2 * cfg.n + 3) * (cfg.d + cfg.d_tilde)
    if opts.engine != "recursion":  # the weights and their temporaries
        data += 4 * cfg.m * max(cfg.d, cfg.d_tilde)
    evals = (cfg.n_test + cfg.n_heldout) * (cfg.n + 2 * cfg.m) * 2
    return size * (data + traj + evals + 8 * cfg.n * cfg.n)


class _Widths:
    """A config's sizes with ``d``/``d_tilde`` replaced by the widths of its tensors (for estimates)."""

    def __init__(self, cfg: SyntheticConfig, d: int, d_tilde: int):
        self.__dict__.update(dataclasses.asdict(cfg), d=d, d_tilde=d_tilde)


def _metrics_nan(opts: SweepConfig, t1f: float) -> dict:
    out = {"loss": float("nan")}
    out.update({f"acc_{p}": float("nan") for p in opts.protocols})
    if opts.score_init:
        out.update({f"acc_{p}_init": float("nan") for p in opts.protocols})
    out.update({"max_gamma": float("nan"), "max_rho": float("nan"), "t1": float("nan"), "t1_formula": t1f,
                "diverged": True})
    return out


def _pad_draw(data: SyntheticData, d: int, d_tilde: int) -> SyntheticData:
    """The draw embedded in ``R^d`` (and ``R^d~``) by appending zero coordinates to every vector.
    Every inner product, hence every step of the recursion and every embedding, is unchanged."""
    def pad(t, size):
        return t if t is None or t.shape[-1] == size else torch.nn.functional.pad(t, (0, size - t.shape[-1]))

    ood = data.ood
    if ood is not None:
        ood = dataclasses.replace(ood, nu=pad(ood.nu, d), zeta_fit=pad(ood.zeta_fit, d),
                                  zeta_eval=pad(ood.zeta_eval, d))
    return dataclasses.replace(data, mu=pad(data.mu, d), xi=pad(data.xi, d), eps=pad(data.eps, d),
                               W0=pad(data.W0, d), mu_tilde=pad(data.mu_tilde, d_tilde),
                               xi_tilde=pad(data.xi_tilde, d_tilde), W0_tilde=pad(data.W0_tilde, d_tilde), ood=ood)


_SCORED = ("W0", "mu", "xi", "y")  # the draw's tensors that scoring a run reads (mmcl.downstream.evaluation)


def _run_batch(spec: _BatchSpec, units: Optional[UnitDraws] = None) -> List[dict]:
    """Run one batch as one tensor computation; returns one metrics dict per run.

    Runs of the recursion engine may differ in ``d``/``d~``: the recursion only sees inner
    products, so the draws are zero-padded to the largest dimension for ``simulate``, and
    each dimension's runs are then scored on their own, unpadded OOD sets.  A batch in which some
    run diverges is split in halves until the diverging runs are alone."""
    units = units if units is not None else UnitDraws()
    opts = spec.opts
    dtype = resolve_dtype(opts.dtype)
    draws = [make_draw(c, s, v, dtype=dtype, device=spec.device, units=units, span=opts.span)
             for c, s, v in zip(spec.cfgs, spec.seeds, spec.views)]
    # the OOD sets are not stacked: runs that share one (same seed and scales) are scored against
    # it by broadcasting, below; a single-modal run never reads the second modality
    oods = [dr.ood for dr in draws]
    draws = [dr._drop(ood=True, tilde=spec.mode == "single") for dr in draws]
    dims = [(c.d, c.d_tilde) for c in spec.cfgs]
    if len(set(dims)) == 1:
        data = SyntheticData.stack(draws)
        sim_cfgs = spec.cfgs
    else:
        if opts.engine != "recursion":
            raise ValueError("only the recursion engine batches runs of different dimensions")  # pragma: no cover
        dmax, dtmax = max(d for d, _ in dims), max(dt for _, dt in dims)
        data = SyntheticData.stack([_pad_draw(dr, dmax, dtmax) for dr in draws])
        sim_cfgs = [c.replace(d=dmax, d_tilde=dtmax) for c in spec.cfgs]
    try:
        # the states at the first and last steps only (scored, and max gamma/rho); T1 from its statistic
        # at every record_every-th step, without writing the states in between
        T = spec.cfgs[0].n_epochs
        traj = simulate(sim_cfgs, data, spec.mode, opts.engine, record_every=max(1, T), t1_every=opts.record_every)
    except DivergenceError:
        if len(spec.cfgs) == 1:
            return [_metrics_nan(opts, t1_formula(spec.cfgs[0], spec.mode))]
        h = len(spec.cfgs) // 2
        del data, draws
        halves = [dataclasses.replace(spec, cfgs=spec.cfgs[a:b], views=spec.views[a:b], seeds=spec.seeds[a:b])
                  for a, b in ((0, h), (h, len(spec.cfgs)))]
        return _run_batch(halves[0], units) + _run_batch(halves[1], units)
    B = len(spec.cfgs)
    t1 = measured_t1(traj, opts.t1_level).cpu()
    loss = traj.loss[:, -1].double().cpu()
    max_gamma = traj.gamma[:, -1].amax(-1).double().cpu()
    max_rho = traj.rho[:, -1].amax((-1, -2)).double().cpu()
    accs = {p: torch.empty(B, dtype=torch.float64) for p in opts.protocols}
    accs0 = {p: torch.empty(B, dtype=torch.float64) for p in opts.protocols}
    K = traj.steps.shape[0]
    scored = [0, K - 1] if opts.score_init else [K - 1]  # the last step (and the first, if asked)
    # scored on each dimension's own, unpadded draws, against each OOD set shared by broadcasting
    groups: Dict[tuple, List[int]] = collections.OrderedDict()
    for b in range(B):
        groups.setdefault((dims[b],) + tuple(id(getattr(oods[b], f.name)) for f in dataclasses.fields(OODData)),
                          []).append(b)
    tsel = torch.tensor(scored, device=traj.gamma.device)
    gamma_s, rho_s = traj.gamma.index_select(1, tsel), traj.rho.index_select(1, tsel)  # the scored steps only
    for idx in groups.values():
        if len(idx) > 1 and all(getattr(draws[b], f) is getattr(draws[idx[0]], f) for b in idx for f in _SCORED):
            # the runs share one draw (same seed and scales: make_draw's memo returns the same tensors),
            # so their embeddings share its products with the inputs: scored against it once, by
            # broadcasting (mmcl.dynamics.forward.preactivations), instead of forming each run's W
            sub = as_batched(draws[idx[0]])
        elif len(idx) == B and len(set(dims)) == 1:
            sub = data
        else:
            sub = SyntheticData.stack([draws[b] for b in idx])
        sel = torch.tensor(idx, device=traj.gamma.device)
        part = dataclasses.replace(traj, steps=traj.steps[tsel], gamma=gamma_s[sel], rho=rho_s[sel],
                                   gamma_tilde=None, rho_tilde=None)
        shared = OODData(**{f.name: getattr(oods[idx[0]], f.name)[None] for f in dataclasses.fields(OODData)})
        for p, ev in evaluate_all(part, sub, opts.protocols, ood=shared).items():
            accs[p][idx] = ev.accuracy[:, -1].double().cpu()
            accs0[p][idx] = ev.accuracy[:, 0].double().cpu()
    out = []
    for b, cfg in enumerate(spec.cfgs):
        rec = {"loss": float(loss[b])}
        rec.update({f"acc_{p}": float(a[b]) for p, a in accs.items()})
        if opts.score_init:
            rec.update({f"acc_{p}_init": float(a[b]) for p, a in accs0.items()})
        rec.update({"max_gamma": float(max_gamma[b]), "max_rho": float(max_rho[b]), "t1": float(t1[b]),
                    "t1_formula": t1_formula(cfg, spec.mode), "diverged": False})
        out.append(rec)
    return out


class _Missing(Exception):
    """Raised inside load_or_compute to learn that an entry is not cached (nothing is stored)."""


def _lookup(params: dict):
    def compute():
        raise _Missing

    try:
        return load_or_compute(_CACHE_NAMESPACE, params, compute)
    except _Missing:
        return None


def _store(params: dict, value: dict) -> None:
    load_or_compute(_CACHE_NAMESPACE, params, lambda: value)


def sweep(grid: Mapping[str, Sequence], seeds: Iterable[int] = (0, 1, 2), mode="single",
          engine: str = "recursion", *, device=None, base: Optional[SyntheticConfig] = None,
          client=None, **options) -> SweepTable:
    """Run every configuration of ``grid`` x ``seeds`` x ``mode`` as batched tensor computations
    and return a :class:`~mmcl.experiments.sweep.SweepTable` (columns: see
    :mod:`mmcl.experiments.sweep`).

    ``grid``: dict from :class:`~mmcl.model.config.SyntheticConfig` field names or
    :data:`~mmcl.experiments.sweep.grid.DERIVED` names to lists of values; the other fields come from
    ``base`` (default: the Figure 1 setting).  ``mode``: ``"single"``, ``"multi"`` or a list of
    both.  ``engine`` and ``device`` as in :func:`mmcl.dynamics.engines.simulate`; ``options`` are
    the other fields of :class:`~mmcl.experiments.sweep.SweepConfig` (``dtype``, ``batch_size``,
    ``memory_mb``, ``protocols``, ``t1_level``, ``record_every``, ``score_init``, ``cache``,
    ``progress``).  ``client``: a ``dask.distributed.Client``; each batch then becomes one task
    on its cluster (the cache is read and written here).  The grid is validated before any run
    starts.  Every run computes ``n_epochs`` steps of GD on the loss of its mode and scores its
    last step; runs that diverge are kept as rows with ``diverged=True`` and NaN results.
    """
    t_start = time.perf_counter()
    opts = SweepConfig(engine=engine, device=None if device is None else str(device), **options)
    base = SyntheticConfig() if base is None else base
    seeds, modes = check_seeds(seeds), check_modes(mode)  # once: they may be iterators
    runs = expand_grid(grid, seeds, modes, base)
    if client is not None and not (hasattr(client, "submit") and hasattr(client, "gather")):
        raise ValueError(f"client must be a dask.distributed.Client (with submit/gather), got {type(client).__name__}")
    dev = str(resolve_device(opts.device)) if opts.device is not None else "cpu"

    # unique computations (the mode's unused parameters canonicalised), cache look-ups
    canon = [_canonical(r) for r in runs]
    keys = [(c, v, r.seed, r.mode) for r, (c, v) in zip(runs, canon)]
    results: Dict[tuple, dict] = {}
    todo: "collections.OrderedDict[tuple, None]" = collections.OrderedDict()
    for k in keys:
        if k in results or k in todo:
            continue
        hit = _lookup(_cache_params(*k, opts)) if opts.cache else None
        if hit is not None:
            results[k] = hit
        else:
            todo[k] = None
    n_cached = len(results)

    # group by shape and mode; within a group order by seed (unit draws are shared per seed)
    # (the recursion batches different d, d~ together: see _run_batch)
    # (span draws are never padded: their tensors are as wide as their basis, whatever d, and a batch holds
    # one nominal d, so they are grouped by d as well)
    shape_fields = [f for f in _SHAPE_FIELDS if opts.engine != "recursion" or opts.span or f not in ("d", "d_tilde")]
    groups: Dict[tuple, List[tuple]] = collections.OrderedDict()
    for k in todo:
        cfg, _, seed, m = k
        # a span draw whose nu has a part orthogonal to mu is one column wider (two fixed directions)
        tilted = (cfg.nu_sin != 0.0,) if opts.span else ()
        groups.setdefault((m,) + tuple(getattr(cfg, f) for f in shape_fields) + tilted, []).append(k)
    specs = []
    for gkey, ks in sorted(groups.items(), key=lambda kv: (repr(kv[0][1:]), kv[0][0])):
        ks.sort(key=lambda k: (k[2], k[0].d, k[0].d_tilde))
        widest = max((k[0] for k in ks), key=lambda c: c.d + c.d_tilde)
        bs = opts.batch_size
        if bs is None:  # as many as fit memory_mb, in batches of equal size (a last batch of a few runs
            # costs nearly as much as a full one: a step's time is mostly per batch at small sizes)
            bs = max(1, min(256, int(opts.memory_mb * 2 ** 20 // _bytes_per_run(widest, gkey[0], opts))))
            bs = -(-len(ks) // -(-len(ks) // bs))
        for i in range(0, len(ks), bs):
            chunk = ks[i:i + bs]
            specs.append((chunk, _BatchSpec(mode=gkey[0], cfgs=[k[0] for k in chunk], views=[k[1] for k in chunk],
                                            seeds=[k[2] for k in chunk], opts=opts, device=dev)))

    bar = None
    if opts.progress and todo:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(todo), desc="sweep", unit="run")

    def _finish(chunk, recs):
        for k, rec in zip(chunk, recs):
            results[k] = rec
            if opts.cache:
                _store(_cache_params(*k, opts), rec)
        if bar is not None:
            bar.update(len(chunk))

    if client is None:
        units = UnitDraws()
        for chunk, spec in specs:
            _finish(chunk, _run_batch(spec, units))
    elif specs:
        try:
            from distributed import as_completed
        except ImportError as exc:  # pragma: no cover - distributed is installed with the dask extra
            raise ValueError("client= needs dask.distributed: pip install 'mmcl[dask]'") from exc
        futures = {client.submit(_run_batch, spec, pure=False): chunk for chunk, spec in specs}
        for fut in as_completed(list(futures)):
            _finish(futures[fut], fut.result())
    if bar is not None:
        bar.close()

    # the tidy table, in the grid's order
    grid_keys = list(grid)
    metric_cols = (["loss"] + [f"acc_{p}" for p in opts.protocols]
                   + ([f"acc_{p}_init" for p in opts.protocols] if opts.score_init else [])
                   + ["max_gamma", "max_rho", "t1", "t1_formula", "diverged"])
    derived_cols = [c for c in ("snr", "n_snr2", "c_mu") if c not in grid_keys]
    columns = grid_keys + ["mode", "seed"] + derived_cols + metric_cols
    rows = []
    for r, k in zip(runs, keys):
        row = {"mode": r.mode, "seed": r.seed, "snr": r.cfg.snr, "n_snr2": r.cfg.n_snr2,
               "c_mu": r.cfg.c_mu}
        row.update(dict(r.point))  # a grid value wins over its recomputed derived value
        rec = results[k]
        row.update({c: rec[c] for c in metric_cols})
        rows.append({c: row[c] for c in columns})
    meta = {"engine": opts.engine, "dtype": opts.dtype, "device": dev, "seeds": seeds, "modes": modes,
            "protocols": list(opts.protocols), "base": dataclasses.asdict(base),
            "grid": {k: list(dict.fromkeys(dict(r.point)[k] for r in runs)) for k in grid_keys},
            "runs": len(runs), "computed": len(todo), "cached": n_cached, "batches": len(specs),
            "wall_s": time.perf_counter() - t_start}
    return SweepTable(rows, columns, [r.cfg for r in runs], grid_keys, meta)
