"""The data model of Sec. 3 drawn in an orthonormal basis of its own span, exactly in law, at a
cost independent of ``d`` (``sample_synthetic(cfg, seed, span=True)``).

**Why a basis of the span is enough.**  The model never uses the d-dimensional vectors
themselves, only inner products among ``{w_r(0), mu, nu, xi_i, eps_i, zeta_j}`` in modality 1
and ``{w~_r(0), mu~, xi~_i}`` in modality 2: gradient descent moves ``w_r`` inside the span of
the training vectors (Eqs. 7, 10, 11), and every loss, similarity, preactivation and embedding is
an inner product of a weight with a data vector.  Inner products are preserved by any orthonormal
change of coordinates, so the draw may be written in an orthonormal basis ``[q_1..q_c, u_1..u_k]``
of ``span{fixed directions, Gaussian vectors}``: ``c`` fixed directions (``e1`` for ``mu`` and
``nu``; one more if ``nu`` had a component orthogonal to ``mu``), and ``k`` Gaussian vectors
(``xi_i, eps_i, w_r(0)``: ``k = 2n + m``; modality 2: ``xi~_i, w~_r(0)``, ``k = n + m``).
Modality 1 then has ``c + 2n + m <= 2n + m + 2`` columns, modality 2 ``1 + n + m``.

**The law (exact).**  Write each Gaussian vector as ``g_j = sigma_j z_j`` with ``z_j ~ N(0, I_d)``
independent (``sigma_j`` is ``sigma_xi``, ``sigma_eps`` or ``sigma0``).  Split ``z_j`` into its
components along the fixed orthonormal ``q_1..q_c`` and its part in the orthogonal complement
(dimension ``d - c``).  By rotation invariance of ``N(0, I_d)``:

* the components ``<z_j, q_a>`` are i.i.d. ``N(0, 1)``, independent of the orthogonal parts;
* the orthogonal parts form a ``(d - c) x k`` matrix ``Z`` with i.i.d. ``N(0, 1)`` entries, and
  ``Z = U R`` (QR, positive diagonal) where ``R`` is independent of ``U`` and has the
  *Bartlett* law: independent entries, ``R_jj = sqrt(chi^2_{d-c-j})`` (``j = 0..k-1``) on the
  diagonal and ``R_ij ~ N(0, 1)`` above it.  Column ``j`` of ``R`` holds the coordinates of
  ``z_j``'s orthogonal part in the basis ``u_1..u_k`` (the columns of ``U``).

So the coordinates of ``g_j`` in ``[q, u]`` are ``sigma_j [<z_j, q_1..q_c>, R[:, j]]``, and every
inner product among the training vectors and the fixed directions has exactly its law under the
explicit draw at ``d``.  A test input ``zeta = sigma_xi z`` is independent of the basis, so its
coordinates in ``[q, u]`` are i.i.d. ``N(0, sigma_xi^2)``; its part outside the span is orthogonal
to every weight at every step and never enters a preactivation.  Nothing in the model pairs two
test inputs (or a test input with itself), so those coordinates are all that is needed.  The
``chi^2`` variates are drawn as ``2 Gamma(nu/2)`` by Marsaglia and Tsang's exact rejection method
from the same ``torch.Generator``, so a seed gives one draw on every platform.

**Cost.**  ``k^2 + c k`` normal variates (the strict upper triangle of ``R`` is taken from a full
``k x k`` draw: faster than scattering half as many) and ``k`` gamma variates per modality, and
the tensors of width ``c + k``: independent of ``d`` (``d = 10^9`` costs what ``d = 300`` costs); memory
``O((n + m)(2n + m))`` instead of ``O((n + m) d)``.  The basis needs ``k <= d - c`` (the ``chi^2``
degrees of freedom must stay positive): a smaller ``d`` is refused with a ValueError that points
to the explicit draw (``span=False``), which is the only exact one there and costs no more.

**Precision at huge d.**  The draw is exact in law; its float64 arithmetic is not exact beyond
``d = 2^53``, where the degrees of freedom ``d - c - j`` and the chi-square variates are rounded to
a spacing of ``2^-52 d`` (:func:`~mmcl.model.span.span_resolution` gives that spacing in units
of the chi-square's own standard deviation ``sqrt(2d)``: ``2^-52 sqrt(d/2)``, about ``1.2e-5`` at
Lemma B.2's dimension for ``n = 10^4``, ``d = 5.9e21``).  Every cross term keeps its full
precision (it is a separate entry ``R_ij ~ N(0, 1)``, about ``1/sqrt(d)`` of a diagonal entry);
only the diagonal's fluctuation is resolved that coarsely.  Draws are refused above
``SPAN_D_MAX = 2^78`` (``3.0e23``), where the resolution would pass ``1e-4`` standard deviations.
"""
from __future__ import annotations

from typing import Sequence, Tuple

import torch

__all__ = ["span_width", "span_resolution", "SPAN_D_MAX", "sample_chi2", "sample_span_modality", "fixed_basis"]

_F64 = torch.float64

#: The largest nominal dimension a span draw takes, ``2^78``: there the float64 spacing of a
#: ``chi^2_d`` variate reaches ``1e-4`` of its standard deviation (:func:`span_resolution`).
SPAN_D_MAX = 2 ** 78


def span_resolution(d) -> float:
    """The float64 spacing of a ``chi^2_d`` variate (about ``2^-52 d``) in units of its standard
    deviation ``sqrt(2 d)``: ``2^-52 sqrt(d/2)``.  Below ``1e-4`` up to ``SPAN_D_MAX``; at ``d``
    below ``2^53`` the degrees of freedom themselves are exact integers in float64."""
    if isinstance(d, bool) or not isinstance(d, (int, float)) or not d >= 1 or d != d or d == float("inf"):
        raise ValueError(f"d must be a finite number >= 1, got {d!r}")
    return 2.0 ** -52 * (float(d) / 2) ** 0.5


def span_width(n_vectors: int, n_fixed: int, d: int, what: str = "d") -> int:
    """Columns ``n_fixed + n_vectors`` of the span basis; a ValueError (naming ``what``) where that
    basis would not fit in ``R^d``, i.e. ``n_fixed + n_vectors > d``, or where ``d > SPAN_D_MAX``."""
    width = n_fixed + n_vectors
    if d > SPAN_D_MAX:
        raise ValueError(
            f"span=True takes {what} <= 2^78 (SPAN_D_MAX), got {what}={float(d):.3e}: beyond it float64 resolves "
            f"a chi-square variate of the draw to worse than 1e-4 of its standard deviation (span_resolution)")
    if width > d:
        raise ValueError(
            f"span=True needs {what} >= {width} (the span basis has {n_fixed} fixed direction(s) plus "
            f"{n_vectors} Gaussian vectors), got {what}={d}; at this size the basis is no smaller than "
            f"R^{what} itself: use the explicit draw (span=False)")
    return width


def _standard_gamma(alpha: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """``Gamma(alpha, 1)`` variates, ``alpha (k,) >= 1/2`` float64, by Marsaglia and Tsang (2000):
    exact rejection from a transformed normal (acceptance > 95 % for ``alpha >= 1``); shapes below
    1 are boosted, ``Gamma(a) = Gamma(a + 1) U^(1/a)``.  Deterministic given ``gen``."""
    a = alpha.to(_F64)
    small = a < 1
    shape = torch.where(small, a + 1, a)
    dd = shape - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * dd)
    out = torch.empty_like(shape)
    todo = torch.arange(shape.numel())
    while todo.numel():
        x = torch.randn(todo.numel(), generator=gen, dtype=_F64)
        u = torch.rand(todo.numel(), generator=gen, dtype=_F64)
        t = c[todo] * x
        ok = t > -1
        tt = torch.where(ok, t, torch.zeros_like(t))
        # log-acceptance 0.5 x^2 + dd (1 - v + log v), v = (1 + t)^3, written so that the
        # cancellation at large dd (d = 10^9) loses no more than a few ulps of dd
        v_minus_1 = tt * (3 + tt * (3 + tt))
        dt = dd[todo]
        accept = ok & (torch.log(u) < 0.5 * x * x + dt * (3 * torch.log1p(tt) - v_minus_1))
        out[todo[accept]] = dt[accept] * (1 + v_minus_1[accept])
        todo = todo[~accept]
    if bool(small.any()):
        u = torch.rand(int(small.sum()), generator=gen, dtype=_F64)
        out[small] = out[small] * u ** (1.0 / a[small])
    return out


def sample_chi2(df: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """``chi^2_df`` variates (``df (k,)``, each ``>= 1``) as ``2 Gamma(df / 2)``, exact in law."""
    df = torch.as_tensor(df, dtype=_F64)
    if df.numel() and float(df.min()) < 1:
        raise ValueError(f"sample_chi2: degrees of freedom must be >= 1, got min {float(df.min())}")
    return 2.0 * _standard_gamma(df / 2.0, gen)


def fixed_basis(fixed: torch.Tensor, tol: float = 1e-12) -> torch.Tensor:
    """The coordinates of the fixed vectors in an orthonormal basis of their span.

    ``fixed (f, p)``: the fixed vectors (``mu``, ``nu``, ...) given by their first ``p`` standard
    coordinates (the rest are 0).  Gram-Schmidt in the given order, so the first nonzero vector
    spans the first direction; returns ``(f, c)``, ``c`` the rank (a direction whose new part is
    below ``tol`` times the largest norm is dropped), lower-triangular.  ``mu = 5 e1`` and
    ``nu = 2 e1`` give ``[[5], [2]]``; a ``nu`` with a part orthogonal to ``mu`` gives ``c = 2``.
    """
    fixed = torch.as_tensor(fixed, dtype=_F64)
    scale = float(fixed.norm(dim=-1).max()) if fixed.numel() else 0.0
    dirs = []
    for v in fixed:
        r = v.clone()
        for q in dirs:
            r = r - (r @ q) * q
        nr = float(r.norm())
        if nr > tol * scale:
            dirs.append(r / nr)
    if not dirs:
        return torch.zeros(fixed.shape[0], 0, dtype=_F64)
    Q = torch.stack(dirs, 1)  # (p, c)
    return fixed @ Q


def sample_span_modality(fixed: torch.Tensor, sigmas: Sequence[float], d: int,
                         gen: torch.Generator, what: str = "d") -> Tuple[torch.Tensor, torch.Tensor]:
    """One modality in the basis of its span (the module docstring gives the law).

    ``fixed (f, p)``: the fixed vectors by their first ``p`` standard coordinates (see
    :func:`~mmcl.model.span.fixed_basis`); ``sigmas (k,)``: the standard deviation of each
    Gaussian vector, in the order the rows are wanted; ``d``: the nominal dimension.  Returns ``(F, G)`` in float64:
    ``F (f, c + k)`` the fixed vectors' coordinates and ``G (k, c + k)`` the Gaussian vectors'
    (the first ``c`` columns are the fixed directions, then the Bartlett factor's ``k``).
    """
    sig = torch.as_tensor(sigmas, dtype=_F64).flatten()
    k = sig.numel()
    Fc = fixed_basis(fixed)
    c = Fc.shape[1]
    width = span_width(k, c, d, what)
    along = torch.randn(k, c, generator=gen, dtype=_F64)  # components along the fixed directions
    # the Bartlett factor transposed (row j = column j of R): N(0, 1) below the diagonal ...
    Rt = torch.randn(k, k, generator=gen, dtype=_F64).tril_(-1)
    df = float(d - c) - torch.arange(k, dtype=_F64)  # ... and sqrt(chi^2_{d-c-j}), j = 0..k-1, on it
    Rt.diagonal().copy_(sample_chi2(df, gen).sqrt())
    G = torch.cat([along, Rt], 1).mul_(sig[:, None])  # row j: coordinates of g_j
    F = torch.zeros(Fc.shape[0], width, dtype=_F64)
    F[:, :c] = Fc
    return F, G
