"""Draws: rescaled unit draws (:func:`~mmcl.experiments.sweep.make_draw`) and the denoised view
(:func:`~mmcl.experiments.sweep.denoised_view`).

Every run of a sweep uses exactly the draw ``sample_synthetic(cfg, seed)`` (a test checks this
bit for bit), but the draw is made by rescaling one *unit* draw per shape and seed: every random
tensor of the data model is a standard normal times a scale (``xi = sigma_xi * g``,
``W0 = sigma0 * g``, ...), and the hard negatives for ``M`` are the first ``M`` of those for
``n/2``.  Sampling is the most expensive part of a small run, and a sweep over ``mu_norm``,
``sigma_eps``, ``tau``, ``C_mu``, ... then samples once per seed.

The rebuttal's "view of higher SNR" (``view_noise_scale``, lambda) gives single-modal learning the
positive ``x+ = [y mu, lambda (xi + eps)]``; it needs no change of the dynamics, since the
positive's noise patch is ``xi + eps``: the view is the draw with ``eps' = lambda (xi + eps) - xi``."""
from __future__ import annotations

import collections
import dataclasses
from typing import Optional, Tuple

import torch

from mmcl._utils import check_bool, check_number, resolve_device, resolve_dtype
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import OODData, SyntheticData, sample_ood, sample_synthetic

__all__ = ["denoised_view", "make_draw", "UnitDraws"]


def _unit_config(cfg: SyntheticConfig) -> SyntheticConfig:
    """``cfg`` with every scale 1 and, when balanced, all ``n/2`` hard negatives per anchor
    (the negatives for ``M`` are the first ``M`` of those: the same random keys, sorted)."""
    return cfg.replace(mu_norm=1.0, mu_tilde_norm=1.0, nu_norm=1.0, sigma_xi=1.0, sigma_xi_tilde=1.0,
                       sigma_eps=1.0, sigma0=1.0, M=cfg.n // 2 if cfg.balanced else cfg.M)


class UnitDraws:
    """Small LRU caches of unit draws -- the training part keyed by its shape and seed, the OOD
    part (which depends on ``d``, ``n_test``, ``n_heldout`` and the seed only) apart, so runs that
    differ in ``n`` share it -- and of their rescaled, cast tensors: most runs of a sweep share
    ``sigma_xi``, ``nu_norm``, ..., so each scaled tensor is made once per seed."""

    def __init__(self, capacity_mb: float = 384.0):
        self.capacity = capacity_mb * 2 ** 20  # bytes of float64 unit draws kept (their memos come on top)
        self._lru: "collections.OrderedDict[tuple, tuple]" = collections.OrderedDict()  # key -> (value, memo, bytes)

    def _get(self, key: tuple, make):
        if key in self._lru:
            self._lru.move_to_end(key)
        else:
            value = make()
            size = sum(t.numel() * t.element_size() for t in vars(value).values() if isinstance(t, torch.Tensor))
            self._lru[key] = (value, {}, size)
            while len(self._lru) > 1 and sum(e[2] for e in self._lru.values()) > self.capacity:
                self._lru.popitem(last=False)  # the least recently used; never the entry just made
        value, memo, _ = self._lru[key]
        return value, memo

    def train(self, cfg: SyntheticConfig, seed: int, span: bool = False) -> Tuple[SyntheticData, dict]:
        """The unit training draw (no OOD set) of ``cfg``'s shape and ``seed``, and its memo."""
        # a span draw whose nu has a part orthogonal to mu has one more fixed direction (another draw)
        key = ("train", cfg.n, cfg.d, cfg.d_tilde, cfg.m, cfg.balanced, None if cfg.balanced else cfg.M, seed, span,
               span and cfg.nu_sin != 0.0)
        return self._get(key, lambda: sample_synthetic(_unit_config(cfg), seed, dtype=torch.float64,
                                                       with_ood=False, span=span))

    def ood(self, cfg: SyntheticConfig, seed: int, span: bool = False) -> Tuple[OODData, dict]:
        """The unit OOD set of ``cfg``'s ``d``, ``n_test``, ``n_heldout``, ``nu_cos`` and ``seed`` (and, for a span
        draw, of ``n`` and ``m``, which set the basis' width), and its memo."""
        key = ("ood", cfg.d, cfg.n_test, cfg.n_heldout, seed, cfg.nu_cos) + ((cfg.n, cfg.m) if span else ())
        return self._get(key, lambda: sample_ood(_unit_config(cfg), seed, dtype=torch.float64, span=span))


def denoised_view(data: SyntheticData, view_noise_scale: float) -> SyntheticData:
    """The draw with the single-modal positive ``x+ = [y mu, lambda (xi + eps)]`` (lambda =
    ``view_noise_scale``; the paper's Eq. (5) is lambda = 1), by setting
    ``eps' = lambda (xi + eps) - xi`` (shapes unchanged, batched or not).  Everything else,
    including the multi-modal tensors, is the same object."""
    lam = view_noise_scale
    check_number("view_noise_scale", lam, 0, low_closed=True)
    if lam == 1:
        return data
    return dataclasses.replace(data, eps=lam * (data.xi + data.eps) - data.xi)


def make_draw(cfg: SyntheticConfig, seed: int, view_noise_scale: float = 1.0, *, dtype=torch.float32,
              device="cpu", units: Optional[UnitDraws] = None, span: bool = False) -> SyntheticData:
    """The draw ``sample_synthetic(cfg, seed, span=span)`` (identical bit for bit), made by rescaling
    a unit draw of the same shape and seed (see ``mmcl.experiments.sweep.draws``), with the denoised
    view of ``view_noise_scale`` applied.  ``units`` reuses unit draws across calls.  A span draw
    rescales the same way: its coordinates are the unit coordinates times each vector's scale."""
    check_bool("span", span)
    units = units if units is not None else UnitDraws()
    u, memo = units.train(cfg, seed, span)
    uo, memo_ood = units.ood(cfg, seed, span)
    dtype, device = resolve_dtype(dtype), resolve_device(device)

    def scaled(name: str, t: torch.Tensor, scale: Optional[float], store=memo) -> torch.Tensor:
        # float64 product first, then the cast: the operations of sample_synthetic, so the same bits
        key = (name, scale, dtype, device)
        if key not in store:
            store[key] = (t if scale is None else t * scale).to(device=device, dtype=dtype)
        return store[key]

    ood = OODData(nu=scaled("nu", uo.nu, cfg.nu_norm, memo_ood), y_fit=scaled("y_fit", uo.y_fit, None, memo_ood),
                  zeta_fit=scaled("zeta_fit", uo.zeta_fit, cfg.sigma_xi, memo_ood),
                  y_eval=scaled("y_eval", uo.y_eval, None, memo_ood),
                  zeta_eval=scaled("zeta_eval", uo.zeta_eval, cfg.sigma_xi, memo_ood))
    if view_noise_scale == 1:
        eps = scaled("eps", u.eps, cfg.sigma_eps)
    else:  # the view is formed in float64 from the scaled draw, then cast
        xi64, eps64 = u.xi * cfg.sigma_xi, u.eps * cfg.sigma_eps
        view = denoised_view(dataclasses.replace(u, xi=xi64, eps=eps64, ood=None), view_noise_scale)
        eps = view.eps.to(device=device, dtype=dtype)
    neg = memo.get(("negatives", cfg.M, device))
    if neg is None:
        neg = memo[("negatives", cfg.M, device)] = u.negatives[:, :cfg.M].contiguous().to(device)
    return SyntheticData(y=scaled("y", u.y, None), mu=scaled("mu", u.mu, cfg.mu_norm),
                         xi=scaled("xi", u.xi, cfg.sigma_xi), eps=eps, negatives=neg,
                         W0=scaled("W0", u.W0, cfg.sigma0), mu_tilde=scaled("mu_tilde", u.mu_tilde, cfg.mu_tilde_norm),
                         xi_tilde=scaled("xi_tilde", u.xi_tilde, cfg.sigma_xi_tilde),
                         W0_tilde=scaled("W0_tilde", u.W0_tilde, cfg.sigma0), ood=ood, **u._nominal())
