"""The class-block step of the kernel (every anchor's negatives are all samples of the other label,
M = n/2) against the masked step and the reference, when it is taken, and the Gram matrices built
by blocks against the one product with the stacked patches.  All at float64."""
import dataclasses

import pytest
import torch

import mmcl
from mmcl.dynamics import grams, kernel
from mmcl.dynamics.engines import as_batched, _scalars, kernel_terms
from mmcl.dynamics.reference import reference_step
from mmcl.dynamics.trajectory import UpdateTerms

CFG = mmcl.SyntheticConfig(n=16, d=48, d_tilde=40, m=5, M=8, n_epochs=25, n_test=8, n_heldout=8)
FIELDS = [f.name for f in dataclasses.fields(UpdateTerms)]


def _random_state(cfg, seed, scale, batch=()):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: scale * torch.randn(*batch, *s, generator=g, dtype=torch.float64)  # noqa: E731
    return r(cfg.m), r(cfg.m, cfg.n), r(cfg.m), r(cfg.m, cfg.n)


def _contrast(data, cfg, copies=1, blocks=None):
    bd = as_batched(data)
    lr, tau, _ = _scalars(cfg, bd.y.shape[0], bd, bd.dtype, bd.device)
    return kernel.Contrast(bd, lr, tau, copies=copies, blocks=blocks)


def _assert_terms_close(a, b, compared):
    n = 0
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is None:
            continue
        assert x.shape == y.shape, name
        torch.testing.assert_close(x, y, rtol=1e-11, atol=1e-13, msg=name)
        n += 1
    assert n == compared


@pytest.mark.parametrize("mode", ["single", "multi"])
@pytest.mark.parametrize("seed", range(3))
def test_block_path_equals_masked_path_and_reference_on_random_states(mode, seed):
    data = mmcl.sample_synthetic(CFG, seed, dtype=torch.float64)
    assert _contrast(data, CFG).blocks  # M = n/2: the class blocks apply
    g, r, gt, rt = _random_state(CFG, 200 + seed, scale=0.5)
    args = (g, r, gt, rt) if mode == "multi" else (g, r)
    blocks = kernel_terms(data, CFG, mode, *args, blocks=True)
    masked = kernel_terms(data, CFG, mode, *args, blocks=False)
    compared = 11 if mode == "multi" else 6
    _assert_terms_close(masked, blocks, compared)
    _assert_terms_close(reference_step(data, CFG, mode, *args), blocks, compared)
    assert float(blocks.drho.abs().max()) > 1e-6  # the state moves
    if mode == "multi":
        assert float(blocks.dgamma_neg.abs().max()) > 1e-6


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_block_path_of_a_batch_with_different_class_orders(mode):
    """Two draws (their labels in different orders) in one batch: each draw's class order."""
    draws = [mmcl.sample_synthetic(CFG, s, dtype=torch.float64) for s in (4, 5)]
    assert not torch.equal(draws[0].y, draws[1].y)
    batch = mmcl.SyntheticData.stack(draws)
    st = _random_state(CFG, 9, scale=0.5, batch=(2,))
    args = st if mode == "multi" else st[:2]
    blocks = kernel_terms(batch, CFG, mode, *args, blocks=True)
    masked = kernel_terms(batch, CFG, mode, *args, blocks=False)
    _assert_terms_close(masked, blocks, 11 if mode == "multi" else 6)


def test_block_path_comparison_can_fail(monkeypatch):
    """The comparison above catches a wrong class order: the blocks taken in the class order of
    another draw's labels give other terms."""
    data = mmcl.sample_synthetic(CFG, 0, dtype=torch.float64)
    other = mmcl.sample_synthetic(CFG, 1, dtype=torch.float64)
    g, r, _, _ = _random_state(CFG, 3, scale=0.5)
    masked = kernel_terms(data, CFG, "single", g, r, blocks=False)
    right = kernel_terms(data, CFG, "single", g, r, blocks=True)
    torch.testing.assert_close(masked.drho, right.drho, rtol=1e-11, atol=1e-13)
    wrong_order = kernel._class_order(other.y[None], other.negatives[None])
    monkeypatch.setattr(kernel, "_class_order", lambda y, negatives: wrong_order)
    wrong = kernel_terms(data, CFG, "single", g, r, blocks=True)
    assert not torch.allclose(masked.drho, wrong.drho, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("mode", ["single", "multi"])
def test_recursion_runs_equal_on_both_paths(mode, monkeypatch):
    cfg = CFG.replace(n=24, M=12, d=300, d_tilde=250, m=10, n_epochs=60)
    data = mmcl.sample_synthetic(cfg, 1, dtype=torch.float64)
    blocks = mmcl.simulate(cfg, data, mode, "recursion", record_derivatives=True)
    monkeypatch.setattr(kernel, "_class_order", lambda y, negatives: None)  # the masked path
    assert not _contrast(data, cfg).blocks
    masked = mmcl.simulate(cfg, data, mode, "recursion", record_derivatives=True)
    names = ["loss", "gamma", "rho", "lprime", "lprime_neg"]
    names += ["gamma_tilde", "rho_tilde", "lprime_tilde", "lprime_tilde_neg"] if mode == "multi" else []
    for name in names:
        torch.testing.assert_close(getattr(blocks, name), getattr(masked, name), rtol=1e-10, atol=1e-12, msg=name)
    assert float(blocks.rho[-1].abs().max()) > 1e-3  # the run moved


def _with_negatives(data, negatives):
    values = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    values["negatives"] = negatives
    return mmcl.SyntheticData._unchecked(**values)  # past the checks: the test's point is what the kernel sees


def test_block_path_is_taken_only_when_the_negatives_are_exactly_the_other_class():
    data = mmcl.sample_synthetic(CFG, 0, dtype=torch.float64)
    k = _contrast(data, CFG)
    assert k.blocks and k.offset is None
    assert k.step_function("single") is kernel._step_single_blocks
    assert k.step_function("multi") is kernel._step_multi_blocks
    # the class order: label +1 first, each class in index order
    y = data.y[k.perm[0]]
    assert bool((y[:CFG.n // 2] > 0).all()) and bool((y[CFG.n // 2:] < 0).all())
    assert bool((k.perm[0, :CFG.n // 2].diff() > 0).all()) and bool((k.perm[0, CFG.n // 2:].diff() > 0).all())
    # fewer negatives than the other class: masked
    fewer = CFG.replace(M=7)
    assert not _contrast(mmcl.sample_synthetic(fewer, 0, dtype=torch.float64), fewer).blocks
    # as many negatives as the other class has samples, but not the same set: one index repeated
    neg = data.negatives.clone()
    neg[3, 1] = neg[3, 0]
    assert not _contrast(_with_negatives(data, neg), CFG).blocks
    # ... or one negative of the anchor's own label
    same = int(((data.y == data.y[3]).nonzero()[-1]))
    neg = data.negatives.clone()
    neg[3, 0] = same
    assert not _contrast(_with_negatives(data, neg), CFG).blocks
    # the same sets in another order within a row: still the class blocks
    neg = data.negatives.flip(-1)
    assert _contrast(_with_negatives(data, neg), CFG).blocks
    # a batch takes the blocks only if every draw does
    good = mmcl.sample_synthetic(CFG, 1, dtype=torch.float64)
    bad_neg = good.negatives.clone()
    bad_neg[0, 0] = bad_neg[0, 1]
    batch = mmcl.SyntheticData.stack([data, _with_negatives(good, bad_neg)])
    assert not _contrast(batch, CFG).blocks
    assert _contrast(mmcl.SyntheticData.stack([data, good]), CFG).blocks
    # forcing: False always masks; True where the blocks do not apply is refused, naming the option
    assert not _contrast(data, CFG, blocks=False).blocks
    with pytest.raises(ValueError, match="blocks=True"):
        _contrast(mmcl.sample_synthetic(fewer, 0, dtype=torch.float64), fewer, blocks=True)
    with pytest.raises(ValueError, match="blocks must be"):
        _contrast(data, CFG, blocks="yes")


@pytest.mark.parametrize("span", [False, True])
@pytest.mark.parametrize("mode", ["single", "multi"])
def test_gram_blocks_equal_the_product_with_the_stacked_patches(mode, span, monkeypatch):
    monkeypatch.setattr(grams, "_GRAM_ROWS", 7)  # several blocks of unequal extents at a small n
    cfg = CFG.replace(n=30, M=15, d=200, d_tilde=150)
    batch = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, dtype=torch.float64, span=span) for s in (0, 1)])
    nets = grams.build_networks(batch, mode)
    X0, K = grams.gram_state(nets)
    plain = [grams.Grams.plain(net) for net in nets]
    X0_ref, K_ref = torch.cat([p[0] for p in plain]), torch.cat([p[1] for p in plain])
    torch.testing.assert_close(K, K_ref, rtol=1e-12, atol=1e-12 * float(K_ref.abs().max()))
    torch.testing.assert_close(X0, X0_ref, rtol=1e-12, atol=1e-12 * float(X0_ref.abs().max()))
    assert grams._row_blocks(cfg.n)[0] == (0, 8)
    G = K[:, 1:, 2:2 + cfg.n]  # the blocks off the diagonal are computed below it and mirrored
    assert torch.equal(G[:, :8, 8:], G[:, 8:, :8].transpose(1, 2))


def test_extents_find_the_last_nonzero_column_of_each_block():
    A = torch.zeros(2, 6, 10, dtype=torch.float64)
    A[0, 0, 2] = 1.0  # block rows 0..2: column 2 (draw 0) ...
    A[1, 1, 4] = -1.0  # ... and column 4 (draw 1): extent 5
    A[0, 5, 9] = 2.0  # block rows 3..5: extent 10
    assert grams._extents(A, [(0, 3), (3, 6)]) == [5, 10]
    assert grams._extents(torch.zeros(1, 3, 4), [(0, 3)]) == [0]
    out = torch.full((2, 6, 6), 7.0, dtype=torch.float64)
    grams._block_products(out, A)
    torch.testing.assert_close(out, A @ A.transpose(1, 2), rtol=0, atol=0)
