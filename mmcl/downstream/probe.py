"""The standardisation every linear probe of the library fits on: features centred and scaled by
their mean and standard deviation over the rows the probe is fit on.

Used by the logistic head of the OOD protocols (:func:`mmcl.downstream.evaluation.fit_logistic`),
the ridge probe of the graph embeddings (:func:`mmcl.wider.graphs.linear_probe_error`) and the
ColoredMNIST probes (:func:`mmcl.experiments.coloredmnist.evaluate.fit_probe`), so the three agree
on what a constant feature is."""
from __future__ import annotations

from typing import Tuple

import torch

__all__ = ["standardisation"]


def standardisation(X: torch.Tensor, dim: int = -2) -> Tuple[torch.Tensor, torch.Tensor]:
    """``(mean, scale)`` of the features ``X`` over the rows of ``dim``: the mean and the standard
    deviation (``correction=0``), with the scale of a constant column (standard deviation at most
    ``1e-12 (1 + |mean|)``) set to 1 so that it is centred but not blown up.  The standardised
    features are ``(X - mean) / scale``."""
    mean = X.mean(dim)
    scale = X.std(dim, correction=0)
    return mean, torch.where(scale > 1e-12 * (1 + mean.abs()), scale, torch.ones_like(scale))
