"""What :mod:`mmcl.experiments.downstream` hands its chapter: the sizes of a feature's OOD
responses (:func:`~mmcl.experiments.downstream.response_sizes`), read off an independent
float64 computation from the explicit parts of Eq. (11)."""
import math

import pytest
import torch

import mmcl
from mmcl.downstream.response import run_downstream
from mmcl.experiments.downstream import response_sizes

TINY = mmcl.SyntheticConfig(d=60, d_tilde=50, n=10, m=6, M=4, n_epochs=15, n_test=30, n_heldout=40)


@pytest.fixture(scope="module")
def res():
    return run_downstream(TINY.replace(nu_cos=1.0), [0, 1], (1.0, 0.3), eval_every=5)


def test_response_sizes_are_means_of_the_parts(res):
    r = response_sizes(res, (1.0, 0.3))
    for mode in ("single", "multi"):
        zeta = res.response[(1.0, mode)].zeta
        for part in ("init", "signal", "memorised", "total"):
            x = getattr(zeta, part).double()  # (S, m, N)
            sd = ((x - x.mean(-1, keepdim=True)) ** 2).mean(-1).sqrt()
            assert r.spread[mode][part] == pytest.approx(float(sd.mean()), rel=1e-12)
        for c in (1.0, 0.3):
            nu = res.response[(c, mode)].nu
            assert r.signal[(c, mode)]["init"] == pytest.approx(float(nu.init.abs().mean()), rel=1e-12)
            assert r.best_signal[(c, mode)] == pytest.approx(
                float(nu.signal[..., 0].abs().amax(-1).mean()), rel=1e-12)
        assert r.max_rho[mode] == pytest.approx(float(res.max_rho[mode].mean()))
    # the learned signal part of <w_r, nu> scales with cos(nu, mu)
    ratio = r.signal[(0.3, "multi")]["signal"] / r.signal[(1.0, "multi")]["signal"]
    assert ratio == pytest.approx(0.3, rel=1e-6)
    assert r.inv_dn == pytest.approx(1 / math.sqrt(TINY.d * TINY.n))
    text = str(r)
    assert "sd of <w_r, zeta> by part" in text and "cos 0.3" in text


def test_response_sizes_rejects_an_angle_it_did_not_score(res):
    with pytest.raises(ValueError, match="angles must be angles of res"):
        response_sizes(res, (1.0, 0.05))
