"""The sweep engine (issue 6): batched runs equal separate runs, draws equal sample_synthetic,
the cache reruns only what changed, bad grids fail before anything runs, dask gives the same
table, and the command line writes the table and the figures."""
import csv
import importlib
import math

import pytest
import torch

import mmcl
from helpers import f64
from mmcl.cli import main
from mmcl.downstream.evaluation import evaluate_all
from mmcl.model.losses import patches
from mmcl.experiments.sweep import SweepTable, engine_agreement, expand_grid, make_draw, phase_grid, sweep
from mmcl.experiments.sweep.draws import denoised_view
from mmcl.proofs.predictions import measured_t1, t1_formula

runner = importlib.import_module("mmcl.experiments.sweep.runner")  # where sweep looks up simulate and evaluate_all

TINY = mmcl.SyntheticConfig(d=120, d_tilde=100, n=12, m=6, M=5, n_epochs=60, n_test=40, n_heldout=100)
FIELDS = ("y", "mu", "xi", "eps", "negatives", "W0", "mu_tilde", "xi_tilde", "W0_tilde")
OOD_FIELDS = ("nu", "y_fit", "zeta_fit", "y_eval", "zeta_eval")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Every test gets its own empty cache folder."""
    monkeypatch.setenv("MMCL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MMCL_CACHE", "1")


def _assert_same_draw(a, b):
    for f in FIELDS:
        assert torch.equal(getattr(a, f), getattr(b, f)), f
    for f in OOD_FIELDS:
        assert torch.equal(getattr(a.ood, f), getattr(b.ood, f)), f


@pytest.mark.parametrize("changes", [
    {}, {"mu_norm": 3.0, "sigma_eps": 0.3, "M": 3}, {"sigma_xi": 1.7, "sigma0": 0.2, "nu_norm": 0.5},
    {"mu_tilde_norm": 2.0, "sigma_xi_tilde": 0.4, "M": 1}, {"balanced": False, "M": 2},
])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_rescaled_unit_draw_equals_sample_synthetic_bit_for_bit(changes, dtype):
    cfg = TINY.replace(**changes)
    for seed in (0, 5):
        _assert_same_draw(make_draw(cfg, seed, dtype=dtype), mmcl.sample_synthetic(cfg, seed, dtype=dtype))


@pytest.mark.parametrize("changes", [{}, {"mu_norm": 3.0, "sigma_eps": 0.3, "M": 3, "d": 10 ** 7},
                                     {"sigma_xi": 1.7, "sigma0": 0.2, "nu_norm": 0.5, "d_tilde": 10 ** 9}])
def test_rescaled_unit_span_draw_equals_sample_synthetic_span_bit_for_bit(changes):
    cfg = TINY.replace(**changes)
    for seed in (0, 5):
        a, b = make_draw(cfg, seed, dtype=torch.float64, span=True), mmcl.sample_synthetic(cfg, seed, dtype=torch.float64,
                                                                                           span=True)
        _assert_same_draw(a, b)
        assert (a.d, a.d_tilde, a.width) == (cfg.d, cfg.d_tilde, 2 * cfg.n + cfg.m + 1)


def test_span_sweep_over_d_costs_no_width_and_rows_equal_separate_span_runs():
    grid = {"dim": [400, 10 ** 6, 10 ** 9], "tau": [0.1]}
    table = sweep(grid, seeds=[0, 1], mode=["single", "multi"], base=TINY, dtype="float64", progress=False, span=True)
    assert len(table) == 3 * 2 * 2
    for row, cfg in zip(table.rows, table.configs):
        assert cfg.d == row["dim"]
        ref = _direct(cfg, row["seed"], row["mode"], span=True)
        for k in ("loss", "max_gamma", "max_rho", "t1"):
            assert _close(row[k], ref[k], 1e-9), (k, row, ref)
        for p in ("adapt", "transfer"):
            assert abs(row[f"acc_{p}"] - ref[f"acc_{p}"]) <= 1.0 / cfg.n_heldout + 1e-12
    # the same grid without span draws at d = 400 is another draw: the cache must not serve one for the other
    explicit = sweep({"dim": [400], "tau": [0.1]}, seeds=[0], mode="single", base=TINY, dtype="float64", progress=False)
    ref = _direct(explicit.configs[0], 0, "single")
    assert _close(explicit.rows[0]["max_rho"], ref["max_rho"], 1e-9)
    span_row = next(r for r in table.rows if r["dim"] == 400 and r["seed"] == 0 and r["mode"] == "single")
    assert not _close(explicit.rows[0]["max_rho"], span_row["max_rho"], 1e-6)


def test_span_option_is_checked_and_keyed_only_when_set():
    from mmcl.experiments.sweep.options import SweepConfig
    from mmcl.experiments.sweep.runner import _cache_params

    with pytest.raises(ValueError, match="SweepConfig.span"):
        SweepConfig(span=1)
    assert "span" not in _cache_params(TINY, 1.0, 0, "single", SweepConfig())  # explicit keys as before
    assert _cache_params(TINY, 1.0, 0, "single", SweepConfig(span=True))["span"] is True


@pytest.mark.parametrize("lam", [0.0, 0.3, 2.0])
def test_denoised_view_positive_noise_patch_is_lambda_times_xi_plus_eps(lam):
    cfg = TINY.replace(sigma_eps=0.4)
    plain = f64(cfg, 1)
    view = make_draw(cfg, 1, lam, dtype=torch.float64)
    pos = patches(view)["x_pos"][0, :, 1]  # noise patch of the positives, as the losses see it
    assert torch.allclose(pos, lam * (plain.xi + plain.eps), rtol=0, atol=1e-13)
    assert torch.equal(patches(view)["x"], patches(plain)["x"])  # the anchors are untouched
    assert torch.equal(make_draw(cfg, 1, 1.0, dtype=torch.float64).eps, plain.eps)  # lambda = 1 is Eq. (5)


def _direct(cfg, seed, mode, lam=1.0, protocols=("adapt", "transfer"), dtype=torch.float64, span=False):
    """One run the plain way: sample_synthetic, simulate, evaluate_all, measured_t1."""
    data = mmcl.sample_synthetic(cfg, seed, dtype=dtype, span=span)
    if lam != 1.0:
        data = denoised_view(data, lam)
    traj = mmcl.simulate(cfg, data, mode, "recursion")
    ev = evaluate_all(traj, data, protocols, every=cfg.n_epochs)
    return {"loss": float(traj.loss[-1]), "max_gamma": float(traj.gamma[-1].max()),
            "max_rho": float(traj.rho[-1].max()), "t1": float(measured_t1(traj)),
            "t1_formula": t1_formula(cfg, mode), **{f"acc_{p}": float(e.accuracy[-1]) for p, e in ev.items()},
            **{f"acc_{p}_init": float(e.accuracy[0]) for p, e in ev.items()}}


def _close(a, b, tol):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol * (1 + abs(b))


def test_batched_sweep_rows_equal_separate_runs():
    grid = {"tau": [0.1, 0.3], "snr": [0.2, 0.5], "c_mu": [3.0], "view_noise_scale": [1.0, 0.5]}
    table = sweep(grid, seeds=[0, 2], mode=["single", "multi"], base=TINY, dtype="float64", progress=False,
                  batch_size=16)
    assert len(table) == 2 * 2 * 2 * 2 * 2
    assert table.meta["batches"] >= 2  # single and multi cannot share a batch
    for row, cfg in zip(table.rows, table.configs):
        assert math.isclose(cfg.snr, row["snr"]) and math.isclose(cfg.c_mu, row["c_mu"])
        ref = _direct(cfg, row["seed"], row["mode"], row["view_noise_scale"])
        for k in ("loss", "max_gamma", "max_rho", "t1", "t1_formula"):
            assert _close(row[k], ref[k], 1e-9), (k, row, ref)
        for p in ("adapt", "transfer"):  # a sample whose score is ~0 may flip by round-off: allow one
            assert abs(row[f"acc_{p}"] - ref[f"acc_{p}"]) <= 1.0 / cfg.n_heldout + 1e-12
        assert row["diverged"] is False


def test_runs_sharing_a_draw_are_scored_against_it_once(monkeypatch):
    """Runs of one seed that differ only in what scoring never reads (tau, sigma_eps) share the
    draw's tensors, and the sweep scores them against that one draw (batch dimension 1); their
    rows still equal separate runs (test above)."""
    seen = []
    real = runner.evaluate_all

    def spy(traj, data, *args, **kwargs):
        seen.append((traj.gamma.shape[0], data.y.shape[0]))
        return real(traj, data, *args, **kwargs)

    monkeypatch.setattr(runner, "evaluate_all", spy)
    table = sweep({"tau": [0.1, 0.2, 0.3], "sigma_eps": [0.05, 0.2]}, seeds=[0, 1], mode="single", base=TINY,
                  dtype="float64", progress=False, cache=False)
    assert sorted(seen) == [(6, 1), (6, 1)]  # per seed: six runs, one draw
    for row, cfg in zip(table.rows, table.configs):
        ref = _direct(cfg, row["seed"], "single")
        for p in ("adapt", "transfer"):
            assert abs(row[f"acc_{p}"] - ref[f"acc_{p}"]) <= 1.0 / cfg.n_heldout + 1e-12


def test_runs_of_different_dimensions_share_a_batch_and_equal_separate_runs():
    # the recursion sees only inner products: draws of different d are zero-padded into one batch
    table = sweep({"dim": [30, 120], "tau": [0.1, 0.2], "nu_ratio": [0.4]}, seeds=[0, 1], mode=["single", "multi"],
                  base=TINY.replace(sigma0=0.05), dtype="float64", progress=False, batch_size=64, score_init=True)
    assert table.meta["batches"] == 2  # one per mode, both dimensions inside
    for row, cfg in zip(table.rows, table.configs):
        assert cfg.d == cfg.d_tilde == row["dim"] and math.isclose(cfg.nu_norm, 0.4 * cfg.mu_norm)
        ref = _direct(cfg, row["seed"], row["mode"])
        for k in ("loss", "max_gamma", "max_rho", "t1"):
            assert _close(row[k], ref[k], 1e-9), (k, row, ref)
        for p in ("adapt", "transfer", "adapt_init", "transfer_init"):  # score_init: step 0 is scored too
            assert abs(row[f"acc_{p}"] - ref[f"acc_{p}"]) <= 1.0 / cfg.n_heldout + 1e-12
    assert any(r["acc_adapt"] != r["acc_adapt_init"] for r in table.rows)


def test_shapes_are_grouped_and_runs_batched():
    grid = {"n": [8, 12], "lr": [0.01, 0.02, 0.03], "neg_frac": [1.0]}
    table = sweep(grid, seeds=[0, 1], mode="single", base=TINY, progress=False, batch_size=64)
    assert len(table) == 2 * 3 * 2
    assert table.meta["batches"] == 2  # one batch per shape (n), all lr x seeds inside
    assert sorted(table.unique("n")) == [8, 12]
    small = table.meta["batches"]
    again = sweep(grid, seeds=[0, 1], mode="single", base=TINY, progress=False, batch_size=4, cache=False)
    assert again.meta["batches"] == 2 * math.ceil(6 / 4) > small
    for a, b in zip(table.rows, again.rows):
        assert _close(a["loss"], b["loss"], 1e-5) and a["seed"] == b["seed"]


def test_cache_makes_rerun_instant_and_reruns_only_changed_points():
    grid = {"tau": [0.1, 0.2], "mu_norm": [3.0, 5.0]}
    first = sweep(grid, seeds=[0], mode=["single", "multi"], base=TINY, progress=False)
    assert first.meta["computed"] == 8 and first.meta["cached"] == 0
    again = sweep(grid, seeds=[0], mode=["single", "multi"], base=TINY, progress=False)
    assert again.meta["computed"] == 0 and again.meta["cached"] == 8
    assert [r["loss"] for r in again.rows] == [r["loss"] for r in first.rows]
    grown = sweep({"tau": [0.1, 0.2, 0.4], "mu_norm": [3.0, 5.0]}, seeds=[0], mode=["single", "multi"],
                  base=TINY, progress=False)
    assert grown.meta["computed"] == 4 and grown.meta["cached"] == 8  # only tau = 0.4 ran
    off = sweep(grid, seeds=[0], mode="single", base=TINY, progress=False, cache=False)
    assert off.meta["computed"] == 4


def test_parameters_a_mode_never_reads_are_computed_once():
    # the premise: single-modal runs do not depend on mu~'s norm, multi-modal runs not on eps
    a = mmcl.simulate(TINY, make_draw(TINY, 0, dtype=torch.float64), "single")
    b_cfg = TINY.replace(mu_tilde_norm=1.0, sigma_xi_tilde=3.0)
    b = mmcl.simulate(b_cfg, make_draw(b_cfg, 0, dtype=torch.float64), "single")
    assert torch.equal(a.rho, b.rho) and torch.equal(a.loss, b.loss)
    c_cfg = TINY.replace(sigma_eps=0.7)
    c = mmcl.simulate(TINY, make_draw(TINY, 0, 0.2, dtype=torch.float64), "multi")
    d = mmcl.simulate(c_cfg, make_draw(c_cfg, 0, dtype=torch.float64), "multi")
    assert torch.equal(c.rho, d.rho) and torch.equal(c.gamma_tilde, d.gamma_tilde)
    table = sweep({"c_mu": [1.0, 2.0, 4.0]}, seeds=[0, 1], mode=["single", "multi"], base=TINY, progress=False)
    assert table.meta["computed"] == 2 + 6  # single: once per seed; multi: every C_mu
    single = table.filter(mode="single")
    assert len(set(single.filter(seed=0).column("loss"))) == 1
    assert len(set(table.filter(mode="multi", seed=0).column("loss"))) == 3


@pytest.mark.parametrize("grid,match", [
    ({"temperature": [0.1]}, "temperature"),
    ({"tau": []}, r"grid\['tau'\] is empty"),
    ({"tau": 0.1}, r"grid\['tau'\] must be a list"),
    ({"tau": [0.1, -1.0]}, "tau"),
    ({"n": [12, 13]}, r"SyntheticConfig.n must be even"),
    ({"n": [4, 12]}, r"M=5 exceeds .*put 'M' or 'neg_frac'"),
    ({"lr": [0.01, 0.01]}, r"grid\['lr'\] repeats"),
    ({"neg_frac": [0.5, 1.5]}, r"neg_frac.*1.5"),
    ({"view_noise_scale": [-0.5]}, "view_noise_scale"),
    ({"snr": [0.1], "mu_norm": [2.0]}, r"\['snr', 'mu_norm'\] set the same field"),
    ({"c_mu": [0.0]}, r"c_mu.*> 0"),
    ({"dim": [40], "d": [40]}, r"\['dim', 'd'\] set the same field"),
    ({"dim": [1]}, r"dim.*>= 2"),
    ({"m": [4, 2.5]}, r"SyntheticConfig.m must be a positive integer"),
])
def test_bad_grid_fails_before_any_run_naming_the_parameter(grid, match, monkeypatch):
    def no_run(*args, **kwargs):
        raise AssertionError("a run started before the grid was validated")

    monkeypatch.setattr(runner, "simulate", no_run)
    with pytest.raises(ValueError, match=match):
        sweep(grid, seeds=[0], mode="single", base=TINY, progress=False)


@pytest.mark.parametrize("kwargs,match", [
    ({"seeds": []}, "seeds is empty"), ({"seeds": [0, -1]}, "seeds"), ({"mode": "both"}, "mode='both'"),
    ({"engine": "euler"}, "engine='euler'"), ({"batch_size": 0}, "batch_size"),
    ({"protocols": ("probe",)}, "protocols"),
])
def test_bad_options_fail_naming_the_option(kwargs, match):
    args = {"seeds": [0], "mode": "single", **kwargs}
    with pytest.raises(ValueError, match=match):
        sweep({"tau": [0.1]}, base=TINY, progress=False, **args)


def test_derived_parameters_set_the_fields_they_name():
    runs = expand_grid({"n": [8, 12], "n_snr2": [0.5], "c_mu": [2.66], "neg_frac": [0.5]}, seeds=[0],
                       mode="single", base=TINY.replace(d=400, sigma_xi=2.0))
    for r in runs:
        c = r.cfg
        assert math.isclose(c.n * c.snr ** 2, 0.5, rel_tol=1e-12)
        assert math.isclose(c.mu_tilde_norm / c.mu_norm, 2.66, rel_tol=1e-12)
        assert c.M == math.ceil(0.5 * c.n / 2)
    (r,) = expand_grid({"snr": [0.25]}, base=TINY)
    assert math.isclose(r.cfg.mu_norm, 0.25 * math.sqrt(TINY.d), rel_tol=1e-12)
    (r,) = expand_grid({"dim": [50], "snr": [0.25], "nu_ratio": [0.5]}, base=TINY)
    assert (r.cfg.d, r.cfg.d_tilde) == (50, 50) and math.isclose(r.cfg.snr, 0.25)
    assert math.isclose(r.cfg.nu_norm, 0.5 * r.cfg.mu_norm, rel_tol=1e-12)


def test_diverging_run_is_a_row_and_does_not_spoil_its_batch():
    base = TINY.replace(tau=0.05, sigma0=0.5)  # lr = 100 overflows float32 within a few steps
    table = sweep({"lr": [0.01, 100.0]}, seeds=[0, 1], mode="single", base=base, progress=False, batch_size=8)
    assert table.meta["batches"] == 1
    for row in table.rows:
        if row["lr"] == 100.0:
            assert row["diverged"] is True and math.isnan(row["loss"]) and math.isnan(row["acc_adapt"])
        else:
            ref = _direct(base.replace(lr=0.01), row["seed"], "single", dtype=torch.float32)
            assert row["diverged"] is False and _close(row["loss"], ref["loss"], 1e-5)


def test_dask_local_cluster_gives_the_same_table():
    distributed = pytest.importorskip("distributed")
    grid = {"tau": [0.1, 0.2], "n": [8, 12], "neg_frac": [1.0]}
    local = sweep(grid, seeds=[0], mode=["single", "multi"], base=TINY, progress=False, cache=False, dtype="float64")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        with distributed.Client(lc) as client:
            remote = sweep(grid, seeds=[0], mode=["single", "multi"], base=TINY, progress=False, cache=False,
                           dtype="float64", client=client, batch_size=2)
    assert remote.meta["batches"] == 4
    assert [(r["tau"], r["n"], r["mode"]) for r in remote.rows] == [(r["tau"], r["n"], r["mode"]) for r in local.rows]
    for a, b in zip(local.rows, remote.rows):
        assert _close(a["loss"], b["loss"], 1e-9) and _close(a["max_rho"], b["max_rho"], 1e-9)


def test_client_must_be_a_dask_client():
    with pytest.raises(ValueError, match="client"):
        sweep({"tau": [0.1]}, seeds=[0], base=TINY, progress=False, client=object())


def test_recursion_and_gd_agree_on_a_random_sample_of_the_grid_float64():
    grid = {"n": [8, 12], "snr": [0.2, 0.6], "c_mu": [1.0, 3.0], "tau": [0.1, 0.5], "neg_frac": [1.0]}
    rows = engine_agreement(grid, seeds=[0, 1], mode=["single", "multi"], base=TINY.replace(sigma0=0.05),
                            n_samples=5, rng_seed=3)
    assert len(rows) == 5 and {r["mode"] for r in rows} == {"single", "multi"}
    for r in rows:
        assert r["max_abs_diff"] <= 1e-9
        assert r["decomposed"] <= 1e-9  # against Eq. (11) solved for gd's weights, not gd's own bookkeeping
        assert r["scale"] > 0.05  # the coefficients really moved


def test_phase_grid_is_the_seed_mean_and_gap_is_multi_minus_single():
    table = sweep({"tau": [0.1, 0.3], "mu_norm": [2.0, 6.0]}, seeds=[0, 1], mode=["single", "multi"], base=TINY,
                  progress=False)
    pg = phase_grid(table, "tau", "mu_norm")
    assert pg.xs == [0.1, 0.3] and pg.ys == [2.0, 6.0]
    for iy, mu in enumerate(pg.ys):
        for ix, tau in enumerate(pg.xs):
            vals = {m: [r["acc_adapt"] for r in table.rows if r["tau"] == tau and r["mu_norm"] == mu and r["mode"] == m]
                    for m in ("single", "multi")}
            assert len(vals["single"]) == 2
            assert math.isclose(pg.single[iy, ix], sum(vals["single"]) / 2)
            assert math.isclose(pg.gap[iy, ix], sum(vals["multi"]) / 2 - sum(vals["single"]) / 2)
    with pytest.raises(ValueError, match="tau"):
        phase_grid(table, "mu_norm", "seed")


def test_table_csv_round_trip_and_filter(tmp_path):
    table = sweep({"tau": [0.1, 0.2]}, seeds=[0, 1], mode="single", base=TINY, progress=False)
    path = table.to_csv(tmp_path / "t.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(table) and list(rows[0]) == table.columns
    assert [float(r["loss"]) for r in rows] == table.column("loss")
    assert len(table.filter(tau=0.2)) == 2 and len(table.filter(lambda r: r["seed"] == 1)) == 2
    with pytest.raises(ValueError, match="no column"):
        table.column("accuracy")
    other = sweep({"mu_norm": [3.0]}, seeds=[0], mode="single", base=TINY, progress=False)
    both = SweepTable.concat([table, other])
    assert len(both) == len(table) + 1 and set(both.columns) == set(table.columns) | {"mu_norm"}
    assert both.rows[0]["mu_norm"] is None and both.rows[-1]["tau"] is None


TOML = """
[sweep]
seeds = 2
modes = ["single", "multi"]
protocols = ["adapt"]

[base]
d = 120
d_tilde = 100
n = 12
m = 6
M = 5
n_epochs = 40
n_test = 40
n_heldout = 100

[grid]
tau = [0.1, 0.2]
snr = [0.2, 0.4]
c_mu = [3.0]

[[plot]]
x = "tau"
y = "snr"
name = "phase-tau-snr"
"""


def test_cli_sweep_writes_table_and_figures(tmp_path, capsys):
    cfg = tmp_path / "s.toml"
    cfg.write_text(TOML)
    out = tmp_path / "out"
    assert main(["sweep", str(cfg), "--out", str(out), "--format", "both"]) == 0
    with open(out / "sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 * 2 * 2 and "acc_adapt" in rows[0] and "acc_transfer" not in rows[0]
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(out / "sweep.parquet").num_rows == len(rows)
    for name in ("phase-tau-snr", "sweep-t1-ratio"):
        for ext in ("pdf", "svg", "png"):
            assert (out / f"{name}.{ext}").stat().st_size > 1000
    assert "16 runs" in capsys.readouterr().out


@pytest.mark.parametrize("text,match", [
    (TOML.replace("[grid]", "[grid]\nbogus = [1]"), "bogus"),
    (TOML.replace("seeds = 2", "seeds = 2\nthreads = 4"), "threads"),
    (TOML.replace("tau = [0.1, 0.2]", "tau = []"), "tau"),
])
def test_cli_rejects_bad_sweep_files(tmp_path, capsys, text, match):
    cfg = tmp_path / "s.toml"
    cfg.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(cfg), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert match in capsys.readouterr().err


def test_cli_sweep_takes_span_draws_from_the_file(tmp_path):
    cfg = tmp_path / "s.toml"
    text = TOML.replace("protocols = [\"adapt\"]", "protocols = [\"adapt\"]\nspan = true")
    cfg.write_text(text.replace("d = 120\nd_tilde = 100", "d = 100000000\nd_tilde = 100000000"))
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "out")]) == 0
    with open(tmp_path / "out" / "sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 16
    # (an explicit draw at d = 10^8 would hold 2.4 x 10^9 noise entries per run); a row equals its span run
    base = TINY.replace(d=10 ** 8, d_tilde=10 ** 8, n_epochs=40, n_heldout=100)
    r = next(r for r in rows if r["mode"] == "single" and r["seed"] == "0" and float(r["tau"]) == 0.1
             and float(r["snr"]) == 0.2)
    run = next(c for c in sweep({"tau": [0.1], "snr": [0.2], "c_mu": [3.0]}, seeds=[0], mode="single", base=base,
                                protocols=("adapt",), span=True, progress=False).rows)
    assert _close(float(r["max_rho"]), run["max_rho"], 1e-6)
