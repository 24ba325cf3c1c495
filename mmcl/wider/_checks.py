"""Input checks shared by :mod:`mmcl.wider.factorisation`, :mod:`mmcl.wider.graphs` and
:mod:`mmcl.wider.agd` (private).  Scalar arguments are checked with :func:`mmcl._utils.check_int`
and :func:`mmcl._utils.check_number`; the tensor checks live here.  Every error names the
parameter."""
from __future__ import annotations

from typing import Optional

import torch

from mmcl._utils import check_int


def _sum_tol(dtype: torch.dtype) -> float:
    return 1e-9 if dtype == torch.float64 else 1e-5


def check_float(name: str, T, ndim: Optional[int] = None) -> None:
    """A finite floating-point tensor (of ``ndim`` dimensions when given)."""
    if not isinstance(T, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(T).__name__}")
    if not T.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {T.dtype}")
    if ndim is not None and T.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {tuple(T.shape)}")
    if not bool(torch.isfinite(T).all()):
        raise ValueError(f"{name} has non-finite entries (NaN or inf)")


def check_distribution(P) -> None:
    """A joint distribution: 2-D, finite, >= 0, sums to 1, no empty row or column."""
    check_float("P", P, 2)
    if P.shape[0] < 1 or P.shape[1] < 1:
        raise ValueError(f"P must have at least one row and one column, got shape {tuple(P.shape)}")
    if bool((P < 0).any()):
        raise ValueError(f"P is not a distribution: it has negative entries (min {float(P.min()):.3g}); "
                         "every entry must be >= 0")
    total = float(P.sum())
    if abs(total - 1.0) > _sum_tol(P.dtype):
        raise ValueError(f"P is not a distribution: its entries sum to {total!r}, not 1 "
                         f"(tolerance {_sum_tol(P.dtype):g} for {P.dtype})")
    for axis, what in ((1, "row (image)"), (0, "column (caption)")):
        empty = (P.sum(axis) <= 0).nonzero().flatten()
        if len(empty):
            raise ValueError(f"P has {len(empty)} {what}(s) with zero mass (first: index {int(empty[0])}); "
                             "D^{-1/2} is undefined there: drop them")


def check_graph(A, name: str = "A") -> None:
    """A symmetric non-negative weight matrix with positive degrees."""
    check_float(name, A, 2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square (a graph on N nodes), got shape {tuple(A.shape)}")
    if bool((A < 0).any()):
        raise ValueError(f"{name} has negative weights (min {float(A.min()):.3g}); a graph's weights must be >= 0")
    scale = float(A.abs().max())
    if float((A - A.T).abs().max()) > 1e3 * torch.finfo(A.dtype).eps * max(scale, 1e-300):
        raise ValueError(f"{name} must be symmetric (max |A - A^T| = {float((A - A.T).abs().max()):.3g})")
    deg = A.sum(1)
    if bool((deg <= 0).any()):
        raise ValueError(f"{name} has {int((deg <= 0).sum())} node(s) with zero degree; D^{{-1/2}} is undefined")


def check_k(k, upper: int, name: str = "k") -> int:
    """A positive integer ``k`` (a rank or an embedding width) of at most ``upper``."""
    check_int(name, k)
    if k > upper:
        raise ValueError(f"{name}={k} is larger than the matrix allows (at most {upper})")
    return k
