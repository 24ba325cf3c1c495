"""The fast step shared by the ``gd`` and ``recursion`` engines (Eqs. (7)/(10), Lemmas 5.1/5.3).

This is the tuned kernel: base-2 logits, a dense ``-inf`` mask over the hard negatives, reused
buffers and cached views.  It computes exactly what :mod:`mmcl.dynamics.reference` writes the way
the paper does (one line per term, a loop over ``N_i``); the tests check the two against each other
at float64 on random states.  Read the reference to check the mathematics, this file to see how
the same numbers are computed fast.

Where every anchor's negatives are all the samples of the other label (the proofs' ``M = n/2``),
the steps take the class-block layout instead of the mask (``Contrast``,
``_step_single_blocks``, ``_step_multi_blocks``), held equal to the masked steps and the
reference by the tests.  The preactivations ``X`` it steps from come from
:mod:`mmcl.dynamics.grams` (the recursion's Gram matrices, built by blocks).

Cost at ``n`` samples and ``m`` neurons, in units of one ``(m, n) @ (n, n)`` product (measured at
``n = 2000-10^4``, float64, ``benchmarks/bench_regime_step.py``): a class-block step takes about 1
(single) or 2-2.5 (multi) of them plus the recursion's update ``dc K`` (2), against about 2 and 4.5
plus 2 on the masked path (the Gram matrices' one-off cost: :mod:`mmcl.dynamics.grams`).
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


class Contrast:
    """Constants of the InfoNCE terms for a batch, computed once per run.

    Two layouts of the negatives, chosen here once per run (``blocks``):

    * **masked** (any hard negatives): the negatives are held as dense ``(B, n, n)`` matrices --
      ``offset`` is 0 where ``j`` is in ``N_i`` and ``-inf`` elsewhere, ``floor`` the exponent floor
      and ``-inf`` -- so that the logits of all negatives are one masked ``(n, n)`` matrix and their
      weights ``l'_{i,j}`` enter the noise bracket through one matrix product.  Indices never repeat
      within an anchor's set (checked by :class:`~mmcl.model.data.SyntheticData`), so the mask
      counts each negative once, as the sum over ``N_i`` does.  Masks are floats: boolean tensors
      take slow paths in the elementwise kernels.
    * **class blocks** (every anchor's negatives are exactly all samples of the other label, the
      proofs' ``M = n/2`` with balanced labels; :func:`_class_order` checks the sets): with the
      samples put in class order (``perm``: the ``h = n/2`` samples of label +1, then those of
      label -1, each in index order) the logits of the anchors of one class against their
      negatives are the ``(h, h)`` block between the two classes, unmasked.  No ``(B, n, n)``
      tensor is formed; the steps gather the preactivations in class order and scatter the update
      back (:func:`_step_single_blocks`, :func:`_step_multi_blocks`), so the runs' coefficients
      keep the data's order.

    Logits are in base 2 (``scale`` carries ``log2(e)``), see ``_LOG2E``.  ``blocks``: ``None``
    (class blocks wherever they apply), ``False`` (the masked layout always), ``True`` (class
    blocks, a ValueError where the negatives are not the other class).
    """

    def __init__(self, data: SyntheticData, lr: torch.Tensor, tau: torch.Tensor, copies: int = 1, blocks=None):
        # copies=2 (multi mode): the two networks are stacked along the batch, [h of every draw, g of every draw]
        if blocks not in (None, True, False):
            raise ValueError(f"blocks must be None, True or False, got {blocks!r}")
        B, n, m = data.y.shape[0], data.n, data.m
        z = dict(dtype=data.dtype, device=data.device)
        pos = data.y > 0
        self.Y = torch.stack([pos, ~pos], -1).to(data.dtype).repeat(copies, 1, 1)  # (B, n, 2): class one-hot [+1, -1]
        self.negatives = data.negatives.repeat(copies, 1, 1)
        self.scale = (_LOG2E / (m * tau)).repeat(copies)  # (B,): Sim (Eq. 4, with its 1/m) / tau is the logit, in base 2
        self.scale3 = self.scale[:, None, None]
        self.Ys = self.Y * self.scale3
        self.Ys_signed = self.Ys * torch.tensor([1.0, -1.0], dtype=data.dtype, device=data.device)  # class s times s
        self.step = (lr / (n * m * tau)).repeat(copies)  # (B,): eta / (n m tau) of Eqs. (7), (10)
        self.step1 = (lr / (n * m * tau))[:, None]  # (B, 1): the same for one copy (a class block's anchors)
        self.swap = torch.tensor([1, 0], device=data.device)  # exchanges the halves of a stacked batch
        perm = None if blocks is False else _class_order(data.y, data.negatives)
        if blocks is True and perm is None:
            raise ValueError("blocks=True needs every anchor's negatives to be exactly all samples of the other "
                             "label (M = n/2, balanced labels)")
        self.blocks = perm is not None
        if self.blocks:
            self.h = n // 2
            self.perm = perm.repeat(copies, 1)  # (copies B, n): sample indices in class order
            self.inverse = torch.argsort(self.perm, -1)  # position of each sample in class order
            self.offset = self.floor = None
            return
        keep = torch.zeros(B, n, n, dtype=torch.bool, device=data.device).scatter_(2, data.negatives, True)
        keep = keep.repeat(copies, 1, 1)
        self.offset = torch.zeros(keep.shape, **z).masked_fill_(~keep, float("-inf"))  # not a large finite
        # number: a diverging run's logits grow past any such number before they overflow
        self.floor = torch.full(keep.shape, _EXP2_FLOOR, **z).masked_fill_(~keep, float("-inf"))  # exp2(-inf) = 0

    def step_function(self, mode: str):
        """The step of ``mode`` (``"single"``/``"multi"``) in this batch's layout of the negatives."""
        if mode == "multi":
            return _step_multi_blocks if self.blocks else _step_multi
        return _step_single_blocks if self.blocks else _step_single

    def gather_index(self, m: int, first: int, n: int, parts: int):
        """``(B, m, parts n)``: the columns ``first + perm`` (then ``first + n + perm``, ...) of every
        row, an expanded view for :func:`torch.gather`: ``X``'s noise columns in class order."""
        cols = torch.cat([first + j * n + self.perm for j in range(parts)], -1)
        return cols[:, None, :].expand(-1, m, -1)

    def block_softmax(self, L: torch.Tensor, logit_pos: torch.Tensor, dim: int, out: torch.Tensor):
        """:meth:`softmax` for the anchors along ``dim`` of a class block ``L (B, h, h)`` (rows,
        ``dim=-1``: ``L[i, j]`` is anchor ``i``'s logit for negative ``j``; columns, ``dim=-2``:
        ``L[j, i]`` is anchor ``i``'s), every entry a negative: no mask, the floor is a number.
        ``E`` is written to ``out`` (which may be ``L`` itself), laid out as ``L``.  (Taking a
        large block a slice of rows at a time, to keep the passes in cache, measured no faster.)"""
        mx = torch.maximum(L.amax(dim), logit_pos)
        E = torch.sub(L, mx.unsqueeze(dim), out=out).clamp_min_(_EXP2_FLOOR).exp2_()
        e0 = (logit_pos - mx).clamp_min_(_EXP2_FLOOR).exp2_()
        Es = E.sum(dim)
        Z = e0 + Es
        return torch.log2(Z).add_(mx).sub_(logit_pos).mul_(_LN2), E, e0, Es, Z, self.step1 / Z

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


def signal_terms(a, b, U):
    """The positive and negative terms of Eq. (12) apart, divided by ``||mu||^2`` (``U`` from
    :meth:`Contrast.class_sums` carries ``eta/(n m tau)``): the partners of class ``s``
    contribute ``sigma(s b)``, the negatives (class ``-s``) ``sigma(-s b)``."""
    bp, bm = losses.relu(b), losses.relu(-b)
    up, um = U[:, :1], U[:, 1:]
    pos = (a > 0) * bp * up - (a < 0) * bm * um
    neg = (a > 0) * bm * up - (a < 0) * bp * um
    return pos, neg


class Workspace:
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


def _step_single(k: Contrast, X: torch.Tensor, n: int, ws: Workspace, want: bool = False):
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


def _step_multi(k: Contrast, X: torch.Tensor, n: int, ws: Workspace, want: bool = False):
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
# The class-block steps: every anchor's negatives are all samples of the other label
# --------------------------------------------------------------------------------------------
# The same steps as above in the class-block layout of :class:`Contrast`.  The preactivations'
# noise columns are gathered in class order (``h = n/2`` samples of label +1, then those of
# label -1), so that the logits of the anchors of one class against all their negatives are an
# unmasked ``(h, h)`` block: a quarter of the (n, n) elementwise work per block and half (multi)
# or a quarter (single) of the logits product, half of the noise-update product, and no
# ``(B, n, n)`` mask.  The update is scattered back to the data's order, so ``X``, ``K`` and the
# coefficients never leave it.


def _block_noise(partner, Es, cand, E, anchors_on_rows: bool, out):
    """``partner_i Es_i - sum_j cand_j E`` for one block's anchors (times ``Z_i``, Eq. 13's bracket
    before ``w`` and ``sigma'``): ``E (B, h, h)`` holds the anchors on its rows (``E[i, j]``) or on
    its columns (``E[j, i]``), ``cand (B, m, h)`` the negatives' activations."""
    torch.mul(partner, Es[:, None, :], out=out)
    return out.baddbmm_(cand, E.transpose(1, 2) if anchors_on_rows else E, alpha=-1)


def _blocks_out(k: Contrast, ws: Workspace, X, n, signal, noise_p, loss_p, parts_p, want):
    """The update ``dc (B, m, 1 + n)`` (``signal`` in column 0, the class-ordered ``noise_p``
    scattered back to the data's order), the per-anchor loss in the data's order and, with
    ``want``, the parts of :func:`update_terms` with ``E`` as the data-ordered ``(B, n, n)`` matrix
    of :meth:`Contrast.softmax` (zero off ``N_i``)."""
    B, m = noise_p.shape[0], noise_p.shape[1]
    dc = ws("dc", (B, m, 1 + n))
    dc[..., 0] = signal
    dc[..., 1:].scatter_(2, k.perm[:, None, :].expand(-1, m, -1), noise_p)
    inv = k.inverse[:loss_p.shape[0]]
    loss_i = torch.gather(loss_p, 1, inv)
    if not want:
        return loss_i, dc, None
    (E_blocks, e0, Z, U, a, b) = parts_p
    h = n // 2
    Ep = X.new_zeros(B, n, n)  # class order: rows are anchors
    for rows, cols, E, on_rows in E_blocks:
        Ep[:, rows, cols] = E if on_rows else E.transpose(1, 2)
    Ep = torch.gather(Ep, 1, k.inverse[:, :, None].expand(-1, -1, n))
    Ep = torch.gather(Ep, 2, k.inverse[:, None, :].expand(-1, n, -1))
    e0, Z = (torch.gather(v, 1, k.inverse) for v in (e0, Z))
    return loss_i, dc, ((Ep, e0, Z, U, a, b),)


def _step_single_blocks(k: Contrast, X: torch.Tensor, n: int, ws: Workspace, want: bool = False):
    """:func:`_step_single` in the class-block layout.  Single-modal similarities are symmetric,
    so one block ``L[i, j]`` (``i`` of label +1, ``j`` of label -1) holds the logits of both
    classes' anchors: the rows are the +1 anchors', the columns the -1 anchors'.  One ``(h, m) @
    (m, h)`` product for the logits (a quarter of the masked path's) and two ``(m, h) @ (h, h)``
    for the noise update (half)."""
    B, m = X.shape[0], X.shape[1]
    h = n // 2

    def views():
        Xg = ws("Xg", (B, m, 2 * n))
        ans = ws("ans", (B, m, n))
        noise = ws("noise", (B, m, n))
        return (Xg, Xg[..., :n], Xg[..., n:], ans, ans[..., :h], ws("active", (B, m, n)), noise,
                noise[..., :h], noise[..., h:], k.gather_index(m, 2, n, 2), X[..., :2], X[..., 0],
                ws("L", (B, h, h)), ws("E2", (B, h, h)))

    (Xg, an, pn, ans, ans1, active, noise, noise1, noise2, index, signal_pre, a, L, E2) = ws.views(X, views)
    torch.gather(X, 2, index, out=Xg).clamp_min_(0.0)  # sigma of the anchors' noise and the positives', class order
    torch.sign(an, out=active)  # sigma' of the anchors' noise
    sig = signal_pre.clamp_min(0.0)  # sigma of [a, -a]
    sig_slopes = torch.sign(sig)
    q = sig.square().sum(1)  # (B, 2): sum_r sigma(+-a_r)^2 (see _step_single)
    torch.mul(an, k.scale3, out=ans)
    logit_pos = torch.mul(ans, pn, out=ws("prod", (B, m, n))).sum(1)
    logit_pos[:, :h] += k.scale[:, None] * q[:, :1]
    logit_pos[:, h:] += k.scale[:, None] * q[:, 1:]
    torch.bmm(ans1.transpose(1, 2), an[..., h:], out=L)  # L[i, j]: +1 anchor i, -1 sample j
    loss2, E2, e02, Es2, Z2, w2 = k.block_softmax(L, logit_pos[:, h:], -2, out=E2)  # the -1 anchors: columns
    loss1, E1, e01, Es1, Z1, w1 = k.block_softmax(L, logit_pos[:, :h], -1, out=L)  # the +1 anchors: rows
    _block_noise(pn[..., :h], Es1, an[..., h:], E1, True, noise1)
    _block_noise(pn[..., h:], Es2, an[..., :h], E2, False, noise2)
    w = torch.cat([w1, w2], -1)
    noise.mul_(w[:, None, :]).mul_(active)
    U = torch.stack([(Es1 * w1).sum(-1), (Es2 * w2).sum(-1)], -1)  # :meth:`Contrast.class_sums`
    signal = k.signal_update(a, sig_slopes, U)
    parts = None
    if want:
        top, bottom = slice(0, h), slice(h, n)
        parts = ([(top, bottom, E1, True), (bottom, top, E2, False)], torch.cat([e01, e02], -1),
                 torch.cat([Z1, Z2], -1), U, a, a)
    return _blocks_out(k, ws, X, n, signal, noise, torch.cat([loss1, loss2], -1), parts, want)


def _step_multi_blocks(k: Contrast, X: torch.Tensor, n: int, ws: Workspace, want: bool = False):
    """:func:`_step_multi` in the class-block layout.  The similarities of the first network's
    anchors with the second's samples are two blocks, ``C12`` (anchors of label +1 against samples
    of label -1) and ``C21``; the second network's anchors read them by columns (``C21``'s for its
    +1 anchors, ``C12``'s for its -1 anchors).  Two ``(h, m) @ (m, h)`` products for the logits
    (half the masked path's one ``(n, n)``) and four ``(m, h) @ (h, h)`` for the noise updates
    (half)."""
    B2, m = X.shape[0], X.shape[1]
    B = B2 // 2
    h = n // 2

    def views():
        Xg, noise = ws("Xg", (B2, m, n)), ws("noise", (B2, m, n))
        ows = ws("ows", (B, m, n))
        return (Xg, Xg[:B], Xg[B:], ws("active", (B2, m, n)), noise, ows, k.gather_index(m, 2, n, 1),
                X[..., :2], X[..., 0], X[..., 0].view(2, B, m), ws("C12", (B, h, h)), ws("C21", (B, h, h)),
                ws("Ec", (B, h, h)), ws("Ed", (B, h, h)), k.scale3[:B], k.scale[:B, None])

    (Xg, own_h, own_g, active, noise, ows, index, signal_pre, a, a2, C12, C21, Ec, Ed, scale_h,
     scale_1) = ws.views(X, views)
    torch.gather(X, 2, index, out=Xg).clamp_min_(0.0)  # both networks' noise activations, class order
    torch.sign(Xg, out=active)
    sig = signal_pre.clamp_min(0.0)
    sig_slopes = torch.sign(sig)
    b = torch.index_select(a2, 0, k.swap).view(B2, m)  # the partner's <w~_r, mu~> (resp. <w_r, mu>)
    D = torch.bmm(sig.transpose(1, 2), b[..., None])[..., 0]  # (2B, 2): sum_r sigma(+-a_r) b_r (see _step_multi)
    torch.mul(own_h, scale_h, out=ows)
    pair = torch.mul(ows, own_g, out=ws("prod", (B, m, n))).sum(1)  # (B, n): noise part of <h(x_i), g(x~_i)>
    logit_pos = pair.repeat(2, 1)  # (2B, n): both networks' anchors, class order
    scale2 = k.scale[:, None]
    logit_pos[:, :h] += scale2 * D[:, :1]  # a +1 anchor: + sum_r sigma(a_r) b_r
    logit_pos[:, h:] -= scale2 * D[:, 1:]  # a -1 anchor: - sum_r sigma(-a_r) b_r
    gp, gm, hp, hm = own_g[..., :h], own_g[..., h:], own_h[..., :h], own_h[..., h:]
    torch.bmm(ows[..., :h].transpose(1, 2), gm, out=C12)  # C12[i, j]: h's +1 anchor i, g's -1 sample j
    torch.bmm(ows[..., h:].transpose(1, 2), gp, out=C21)  # C21[i, j]: h's -1 anchor i, g's +1 sample j
    # the second network's anchors read the blocks by columns: its +1 anchors C21's, its -1 anchors C12's
    lc, Ec, e0c, Esc, Zc, wc = k.block_softmax(C21, logit_pos[B:, :h], -2, out=Ec)
    ld, Ed, e0d, Esd, Zd, wd = k.block_softmax(C12, logit_pos[B:, h:], -2, out=Ed)
    la, Ea, e0a, Esa, Za, wa = k.block_softmax(C12, logit_pos[:B, :h], -1, out=C12)
    lb, Eb, e0b, Esb, Zb, wb = k.block_softmax(C21, logit_pos[:B, h:], -1, out=C21)
    _block_noise(gp, Esa, gm, Ea, True, noise[:B, :, :h])  # h's anchors: partners and negatives from g
    _block_noise(gm, Esb, gp, Eb, True, noise[:B, :, h:])
    _block_noise(hp, Esc, hm, Ec, False, noise[B:, :, :h])  # g's anchors: from h
    _block_noise(hm, Esd, hp, Ed, False, noise[B:, :, h:])
    w = torch.cat([torch.cat([wa, wb], -1), torch.cat([wc, wd], -1)])
    noise.mul_(w[:, None, :]).mul_(active)
    U = torch.stack([torch.cat([(Esa * wa).sum(-1), (Esc * wc).sum(-1)]),
                     torch.cat([(Esb * wb).sum(-1), (Esd * wd).sum(-1)])], -1)  # (2B, 2), as class_sums
    signal = k.signal_update(b, sig_slopes, U)
    loss_p = torch.cat([torch.cat([la, lb], -1), torch.cat([lc, ld], -1)])
    parts = None
    if want:
        top, bottom = slice(0, h), slice(h, n)
        # rows :B (h's anchors) and B: (g's), each with both classes' blocks
        parts = ([(top, bottom, torch.cat([Ea, Ec.transpose(1, 2)]), True),
                  (bottom, top, torch.cat([Eb, Ed.transpose(1, 2)]), True)],
                 torch.cat([torch.cat([e0a, e0b], -1), torch.cat([e0c, e0d], -1)]),
                 torch.cat([torch.cat([Za, Zb], -1), torch.cat([Zc, Zd], -1)]), U, a, b)
    loss_i, dc, parts = _blocks_out(k, ws, X, n, signal, noise, loss_p, parts, want)
    return loss_i.view(2, B, n).sum(0), dc, parts


def _class_order(y: torch.Tensor, negatives: torch.Tensor):
    """``perm (B, n)``, the samples of each draw in class order (label +1 first, each class in
    index order), where every anchor's negatives are exactly the set of all samples of the other
    label (the sets are compared, not their sizes: a repeated or a missing index fails); ``None``
    otherwise.  Then both classes have ``M = n/2`` samples."""
    B, n = y.shape
    M = negatives.shape[-1]
    pos = y > 0
    if 2 * M != n or bool((pos.sum(-1) != M).any()):
        return None
    rows = max(1, (1 << 24) // max(1, B * n))  # bounded temporaries: B x rows x n booleans
    for s in range(0, n, rows):
        e = min(n, s + rows)
        keep = torch.zeros(B, e - s, n, dtype=torch.bool, device=y.device).scatter_(2, negatives[:, s:e], True)
        if not torch.equal(keep, pos[:, s:e, None] != pos[:, None, :]):
            return None
    return torch.argsort((~pos).to(torch.int8), dim=-1, stable=True)

