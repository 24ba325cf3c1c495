"""The fast step shared by the ``gd`` and ``recursion`` engines (Eqs. (7)/(10), Lemmas 5.1/5.3).

This is the tuned kernel: base-2 logits, a dense ``-inf`` mask over the hard negatives, reused
buffers and cached views.  It computes exactly what :mod:`mmcl.dynamics.reference` writes the way
the paper does (one line per term, a loop over ``N_i``); the tests check the two against each other
at float64 on random states.  Read the reference to check the mathematics, this file to see how
the same numbers are computed fast.
"""
from __future__ import annotations

import math

import torch

from mmcl.model.data import SyntheticData
from mmcl.model import losses

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
_LOG2E = math.log2(math.e)  # logits are kept in base 2 (times log2(e)): torch's exp2 is faster than exp on
# CPUs, and exp of -inf takes a slower path (benchmarks/bench_choices.py measures both)
_EXP2_FLOOR = -80.0 * _LOG2E  # exponents are clamped here: e^-80 ~ 2e-35 is below every rounding of Z >= 1,
# and denormal results of exp2 (exponents below -126 in float32) take a slow path (bench_choices.py)


class _Contrast:
    """Constants of the InfoNCE terms for a batch, computed once per run.

    The hard negatives are held as dense ``(B, n, n)`` matrices -- ``offset`` is 0 where ``j``
    is in ``N_i`` and ``-inf`` elsewhere, ``floor`` the exponent floor and ``-inf`` -- so that the
    logits of all negatives are one masked ``(n, n)`` matrix and their weights ``l'_{i,j}`` enter
    the noise bracket through one matrix product.  Indices never repeat within an anchor's set
    (checked by :class:`~mmcl.model.data.SyntheticData`), so the mask counts each negative once, as the
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
    (``benchmarks/bench_choices.py`` times the difference).  ``ws(name, shape)`` returns the buffer, of the
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
