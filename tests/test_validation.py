"""Bad input gets a ValueError that names the parameter; a diverging run stops with the step."""
import pytest
import torch

import mmcl

from helpers import f64


@pytest.mark.parametrize("field,value", [
    ("n", 0), ("n", -4), ("d", 0), ("m", 0), ("tau", 0.0), ("tau", -1.0), ("lr", 0.0), ("sigma_xi", 0.0),
    ("sigma_eps", -0.1), ("sigma0", 0.0), ("mu_norm", 0.0), ("n_epochs", 0), ("M", 0), ("n", 2.5),
    ("lr", float("nan")),
])
def test_config_rejects_non_positive(field, value):
    with pytest.raises(ValueError, match=field):
        mmcl.SyntheticConfig(**{field: value})


def test_config_rejects_M_larger_than_opposite_pool():
    with pytest.raises(ValueError, match=r"M=51 .*n/2=50"):
        mmcl.SyntheticConfig(M=51)


def test_unbalanced_labels_check_M_against_the_draw():
    cfg = mmcl.SyntheticConfig(n=20, d=50, M=10, balanced=False)
    # some seed gives a smaller class below 10
    with pytest.raises(ValueError, match="M=10 exceeds the opposite-label pool"):
        for seed in range(50):
            mmcl.sample_synthetic(cfg, seed)


def test_replace_rejects_unknown_field():
    with pytest.raises(ValueError, match="unknown SyntheticConfig field"):
        mmcl.SyntheticConfig().replace(temperature=1.0)


def _tensors(cfg):
    d = f64(cfg)
    return dict(y=d.y, mu=d.mu, xi=d.xi, eps=d.eps, negatives=d.negatives, W0=d.W0,
                mu_tilde=d.mu_tilde, xi_tilde=d.xi_tilde, W0_tilde=d.W0_tilde)


def test_user_built_data_roundtrip(small_cfg):
    t = _tensors(small_cfg)
    data = mmcl.SyntheticData(**t)
    tr = mmcl.simulate(small_cfg, data, "multi", "recursion")
    assert tr.loss.shape == (small_cfg.n_epochs + 1,)


@pytest.mark.parametrize("field,bad,match", [
    ("xi", lambda t: t["xi"][:, :-1], "xi"),
    ("eps", lambda t: t["eps"][:-1], "eps"),
    ("W0", lambda t: t["W0"].float(), "W0 is torch.float32"),
    ("y", lambda t: t["y"] * 2, "y must contain only"),
    ("negatives", lambda t: t["negatives"].int(), "int64"),
    ("negatives", lambda t: torch.zeros_like(t["negatives"]), "opposite label|repeat"),
    ("mu_tilde", lambda t: None, "given together"),
])
def test_user_built_data_rejects_bad_tensors(small_cfg, field, bad, match):
    t = _tensors(small_cfg)
    t[field] = bad(t)
    with pytest.raises(ValueError, match=match):
        mmcl.SyntheticData(**t)


def test_unknown_mode_engine_device(small_cfg):
    data = f64(small_cfg)
    with pytest.raises(ValueError, match="mode='triple'"):
        mmcl.simulate(small_cfg, data, "triple")
    with pytest.raises(ValueError, match="engine='adam'"):
        mmcl.simulate(small_cfg, data, "single", "adam")
    with pytest.raises(ValueError, match="device='tpu'"):
        mmcl.simulate(small_cfg, data, "single", device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            mmcl.simulate(small_cfg, data, "single", device="cuda")
    with pytest.raises(ValueError, match="dtype"):
        mmcl.simulate(small_cfg, data, "single", dtype="float16")


def test_config_data_mismatch(small_cfg):
    data = f64(small_cfg)
    with pytest.raises(ValueError, match="SyntheticConfig.m=11 does not match"):
        mmcl.simulate(small_cfg.replace(m=11), data)


def test_diverging_run_raises_with_step():
    cfg = mmcl.SyntheticConfig(d=100, n=10, m=4, M=5, lr=1e20, n_epochs=50)  # overflows float32
    data = mmcl.sample_synthetic(cfg, 0)
    with pytest.raises(mmcl.DivergenceError, match=r"non-finite at step \d+ .*reduce lr"):
        mmcl.simulate(cfg, data, "single", "gd")


def test_a_batch_of_draws_is_the_draws_stacked():
    """sample_synthetic_batch equals stacking each seed's sample_synthetic, field by field."""
    from mmcl.model.data import SyntheticData, sample_synthetic_batch

    cfg = mmcl.SyntheticConfig(d=60, d_tilde=50, n=12, m=4, M=4, n_test=6, n_heldout=8)
    batch = sample_synthetic_batch(cfg, [3, 0], dtype=torch.float64)
    ref = SyntheticData.stack([mmcl.sample_synthetic(cfg, s, dtype=torch.float64) for s in (3, 0)])
    for name in SyntheticData._SPEC:
        a, b = getattr(batch, name), getattr(ref, name)
        assert (a is None and b is None) or torch.equal(a, b), name
    assert torch.equal(batch.ood.nu, ref.ood.nu)
    with pytest.raises(ValueError, match="seeds must name at least one seed"):
        sample_synthetic_batch(cfg, [])
