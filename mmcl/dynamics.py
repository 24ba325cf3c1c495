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
import math
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
      ``weights (K, m, d)``/``weights_tilde`` when ``keep_weights=True``;
    * ``t1_steps (S,)``, ``t1_stat (S,)`` -- with ``simulate(..., t1_every=k)``, the statistic whose
      crossing :func:`mmcl.theory.measured_t1` finds, at every ``k``-th step and the last, whatever
      ``record_every``: ``min_i max_r rho_{r,i}`` (single mode) or ``max_r gamma_r`` (multi mode).
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
    t1_steps: Optional[torch.Tensor] = None
    t1_stat: Optional[torch.Tensor] = None

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
# The shared core: the loss derivatives and the brackets of Eqs. (7), (10), (12), (13)
# --------------------------------------------------------------------------------------------
# Both closed-form engines describe a network by its preactivations on the patches that the
# updates need, ``X (B, m, 2 + k n)``, columns ``[<w_r, mu>, -<w_r, mu>, <w_r, xi_1..n>
# (, <w_r, xi_1..n + eps_1..n>)]``, and return the update of its coefficients in the scaled
# basis ``[mu/||mu||^2, xi_1/||xi_1||^2, ...]`` of Eq. (11): ``dc = [dgamma/||mu||^2, drho_i/||xi_i||^2]``.
# With that scaling the weights are ``w_r = w_r(0) + c_r0 mu + sum_i c_ri xi_i``, so the
# recursion's preactivations are one product with a Gram matrix and gradient descent's update is
# one product with the basis.


_LN2 = math.log(2.0)
_LOG2E = math.log2(math.e)  # logits are kept in base 2 (times log2(e)): torch's exp2 is 1.7x faster than
# exp on the CPU (measured: 100k entries, 48 against 83 us), and exp of -inf takes a path 5x slower still
_EXP2_FLOOR = -80.0 * _LOG2E  # exponents are clamped here: e^-80 ~ 2e-35 is below every rounding of Z >= 1,
# and denormal results of exp2 (exponents below -126 in float32) take a path ten times slower on CPUs


class _Contrast:
    """Constants of the InfoNCE terms for a batch, computed once per run.

    The hard negatives are held as dense ``(B, n, n)`` matrices -- ``offset`` is 0 where ``j``
    is in ``N_i`` and ``-inf`` elsewhere, ``floor`` the exponent floor and ``-inf`` -- so that the
    logits of all negatives are one masked ``(n, n)`` matrix and their weights ``l'_{i,j}`` enter
    the noise bracket through one matrix product.  Indices never repeat within an anchor's set
    (checked by :class:`~mmcl.data.SyntheticData`), so the mask counts each negative once, as the
    sum over ``N_i`` does.  Masks are floats: boolean tensors take slow paths in the elementwise
    kernels.  Logits are in base 2 (``scale`` carries ``log2(e)``), see ``_LOG2E``.
    """

    def __init__(self, data: SyntheticData, lr: torch.Tensor, tau: torch.Tensor, copies: int = 1):
        # copies=2 (multi mode): the two networks are stacked along the batch, [h of every draw, g of every draw]
        B, n, m = data.y.shape[0], data.n, data.m
        z = dict(dtype=data.dtype, device=data.device)
        pos = data.y > 0
        self.Y = torch.stack([pos, ~pos], -1).to(data.dtype).repeat(copies, 1, 1)  # (B, n, 2): class one-hot [+1, -1]
        self.negatives = data.negatives.repeat(copies, 1, 1)
        keep = torch.zeros(B, n, n, dtype=torch.bool, device=data.device).scatter_(2, data.negatives, True)
        keep = keep.repeat(copies, 1, 1)
        self.offset = torch.zeros(keep.shape, **z).masked_fill_(~keep, float("-inf"))  # not a large finite
        # number: a diverging run's logits grow past any such number before they overflow
        self.floor = torch.full(keep.shape, _EXP2_FLOOR, **z).masked_fill_(~keep, float("-inf"))  # exp2(-inf) = 0
        self.scale = (_LOG2E / (m * tau)).repeat(copies)  # (B,): Sim (Eq. 4, with its 1/m) / tau is the logit, in base 2
        self.scale3 = self.scale[:, None, None]
        self.Ys = self.Y * self.scale3
        self.Ys_signed = self.Ys * torch.tensor([1.0, -1.0], dtype=data.dtype, device=data.device)  # class s times s
        self.step = (lr / (n * m * tau)).repeat(copies)  # (B,): eta / (n m tau) of Eqs. (7), (10)
        self.swap = torch.tensor([1, 0], device=data.device)  # exchanges the halves of a stacked batch

    def softmax(self, logits_neg: torch.Tensor, logit_pos: torch.Tensor):
        """Per-anchor InfoNCE from the negative logits ``(B, n, n)`` (``offset`` added) and the
        positive logits ``(B, n)``, by log-sum-exp.  Returns ``loss_i (B, n)`` and the unnormalised
        weights ``E (B, n, n)``, ``e0 (B, n)``, with ``Es = E.sum(-1)`` and ``Z = e0 + Es``:
        ``l'_{i,j} = E_ij / Z_i``, ``l'_i = e0_i / Z_i`` and ``1 - l'_i = Es_i / Z_i``, which is
        summed directly rather than formed as a difference (``l'_i -> 1`` as training converges).
        ``logits_neg`` is overwritten.  Logits are in base 2: ``E = 2^(logit - max)``, and the loss is
        ``ln 2 (log2 Z + max - logit_pos)``.  The floor (``-inf`` off ``N_i``) replaces a clamp and a
        multiplication by a 0/1 mask."""
        mx = torch.maximum(logits_neg.amax(-1), logit_pos)
        E = torch.maximum(logits_neg.sub_(mx[..., None]), self.floor, out=logits_neg).exp2_()
        e0 = (logit_pos - mx).clamp_min_(_EXP2_FLOOR).exp2_()
        Es = E.sum(-1)
        Z = e0 + Es
        return torch.log2(Z).add_(mx).sub_(logit_pos).mul_(_LN2), E, e0, Es, Z, self.step[:, None] / Z

    @staticmethod
    def noise_update(E, Es, w, partner, cand, active, out=None):
        """``drho_{r,i}/||xi_i||^2`` of Eq. (13): ``eta/(n m tau) [(1 - l'_i) sigma(<w_r, partner_i>)
        - sum_j l'_{i,j} sigma(<w_r, cand_j>)] sigma'(<w_r, xi_i>)``; ``partner``/``cand (B, m, n)``
        are the stop-gradient activations, ``active (B, m, n)`` is ``sigma'`` (1 or 0) of the anchors'
        noise preactivations, ``w = eta/(n m tau Z_i)`` (from :meth:`softmax`)."""
        bracket = torch.mul(partner, Es[:, None, :], out=out).baddbmm_(cand, E.transpose(1, 2), alpha=-1)  # times Z_i
        return bracket.mul_(w[:, None, :]).mul_(active)

    def class_sums(self, Es, w):
        """``U (B, 2)``: the sums of ``1 - l'_i = Es_i/Z_i`` over the anchors of class +1 and of
        class -1, times ``eta/(n m tau)``.  ``1 - l'_i`` is also the total weight of anchor ``i``'s
        negatives, so with hard negatives (all of label ``-y_i``) it is the only weight the signal
        bracket of Eq. (12) needs."""
        return torch.bmm((Es * w)[:, None, :], self.Y)[:, 0]

    @staticmethod
    def signal_update(b, slopes, U):
        """``dgamma_r/||mu||^2`` of Eq. (12), positive minus negative term, with ``b`` the partner's
        signal preactivation, ``slopes (B, m, 2)`` the anchor's ``[sigma'(a_r), sigma'(-a_r)]``
        (``a_r = <w_r, mu>``) and ``U`` from :meth:`class_sums`: anchors of class ``s`` contribute
        ``sigma'(s a_r) (sigma(s b_r) - sigma(-s b_r)) = sigma'(s a_r) s b_r``."""
        return b * torch.bmm(slopes, U[..., None])[..., 0]


def _signal_terms(a, b, U):
    """The positive and negative terms of Eq. (12) apart, divided by ``||mu||^2`` (``U`` from
    :meth:`_Contrast.class_sums` carries ``eta/(n m tau)``): the partners of class ``s``
    contribute ``sigma(s b)``, the negatives (class ``-s``) ``sigma(-s b)``."""
    bp, bm = losses.relu(b), losses.relu(-b)
    up, um = U[:, :1], U[:, 1:]
    pos = (a > 0) * bp * up - (a < 0) * bm * um
    neg = (a > 0) * bm * up - (a < 0) * bp * um
    return pos, neg


class _Workspace:
    """The large temporaries of a step, allocated once per run and reused by name at every step.
    A step's matrices are a few MB for a batch; allocated afresh, the allocator hands such blocks
    back to the operating system and every step pays the page faults of touching them again
    (measured: a quarter of a multi-modal step).  ``ws(name, shape)`` returns the buffer, of the
    dtype and device of ``like``."""

    def __init__(self, like: torch.Tensor):
        self._like, self._buffers, self._views = like, {}, {}

    def __call__(self, name: str, shape) -> torch.Tensor:
        buf = self._buffers.get((name, shape))
        if buf is None:
            buf = self._buffers[(name, shape)] = self._like.new_empty(shape)
        return buf

    def views(self, X: torch.Tensor, make):
        """``make()`` -- the slices of this workspace's buffers and of ``X`` that a step reads -- made
        at the first step and returned again while the step is given the same ``X`` (both engines
        keep one ``X`` for the whole run).  Alone, a step is bound by the cost of PyTorch calls, and
        a slice costs as much as a small product."""
        if self._views.get("X") is not X:
            self._views = {"X": X, "views": make()}
        return self._views["views"]


def _step_single(k: _Contrast, X: torch.Tensor, n: int, ws: _Workspace, want: bool = False):
    """One step of Eq. (7) / Lemma 5.1 from ``X = [a, -a, P, Q] (B, m, 2 + 2n)``.  Returns the
    per-anchor loss, the coefficient update ``dc (B, m, 1 + n)`` and, with ``want``, the pieces
    :func:`update_terms` reports.  The returned tensors may be ``ws``'s buffers: use them before
    the next step."""
    B, m = X.shape[0], X.shape[1]

    def views():
        R, slopes, ans = ws("R", X.shape), ws("slopes", X.shape), ws("ans", (B, m, n))
        # sigma of [a, -a], of the anchors' noise, of the positives' (xi_i + eps_i); sigma' of the first two
        return (R, slopes, R[..., :2], R[..., 2:2 + n], R[..., 2 + n:], slopes[..., :2], slopes[..., 2:2 + n],
                X[..., 0], ans, ans.transpose(1, 2))

    R, slopes, sig, an, pn, sig_slopes, active, a, ans, ansT = ws.views(X, views)
    torch.clamp_min(X, 0.0, out=R)  # sigma (losses.relu)
    torch.sign(R, out=slopes)  # sigma' = 1[z > 0], as floats
    q = sig.square().sum(1)  # (B, 2): sum_r sigma(+-a_r)^2; a class-s anchor and its positive share sigma(s a)
    # negatives have label -y_i: sigma(y_i a) sigma(-y_i a) = 0, so their signal similarity vanishes
    torch.mul(an, k.scale3, out=ans)
    logit_pos = torch.mul(ans, pn, out=ws("prod", (B, m, n))).sum(1).add_(torch.bmm(k.Ys, q[..., None])[..., 0])
    logits = torch.baddbmm(k.offset, ansT, an, out=ws("logits", k.offset.shape))
    loss_i, E, e0, Es, Z, w = k.softmax(logits, logit_pos)
    U = k.class_sums(Es, w)
    noise = k.noise_update(E, Es, w, pn, an, active, out=ws("noise", (B, m, n)))
    dc = torch.cat([k.signal_update(a, sig_slopes, U)[..., None], noise], -1, out=ws("dc", (B, m, 1 + n)))
    return loss_i, dc, ((E, e0, Z, U, a, a),) if want else None


def _step_multi(k: _Contrast, X: torch.Tensor, n: int, ws: _Workspace, want: bool = False):
    """One step of Eq. (10) / Lemma 5.3 for both networks at once: ``X (2B, m, 2 + n)`` stacks
    ``[a, -a, P]`` of the first network (rows ``:B``) over ``[a~, -a~, P~]`` of the second, and
    ``k`` was built with ``copies=2``.  The loss is symmetric: each network is the anchor of one
    direction and supplies the other's partners and negatives (with stop-gradient), so both
    directions are the same computation with the roles swapped, i.e. against ``X`` with its two
    halves exchanged.  A pair's positive similarity is the same seen from either side, and so are
    the negatives' similarities (with the same temperature): the second direction's matrix of
    them is the first's transpose, one product for both."""
    B2, m = X.shape[0], X.shape[1]
    B = B2 // 2

    def views():
        R, slopes, Rp, ows = ws("R", X.shape), ws("slopes", X.shape), ws("partner", X.shape), ws("ows", (B, m, n))
        logits = ws("logits", k.offset.shape)
        # Rp: the partner network's activations, R with its two halves exchanged
        return (R, slopes, R.view(2, -1), Rp, Rp.view(2, -1), R[..., :2], R[:B, :, 2:], R[B:, :, 2:], Rp[..., 2:],
                slopes[..., :2], slopes[..., 2:], X[..., 0], X[..., 0].view(2, B, m), ows, ows.transpose(1, 2),
                logits, logits[:B], logits[B:], k.offset[:B], k.offset[B:], k.scale3[:B])

    (R, slopes, R2, Rp, Rp2, sig, own_h, own_g, partner, sig_slopes, active, a, a2, ows, owsT,
     logits, logits_h, logits_g, offset_h, offset_g, scale_h) = ws.views(X, views)
    torch.clamp_min(X, 0.0, out=R)
    torch.sign(R, out=slopes)
    torch.index_select(R2, 0, k.swap, out=Rp2)
    b = torch.index_select(a2, 0, k.swap).view(B2, m)  # the partner's <w~_r, mu~> (resp. <w_r, mu>)
    # Signal similarities: a class-s anchor meets its positive (class s) and its negatives (all of
    # class -s).  InfoNCE is unchanged when all of an anchor's logits move by the same amount, so
    # the negatives' signal logit is subtracted from the positive one instead of being added to
    # n^2 entries; what is left is sum_r sigma(s a_r) (sigma(s b_r) - sigma(-s b_r)) = s sum_r sigma(s a_r) b_r.
    D = torch.bmm(sig.transpose(1, 2), b[..., None])  # (2B, 2, 1): sum_r sigma(+-a_r) b_r
    torch.mul(own_h, scale_h, out=ows)  # the first network's noise activations over m tau (scale_h = scale_g)
    pair = torch.mul(ows, own_g, out=ws("prod", (B, m, n))).sum(1)  # (B, n): noise part of <h(x_i), g(x~_i)>
    logit_pos = torch.bmm(k.Ys_signed, D)[..., 0]
    logit_pos.view(2, B, n).add_(pair)
    C = torch.bmm(owsT, own_g, out=ws("C", (B, n, n)))  # C_ij: h's anchor i, g's x~_j; g's anchors see C^T
    torch.add(C, offset_h, out=logits_h)
    torch.add(C.transpose(1, 2), offset_g, out=logits_g)
    loss_i, E, e0, Es, Z, w = k.softmax(logits, logit_pos)
    U = k.class_sums(Es, w)
    noise = k.noise_update(E, Es, w, partner, partner, active, out=ws("noise", (B2, m, n)))
    dc = torch.cat([k.signal_update(b, sig_slopes, U)[..., None], noise], -1, out=ws("dc", (B2, m, 1 + n)))
    loss_i = loss_i.view(2, B, n).sum(0)  # the two directions of Eq. (9)
    return loss_i, dc, ((E, e0, Z, U, a, b),) if want else None


# --------------------------------------------------------------------------------------------
# The two closed-form engines' views of a network
# --------------------------------------------------------------------------------------------
class _Network:
    """One network (``W`` or ``W~``) of a batch: its patches ``mu``, ``xi`` (and the augmentation
    ``eps`` in single mode), its initial weights, and ``norms = [||mu||^2, ||xi_1||^2, ...]``,
    which turn the scaled coefficients into ``gamma``, ``rho``.

    Two stacks of rows define both closed-form engines: ``patches (B, 2 + k n, d)``,
    ``[mu, -mu, xi_1..n (, xi_1..n + eps_1..n)]``, whose products with ``w_r`` are the columns of
    ``X``, and the ``basis [mu, xi_1..n] (B, 1 + n, d)`` of the update (Eqs. 7/10: a combination
    of ``mu`` and the ``xi_i`` with the scaled coefficients ``dc = [dgamma/||mu||^2, drho_i/||xi_i||^2]``).
    ``gd`` takes ``X = W patches^T`` and ``W += dc basis`` at every step; the recursion takes
    both products once, with ``W(0)`` and with the basis (:class:`_Grams`)."""

    def __init__(self, mu, xi, W0, eps=None):
        self.mu, self.xi, self.W0, self.eps = mu, xi, W0, eps
        self.norms = torch.cat([(mu * mu).sum(-1)[:, None], (xi * xi).sum(-1)], -1)  # (B, 1 + n)
        m = mu[:, None, :]
        self.patches = torch.cat([m, -m, xi] + ([xi + eps] if eps is not None else []), 1)
        self.basis = torch.cat([m, xi], 1)

    def products(self, A, out=None):
        """``A (B, r, d)`` times the patches: ``(B, r, 2 + k n)``, ``O(r n d)``."""
        return torch.bmm(A, self.patches.transpose(1, 2), out=out)

    def step(self, W, dc):
        """``gd``'s update of ``W``, in place (no ``m x d`` temporary)."""
        return W.baddbmm_(dc, self.basis)


class _Grams:
    """The recursion's closed form: by Eq. (11), ``w_r = w_r(0) + sum_k c_rk b_k`` over the basis
    ``b = [mu, xi_1..n]`` with ``c = [gamma_r/||mu||^2, rho_{r,i}/||xi_i||^2]``, so every
    preactivation the updates need is ``X = X(0) + c K``, ``K`` the products of the basis with the
    patches: Gram matrices computed once per run (``O(n^2 d)``), then ``O(m n^2)`` per step,
    never forming ``W``.  (:func:`simulate` keeps ``X`` and adds ``dc K`` after each step.)"""

    def __init__(self, net: _Network):
        self.X0 = net.products(net.W0)
        self.K = net.products(net.basis)  # (B, 1 + n, 2 + k n)

    def preacts(self, c):
        """``X (B, m, 2 + k n)`` at the scaled coefficients ``c (B, m, 1 + n)``."""
        return torch.baddbmm(self.X0, c, self.K)


def _networks(data: SyntheticData, mode: str):
    if mode == "single":
        return (_Network(data.mu, data.xi, data.W0, data.eps),)
    return (_Network(data.mu, data.xi, data.W0), _Network(data.mu_tilde, data.xi_tilde, data.W0_tilde))


# --------------------------------------------------------------------------------------------
# Argument handling
# --------------------------------------------------------------------------------------------
def _check_mode_engine(mode, engine):
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is unknown; valid: {', '.join(map(repr, MODES))}")
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is unknown; valid: {', '.join(map(repr, ENGINES))}")


def _batched(data: SyntheticData) -> SyntheticData:
    """``data`` with a leading batch of one (views, no copy; the OOD set, unused here, dropped)."""
    if data.batched:
        return data
    # a checked draw with a leading dimension of one passes the checks too: they are not repeated
    return SyntheticData._unchecked(**{name: (None if getattr(data, name) is None else getattr(data, name)[None])
                                       for name in SyntheticData._SPEC})


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


def _finite_or_raise(loss_hist, upto, mode, engine, lr, tau):
    bad = ~torch.isfinite(loss_hist[:, :upto + 1])
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
    coefficients (shapes of one draw, or batched with a leading ``B``).  The recursion engine takes
    the same step (positive minus negative term, in one piece); this exposes its parts (e.g. the
    negative term of Eq. (12)) for inspection."""
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
    nets = _networks(bd, mode)
    k = _Contrast(bd, lr, tau, copies=len(nets))
    states = [(gamma, rho)] + ([(gamma_tilde, rho_tilde)] if mode == "multi" else [])
    X = torch.cat([_Grams(net).preacts(torch.cat([g[..., None], r], -1) / net.norms[:, None, :])
                   for net, (g, r) in zip(nets, states)])
    loss_i, dc, parts = (_step_multi if mode == "multi" else _step_single)(k, X, bd.n, _Workspace(X), want=True)
    out = {"loss": loss_i.mean(-1)}
    B = bd.y.shape[0]
    for i, (suffix, net) in enumerate(zip(("", "_tilde"), nets)):
        half = slice(i * B, (i + 1) * B)
        E, e0, Z, U, a, b_ = (v[half] for v in parts[0])
        gp, gn = _signal_terms(a, b_, U)
        out.update({f"lprime{suffix}": e0 / Z, f"lprime{suffix}_neg": (E / Z[..., None]).gather(2, k.negatives[half]),
                    f"dgamma_pos{suffix}": net.norms[:, :1] * gp, f"dgamma_neg{suffix}": net.norms[:, :1] * gn,
                    f"drho{suffix}": dc[half, :, 1:] * net.norms[:, None, 1:]})
    t = UpdateTerms(**out)
    if unb:
        t = UpdateTerms(**{k_: (None if v is None else v[0]) for k_, v in t.__dict__.items()})
    return t


def preactivations(data: SyntheticData, gamma, rho, vectors: torch.Tensor, tilde: bool = False) -> torch.Tensor:
    """``<w_r(t), v>`` for the rows ``v`` of ``vectors (..., k, d)`` from the coefficients of
    Eq. (11): ``<w_r(0), v> + gamma_r <mu, v>/||mu||^2 + sum_i rho_{r,i} <xi_i, v>/||xi_i||^2``.

    ``gamma (..., m)``/``rho (..., m, n)`` may carry extra leading dimensions (e.g. time) before
    the batch ones of ``data``; the result is ``(..., m, k)``.  ``tilde=True`` uses the second
    modality's ``mu~``, ``xi~``, ``W0~``.  The products are taken in whichever order costs fewer
    operations: through the data's inner products with ``v`` (many states, few vectors) or by
    forming the weights ``W(t)`` first (few states, many vectors, e.g. scoring the last step on
    a large test set).
    """
    mu, xi, W0 = _modality(data, tilde)
    v = vectors
    if _weights_cheaper(data, gamma, v.shape[-2], tilde):
        return _times(_weights(data, gamma, rho, tilde), v)
    base = W0 @ v.transpose(-1, -2)  # (B.., m, k)
    mv = (v @ mu[..., None])[..., 0] / (mu * mu).sum(-1, keepdim=True)  # (B.., k)
    xv = (xi @ v.transpose(-1, -2)) / (xi * xi).sum(-1)[..., None]  # (B.., n, k)
    return base + gamma[..., None] * mv[..., None, :] + _fold_states(rho, xv)


def _fold_states(A: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """``A @ V`` for ``A (L.., B.., r, n)`` with extra leading dimensions ``L`` (e.g. time steps)
    before the batch dimensions ``B..`` of ``V (B.., n, k)``: ``L`` is folded into the rows of one
    batched product.  A ``V`` whose batch dimensions are all 1 is shared by every row of ``A``:
    one 2-D product.  (A broadcast product would copy ``V`` once per leading index: at Figure 1's
    21 evaluated steps of 5 draws, 84 MB for ``rho @ xi``.)"""
    nb, extra = V.dim() - 2, A.dim() - V.dim()
    if nb > 0 and extra >= 0 and all(s == 1 for s in V.shape[:-2]) and A.dim() > 2:
        # one V for every state and batch element (e.g. the one draw that a group of runs shares):
        # all of A's rows in one 2-D product, instead of a broadcast that copies V per batch index
        out = A.reshape(-1, A.shape[-1]) @ V.reshape(V.shape[-2:])
        return out.reshape(*A.shape[:-1], V.shape[-1])
    if nb == 0 or extra <= 0 or A.shape[extra:-2] != V.shape[:-2]:
        return A @ V
    r, batch, lead = A.shape[-2], V.shape[:-2], A.shape[:extra]
    rows = A.movedim(tuple(range(extra)), tuple(range(nb, nb + extra))).reshape(*batch, -1, A.shape[-1])
    out = (rows @ V).reshape(*batch, *lead, r, V.shape[-1])
    return out.movedim(tuple(range(nb, nb + extra)), tuple(range(extra)))


def _weights_cheaper(data: SyntheticData, gamma, k: int, tilde: bool = False) -> bool:
    """Whether :func:`preactivations` of ``k`` vectors at the states ``gamma`` costs fewer operations
    by forming ``W(t)`` (``O(states m n d + states m d k)``) than through the data's inner products
    with the vectors (``O((m + n) d k + states m n k)``)."""
    _, xi, W0 = _modality(data, tilde)
    m, n, d = W0.shape[-2], xi.shape[-2], xi.shape[-1]
    states = gamma.numel() // max(1, W0[..., 0].numel())  # leading states per draw (e.g. time steps)
    return states * (m * n * d + m * d * k) < (m + n) * d * k + states * m * n * k


def _times(W: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``W @ v^T`` for ``W (..., m, d)`` and ``v (..., k, d)``.  Vectors shared by the whole batch
    (leading dimensions of size 1, e.g. one OOD set scored against many runs) take one 2-D product
    with all the runs' rows: a broadcast batched product would copy ``v`` once per run."""
    if 2 < v.dim() <= W.dim() and all(s == 1 for s in v.shape[:-2]):
        v = v.reshape(v.shape[-2:])
    return W @ v.transpose(-1, -2)


def _modality(data: SyntheticData, tilde: bool):
    """``(mu, xi, W0)`` of the first modality, or of the second (``mu~, xi~, W0~``) with ``tilde``."""
    return (data.mu_tilde, data.xi_tilde, data.W0_tilde) if tilde else (data.mu, data.xi, data.W0)


def _weights(data: SyntheticData, gamma, rho, tilde: bool = False) -> torch.Tensor:
    """``W(t) = W(0) + gamma mu^T/||mu||^2 + (rho / ||xi||^2) Xi`` (Eq. 11), ``(..., m, d)``."""
    mu, xi, W0 = _modality(data, tilde)
    gh = gamma / (mu * mu).sum(-1, keepdim=True)
    rh = rho / (xi * xi).sum(-1)[..., None, :]
    return W0 + gh[..., None] * mu[..., None, :] + _fold_states(rh, xi)


def simulate(cfg: Union[SyntheticConfig, Sequence[SyntheticConfig]], data: SyntheticData,
             mode: str = "single", engine: str = "recursion", *, dtype=None, device=None,
             record_derivatives: bool = False, record_every: int = 1, keep_weights: bool = False,
             t1_every: Optional[int] = None, progress: bool = False) -> Trajectory:
    """Run ``cfg.n_epochs`` steps of full-batch gradient descent on the single-modal loss (Eq. 6)
    or the multi-modal loss (Eq. 9) from the initial weights in ``data``.

    ``engine``: ``"gd"`` (Eqs. 7/10), ``"autograd"`` (backward on Eqs. 6/9) or ``"recursion"``
    (Lemmas 5.1/5.3).  ``data`` may be a batch (leading ``B``); ``cfg`` may then be a list of
    configs, one per draw, differing in ``lr`` and ``tau``.  ``dtype``/``device`` default to the
    data's (float32 from :func:`mmcl.data.sample_synthetic`).  Raises :class:`DivergenceError` with the step
    number if the loss stops being finite.

    ``record_every``: the states ``gamma``/``rho`` are recorded every ``k`` steps and at the last.
    ``t1_every``: also record, every ``k`` steps and at the last, the one number per run that
    :func:`mmcl.theory.measured_t1` tests (``Trajectory.t1_stat``): the end of stage 1 at that
    resolution without keeping the states in between, whose ``rho (m, n)`` per step is most of a
    trajectory's memory and, written at every step, a fifth of a run's time.
    """
    _check_mode_engine(mode, engine)
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    if isinstance(record_every, bool) or not isinstance(record_every, int) or record_every < 1:
        raise ValueError(f"record_every must be a positive integer, got {record_every!r}")
    if t1_every is not None and (isinstance(t1_every, bool) or not isinstance(t1_every, int) or t1_every < 1):
        raise ValueError(f"t1_every must be a positive integer or None, got {t1_every!r}")
    if mode == "multi" and not data.has_tilde:
        raise ValueError("mode='multi' needs the second modality: data.mu_tilde, xi_tilde, W0_tilde are None")
    if keep_weights and engine == "recursion":
        raise ValueError("keep_weights=True needs engine='gd' or 'autograd'; the recursion never forms W")
    dtype = resolve_dtype(dtype) if dtype is not None else data.dtype
    device = resolve_device(device) if device is not None else data.device
    unbatched = not data.batched
    bd = _batched(data)
    if (bd.dtype, bd.device) != (dtype, device):
        bd = bd.to(device=device, dtype=dtype)
    B, n, m = bd.y.shape[0], bd.n, bd.m
    lr, tau, T = _scalars(cfg, B, bd, dtype, device)
    rec = _record_steps(T, record_every)
    rec_idx = {t: k for k, t in enumerate(rec)}
    K = len(rec)
    t1_rec = _record_steps(T, t1_every) if t1_every is not None else []
    z = dict(dtype=dtype, device=device)
    multi = mode == "multi"

    loss = torch.empty(B, T + 1, **z)
    nets = ("", "_tilde") if multi else ("",)
    out = {}
    for sfx in nets:
        out[f"gamma{sfx}"] = torch.empty(B, K, m, **z)
        out[f"rho{sfx}"] = torch.empty(B, K, m, n, **z)
        if record_derivatives:
            out[f"lprime{sfx}"] = torch.empty(B, K, n, **z)
            out[f"lprime{sfx}_neg"] = torch.empty(B, K, n, bd.M, **z)
        if keep_weights:
            out[f"weights{sfx}"] = torch.empty(B, K, m, (bd.W0 if sfx == "" else bd.W0_tilde).shape[-1], **z)
    if t1_every is not None:
        out["t1_stat"] = torch.empty(B, len(t1_rec), **z)
    t1_idx = {t: k for k, t in enumerate(t1_rec)}
    iterator = range(T + 1)
    if progress:
        from tqdm.auto import tqdm
        iterator = tqdm(iterator, desc=f"{mode}/{engine}", unit="step", leave=False)
    run = _autograd_loop if engine == "autograd" else _closed_form_loop
    with torch.no_grad():
        Ws = run(bd, mode, engine, lr, tau, iterator, rec_idx, t1_idx, loss, out, record_derivatives, keep_weights)
    traj = Trajectory(mode=mode, engine=engine, steps=torch.tensor(rec, device=device), loss=loss,
                      W=Ws[0], W_tilde=Ws[1], lr=lr, tau=tau,
                      t1_steps=torch.tensor(t1_rec, device=device) if t1_every is not None else None, **out)
    if unbatched:
        for name in Trajectory._PER_RECORD + ("loss", "W", "W_tilde", "lr", "tau", "t1_stat"):
            v = getattr(traj, name)
            if v is not None:
                setattr(traj, name, v[0])
    return traj


def _record_steps(T: int, every: int):
    """Steps ``0, k, 2k, ...`` and the last, ``T``."""
    steps = list(range(0, T + 1, every))
    return steps if steps[-1] == T else steps + [T]


def _t1_stat(mode: str, gamma: torch.Tensor, rho: torch.Tensor, norm_gamma=1.0, norm_rho=1.0) -> torch.Tensor:
    """The statistic of :func:`mmcl.theory.measured_t1` for ``gamma (..., m)``, ``rho (..., m, n)``
    given as coefficients times ``norm_gamma (..., 1)``/``norm_rho (..., 1, n)`` (positive, so the
    maximum over ``r`` is taken before the product): ``min_i max_r rho_{r,i}`` (single mode),
    ``max_r gamma_r`` (multi mode), ``(...)``."""
    if mode == "single":
        return (rho.amax(-2, keepdim=True) * norm_rho).amin((-1, -2))
    return (gamma * norm_gamma).amax(-1)


_CHECK_EVERY = 20  # steps between checks that the loss is finite (each check synchronises a GPU)


def _closed_form_loop(bd, mode, engine, lr, tau, iterator, rec_idx, t1_idx, loss, out, record_derivatives,
                      keep_weights):
    """The ``gd`` and ``recursion`` engines: the same step (:func:`_step_single`/:func:`_step_multi`)
    from preactivations that ``gd`` computes from ``W`` and the recursion from Gram matrices.
    Both track the scaled coefficients ``c`` (the sum of the updates' components; for ``gd`` this
    is the decomposition of ``W(t) - W(0)``, Eq. 11), recorded as ``gamma = c_0 ||mu||^2``,
    ``rho_i = c_i ||xi_i||^2``.  In multi mode the two networks are stacked along the batch."""
    multi = mode == "multi"
    B, n, T = bd.y.shape[0], bd.n, loss.shape[1] - 1
    nets = _networks(bd, mode)
    k = _Contrast(bd, lr, tau, copies=len(nets))
    sfx = ("", "_tilde")
    c = torch.zeros(len(nets) * B, bd.m, 1 + n, dtype=bd.dtype, device=bd.device)
    if engine == "recursion":
        grams = [_Grams(net) for net in nets]
        K = torch.cat([g.K for g in grams])
        X = torch.cat([g.X0 for g in grams])  # X(t) = X(0) + c(t) K, updated in place by dc K
    else:
        Ws = [net.W0.clone() for net in nets]  # updated in place
        X = torch.empty(len(nets) * B, bd.m, nets[0].patches.shape[1], dtype=bd.dtype, device=bd.device)
    step = _step_multi if multi else _step_single
    ws = _Workspace(c)
    # per network: its rows of c, split into gamma's and rho's columns, their norms and the outputs
    record = [(c[i * B:(i + 1) * B, :, 0], c[i * B:(i + 1) * B, :, 1:], net.norms[:, :1], net.norms[:, None, 1:],
               out[f"gamma{sfx[i]}"], out[f"rho{sfx[i]}"]) for i, net in enumerate(nets)]
    for t in iterator:
        kk = rec_idx.get(t)
        if engine == "gd":
            for i, (net, W) in enumerate(zip(nets, Ws)):
                net.products(W, out=X[i * B:(i + 1) * B])  # O(m n d)
        loss_i, dc, parts = step(k, X, n, ws, want=record_derivatives and kk is not None)
        torch.mean(loss_i, -1, out=loss[:, t])
        if kk is not None:
            for c_g, c_r, norm_g, norm_r, out_g, out_r in record:
                torch.mul(c_g, norm_g, out=out_g.select(1, kk))
                torch.mul(c_r, norm_r, out=out_r.select(1, kk))
            for i in range(len(nets)):
                half = slice(i * B, (i + 1) * B)
                if keep_weights:
                    out[f"weights{sfx[i]}"][:, kk] = Ws[i]
                if parts is not None:
                    E, e0, Z = (v[half] for v in parts[0][:3])
                    out[f"lprime{sfx[i]}"][:, kk] = e0 / Z
                    out[f"lprime{sfx[i]}_neg"][:, kk] = (E / Z[..., None]).gather(2, k.negatives[half])
        j = t1_idx.get(t)
        if j is not None:  # the first network's; rho = c ||xi||^2 with ||xi||^2 > 0, so max_r commutes with it
            out["t1_stat"][:, j] = _t1_stat(mode, *record[0][:4])
        if t % _CHECK_EVERY == 0 or t == T:
            _finite_or_raise(loss, t, mode, engine, lr, tau)
        if t == T:
            break
        c += dc
        if engine == "gd":
            for i, (net, W) in enumerate(zip(nets, Ws)):
                net.step(W, dc[i * B:(i + 1) * B])
        else:
            X.baddbmm_(dc, K)
    if engine == "gd":
        return Ws[0], (Ws[1] if multi else None)
    return None, None


def _autograd_loop(bd, mode, engine, lr, tau, iterator, rec_idx, t1_idx, loss, out, record_derivatives,
                   keep_weights):
    """The ``autograd`` engine: ``torch.autograd.grad`` of Eqs. (6)/(9) (:mod:`mmcl.losses`),
    ``gamma``/``rho`` by least squares on ``W(t) - W(0)`` at the recorded steps."""
    multi = mode == "multi"
    T = loss.shape[1] - 1
    W = bd.W0.clone()
    Wt = bd.W0_tilde.clone() if multi else None
    pinv = torch.linalg.pinv(decomposition_basis(bd.mu, bd.xi))  # (B, n+1, d)
    pinv_t = torch.linalg.pinv(decomposition_basis(bd.mu_tilde, bd.xi_tilde)) if multi else None
    for t in iterator:
        last = t == T
        with torch.enable_grad():
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
            grads = None if last else torch.autograd.grad(total.sum(), [W, Wt] if multi else [W])
        loss[:, t] = total.detach()
        W = W.detach()
        Wt = Wt.detach() if multi else None
        k, j = rec_idx.get(t), t1_idx.get(t)
        if k is not None or j is not None:
            c = (W - bd.W0) @ pinv.transpose(1, 2)  # Eq. (11) solved for the coefficients
        if j is not None:
            out["t1_stat"][:, j] = _t1_stat(mode, c[..., 0], c[..., 1:])
        if k is not None:
            out["gamma"][:, k], out["rho"][:, k] = c[..., 0], c[..., 1:]
            if multi:
                ct = (Wt - bd.W0_tilde) @ pinv_t.transpose(1, 2)
                out["gamma_tilde"][:, k], out["rho_tilde"][:, k] = ct[..., 0], ct[..., 1:]
            if record_derivatives:
                out["lprime"][:, k], out["lprime_neg"][:, k] = derivs[0][..., 0], derivs[0][..., 1:]
                if multi:
                    out["lprime_tilde"][:, k], out["lprime_tilde_neg"][:, k] = derivs[1][..., 0], derivs[1][..., 1:]
            if keep_weights:
                out["weights"][:, k] = W
                if multi:
                    out["weights_tilde"][:, k] = Wt
        if t % _CHECK_EVERY == 0 or last:
            _finite_or_raise(loss, t, mode, engine, lr, tau)
        if not last:
            W = W - lr[:, None, None] * grads[0]
            if multi:
                Wt = Wt - lr[:, None, None] * grads[1]
    return W, Wt
