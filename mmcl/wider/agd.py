"""Alternating gradient descent (AGD) on a matrix factorisation (Ward & Kolda, NeurIPS 2023).

AGD on ``1/2 ||A - X Y^T||_F^2`` from an unbalanced random initialisation (``X_0`` proportional to
``A Phi``, ``Y_0`` small) reaches ``||A - X Y^T||_F^2 <= eps ||A||_F^2`` in
``O((sigma_1/sigma_r)^2 log(1/eps))`` iterations (:func:`agd`, :func:`agd_step`,
:func:`initial_factors`).  The book's chapter "Alternating gradient descent on the factorisation"
measures this on :func:`low_rank_matrix` test matrices (:func:`runs_on_test_matrices`,
:func:`iterations_vs_condition`, :func:`condition_scan`, :func:`step_scan`, compared with
:func:`ward_kolda_bound` through :func:`loglog_slope`) and runs AGD on the normalised
co-occurrence matrix of :mod:`mmcl.wider.factorisation` (:func:`excess_trajectory`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from mmcl._utils import check_bool, check_int, check_number
from mmcl.dynamics import DivergenceError
from mmcl.wider._checks import check_float, check_k
from mmcl.wider.factorisation import principal_angles

__all__ = ["INITS", "AGDConfig", "AGDResult", "initial_factors", "agd_step", "agd", "default_step",
           "low_rank_matrix", "runs_on_test_matrices", "iterations_vs_condition", "ConditionScan", "condition_scan",
           "StepScan", "step_scan", "excess_trajectory", "ward_kolda_bound", "loglog_slope"]


#: The initialisations of :func:`initial_factors`.
INITS = ("ward_kolda", "gaussian")


@dataclass(frozen=True)
class AGDConfig:
    """Constants of AGD's initialisations and default step (all *ours*; see :func:`initial_factors`).

    Ward-Kolda: ``X_0 = A Phi / (sqrt(eta) C sigma_1)``, ``Y_0 = sqrt(eta) D sigma_1 Psi``.
    Gaussian: ``X_0, Y_0`` with i.i.d. ``N(0, alpha^2 sigma_1 / d)`` entries.
    Default step ``eta = step_scale / sigma_1(A)``.
    """

    C: float = 2.0  # WK's C: eta sigma_1(X_0)^2 ~ (1 + sqrt(r/d))^2 / C^2 <= 1 for every d >= r (ours)
    D: float = 0.01  # WK's D: Y_0 small, so X_0 Y_0^T ~ 0 and the first error is ~ ||A||^2 (ours)
    alpha: float = 1e-3  # Gaussian scale: the fastest of 1e-2..1e-5 on the rank-5 100x100 test matrix (ours)
    step_scale: float = 0.5  # default eta = step_scale / sigma_1(A) (ours; the objective stays monotone)
    check_every: int = 25  # iterations between checks for "all converged" / "diverged" (no effect on results)

    def __post_init__(self) -> None:
        for name in ("C", "D", "alpha", "step_scale"):
            check_number(f"AGDConfig.{name}", getattr(self, name), 0.0)
        check_int("AGDConfig.check_every", self.check_every)


@dataclass
class AGDResult:
    """A run of :func:`agd` on ``A (..., m, n)`` with factor width ``d``.

    * ``X (..., m, d)``, ``Y (..., n, d)`` -- the factors after ``iterations`` steps;
    * ``rel_error (T+1, ...)`` -- ``||A - X_t Y_t^T||_F^2 / ||A||_F^2`` for ``t = 0..T``, ``T`` the
      largest iteration count of the batch (a converged member's entries stay at its final value);
    * ``iterations (...)`` (int64) -- steps used: the first ``t`` with ``rel_error <= tol``, else
      ``max_iter``;
    * ``converged (...)`` (bool), ``step (...)`` -- the step each member used.
    """

    X: torch.Tensor
    Y: torch.Tensor
    rel_error: torch.Tensor
    iterations: torch.Tensor
    converged: torch.Tensor
    step: torch.Tensor
    init: str


def _check_matrix(A) -> None:
    check_float("A", A)
    if A.dim() < 2:
        raise ValueError(f"A must be a matrix (..., m, n), got shape {tuple(A.shape)}")
    if A.shape[-1] < 1 or A.shape[-2] < 1:
        raise ValueError(f"A must be non-empty, got shape {tuple(A.shape)}")


def _sigma1(A: torch.Tensor) -> torch.Tensor:
    s1 = torch.linalg.matrix_norm(A, ord=2)
    if bool((s1 <= 0).any()):
        raise ValueError("A (or a member of the batch) is the zero matrix; there is nothing to factorise")
    return s1


def default_step(A: torch.Tensor, config: AGDConfig = AGDConfig()) -> torch.Tensor:
    """The documented step ``eta = step_scale / sigma_1(A)`` ``(...)`` (``step_scale = 0.5``)."""
    _check_matrix(A)
    return config.step_scale / _sigma1(A)


def _resolve_step(A, step, config) -> torch.Tensor:
    if step is None:
        return default_step(A, config)
    if isinstance(step, torch.Tensor):
        if not bool(torch.isfinite(step).all()) or not bool((step > 0).all()):
            raise ValueError(f"step must be > 0 and finite, got {step}")
        return step.to(A.dtype).to(A.device).expand(A.shape[:-2])
    check_number("step", step, 0.0)  # None (above) is the default step_scale / sigma_1(A)
    return torch.full(A.shape[:-2], float(step), dtype=A.dtype, device=A.device)


def initial_factors(A: torch.Tensor, rank: int, init: str = "ward_kolda", step=None, seed: int = 0,
                    config: AGDConfig = AGDConfig()) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(X_0 (..., m, d), Y_0 (..., n, d))`` for ``A (..., m, n)``, ``d = rank``.

    * ``"ward_kolda"`` -- the unbalanced initialisation of Ward & Kolda (2023)::

          X_0 = A Phi / (sqrt(eta) C sigma_1(A)),   Y_0 = sqrt(eta) D sigma_1(A) Psi,

      ``Phi (n, d)``, ``Psi (n, d)`` with i.i.d. ``N(0, 1/d)`` entries: ``X_0`` lies in the column
      span of ``A`` and is large, ``Y_0`` is small.  The *form* is Ward & Kolda's as we recall it
      (we could not consult the paper offline); the constants ``C = 2`` and ``D = 0.01`` are ours:
      since ``V_r^T Phi`` is an ``r x d`` Gaussian matrix with singular values about
      ``1 +- sqrt(r/d)``, ``eta sigma_1(X_0)^2 ~ (1 + sqrt(r/d))^2 / C^2 <= 1`` for every ``d >= r``,
      which keeps the first ``Y`` steps stable, and ``D = 0.01`` makes ``X_0 Y_0^T`` negligible.
    * ``"gaussian"`` -- the standard small initialisation: i.i.d. ``N(0, alpha^2 sigma_1 / d)``
      entries in both factors, ``alpha = 1e-3``.

    Random draws use a CPU generator seeded with ``seed`` (identical on every device); a batch
    gets independent draws per member.
    """
    _check_matrix(A)
    m, n = A.shape[-2:]
    check_k(rank, min(m, n), "rank")
    if init not in INITS:
        raise ValueError(f"init={init!r} is not supported; valid: {INITS}")
    eta = _resolve_step(A, step, config)
    s1 = _sigma1(A)
    g = torch.Generator().manual_seed(int(seed))
    batch = A.shape[:-2]
    kw = dict(generator=g, dtype=torch.float64)
    if init == "ward_kolda":
        Phi = (torch.randn(batch + (n, rank), **kw) / math.sqrt(rank)).to(A)
        Psi = (torch.randn(batch + (n, rank), **kw) / math.sqrt(rank)).to(A)
        a = (1.0 / (torch.sqrt(eta) * config.C * s1))[..., None, None]
        b = (torch.sqrt(eta) * config.D * s1)[..., None, None]
        return a * (A @ Phi), b * Psi
    scale = (config.alpha * torch.sqrt(s1 / rank))[..., None, None]
    X0 = torch.randn(batch + (m, rank), **kw).to(A)
    Y0 = torch.randn(batch + (n, rank), **kw).to(A)
    return scale * X0, scale * Y0


def agd_step(A: torch.Tensor, X: torch.Tensor, Y: torch.Tensor, step) -> Tuple[torch.Tensor, torch.Tensor]:
    """One step of alternating gradient descent on ``f(X, Y) = 1/2 ||A - X Y^T||_F^2``:

    ``X' = X + eta (A - X Y^T) Y``, then ``Y' = Y + eta (A - X' Y^T)^T X'`` (the ``Y`` step uses the
    new ``X``).  ``A (..., m, n)``, ``X (..., m, d)``, ``Y (..., n, d)``, ``step`` a number or a
    tensor ``(...)``.  Each half-step is a gradient step on a quadratic, and
    ``f(X - eta G, Y) = f(X, Y) - eta ||G||^2 + eta^2/2 ||G Y^T||^2`` (``G = grad_X f``), so ``f``
    does not increase while ``eta ||Y||_2^2 <= 2`` and ``eta ||X'||_2^2 <= 2``.
    """
    eta = step[..., None, None] if isinstance(step, torch.Tensor) else step
    X = X + eta * (A - X @ Y.transpose(-1, -2)) @ Y
    Y = Y + eta * (A - X @ Y.transpose(-1, -2)).transpose(-1, -2) @ X
    return X, Y


def agd(A: torch.Tensor, rank: int, init: str = "ward_kolda", step=None, tol: float = 1e-6,
        max_iter: int = 20000, seed: int = 0, config: AGDConfig = AGDConfig(),
        progress: bool = False) -> AGDResult:
    """Alternating gradient descent on ``1/2 ||A - X Y^T||_F^2`` (Ward & Kolda 2023), ``X`` then ``Y``.

    ``A (m, n)`` or a batch ``(..., m, n)``; ``rank`` = the factors' width ``d`` (Ward & Kolda take
    ``d > r = rank(A)``: mild over-parameterisation); ``init`` in ``("ward_kolda", "gaussian")``
    (:func:`initial_factors`); ``step`` = ``eta`` (default ``0.5 / sigma_1(A)``, per member of a
    batch); stops when ``||A - X Y^T||_F^2 <= tol ||A||_F^2`` or after ``max_iter`` steps.  In a
    batch, each member stops (is frozen) at its own first success.  Returns :class:`AGDResult`.
    Raises :class:`mmcl.dynamics.trajectory.DivergenceError` if the error stops being finite.
    """
    from tqdm.auto import tqdm

    _check_matrix(A)
    check_number("tol", tol, 0.0, 1.0)  # a relative squared error
    check_int("max_iter", max_iter)
    check_bool("progress", progress)
    eta = _resolve_step(A, step, config)
    X, Y = initial_factors(A, rank, init, eta, seed, config)
    normA = (A * A).sum((-2, -1))
    active = torch.ones(A.shape[:-2], dtype=torch.bool, device=A.device)
    iters = torch.full(A.shape[:-2], max_iter, dtype=torch.int64, device=A.device)
    hist = []
    bar = tqdm(total=max_iter, desc=f"AGD ({init})", disable=not progress, leave=False)
    t = 0
    while True:
        R = A - X @ Y.transpose(-1, -2)
        err = (R * R).sum((-2, -1)) / normA
        hist.append(err)
        done = active & (err <= tol)
        iters = torch.where(done, torch.full_like(iters, t), iters)
        active = active & ~done
        if t % config.check_every == 0 or t == max_iter:
            if not bool(torch.isfinite(err).all()):
                bar.close()
                raise DivergenceError(f"AGD ({init}) diverged at iteration {t}: the error is not finite; "
                                      f"use a smaller step (got eta*sigma_1 = {float((eta * _sigma1(A)).max()):.3g})")
            if not bool(active.any()):
                break
        if t == max_iter:
            break
        e = torch.where(active, eta, torch.zeros_like(eta))[..., None, None]
        X = X + e * R @ Y
        Y = Y + e * (A - X @ Y.transpose(-1, -2)).transpose(-1, -2) @ X
        t += 1
        bar.update(1)
    bar.close()
    H = torch.stack(hist)
    T = int(iters.max())
    return AGDResult(X=X, Y=Y, rel_error=H[:T + 1], iterations=iters, converged=~active, step=eta, init=init)


def low_rank_matrix(m: int, n: int, r: int, kappa: float, seed: int = 0, dtype=torch.float64) -> torch.Tensor:
    """A rank-``r`` ``(m, n)`` matrix ``U diag(s) V^T`` with Haar-random orthonormal ``U, V`` and
    singular values geometrically spaced from ``s_1 = 1`` to ``s_r = 1/kappa`` (our choice of
    spectrum), so that ``sigma_1 / sigma_r = kappa`` exactly."""
    check_int("m", m)
    check_int("n", n)
    check_k(r, min(m, n), "r")
    check_number("kappa", kappa, 1.0, low_closed=True)
    g = torch.Generator().manual_seed(int(seed))
    U, Ru = torch.linalg.qr(torch.randn(m, r, generator=g, dtype=torch.float64))
    V, Rv = torch.linalg.qr(torch.randn(n, r, generator=g, dtype=torch.float64))
    U, V = U * torch.sign(torch.diagonal(Ru)), V * torch.sign(torch.diagonal(Rv))
    s = kappa ** (-torch.arange(r, dtype=torch.float64) / max(r - 1, 1))
    if r == 1:
        s = torch.ones(1, dtype=torch.float64)
    return ((U * s) @ V.T).to(dtype)


def iterations_vs_condition(kappas: Sequence[float], seeds: Sequence[int], m: int = 100, n: int = 100, r: int = 5,
                            d: int = 10, init: str = "ward_kolda", step_scale: Optional[float] = None,
                            tol: float = 1e-6, max_iter: int = 20000, device="cpu",
                            config: AGDConfig = AGDConfig(), progress: bool = True) -> torch.Tensor:
    """Iterations AGD needs to reach ``||A - X Y^T||_F^2 <= tol ||A||_F^2``, ``(len(kappas), len(seeds))``
    (int64, CPU), for :func:`low_rank_matrix` ``(m, n, r, kappa, seed)`` with factors of width ``d``.
    All seeds of one ``kappa`` run as one batch, initialised from seed ``seeds[0] + 7919 i`` for the
    ``i``-th ``kappa`` (independent draws per member of the batch).  The step
    is ``step_scale / sigma_1`` (default ``config.step_scale``); unconverged runs count ``max_iter``."""
    from tqdm.auto import tqdm

    cfg = config if step_scale is None else dataclasses.replace(config, step_scale=step_scale)
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    out = torch.empty(len(kappas), len(seeds), dtype=torch.int64)
    for i, kappa in enumerate(tqdm(list(kappas), desc=f"kappa ({init})", disable=not progress, leave=False)):
        A = torch.stack([low_rank_matrix(m, n, r, kappa, s) for s in seeds]).to(device)
        res = agd(A, d, init=init, tol=tol, max_iter=max_iter, seed=seeds[0] + 7919 * i, config=cfg)
        out[i] = res.iterations.cpu()
    return out


def runs_on_test_matrices(seeds: Sequence[int], init: str = "ward_kolda", m: int = 100, n: int = 100, r: int = 5,
                          d: int = 10, kappa: float = 10.0, tol: float = 1e-6,
                          config: AGDConfig = AGDConfig()) -> List[AGDResult]:
    """One :func:`agd` run (CPU) per seed ``s``: on :func:`low_rank_matrix` ``(m, n, r, kappa, seed=s)``
    with factors of width ``d``, initialised from seed ``s`` and stopped at ``tol`` (the book's
    comparison of the two initialisations at ``kappa = 10``)."""
    return [agd(low_rank_matrix(m, n, r, kappa, seed=s), d, init=init, tol=tol, seed=s, config=config)
            for s in seeds]


def ward_kolda_bound(kappa, eps: float, d: Optional[int] = None, r: Optional[int] = None,
                     constant: float = 1.0):
    """The iteration count of Ward & Kolda's theorem with its absolute constant set to
    ``constant``: ``constant * kappa^2 * log(1/eps)``, times ``d / (sqrt(d) - sqrt(r - 1))^2`` when
    ``d`` and ``r`` are given (their over-parameterisation factor, as we recall it).  ``kappa``
    a number or a tensor."""
    check_number("eps", eps, 0.0, 1.0)
    factor = 1.0
    if d is not None or r is not None:
        if d is None or r is None:
            raise ValueError(f"give both d and r with d >= r >= 1, got d={d!r}, r={r!r}")
        check_int("r", r)
        check_int("d", d, r)
        factor = d / (math.sqrt(d) - math.sqrt(r - 1)) ** 2
    return constant * factor * kappa ** 2 * math.log(1.0 / eps)


def loglog_slope(x, y) -> Tuple[float, float]:
    """Least-squares fit of ``log y = slope * log x + intercept``; returns ``(slope, intercept)``.
    ``x (K,)`` and ``y (K, S)`` or ``(K,)`` (every column is a sample at the same ``x``)."""
    x = torch.as_tensor(x, dtype=torch.float64)
    y = torch.as_tensor(y, dtype=torch.float64)
    if y.dim() == 1:
        y = y[:, None]
    if x.dim() != 1 or y.shape[0] != x.shape[0] or x.shape[0] < 2:
        raise ValueError(f"need x (K,) and y (K,) or (K, S) with K >= 2, got {tuple(x.shape)} and {tuple(y.shape)}")
    if bool((x <= 0).any()) or bool((y <= 0).any()):
        raise ValueError("x and y must be positive for a log-log fit")
    lx = torch.log(x)[:, None].expand_as(y).reshape(-1)
    ly = torch.log(y).reshape(-1)
    M = torch.stack([lx, torch.ones_like(lx)], 1)
    sol = torch.linalg.lstsq(M, ly[:, None]).solution[:, 0]
    return float(sol[0]), float(sol[1])


@dataclass
class ConditionScan:
    """:func:`condition_scan`: ``iterations[init] (len(kappas), len(seeds))`` (int64) from
    :func:`iterations_vs_condition`, the fitted exponent ``slopes[init]`` of ``T ~ kappa^slope``
    (:func:`loglog_slope` over every draw) and the theorem's ``bound[i]`` =
    :func:`ward_kolda_bound` ``(kappas[i], tol)`` with constant 1."""

    kappas: List[float]
    seeds: List[int]
    tol: float
    iterations: Dict[str, torch.Tensor]
    slopes: Dict[str, float]
    bound: List[float]


def condition_scan(kappas: Sequence[float], seeds: Sequence[int], m: int = 100, n: int = 100, r: int = 5,
                   d: int = 10, tol: float = 1e-6, max_iter: int = 20000, device="cpu",
                   progress: bool = True) -> ConditionScan:
    """Iterations to ``tol`` against the condition number for every initialisation in :data:`INITS`
    (:func:`iterations_vs_condition` at the default step), with the fitted log-log exponents and
    Ward & Kolda's ``kappa^2 log(1/tol)``.  Returns :class:`ConditionScan`."""
    kappas, seeds = list(kappas), list(seeds)
    iters = {init: iterations_vs_condition(kappas, seeds, m=m, n=n, r=r, d=d, init=init, tol=tol,
                                           max_iter=max_iter, device=device, progress=progress)
             for init in INITS}
    slopes = {init: loglog_slope(kappas, T.double())[0] for init, T in iters.items()}
    bound = [ward_kolda_bound(k_, tol) for k_ in kappas]
    return ConditionScan(kappas=kappas, seeds=seeds, tol=tol, iterations=iters, slopes=slopes, bound=bound)


@dataclass
class StepScan:
    """:func:`step_scan`: ``iterations[init] (len(step_scales), len(seeds))`` (int64) at the
    condition number ``kappa``, and the fitted exponent ``slopes[init]`` of ``T ~ eta^slope``."""

    step_scales: List[float]
    kappa: float
    seeds: List[int]
    iterations: Dict[str, torch.Tensor]
    slopes: Dict[str, float]


def step_scan(step_scales: Sequence[float], seeds: Sequence[int], kappa: float = 8.0, max_iter: int = 20000,
              device="cpu") -> StepScan:
    """Iterations to ``1e-6`` against the step ``eta = c / sigma_1`` for each ``c`` in ``step_scales``,
    for every initialisation in :data:`INITS` (:func:`iterations_vs_condition` at the one ``kappa``,
    its default sizes), with the fitted log-log exponents.  Returns :class:`StepScan`."""
    step_scales, seeds = list(step_scales), list(seeds)
    by_step = {init: torch.stack([iterations_vs_condition([kappa], seeds, init=init, step_scale=c, max_iter=max_iter,
                                                          device=device, progress=False)[0]
                                  for c in step_scales]) for init in INITS}
    slopes = {init: loglog_slope(step_scales, T.double())[0] for init, T in by_step.items()}
    return StepScan(step_scales=step_scales, kappa=kappa, seeds=seeds, iterations=by_step, slopes=slopes)


def excess_trajectory(M: torch.Tensor, k: int, init: str = "ward_kolda", n_steps: int = 150, seed: int = 0,
                      level: float = 1e-6) -> dict:
    """AGD at the default step on ``1/2 ||M - X Y^T||_F^2`` with factors of width ``k`` for a matrix
    ``M (m, n)`` that need not have rank ``k`` (the book runs it on the normalised co-occurrence
    matrix ``P~`` of :func:`mmcl.wider.factorisation.normalised_cooccurrence`), step by step with
    :func:`agd_step` from :func:`initial_factors` ``(M, k, init, seed=seed)``.

    Returns a dict: ``opt`` = the Eckart-Young optimum ``sum_{i>k} s_i^2 / sum_i s_i^2`` of the
    relative error, ``excess[t]`` = ``||M - X_t Y_t^T||_F^2 / ||M||_F^2 - opt`` and ``angle[t]`` =
    the largest principal angle (:func:`mmcl.wider.factorisation.principal_angles`) between ``X_t``
    and the top-``k`` left singular vectors of ``M``, for ``t = 0..n_steps``; ``first`` = the first
    ``t`` with ``excess[t] <= level`` (None if none)."""
    check_float("M", M, 2)
    check_k(k, min(M.shape))
    check_int("n_steps", n_steps, 0)
    U, s, _ = torch.linalg.svd(M, full_matrices=False)
    opt = float((s[k:] ** 2).sum() / (s ** 2).sum())
    eta = default_step(M)
    X, Y = initial_factors(M, k, init, step=eta, seed=seed)
    excess, angle = [], []
    for t in range(n_steps + 1):
        excess.append(float(((M - X @ Y.T) ** 2).sum() / (M ** 2).sum()) - opt)
        angle.append(float(principal_angles(X, U[:, :k]).max()))
        X, Y = agd_step(M, X, Y, eta)
    first = next((t for t, e in enumerate(excess) if e <= level), None)
    return dict(excess=excess, angle=angle, first=first, opt=opt)
