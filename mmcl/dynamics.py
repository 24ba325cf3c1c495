"""Gradient descent on the InfoNCE losses and the coefficient recursions (Sec. 3, Sec. 5).

One entry point, :func:`simulate`, three engines that must agree:

* ``"gd"`` -- the closed-form updates of Eq. (7) (single-modal) and Eq. (10) (multi-modal) on
  the weight matrices ``W (m, d)``; the coefficients ``gamma``/``rho`` are the components of
  each update along ``mu`` and the ``xi_i`` (Eq. 11).
* ``"autograd"`` -- ``loss.backward()`` on Eqs. (6)/(9) (:mod:`mmcl.losses`) with ``detach()``
  as the stop-gradient; ``gamma``/``rho`` by :func:`mmcl.decomposition.decompose`.
* ``"recursion"`` -- Lemma 5.1 (single) and Lemma 5.3 (multi): the coefficients alone, on Gram
  matrices, never forming ``W``: every inner product the updates need is linear in the
  coefficients, so a step costs ``O(m n^2)`` instead of ``O(m n d)``.

All engines accept a batch of draws (a leading ``B`` in :class:`~mmcl.data.SyntheticData`) and
run it as one tensor computation.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

import torch

from ._utils import resolve_device, resolve_dtype
from .config import SyntheticConfig
from .data import SyntheticData
from .decomposition import decomposition_basis
from . import losses

__all__ = ["Trajectory", "UpdateTerms", "DivergenceError", "simulate", "update_terms", "preactivations",
           "MODES", "ENGINES"]

MODES = ("single", "multi")
ENGINES = ("gd", "recursion", "autograd")


class DivergenceError(FloatingPointError):
    """Raised when the loss or the coefficients stop being finite during a run."""


@dataclass
class Trajectory:
    """A run of :func:`simulate`.  Shapes are for one draw; a batched run adds a leading ``B``.

    ``steps (K,)`` are the recorded steps (every step by default, so ``K = T + 1``):

    * ``loss (T+1,)`` -- the training loss at every step ``0..T``;
    * ``gamma (K, m)``, ``rho (K, m, n)`` -- signal learning and noise memorisation of Eq. (11);
    * ``gamma_tilde``, ``rho_tilde`` -- the same for the second network (multi mode), else None;
    * ``lprime (K, n)``, ``lprime_neg (K, n, M)`` -- the loss derivatives of Eq. (8) (positive and
      negatives' softmax weights), ``lprime_tilde``/``lprime_tilde_neg`` for the second network,
      when ``record_derivatives=True``;
    * ``W (m, d)``, ``W_tilde`` -- final weights (``gd`` and ``autograd`` only), and
      ``weights (K, m, d)``/``weights_tilde`` when ``keep_weights=True``.
    """

    mode: str
    engine: str
    steps: torch.Tensor
    loss: torch.Tensor
    gamma: torch.Tensor
    rho: torch.Tensor
    gamma_tilde: Optional[torch.Tensor] = None
    rho_tilde: Optional[torch.Tensor] = None
    lprime: Optional[torch.Tensor] = None
    lprime_neg: Optional[torch.Tensor] = None
    lprime_tilde: Optional[torch.Tensor] = None
    lprime_tilde_neg: Optional[torch.Tensor] = None
    W: Optional[torch.Tensor] = None
    W_tilde: Optional[torch.Tensor] = None
    weights: Optional[torch.Tensor] = None
    weights_tilde: Optional[torch.Tensor] = None
    lr: Optional[torch.Tensor] = None
    tau: Optional[torch.Tensor] = None

    @property
    def n_steps(self) -> int:
        return self.loss.shape[-1] - 1

    _PER_RECORD = ("gamma", "rho", "gamma_tilde", "rho_tilde", "lprime", "lprime_neg", "lprime_tilde",
                   "lprime_tilde_neg", "weights", "weights_tilde")

    def last(self) -> "Trajectory":
        """The same run reduced to its final recorded step (``K = 1``); ``loss`` stays whole.
        Used to score only the end of training with :func:`mmcl.evaluation.evaluate_all`."""
        axis = 1 if self.loss.dim() == 2 else 0
        fields = {name: (None if getattr(self, name) is None else getattr(self, name).narrow(axis, -1, 1))
                  for name in self._PER_RECORD}
        return dataclasses.replace(self, steps=self.steps[-1:], **fields)


@dataclass
class UpdateTerms:
    """One step of Lemma 5.1/5.3 at a given state, split into its parts (batched shapes).

    ``dgamma_pos``/``dgamma_neg (B, m)``: the positive and negative terms of the gamma update
    (Eq. 12), so that ``gamma(t+1) = gamma(t) + dgamma_pos - dgamma_neg``; ``drho (B, m, n)``:
    the rho update (Eq. 13); ``loss (B,)``; ``lprime (B, n)``, ``lprime_neg (B, n, M)``.
    The ``*_tilde`` fields are the second network's (multi mode), else None.
    """

    loss: torch.Tensor
    lprime: torch.Tensor
    lprime_neg: torch.Tensor
    dgamma_pos: torch.Tensor
    dgamma_neg: torch.Tensor
    drho: torch.Tensor
    lprime_tilde: Optional[torch.Tensor] = None
    lprime_tilde_neg: Optional[torch.Tensor] = None
    dgamma_pos_tilde: Optional[torch.Tensor] = None
    dgamma_neg_tilde: Optional[torch.Tensor] = None
    drho_tilde: Optional[torch.Tensor] = None


# --------------------------------------------------------------------------------------------
# The shared core: the loss derivatives and the bracket of Eqs. (7), (10), (12), (13)
# --------------------------------------------------------------------------------------------
def _scatter(vals: torch.Tensor, neg: torch.Tensor, n: int) -> torch.Tensor:
    """``vals (B, n, M)`` placed at columns ``neg (B, n, M)`` of a dense ``(B, n, n)`` zero matrix."""
    return torch.zeros(vals.shape[0], vals.shape[1], n, dtype=vals.dtype, device=vals.device).scatter_(2, neg, vals)


def _contrast(a, b, noise_pre, pos_noise, cand_noise, y, neg, tau):
    """InfoNCE of one direction, from preactivations, and the brackets of Eqs. (7)/(10).

    ``a (B, m)``: the anchor network's ``<w_r, mu>``, so the anchors' signal preactivations are
    ``y_i a_r``; ``b (B, m)``: the partner network's signal preactivation (``a`` itself in single
    mode, ``<w~_r, mu~>`` in multi mode), so a partner's signal activation is ``sigma(y_j b_r)``.
    ``noise_pre (B, m, n)``: ``<w_r, xi_i>``; ``pos_noise``/``cand_noise (B, m, n)``: the partners'
    noise activations (stop-gradient) for the positive and for all candidates, of which anchor
    ``i`` uses ``neg[:, i] (B, n, M)``.

    Every signal patch is ``+-mu`` and every negative has the opposite label (hard negatives,
    validated by :class:`SyntheticData`), so the signal parts reduce to sums over the two classes;
    the noise parts are products of ``(n, n)`` matrices.  Returns the per-anchor loss ``(B, n)``,
    ``l'_i (B, n)``, ``l'_{i,j} (B, n, M)``, the positive and negative terms of Eq. (12) before the
    factor ``eta ||mu||^2/(n m tau)`` ``(B, m)`` each, and the noise bracket times ``sigma'`` ``(B, m, n)``.
    """
    m = noise_pre.shape[1]
    pos = y > 0  # (B, n) bool
    A = losses.relu(torch.stack([a, -a], 1))  # (B, 2, m): anchor signal activations for y = +1, -1
    Bp = losses.relu(torch.stack([b, -b], 1))  # partner's
    C = A @ Bp.transpose(1, 2) / m  # C[s, s'] = Sim of a class-s anchor's and a class-s' partner's signal patches
    a_noise = losses.relu(noise_pre)
    sig_pos = torch.where(pos, C[:, :1, 0], C[:, 1:, 1])  # (B, n): partner of the same class
    sig_neg = torch.where(pos, C[:, :1, 1], C[:, 1:, 0])  # negatives have label -y_i
    s_pos = sig_pos + (a_noise * pos_noise).sum(1) / m
    S = torch.bmm(a_noise.transpose(1, 2), cand_noise) / m  # (B, n, n): noise part of Sim(anchor i, cand j)
    s_neg = torch.gather(S, 2, neg) + sig_neg[..., None]
    logp = torch.log_softmax(torch.cat([s_pos[..., None], s_neg], -1) / tau[:, None, None], -1)
    loss_i = -logp[..., 0]
    prob = logp.exp()
    lp, lpn = prob[..., 0], prob[..., 1:]
    # the signal bracket summed over i with weight y_i: (class +1 sum) - (class -1 sum)
    u = 1 - lp  # weight of the positive partner, (B, n)
    v = lpn.sum(-1)  # total weight of the negatives (all of label -y_i), (B, n)
    uv = torch.stack([u, v], 1)  # (B, 2, n)
    s_p = (uv * pos[:, None]).sum(-1)  # (B, 2): [sum_{y=+} u, sum_{y=+} v]
    s_m = uv.sum(-1) - s_p
    da_p, da_m = a > 0, a < 0  # sigma'(y_i a_r) for y_i = +1 / -1
    hb_p, hb_m = Bp[:, 0], Bp[:, 1]
    g_pos = da_p * hb_p * s_p[:, :1] - da_m * hb_m * s_m[:, :1]
    g_neg = da_p * hb_m * s_p[:, 1:] - da_m * hb_p * s_m[:, 1:]
    L = torch.zeros_like(S).scatter_(2, neg, lpn).transpose(1, 2)  # L[j, i] = l'_{i,j}
    c_noise = (u[:, None, :] * pos_noise - torch.bmm(cand_noise, L)) * (noise_pre > 0)
    return loss_i, lp, lpn, g_pos, g_neg, c_noise


def _terms(pre: dict, y, neg, lr, tau, mu2, xi2, mode, mu2_t=None, xi2_t=None) -> UpdateTerms:
    """Update terms from preactivations ``pre`` (``a (B, m)``, ``P``, ``Q (B, m, n)``, and
    ``at``, ``Pt`` in multi mode)."""
    n, m = y.shape[1], pre["a"].shape[1]
    step = (lr / (n * m * tau))[:, None]  # eta / (n m tau), (B, 1)
    if mode == "single":
        a_noise = losses.relu(pre["P"])
        loss_i, lp, lpn, gp, gn, cz = _contrast(pre["a"], pre["a"], pre["P"], losses.relu(pre["Q"]),
                                                a_noise, y, neg, tau)
        return UpdateTerms(loss=loss_i.mean(-1), lprime=lp, lprime_neg=lpn,
                           dgamma_pos=step * mu2[:, None] * gp, dgamma_neg=step * mu2[:, None] * gn,
                           drho=step[..., None] * xi2[:, None, :] * cz)
    h_noise, g_noise = losses.relu(pre["P"]), losses.relu(pre["Pt"])
    li, lp, lpn, gp, gn, cz = _contrast(pre["a"], pre["at"], pre["P"], g_noise, g_noise, y, neg, tau)
    lit, lpt, lpnt, gpt, gnt, czt = _contrast(pre["at"], pre["a"], pre["Pt"], h_noise, h_noise, y, neg, tau)
    return UpdateTerms(
        loss=(li + lit).mean(-1), lprime=lp, lprime_neg=lpn,
        dgamma_pos=step * mu2[:, None] * gp, dgamma_neg=step * mu2[:, None] * gn,
        drho=step[..., None] * xi2[:, None, :] * cz,
        lprime_tilde=lpt, lprime_tilde_neg=lpnt,
        dgamma_pos_tilde=step * mu2_t[:, None] * gpt, dgamma_neg_tilde=step * mu2_t[:, None] * gnt,
        drho_tilde=step[..., None] * xi2_t[:, None, :] * czt)


# --------------------------------------------------------------------------------------------
# Gram matrices: the closed form of the recursion
# --------------------------------------------------------------------------------------------
class _Grams:
    """Everything the recursion needs, computed once per run: ``O(n^2 d)``."""

    def __init__(self, data: SyntheticData, mode: str):
        self.mode = mode
        self.mu2 = (data.mu * data.mu).sum(-1)  # (B,)
        self.xi2 = (data.xi * data.xi).sum(-1)  # (B, n)
        self.g_mu_xi = torch.einsum("bd,bnd->bn", data.mu, data.xi)
        self.G = data.xi @ data.xi.transpose(1, 2)  # <xi_i, xi_k>
        self.a0 = torch.einsum("bmd,bd->bm", data.W0, data.mu)
        self.P0 = data.W0 @ data.xi.transpose(1, 2)
        if mode == "single":
            z = data.xi + data.eps
            # [<xi_i, xi_k> | <xi_i, xi_k + eps_k>] side by side, so P and Q come from one product
            self.GK = torch.cat([self.G, data.xi @ z.transpose(1, 2)], -1)  # (B, n, 2n)
            self.g_mu_xz = torch.cat([self.g_mu_xi, torch.einsum("bd,bnd->bn", data.mu, z)], -1)
            self.PQ0 = torch.cat([self.P0, data.W0 @ z.transpose(1, 2)], -1)
        else:
            self.mu2_t = (data.mu_tilde * data.mu_tilde).sum(-1)
            self.xi2_t = (data.xi_tilde * data.xi_tilde).sum(-1)
            self.g_mu_xi_t = torch.einsum("bd,bnd->bn", data.mu_tilde, data.xi_tilde)
            self.G_t = data.xi_tilde @ data.xi_tilde.transpose(1, 2)
            self.a0_t = torch.einsum("bmd,bd->bm", data.W0_tilde, data.mu_tilde)
            self.P0_t = data.W0_tilde @ data.xi_tilde.transpose(1, 2)

    def preacts(self, gamma, rho, gamma_t=None, rho_t=None) -> dict:
        """Inner products of Eq. (11)'s weights with ``mu``, ``xi_k`` (and ``xi_k + eps_k``)."""
        rh = rho / self.xi2[:, None, :]
        gh = gamma / self.mu2[:, None]
        out = {"a": self.a0 + gamma + (rh * self.g_mu_xi[:, None, :]).sum(-1)}
        if self.mode == "single":
            PQ = torch.baddbmm(self.PQ0 + gh[..., None] * self.g_mu_xz[:, None, :], rh, self.GK)
            out["P"], out["Q"] = PQ.split(self.G.shape[-1], dim=-1)
        else:
            out["P"] = torch.baddbmm(self.P0 + gh[..., None] * self.g_mu_xi[:, None, :], rh, self.G)
            rht = rho_t / self.xi2_t[:, None, :]
            ght = gamma_t / self.mu2_t[:, None]
            out["at"] = self.a0_t + gamma_t + (rht * self.g_mu_xi_t[:, None, :]).sum(-1)
            out["Pt"] = torch.baddbmm(self.P0_t + ght[..., None] * self.g_mu_xi_t[:, None, :], rht, self.G_t)
        return out


def _weight_preacts(data: SyntheticData, mode: str, W, Wt=None) -> dict:
    out = {"a": torch.einsum("bmd,bd->bm", W, data.mu), "P": W @ data.xi.transpose(1, 2)}
    if mode == "single":
        out["Q"] = W @ (data.xi + data.eps).transpose(1, 2)
    else:
        out["at"] = torch.einsum("bmd,bd->bm", Wt, data.mu_tilde)
        out["Pt"] = Wt @ data.xi_tilde.transpose(1, 2)
    return out


# --------------------------------------------------------------------------------------------
# Argument handling
# --------------------------------------------------------------------------------------------
def _check_mode_engine(mode, engine):
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is unknown; valid: {', '.join(map(repr, MODES))}")
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is unknown; valid: {', '.join(map(repr, ENGINES))}")


def _batched(data: SyntheticData) -> SyntheticData:
    return data if data.batched else SyntheticData.stack([data])


def _scalars(cfg, B: int, data: SyntheticData, dtype, device):
    cfgs = [cfg] if isinstance(cfg, SyntheticConfig) else list(cfg)
    if not cfgs or not all(isinstance(c, SyntheticConfig) for c in cfgs):
        raise ValueError("cfg must be a SyntheticConfig or a sequence of them (one per batch element)")
    if len(cfgs) == 1:
        cfgs = cfgs * B
    if len(cfgs) != B:
        raise ValueError(f"cfg: got {len(cfgs)} configs for a batch of {B} draws")
    for c in cfgs:
        for name, have in (("n", data.n), ("d", data.d), ("m", data.m), ("M", data.M)):
            if getattr(c, name) != have:
                raise ValueError(f"SyntheticConfig.{name}={getattr(c, name)} does not match the data ({name}={have})")
        if data.has_tilde and c.d_tilde != data.mu_tilde.shape[-1]:
            raise ValueError(f"SyntheticConfig.d_tilde={c.d_tilde} does not match the data "
                             f"(d_tilde={data.mu_tilde.shape[-1]})")
    epochs = {c.n_epochs for c in cfgs}
    if len(epochs) > 1:
        raise ValueError(f"SyntheticConfig.n_epochs must be equal across a batch, got {sorted(epochs)}")
    lr = torch.tensor([c.lr for c in cfgs], dtype=dtype, device=device)
    tau = torch.tensor([c.tau for c in cfgs], dtype=dtype, device=device)
    return lr, tau, epochs.pop()


def _finite_or_raise(loss_hist, upto, mode, engine, lr, tau, extra=()):
    bad = ~torch.isfinite(loss_hist[:, :upto + 1])
    for t in extra:
        if not bool(torch.isfinite(t).all()):
            bad[:, upto] = True
    if bool(bad.any()):
        step = int(bad.any(0).nonzero()[0])
        b = int(bad[:, step].nonzero()[0])
        raise DivergenceError(
            f"the {mode}-modal loss became non-finite at step {step} (engine={engine!r}, batch element {b}, "
            f"lr={float(lr[b]):g}, tau={float(tau[b]):g}): the step is most likely too large for this "
            f"temperature and scale; reduce lr, raise tau or lower sigma0/mu_norm")


# --------------------------------------------------------------------------------------------
# The public entry points
# --------------------------------------------------------------------------------------------
def update_terms(data: SyntheticData, cfg: SyntheticConfig, mode: str, gamma, rho,
                 gamma_tilde=None, rho_tilde=None) -> UpdateTerms:
    """The terms of one step of Lemma 5.1 (single) or Lemma 5.3 (multi) at the state given by the
    coefficients (shapes of one draw, or batched with a leading ``B``).  Used by the recursion
    engine at every step; exposed so that its parts (e.g. the negative term of Eq. (12)) can be
    inspected."""
    _check_mode_engine(mode, "recursion")
    unb = not data.batched
    bd = _batched(data)
    if unb:
        gamma, rho = gamma[None], rho[None]
        gamma_tilde = None if gamma_tilde is None else gamma_tilde[None]
        rho_tilde = None if rho_tilde is None else rho_tilde[None]
    if mode == "multi" and (gamma_tilde is None or rho_tilde is None or not data.has_tilde):
        raise ValueError("update_terms: mode='multi' needs gamma_tilde, rho_tilde and the second modality")
    lr, tau, _ = _scalars(cfg, bd.y.shape[0], bd, bd.dtype, bd.device)
    grams = _Grams(bd, mode)
    pre = grams.preacts(gamma, rho, gamma_tilde, rho_tilde)
    t = _terms(pre, bd.y, bd.negatives, lr, tau, grams.mu2, grams.xi2, mode,
               getattr(grams, "mu2_t", None), getattr(grams, "xi2_t", None))
    if unb:
        t = UpdateTerms(**{k: (None if v is None else v[0]) for k, v in t.__dict__.items()})
    return t


def preactivations(data: SyntheticData, gamma, rho, vectors: torch.Tensor, tilde: bool = False) -> torch.Tensor:
    """``<w_r(t), v>`` for the rows ``v`` of ``vectors (..., k, d)`` from the coefficients of
    Eq. (11), without forming ``W``: ``<w_r(0), v> + gamma_r <mu, v>/||mu||^2 +
    sum_i rho_{r,i} <xi_i, v>/||xi_i||^2``.

    ``gamma (..., m)``/``rho (..., m, n)`` may carry extra leading dimensions (e.g. time) before
    the batch ones of ``data``; the result is ``(..., m, k)``.  ``tilde=True`` uses the second
    modality's ``mu~``, ``xi~``, ``W0~``.
    """
    mu, xi, W0 = (data.mu_tilde, data.xi_tilde, data.W0_tilde) if tilde else (data.mu, data.xi, data.W0)
    v = vectors
    base = W0 @ v.transpose(-1, -2)  # (B.., m, k)
    mv = (mu[..., None, :] * v).sum(-1) / (mu * mu).sum(-1, keepdim=True)  # (B.., k)
    xv = (xi @ v.transpose(-1, -2)) / (xi * xi).sum(-1)[..., None]  # (B.., n, k)
    return base + gamma[..., None] * mv[..., None, :] + rho @ xv


def simulate(cfg: Union[SyntheticConfig, Sequence[SyntheticConfig]], data: SyntheticData,
             mode: str = "single", engine: str = "recursion", *, dtype=None, device=None,
             record_derivatives: bool = False, record_every: int = 1, keep_weights: bool = False,
             progress: bool = False) -> Trajectory:
    """Run ``cfg.n_epochs`` steps of full-batch gradient descent on the single-modal loss (Eq. 6)
    or the multi-modal loss (Eq. 9) from the initial weights in ``data``.

    ``engine``: ``"gd"`` (Eqs. 7/10), ``"autograd"`` (backward on Eqs. 6/9) or ``"recursion"``
    (Lemmas 5.1/5.3).  ``data`` may be a batch (leading ``B``); ``cfg`` may then be a list of
    configs, one per draw, differing in ``lr`` and ``tau``.  ``dtype``/``device`` default to the
    data's (float32 from :func:`mmcl.data.sample_synthetic`).  Raises :class:`DivergenceError` with the step
    number if the loss stops being finite.
    """
    _check_mode_engine(mode, engine)
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if isinstance(record_every, bool) or not isinstance(record_every, int) or record_every < 1:
        raise ValueError(f"record_every must be a positive integer, got {record_every!r}")
    if mode == "multi" and not data.has_tilde:
        raise ValueError("mode='multi' needs the second modality: data.mu_tilde, xi_tilde, W0_tilde are None")
    if keep_weights and engine == "recursion":
        raise ValueError("keep_weights=True needs engine='gd' or 'autograd'; the recursion never forms W")
    dtype = resolve_dtype(dtype) if dtype is not None else data.dtype
    device = resolve_device(device) if device is not None else data.device
    unbatched = not data.batched
    bd = _batched(data).to(device=device, dtype=dtype)
    B, n, m = bd.y.shape[0], bd.n, bd.m
    lr, tau, T = _scalars(cfg, B, bd, dtype, device)
    rec = list(range(0, T + 1, record_every))
    if rec[-1] != T:
        rec.append(T)
    rec_idx = {t: k for k, t in enumerate(rec)}
    K = len(rec)
    z = dict(dtype=dtype, device=device)
    multi = mode == "multi"

    loss = torch.empty(B, T + 1, **z)
    gam = torch.zeros(B, m, **z)
    rho = torch.zeros(B, m, n, **z)
    gam_t = torch.zeros(B, m, **z) if multi else None
    rho_t = torch.zeros(B, m, n, **z) if multi else None
    out = {"gamma": torch.empty(B, K, m, **z), "rho": torch.empty(B, K, m, n, **z)}
    if multi:
        out["gamma_tilde"] = torch.empty(B, K, m, **z)
        out["rho_tilde"] = torch.empty(B, K, m, n, **z)
    if record_derivatives:
        out["lprime"] = torch.empty(B, K, n, **z)
        out["lprime_neg"] = torch.empty(B, K, n, bd.M, **z)
        if multi:
            out["lprime_tilde"] = torch.empty(B, K, n, **z)
            out["lprime_tilde_neg"] = torch.empty(B, K, n, bd.M, **z)

    W = bd.W0.clone() if engine != "recursion" else None
    Wt = bd.W0_tilde.clone() if (engine != "recursion" and multi) else None
    if keep_weights:
        out["weights"] = torch.empty(B, K, m, bd.d, **z)
        if multi:
            out["weights_tilde"] = torch.empty(B, K, m, Wt.shape[-1], **z)
    grams = _Grams(bd, mode) if engine == "recursion" else None
    mu2 = (bd.mu * bd.mu).sum(-1)
    xi2 = (bd.xi * bd.xi).sum(-1)
    mu2_t = (bd.mu_tilde * bd.mu_tilde).sum(-1) if multi else None
    xi2_t = (bd.xi_tilde * bd.xi_tilde).sum(-1) if multi else None
    pinv = pinv_t = None
    if engine == "autograd":
        pinv = torch.linalg.pinv(decomposition_basis(bd.mu, bd.xi))  # (B, n+1, d)
        if multi:
            pinv_t = torch.linalg.pinv(decomposition_basis(bd.mu_tilde, bd.xi_tilde))

    iterator = range(T + 1)
    if progress:
        from tqdm.auto import tqdm
        iterator = tqdm(iterator, desc=f"{mode}/{engine}", unit="step", leave=False)
    check_every = 20
    for t in iterator:
        last = t == T
        if engine == "autograd":
            W.requires_grad_(True)
            if multi:
                Wt.requires_grad_(True)
                lh, lg = losses.multi_modal_logits(W, Wt, bd, tau)
                total = losses.info_nce(lh).mean(-1) + losses.info_nce(lg).mean(-1)
                derivs = (torch.softmax(lh.detach(), -1), torch.softmax(lg.detach(), -1))
            else:
                lh = losses.single_modal_logits(W, bd, tau)
                total = losses.info_nce(lh).mean(-1)
                derivs = (torch.softmax(lh.detach(), -1), None)
            loss[:, t] = total.detach()
            if t in rec_idx:
                k = rec_idx[t]
                with torch.no_grad():
                    c = (W - bd.W0) @ pinv.transpose(1, 2)
                    gam, rho = c[..., 0], c[..., 1:]
                    if multi:
                        ct = (Wt - bd.W0_tilde) @ pinv_t.transpose(1, 2)
                        gam_t, rho_t = ct[..., 0], ct[..., 1:]
                if record_derivatives:
                    out["lprime"][:, k], out["lprime_neg"][:, k] = derivs[0][..., 0], derivs[0][..., 1:]
                    if multi:
                        out["lprime_tilde"][:, k] = derivs[1][..., 0]
                        out["lprime_tilde_neg"][:, k] = derivs[1][..., 1:]
            if not last:
                params = [W, Wt] if multi else [W]
                grads = torch.autograd.grad(total.sum(), params)
                with torch.no_grad():
                    W = W - lr[:, None, None] * grads[0]
                    if multi:
                        Wt = Wt - lr[:, None, None] * grads[1]
            else:
                W = W.detach()
                Wt = Wt.detach() if multi else None
        else:
            pre = grams.preacts(gam, rho, gam_t, rho_t) if engine == "recursion" else _weight_preacts(bd, mode, W, Wt)
            terms = _terms(pre, bd.y, bd.negatives, lr, tau, mu2, xi2, mode, mu2_t, xi2_t)
            loss[:, t] = terms.loss
            if t in rec_idx and record_derivatives:
                k = rec_idx[t]
                out["lprime"][:, k], out["lprime_neg"][:, k] = terms.lprime, terms.lprime_neg
                if multi:
                    out["lprime_tilde"][:, k], out["lprime_tilde_neg"][:, k] = terms.lprime_tilde, terms.lprime_tilde_neg
        if t in rec_idx:
            k = rec_idx[t]
            out["gamma"][:, k], out["rho"][:, k] = gam, rho
            if multi:
                out["gamma_tilde"][:, k], out["rho_tilde"][:, k] = gam_t, rho_t
            if keep_weights:
                out["weights"][:, k] = W
                if multi:
                    out["weights_tilde"][:, k] = Wt
        if t % check_every == 0 or last:
            _finite_or_raise(loss, t, mode, engine, lr, tau)
        if last or engine == "autograd":
            continue
        dg = terms.dgamma_pos - terms.dgamma_neg
        if engine == "gd":
            # Eq. (7)/(10): the update is sum_i c_sig y_i mu + sum_i c_noise xi_i; its coefficients
            # along mu/||mu||^2 and xi_i/||xi_i||^2 are exactly dgamma and drho.
            W = W + (dg / mu2[:, None])[..., None] * bd.mu[:, None, :] + (terms.drho / xi2[:, None, :]) @ bd.xi
            if multi:
                dgt = terms.dgamma_pos_tilde - terms.dgamma_neg_tilde
                Wt = Wt + (dgt / mu2_t[:, None])[..., None] * bd.mu_tilde[:, None, :] \
                    + (terms.drho_tilde / xi2_t[:, None, :]) @ bd.xi_tilde
        gam = gam + dg
        rho = rho + terms.drho
        if multi:
            gam_t = gam_t + terms.dgamma_pos_tilde - terms.dgamma_neg_tilde
            rho_t = rho_t + terms.drho_tilde

    traj = Trajectory(mode=mode, engine=engine, steps=torch.tensor(rec, device=device), loss=loss,
                      W=W, W_tilde=Wt, lr=lr, tau=tau, **out)
    if unbatched:
        for name in ("loss", "gamma", "rho", "gamma_tilde", "rho_tilde", "lprime", "lprime_neg", "lprime_tilde",
                     "lprime_tilde_neg", "W", "W_tilde", "weights", "weights_tilde", "lr", "tau"):
            v = getattr(traj, name)
            if v is not None:
                setattr(traj, name, v[0])
    return traj
