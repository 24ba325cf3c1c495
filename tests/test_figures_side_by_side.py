"""Chapter "Side by side" (sec-side-by-side): the computations behind its figures, and the size
table of its experiment module (mmcl.experiments.side_by_side)."""
import pytest
import torch

import mmcl
from mmcl.downstream.evaluation import evaluate, evaluate_all
from mmcl.experiments.figure1 import (SWEEP_METRICS, compare_protocols, one_at_a_time, protocol_names,
                                      sensitivity_sweep)
from mmcl.experiments import side_by_side as ex

CFG = mmcl.SyntheticConfig(d=300, d_tilde=250, n=24, m=10, M=10, n_epochs=30, n_test=60, n_heldout=200)


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("MMCL_CACHE", "0")


def test_one_at_a_time_matches_direct_runs_value_by_value():
    values, seeds = [0.1, 0.5], [0, 1]
    out = one_at_a_time("tau", values, seeds, ("single", "multi"), base=CFG, record_every=CFG.n_epochs)
    assert set(out) == {"single", "multi"}
    for mode in ("single", "multi"):
        assert set(out[mode]) == set(SWEEP_METRICS)
        assert all(t.shape == (len(values), len(seeds)) and t.dtype == torch.float64 for t in out[mode].values())
        for k, tau in enumerate(values):
            cfg = CFG.replace(tau=tau)
            for j, seed in enumerate(seeds):
                traj = mmcl.simulate(cfg, mmcl.sample_synthetic(cfg, seed), mode, "recursion")
                assert out[mode]["loss"][k, j].item() == pytest.approx(traj.loss[-1].item(), rel=1e-4)
                assert out[mode]["gamma"][k, j].item() == pytest.approx(traj.gamma[-1].max().item(), rel=1e-4)
                assert out[mode]["rho"][k, j].item() == pytest.approx(traj.rho[-1].max().item(), rel=1e-4)
    # a temperature five times larger slows training down (step factor eta / (n m tau))
    assert bool((out["multi"]["loss"][1] > out["multi"]["loss"][0]).all())


def test_one_at_a_time_and_sensitivity_reject_bad_input():
    with pytest.raises(ValueError, match="name"):
        one_at_a_time(0.1, [0.1], [0], base=CFG)
    with pytest.raises(ValueError, match="grid"):
        sensitivity_sweep({}, [0], base=CFG)


def test_sensitivity_sweep_varies_each_constant_alone():
    grid = {"sigma0": [0.001, 0.01], "M": [2, 10]}
    out = sensitivity_sweep(grid, [0], base=CFG)
    assert set(out) == set(grid)
    alone = one_at_a_time("M", [2, 10], [0], ("single", "multi"), base=CFG, record_every=CFG.n_epochs)
    for mode in ("single", "multi"):
        for k in SWEEP_METRICS:
            if k != "t1":
                torch.testing.assert_close(out["M"][mode][k], alone[mode][k])


def test_protocol_names_and_their_validation():
    assert protocol_names() == ["adapt", "adapt, in-sample", "transfer", "adapt, l2=0.0001", "adapt, l2=1"]
    assert protocol_names((0.1, 3.0), 3.0) == ["adapt", "adapt, in-sample", "transfer", "adapt, l2=0.1"]
    with pytest.raises(ValueError, match="default_l2"):
        protocol_names((1e-4, 1.0), 1e-2)


def test_compare_protocols_agrees_with_unbatched_evaluation():
    seeds = [0, 1]
    pc = compare_protocols(CFG, seeds)
    assert pc.names == protocol_names() and pc.seeds == seeds
    assert set(pc.accuracy) == {(n, m) for n in pc.names for m in ("single", "multi")}
    for mode in ("single", "multi"):
        for j, seed in enumerate(seeds):  # each seed alone, unbatched
            data = mmcl.sample_synthetic(CFG, seed)
            traj = mmcl.simulate(CFG, data, mode, "recursion")
            ev = evaluate_all(traj, data)
            assert pc.accuracy[("adapt", mode)][j].item() == pytest.approx(ev["adapt"].accuracy[-1].item(), abs=1e-6)
            assert pc.accuracy[("adapt, in-sample", mode)][j].item() == pytest.approx(
                ev["adapt"].fit_accuracy[-1].item(), abs=1e-6)
            assert pc.accuracy[("transfer", mode)][j].item() == pytest.approx(
                ev["transfer"].accuracy[-1].item(), abs=1e-6)
            strong = evaluate(traj, data, "adapt", l2=1.0).accuracy[-1].item()
            assert pc.accuracy[("adapt, l2=1", mode)][j].item() == pytest.approx(strong, abs=1e-6)
    with pytest.raises(ValueError, match="seeds"):
        compare_protocols(CFG, [])


def test_sizes_default_is_what_the_chapter_computed():
    assert ex.config("default") == mmcl.SyntheticConfig() == ex.config("full")
    assert ex.sizes("default").seeds == 5 and ex.sizes("full").seeds == 20
    assert ex.sizes("default").sweep_seeds == 3 and ex.sizes("full").sweep_seeds == 10
    assert ex.sizes("default").grid == {"tau": [0.03, 0.1, 0.3, 1.0], "sigma0": [0.001, 0.003, 0.01, 0.03, 0.1],
                                        "M": [5, 20, 45]}
    tiny = ex.config("tiny")
    assert tiny.n_epochs < 200 and tiny.d < 2000
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        ex.config("medium")


def test_sensitivity_table_prints_each_value_with_the_means_over_seeds():
    loss = torch.tensor([[0.5, 0.7], [1.0, 3.0]], dtype=torch.float64)
    acc = torch.tensor([[0.6, 0.8], [0.9, 0.95]], dtype=torch.float64)
    metrics = {"loss": loss, "adapt": acc, "transfer": acc - 0.1}
    sens = ex.Sensitivity(base=CFG, seeds=[0, 1], grid={"tau": [0.1, 1.0]},
                          sweep={"tau": {"single": metrics, "multi": {k: v + 0.01 for k, v in metrics.items()}}})
    lines = str(sens).splitlines()
    assert len(lines) == 3 and lines[0].split()[:2] == ["loss", "single"]
    first, second = lines[1].split(), lines[2].split()
    assert first[0] == "tau=0.1" and second[0] == "tau=1.0"
    # the means over the two seeds: loss 0.6 / 0.61, adapt 0.70 / 0.71, transfer 0.60 / 0.61
    assert first[1:3] == ["0.600", "0.610"] and first[4:6] == ["0.70", "0.71"] and first[7:9] == ["0.60", "0.61"]
    assert second[1:3] == ["2.000", "2.010"] and second[4:6] == ["0.93", "0.94"]
