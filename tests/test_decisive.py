"""The decisive runs (mmcl.experiments.decisive_runs, `mmcl regime`): the scaling meets
the premises it claims, the parallel nu lies where it should in the span basis, a run at a tiny n
has the documented shape and agrees with float64, the trend's difference test, the command's file,
and bad input."""
import json
import math

import pytest
import torch

from mmcl.cli import main
from mmcl.experiments import decisive_runs as dr
from mmcl.experiments import theorems_regime as regime
from mmcl.model.data import sample_synthetic_batch
from mmcl.proofs.assumptions import check_assumption41


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_the_scaling_meets_every_premise_but_4b_c10_and_d6_from_n_decisive():
    for n in (dr.N_DECISIVE, 10000):
        cfg = dr.decisive_config(n)
        conds = dr.decisive_conditions(cfg)
        assert [c.key for c in conds if not c.holds] == ["4b", "C.10", "D.6"], n
        assert 1 - 1e-8 < cfg.nu_condition <= 1.0  # Sec. 3.3 with constant 1, at its edge
        assert cfg.d == regime.b2_dimension(n) and cfg.d > regime.D_MAX
    below = dr.decisive_conditions(dr.decisive_config(dr.N_DECISIVE - 2))
    assert [c.key for c in below if not c.holds] == ["4a", "4b", "C.10", "D.6"]
    assert dr.N_DECISIVE == 2 * math.ceil(2500 * math.log(40) / 2)
    # no proof on either theorem's path uses 4b (Lemma D.8 is cited by no later proof) or D.6's
    assert not {"4b", "D.6"} & set(dr.mode_premises("single") + dr.mode_premises("multi"))
    assert "D.4" in dr.mode_premises("multi") and "D.4" not in dr.mode_premises("single")
    from mmcl.proofs.blueprint import premise_keys
    assert dr.mode_premises("multi") == premise_keys("Theorem 4.3 (2)") and "3.3" in dr.mode_premises("multi")
    assert "C.10" in dr.mode_premises("single") and "C.10" not in dr.mode_premises("multi")


def test_the_two_nu_in_one_span_basis():
    cfg = dr.decisive_config(40)
    data = sample_synthetic_batch(cfg, range(2), span=True, dtype=torch.float64)
    par = dr.parallel_ood(data.ood, cfg)
    mu = data.mu
    for ood, nu_mu in ((data.ood, cfg.nu_mu), (par, cfg.nu_norm * cfg.mu_norm)):
        assert torch.allclose((ood.nu * mu).sum(-1), torch.full((2,), nu_mu, dtype=torch.float64), rtol=1e-12)
        assert torch.allclose(ood.nu.norm(dim=-1), torch.full((2,), cfg.nu_norm, dtype=torch.float64), rtol=1e-12)
    assert torch.equal(par.zeta_eval, data.ood.zeta_eval) and torch.equal(par.y_fit, data.ood.y_fit)
    with pytest.raises(ValueError, match="ood"):
        dr.parallel_ood("ood", cfg)


@pytest.fixture(scope="module")
def runs():
    torch.set_num_threads(1)
    return {dt: dr.run_decisive(40, 2, dtype=dt) for dt in ("float32", "float64")}


def test_a_tiny_run_has_the_documented_shape(runs):
    r = runs["float32"]
    assert r.n == 40 and r.seeds == [0, 1] and r.seconds > 0
    for mode in ("single", "multi"):
        m = r.modes[mode]
        for nu in dr.NUS:
            for p in ("adapt", "transfer"):
                e = m.error[nu, p]
                assert e.shape == (2,) and bool(((e >= 0) & (e <= 1)).all())
        assert set(m.parts) == {(v, p) for v in dr.NUS + ("zeta",) for p in ("init", "signal", "memorised")}
        assert bool((m.loss < m.loss0).all())
    multi = r.modes["multi"]
    assert float(multi.error["parallel", "adapt"].max()) == 0.0  # the paper's nu: the multi-modal features read it
    # Sec. 3.3's nu: its signal part is O(1/sqrt(d)) of the parallel one's
    assert float((multi.parts["sec33", "signal"] / multi.parts["parallel", "signal"]).max()) < 1e-6
    assert r.c9_bound == pytest.approx(r.cfg.sigma0 * math.sqrt(r.cfg.d * 40) * (1 + math.sqrt(math.log(10) / 2)))


def test_float32_agrees_with_float64_at_lemma_b2s_dimension(runs):
    """At d = 3.8e16 (n = 40) float32 gives the loss and the coefficients of float64 to 1e-4."""
    a, b = runs["float32"], runs["float64"]
    for mode in ("single", "multi"):
        for name in ("loss", "gamma_T1", "rho_T1", "gamma_T", "rho_T"):
            x, y = getattr(a.modes[mode], name), getattr(b.modes[mode], name)
            assert torch.allclose(x, y, rtol=1e-4), (mode, name)


def test_to_json_has_the_issues_keys(runs):
    j = json.loads(json.dumps(runs["float32"].to_json()))
    assert {"config", "seconds", "single", "multi"} <= set(j)
    for mode in ("single", "multi"):
        r = j[mode]
        assert isinstance(r["failing_conditions"], list) and isinstance(r["loss"], float)
        assert set(r["sec33"]) == {"ratio", "holds"} and r["sec33"]["holds"] is True
        assert set(r["ood_error"]) == {"sec33", "parallel"}
        assert all(set(v) == {"adapt", "transfer"} for v in r["ood_error"].values())
    assert j["config"]["n"] == 40 and j["config"]["d"] == regime.b2_dimension(40)


def test_error_trend_difference_test():
    flat = dr.error_trend([100, 1000], [torch.tensor([0.5, 0.49]), torch.tensor([0.5, 0.51])], 1000)
    assert flat.difference == pytest.approx(0.01) and flat.difference_se > 0.005
    assert flat.last == pytest.approx(0.505)
    falling = dr.error_trend([100, 1000, 10000], [torch.tensor([0.1]), torch.tensor([0.01]), torch.tensor([0.001])], 1000)
    assert falling.fit.slope == pytest.approx(-1.0, abs=1e-6)  # float32 inputs


def test_chains_run_at_a_tiny_n():
    c = dr.decisive_chains(40, 1)
    assert c.n == 40 and math.isfinite(c.factor17) and math.isfinite(c.factor14)
    assert len(c.horizon_single) == 1 and len(c.horizon_multi) == 1
    assert 0 <= c.d14_fail <= 1


def test_the_command_writes_results_json(tmp_path, capsys):
    assert main(["regime", "--n", "40", "--out", str(tmp_path)]) == 0
    j = json.loads((tmp_path / "results.json").read_text())
    assert set(j["multi"]["ood_error"]["sec33"]) == {"adapt", "transfer"}
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv, msg", [(["--n", "41"], "--n must be even"), (["--n", "40", "--seeds", "0"], "--seeds")])
def test_the_command_refuses_bad_input(tmp_path, capsys, argv, msg):
    with pytest.raises(SystemExit) as exc:
        main(["regime", *argv, "--out", str(tmp_path)])
    assert exc.value.code == 2 and msg in capsys.readouterr().err


@pytest.mark.parametrize("kw, name", [({"sec33_ratio": 1.5}, "sec33_ratio"), ({"sec33_ratio": 0.0}, "sec33_ratio")])
def test_decisive_config_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        dr.decisive_config(100, **kw)


def test_run_decisive_bad_input():
    with pytest.raises(ValueError, match="seeds"):
        dr.run_decisive(40, 0)
    with pytest.raises(ValueError, match="scaling"):
        dr.run_decisive(40, 1, "b2")
    with pytest.raises(ValueError, match="seeds must map"):
        dr.run_decisive_sweep({40: 1})
    with pytest.raises(ValueError, match="mode"):
        dr.mode_premises("both")


def test_the_pages_tables_print_the_runs_means(runs):
    """error_table and point_summary (what the chapter prints) read the run's own numbers."""
    from mmcl.experiments import decisive_runs as experiment

    r = runs["float64"]
    table = experiment.error_table(dr.DecisiveSweep(sizes=[40], by_n={40: r})).splitlines()
    assert len(table) == 2 and table[0].split()[:2] == ["n", "seeds"]
    cells = table[1].split()
    assert cells[:2] == ["40", "2"] and len(cells) == 2 + 2 * len(dr.NUS) * 2
    expected = [float(r.modes[m].error[nu, p].mean()) for m in ("single", "multi")
                for nu in dr.NUS for p in ("adapt", "transfer")]
    assert [float(c) for c in cells[2:]] == pytest.approx(expected, abs=5.01e-4)  # three decimals
    summary = experiment.point_summary(r)
    assert summary.startswith(f"n = 40, d = {r.cfg.d:.2e}; failing premises: ")
    assert f"multi-modal: final loss {float(r.modes['multi'].loss.mean()):.4f}" in summary
    adapt = float(r.modes["multi"].error["sec33", "adapt"].mean())
    assert f"sec33 nu: OOD error adapt {adapt:.3f}" in summary


def test_the_pages_other_tables_read_the_runs_own_numbers(runs):
    """parts_table, ablation_table, chains_table and init_table (what the chapter prints) show the
    run's numbers, one line per item."""
    from mmcl.experiments import decisive_runs as experiment

    r = runs["float64"]
    sweep = dr.DecisiveSweep(sizes=[40], by_n={40: r})
    res = r.modes["multi"]
    parts = experiment.parts_table(sweep).splitlines()
    assert len(parts) == len(experiment.PARTS_SHOWN)
    for line, (v, part) in zip(parts, experiment.PARTS_SHOWN):
        assert line == f"n = 40: rms of the {part} part of <w, {v}>: {float(res.parts[v, part].mean()):.3g}"
    abl = experiment.ablation_table(sweep).splitlines()
    assert len(abl) == sum(len(res.ablation[nu]) for nu in dr.NUS)
    nu, (variant, acc) = dr.NUS[0], next(iter(res.ablation[dr.NUS[0]].items()))
    assert abl[0].split() == [nu, *variant.split(), *[w for p in acc for w in
                                                     (p, "error", f"{float(1 - acc[p].mean()):.3f}")]]
    init = experiment.init_table(sweep)
    assert f"B_+(0) mean {float(r.B_plus0.mean()):.3g} (formula {r.b0_mean:.3g})" in init
    assert f"Lemma C.10 holds for {float(r.c10_fraction.mean()):.1%} of the pairs" in init
    c = dr.DecisiveChains(n=40, cfg=r.cfg, feasible16=(1.25, 0.75), factor17=2.5, c18_holds=False,
                          feasible13=((0.0, 1.0), (0.0, 1.0)), d12_ratio=(1.5, 2.5), d14_fail=0.25,
                          factor14=3.0, d15_holds=True, horizon_single=[1], horizon_multi=[1])
    line = experiment.chains_table({40: c})
    assert line.startswith("n = 40: C.16 interval 1.25 .. 0.75, C.17 factor 2.50, C.18 holds: False")
    assert "D.12 distance / (sqrt(m)/||mu||) 1.50, 2.50; D.14 slack < 0 on 25% of" in line
    assert line.endswith("(factor 3.00); D.15 holds: True")


def test_the_tilted_curves_end_at_sec33s_and_the_parallel_nus_errors(runs):
    """The tilt grid's first angle is Sec. 3.3's nu and its last the parallel one, on the same labels
    and noise: the measured errors there are the run's own (an independent path: the ablation
    module's evaluation of the two OOD sets)."""
    for mode, r in runs["float64"].modes.items():
        t = r.tilt
        assert float(t.cos[0]) == pytest.approx(runs["float64"].cfg.nu_cos, rel=1e-9)
        assert float(t.cos[-1]) == 1.0
        for p in ("adapt", "transfer"):
            assert torch.allclose(t.error[p][:, 0], r.error["sec33", p], atol=1e-12), (mode, p)
            assert torch.allclose(t.error[p][:, -1], r.error["parallel", p], atol=1e-12), (mode, p)
            assert bool(((t.error[p] - t.gaussian[p]).abs() < 0.25).all())  # the prediction is of the error's size
