"""The two closed-form engines' views of a network, and the recursion's Gram matrices built by blocks.

:mod:`mmcl.dynamics.kernel` steps a network from its preactivations ``X``; this module makes
them: ``gd`` from the weights and the stacked patches (``_Network``), the recursion from ``X(0)``
and the Gram matrices ``K`` of Eq. (11), computed once per run by blocks of rows over the columns
where they can be nonzero (``Grams``), held equal by the tests to the one product with the
stacked patches (``Grams.plain``).

The Gram matrices cost ``O(n^2 d)`` once per run: at a span draw (``d`` about ``2n``) of the order
of ``n/(3m)`` (multi) to ``n/m`` (single) ``(m, n) @ (n, n)`` products.
"""
from __future__ import annotations

import functools

import torch

from mmcl.model.data import SyntheticData


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
    ``gd`` takes ``X = W patches^T`` and ``W += dc basis`` at every step (both stacks are formed
    at its first use); the recursion takes both products once, with ``W(0)`` and with the basis,
    block by block from ``mu``, ``xi``, ``eps`` without forming the stacks (:class:`Grams`)."""

    def __init__(self, mu, xi, W0, eps=None):
        self.mu, self.xi, self.W0, self.eps = mu, xi, W0, eps
        self.n = xi.shape[1]
        self.width = 2 + (2 if eps is not None else 1) * self.n  # columns of X: 2 + k n
        # ||xi_i||^2 as batched dot products: no (n, d) temporary
        self.norms = torch.cat([(mu * mu).sum(-1)[:, None], torch.einsum("bnd,bnd->bn", xi, xi)], -1)  # (B, 1 + n)

    @functools.cached_property
    def patches(self):
        m = self.mu[:, None, :]
        return torch.cat([m, -m, self.xi] + ([self.xi + self.eps] if self.eps is not None else []), 1)

    @functools.cached_property
    def basis(self):
        return torch.cat([self.mu[:, None, :], self.xi], 1)

    def products(self, A, out=None):
        """``A (B, r, d)`` times the patches: ``(B, r, 2 + k n)``, ``O(r n d)``."""
        return torch.bmm(A, self.patches.transpose(1, 2), out=out)

    def step(self, W, dc):
        """``gd``'s update of ``W``, in place (no ``m x d`` temporary)."""
        return W.baddbmm_(dc, self.basis)


_GRAM_ROWS = 512  # rows per block of the Gram products (blocks of a few hundred rows keep BLAS efficient)


def _row_blocks(n: int):
    """``[(start, stop), ...]``: ``n`` rows cut into about equal blocks of about ``_GRAM_ROWS``."""
    p = max(1, round(n / _GRAM_ROWS))
    edges = [round(i * n / p) for i in range(p + 1)]
    return list(zip(edges[:-1], edges[1:]))


def _extents(A: torch.Tensor, blocks):
    """For each row block of ``A (B, r, d)``: one past the last column in which a row of the block
    (of any draw) has a nonzero entry.  A product with those rows needs no later column: exactly
    zero terms are left out, nothing else.  A span draw's coordinates are triangular
    (:mod:`mmcl.model.span`: ``xi_i`` lives in the first ``c + i + 1`` basis vectors), so its
    Gram products shrink to a third; an explicit draw's extents are ``d``."""
    out = []
    for s, e in blocks:
        nz = (A[:, s:e] != 0).flatten(0, 1).any(0).nonzero()
        out.append(int(nz[-1]) + 1 if nz.numel() else 0)
    return out


def _block_products(out: torch.Tensor, A: torch.Tensor, C: torch.Tensor = None) -> torch.Tensor:
    """``out (B, r, s) = A @ C^T`` for ``A (B, r, d)``, ``C (B, s, d)``, by blocks of rows of
    both, each block product over the leading columns where both blocks can be nonzero
    (:func:`_extents`).  ``C=None``: the symmetric ``A A^T``, the blocks below the diagonal
    computed and mirrored.  ``out`` may be a view (e.g. a block of ``K``)."""
    sym = C is None
    ba = _row_blocks(A.shape[1])
    ea = _extents(A, ba)
    bc, ec = (ba, ea) if sym else (_row_blocks(C.shape[1]), None)
    if not sym:
        C_ext = _extents(C, bc)
    for I, (s, e) in enumerate(ba):
        for J, (s2, e2) in enumerate(bc):
            if sym and J > I:
                break
            width = min(ea[I], ea[J] if sym else C_ext[J])
            block = out[:, s:e, s2:e2]
            if width == 0:
                block.zero_()
            else:
                torch.bmm(A[:, s:e, :width], (A if sym else C)[:, s2:e2, :width].transpose(1, 2), out=block)
            if sym and J < I:
                out[:, s2:e2, s:e] = block.transpose(1, 2)
    return out


class Grams:
    """The recursion's closed form: by Eq. (11), ``w_r = w_r(0) + sum_k c_rk b_k`` over the basis
    ``b = [mu, xi_1..n]`` with ``c = [gamma_r/||mu||^2, rho_{r,i}/||xi_i||^2]``, so every
    preactivation the updates need is ``X = X(0) + c K``, ``K`` the products of the basis with the
    patches: Gram matrices computed once per run (``O(n^2 d)``), then ``O(m n^2)`` per step,
    never forming ``W``.  (:func:`simulate` keeps ``X`` and adds ``dc K`` after each step.)

    ``K (B, 1 + n, 2 + k n)`` is assembled from its blocks, never from the stacks of
    :class:`_Network`: ``<mu, mu>``, ``<xi_i, mu>``, ``G = [<xi_i, xi_j>]`` (symmetric: half of it
    computed) and, in single mode, ``G + [<xi_i, eps_j>]`` for the positives' patches
    ``xi_j + eps_j``; every product by blocks of rows over the columns where they can be nonzero
    (:func:`_block_products`).  ``K`` and ``X0`` may be given (views of the engine's stacked
    tensors) and are filled in place.  :meth:`plain` is the one-product reference."""

    def __init__(self, net: _Network, K: torch.Tensor = None, X0: torch.Tensor = None):
        mu, xi, eps, W0 = net.mu, net.xi, net.eps, net.W0
        B, n, m = xi.shape[0], net.n, W0.shape[1]
        K = xi.new_empty(B, 1 + n, net.width) if K is None else K
        X0 = W0.new_empty(B, m, net.width) if X0 is None else X0
        mm = (mu * mu).sum(-1)
        xm = torch.bmm(xi, mu[..., None])[..., 0]  # (B, n): <xi_i, mu>
        K[:, 0, 0], K[:, 0, 1] = mm, -mm
        K[:, 1:, 0], K[:, 1:, 1] = xm, -xm
        K[:, 0, 2:2 + n] = xm
        G = _block_products(K[:, 1:, 2:2 + n], xi)
        wm = torch.bmm(W0, mu[..., None])[..., 0]  # (B, m): <w_r(0), mu>
        X0[..., 0], X0[..., 1] = wm, -wm
        P = _block_products(X0[..., 2:2 + n], W0, xi)
        if eps is not None:
            K[:, 0, 2 + n:] = xm + torch.bmm(eps, mu[..., None])[..., 0]
            _block_products(K[:, 1:, 2 + n:], xi, eps).add_(G)
            _block_products(X0[..., 2 + n:], W0, eps).add_(P)
        self.K, self.X0 = K, X0

    @staticmethod
    def plain(net: _Network):
        """``(X0, K)`` as the two products with the stacked patches: the reference the tests hold
        the blocks to."""
        return net.products(net.W0), net.products(net.basis)

    def preacts(self, c):
        """``X (B, m, 2 + k n)`` at the scaled coefficients ``c (B, m, 1 + n)``."""
        return torch.baddbmm(self.X0, c, self.K)


def gram_state(nets):
    """``(X0, K)`` of the networks stacked along the batch (the recursion's ``X(0)`` and ``K``),
    each network's Grams written straight into its rows."""
    B, m, w = nets[0].xi.shape[0], nets[0].W0.shape[1], nets[0].width
    n = nets[0].n
    K = nets[0].xi.new_empty(len(nets) * B, 1 + n, w)
    X0 = nets[0].W0.new_empty(len(nets) * B, m, w)
    for i, net in enumerate(nets):
        Grams(net, K=K[i * B:(i + 1) * B], X0=X0[i * B:(i + 1) * B])
    return X0, K


def build_networks(data: SyntheticData, mode: str):
    if mode == "single":
        return (_Network(data.mu, data.xi, data.W0, data.eps),)
    return (_Network(data.mu, data.xi, data.W0), _Network(data.mu_tilde, data.xi_tilde, data.W0_tilde))
