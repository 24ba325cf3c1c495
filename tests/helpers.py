"""Helpers shared by the library's tests (imported as `from helpers import ...`; fixtures live in conftest.py)."""
import torch

import mmcl


def f64(cfg, seed=0):
    """A float64 draw of ``cfg``."""
    return mmcl.sample_synthetic(cfg, seed, dtype=torch.float64)


def gd_and_recursion(cfg, mode, seed=3):
    """``cfg``, its float64 draw, and gradient descent (weights and loss derivatives kept) next to the
    recursion (loss derivatives kept) on it: the pair the proof-diagnostic tests compare."""
    data = f64(cfg, seed)
    gd = mmcl.simulate(cfg, data, mode, "gd", keep_weights=True, record_derivatives=True)
    rec = mmcl.simulate(cfg, data, mode, "recursion", record_derivatives=True)
    return cfg, data, gd, rec
