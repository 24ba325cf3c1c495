"""The reference step (the paper's update, one line per term) against the fast kernel the engines run.

The kernel (mmcl.dynamics.kernel) and the reference (mmcl.dynamics.reference) are written
independently: the reference forms W, gathers the negatives from N_i and takes the softmax of
Eq. (8); the kernel works on preactivations, base-2 logits and a dense -inf mask.  All at float64."""
import dataclasses

import pytest
import torch

import mmcl
from mmcl.dynamics.engines import kernel_terms
from mmcl.dynamics.reference import reference_step, update_terms
from mmcl.dynamics.trajectory import UpdateTerms

CFG = mmcl.SyntheticConfig(n=16, d=48, d_tilde=40, m=5, M=4, n_epochs=25, n_test=8, n_heldout=8)
FIELDS = [f.name for f in dataclasses.fields(UpdateTerms)]


def _random_state(cfg, seed, scale):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: scale * torch.randn(*s, generator=g, dtype=torch.float64)  # noqa: E731
    return r(cfg.m), r(cfg.m, cfg.n), r(cfg.m), r(cfg.m, cfg.n)


@pytest.mark.parametrize("mode", ["single", "multi"])
@pytest.mark.parametrize("seed", range(4))
def test_kernel_equals_reference_on_random_states(mode, seed):
    data = mmcl.sample_synthetic(CFG, seed, dtype=torch.float64)
    # random coefficients of order 1/2 move many preactivations across zero, so every branch of the
    # brackets (sigma' = 0 and 1, both classes, opposite signs across modalities) is exercised
    g, r, gt, rt = _random_state(CFG, 100 + seed, scale=0.5)
    args = (g, r, gt, rt) if mode == "multi" else (g, r)
    ref, fast = reference_step(data, CFG, mode, *args), kernel_terms(data, CFG, mode, *args)
    compared = 0
    for name in FIELDS:
        a, b = getattr(ref, name), getattr(fast, name)
        assert (a is None) == (b is None), name
        if a is None:
            continue
        assert a.shape == b.shape, name
        torch.testing.assert_close(a, b, rtol=1e-11, atol=1e-13, msg=name)
        compared += 1
    assert compared == (11 if mode == "multi" else 6)
    # the states are not trivial: the updates move, and in multi mode the negative signal term is on
    assert float(ref.drho.abs().max()) > 1e-6
    if mode == "multi":
        assert float(ref.dgamma_neg.abs().max()) > 1e-6


def test_reference_detects_a_wrong_bracket():
    """The comparison above can fail: dropping the eps of the positive's noise patch (using x_i
    instead of x_i^+) is caught at this tolerance."""
    data = mmcl.sample_synthetic(CFG, 0, dtype=torch.float64)
    g, r, _, _ = _random_state(CFG, 7, scale=0.5)
    fast = kernel_terms(data, CFG, "single", g, r)
    wrong = dataclasses.replace(data, eps=torch.zeros_like(data.eps))
    ref = reference_step(wrong, CFG, "single", g, r)
    assert not torch.allclose(ref.drho, fast.drho, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_iterating_the_reference_reproduces_the_recursion(mode):
    data = mmcl.sample_synthetic(CFG, 3, dtype=torch.float64)
    traj = mmcl.simulate(CFG, data, mode, "recursion", record_derivatives=True)
    g, r = torch.zeros_like(traj.gamma[0]), torch.zeros_like(traj.rho[0])
    gt, rt = (torch.zeros_like(g), torch.zeros_like(r)) if mode == "multi" else (None, None)
    for t in range(CFG.n_epochs):
        u = reference_step(data, CFG, mode, g, r, gt, rt)
        torch.testing.assert_close(u.loss, traj.loss[t], rtol=1e-12, atol=1e-13)
        torch.testing.assert_close(u.lprime, traj.lprime[t], rtol=1e-11, atol=1e-13)
        torch.testing.assert_close(u.lprime_neg, traj.lprime_neg[t], rtol=1e-11, atol=1e-13)
        g, r = g + u.dgamma_pos - u.dgamma_neg, r + u.drho
        if mode == "multi":
            gt, rt = gt + u.dgamma_pos_tilde - u.dgamma_neg_tilde, rt + u.drho_tilde
            torch.testing.assert_close(gt, traj.gamma_tilde[t + 1], rtol=1e-10, atol=1e-12)
            torch.testing.assert_close(rt, traj.rho_tilde[t + 1], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(g, traj.gamma[t + 1], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(r, traj.rho[t + 1], rtol=1e-10, atol=1e-12)
    assert float(traj.rho[-1].abs().max()) > 1e-3  # the run moved


def test_update_terms_of_a_batch_are_the_reference_per_draw():
    draws = [mmcl.sample_synthetic(CFG, s, dtype=torch.float64) for s in (0, 1)]
    batch = mmcl.SyntheticData.stack(draws)
    states = [_random_state(CFG, 50 + s, 2.0) for s in (0, 1)]
    stacked = [torch.stack([st[k] for st in states]) for k in range(4)]
    terms = update_terms(batch, CFG, "multi", *stacked)
    for b, (draw, st) in enumerate(zip(draws, states)):
        one = reference_step(draw, CFG, "multi", *st)
        for name in FIELDS:
            torch.testing.assert_close(getattr(terms, name)[b], getattr(one, name))


def test_reference_step_rejects_bad_input():
    data = mmcl.sample_synthetic(CFG, 0, dtype=torch.float64)
    g, r, _, _ = _random_state(CFG, 1, 1.0)
    with pytest.raises(ValueError, match="mode"):
        reference_step(data, CFG, "both", g, r)
    with pytest.raises(ValueError, match="gamma_tilde"):
        reference_step(data, CFG, "multi", g, r)
    with pytest.raises(ValueError, match="SyntheticConfig.n"):
        reference_step(data, CFG.replace(n=18), "single", g, r)
    with pytest.raises(ValueError, match="one draw"):
        reference_step(mmcl.SyntheticData.stack([data, data]), CFG, "single", g, r)
