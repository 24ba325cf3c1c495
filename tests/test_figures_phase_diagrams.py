"""The chapter "Phase diagrams" from the library: its studies per size (mmcl.experiments.sweep.studies,
reached through the chapter's experiment module mmcl.experiments.phase_diagrams), the denoised-view
summary, and the drawing helpers' argument checks (mmcl.figures.phase_diagrams)."""
import math

import pytest

import mmcl
from mmcl.experiments.sweep import expand_grid, gap_closed, phase_grid, studies, sweep
from mmcl.figures import phase as ph
from mmcl.figures import phase_diagrams as pd

TINY = mmcl.SyntheticConfig(d=120, d_tilde=100, n=12, m=6, M=5, n_epochs=60, n_test=40, n_heldout=100)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MMCL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MMCL_CACHE", "1")


def test_every_study_grid_is_valid_at_every_size_and_tiny_is_two_by_two():
    for name in studies.STUDIES:
        for size in studies.SIZES:
            grid = studies.study_grid(name, size)
            runs = expand_grid(grid, studies.study_seeds(name, size), studies.MODES, studies.study_base(size))
            points = math.prod(len(v) for v in grid.values())
            assert len(runs) == points * len(studies.study_seeds(name, size)) * 2
        assert math.prod(len(v) for v in studies.study_grid(name, "tiny").values()) <= 4 or name == "view"
        assert studies.study_seeds(name, "tiny") == [0]
    assert studies.study_base("default") == mmcl.SyntheticConfig(n_heldout=500)
    assert studies.study_base("full") == studies.study_base("default")
    assert studies.study_base("tiny").n_epochs == 20
    # the chapter's quoted grids: Figure 1's cell is in the n x SNR grid, 2 seeds by default, 8 at full size
    default = studies.study_grid("n_snr")
    assert 100 in default["n"] and 0.112 in default["snr"]
    assert studies.sizes("default").seeds == (0, 1) and studies.sizes("full").seeds == tuple(range(8))
    assert studies.study_grid("n_snr", "full")["snr"][8] == 0.112


def test_study_grid_is_a_copy():
    grid = studies.study_grid("cmu", "default")
    grid["n"].append(7)
    assert 7 not in studies.study_grid("cmu", "default")["n"]


@pytest.mark.parametrize("args,match", [(("n_snr", "huge"), "size='huge'"), (("bogus", "tiny"), "study='bogus'")])
def test_unknown_study_or_size_is_rejected_naming_it(args, match):
    with pytest.raises(ValueError, match=match):
        studies.run_study(*args)
    with pytest.raises(ValueError, match=match):
        studies.study_grid(*args)


def test_run_study_runs_its_grid_seeds_and_options_at_tiny_size():
    table = studies.run_study("d_n", "tiny", cache=False)
    grid = studies.study_grid("d_n", "tiny")
    assert len(table) == 2 * 2 * 2 and table.grid_keys == list(grid)
    assert table.unique("n") == grid["n"] and table.unique("dim") == grid["dim"]
    assert table.meta["seeds"] == [0] and table.meta["computed"] == 8
    assert all(c.n_epochs == 20 and c.n_heldout == 500 and c.d == r["dim"] for c, r in zip(table.configs, table.rows))
    assert "acc_adapt_init" in table.columns  # the d x n study scores the untrained features too


def test_summarise_view_is_the_seed_mean_of_single_modal_runs_and_the_gap_closed():
    table = sweep({"view_noise_scale": [1.0, 0.5, 0.0]}, seeds=[0, 1], mode=["single", "multi"], base=TINY,
                  progress=False)
    vs = studies.summarise_view(table)
    assert vs.lambdas == [1.0, 0.5, 0.0]

    def mean(mode, lam, col):
        vals = [r[col] for r in table.rows if r["mode"] == mode and r["view_noise_scale"] == lam]
        assert len(vals) == 2
        return sum(vals) / 2

    multi = mean("multi", 1.0, "acc_adapt")
    assert math.isclose(vs.multi_acc, multi)
    for lam in vs.lambdas:
        assert math.isclose(vs.adapt[lam]["mean"], mean("single", lam, "acc_adapt"))
        assert math.isclose(vs.transfer[lam]["mean"], mean("single", lam, "acc_transfer"))
        assert math.isclose(vs.max_rho[lam], mean("single", lam, "max_rho"))
        assert math.isclose(vs.max_gamma[lam], mean("single", lam, "max_gamma"))
        a1 = mean("single", 1.0, "acc_adapt")
        expected = (mean("single", lam, "acc_adapt") - a1) / (multi - a1) if multi != a1 else float("nan")
        assert vs.closed[lam] == pytest.approx(expected, nan_ok=True)
    assert vs.closed[1.0] == 0.0 or math.isnan(vs.closed[1.0])
    assert gap_closed(0.9, 0.7, 0.9) == 1.0 and math.isnan(gap_closed(0.8, 0.7, 0.7))
    with pytest.raises(ValueError, match="view_noise_scale = 1.0"):
        studies.summarise_view(table.filter(view_noise_scale=0.5))


def test_outline_cells_and_plot_phase_diagram_reject_bad_arguments_naming_them():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = sweep({"tau": [0.1, 0.3], "mu_norm": [2.0, 6.0]}, seeds=[0], mode=["single", "multi"], base=TINY,
                  progress=False)
    pg = phase_grid(table, "tau", "mu_norm")
    with pytest.raises(ValueError, match="annotate='numbers'"):
        ph.draw_phase_diagram(pg, annotate="numbers")
    fig = ph.draw_phase_diagram(pg, annotate="none")
    axes = fig.axes[:3]
    try:
        with pytest.raises(ValueError, match=r"\(0.2, 2.0\) is not a cell"):
            ph.outline_cells(axes[0], pg, [(0.2, 2.0)])
        ph.outline_cells(axes[0], pg, [(0.3, 6.0)], label="one")
        (patch,) = axes[0].patches
        assert patch.get_x() < 0.3 < patch.get_x() + patch.get_width()  # the rectangle covers the cell
        assert patch.get_y() < 6.0 < patch.get_y() + patch.get_height()
    finally:
        plt.close(fig)


def test_t1_figure_marks_the_epochs_trained():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = sweep({"tau": [0.1, 0.2]}, seeds=[0], mode=["single", "multi"], base=TINY, progress=False)
    fig = ph.draw_t1_ratio({"t": table}, band=(1 / 3, 3.0), n_epochs=TINY.n_epochs)
    axes = fig.axes[:2]
    try:
        for ax in axes:
            xs = [tuple(line.get_xdata()) for line in ax.get_lines()]
            assert (TINY.n_epochs, TINY.n_epochs) in xs
    finally:
        plt.close(fig)


def test_sizes():
    from mmcl.experiments import phase_diagrams as ex
    from mmcl.experiments.sizes import SIZES

    assert studies.SIZES is SIZES and set(ex.BY_SIZE) == set(SIZES) and ex.BY_SIZE is studies.BY_SIZE
    assert ex.sizes("default").seeds == (0, 1) and ex.sizes("full").seeds == tuple(range(8))
    assert ex.sizes("tiny").seeds == (0,) and ex.sizes("default").view_seeds == (0, 1, 2)
    assert all(tuple(ex.sizes(size).grids) == ex.STUDIES for size in SIZES)
    assert ex.config("default") == mmcl.SyntheticConfig(n_heldout=500) == ex.config("full")  # what the chapter runs
    assert ex.config("tiny").n_epochs < ex.config("default").n_epochs
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        ex.config("medium")
    with pytest.raises(ValueError, match="size='medium' is unknown"):
        ex.study_table("n_snr", "medium")
    # the figure module only draws: no table per size left there
    assert not [k for k, v in vars(pd).items() if isinstance(v, dict) and set(v) == set(SIZES)]


def test_study_table_is_computed_once_per_study_size_and_device():
    from mmcl.experiments import phase_diagrams as ex

    table = ex.study_table("aug_tau", "tiny", "cpu")
    assert ex.study_table("aug_tau", "tiny", "cpu") is table
    assert table.grid_keys == list(ex.study_grid("aug_tau", "tiny")) and table.meta["seeds"] == [0]
    assert list(ex.t1_tables("tiny")) == [r"$n \times$ SNR", r"$C_\mu$", r"$d \times n$",
                                          r"$\sigma_\epsilon \times \tau$"]
    assert ex.t1_tables("tiny")[r"$\sigma_\epsilon \times \tau$"] is table


def test_race_vs_runs_counts_each_run_on_the_side_its_measured_t1_names():
    from types import SimpleNamespace

    from mmcl.experiments import phase_diagrams as experiment
    from mmcl.proofs.predictions import stage1_race

    cfg = mmcl.SyntheticConfig()  # Figure 1: the noise wins the single-modal race, the signal the multi-modal
    assert stage1_race(cfg, "single").winner == "noise" and stage1_race(cfg, "multi").winner == "signal"

    def row(mode, t1, diverged=False):
        return {"mode": mode, "t1": t1, "diverged": diverged, "max_gamma": 0.5, "max_rho": 4.0,
                "acc_adapt": 0.7, "seed": 0}

    rows = [row("single", 30.0), row("single", math.inf), row("single", 30.0, diverged=True),
            row("multi", 40.0)]
    table = SimpleNamespace(rows=rows, configs=[cfg] * len(rows))
    single = experiment.race_vs_runs(table, "single")
    assert (single["runs"], single["agree"], len(single["noise"]), single["signal"]) == (2, 1, 2, [])
    ((n, c_mu, v, q),) = single["miss"]  # the run that never memorised: predicted noise, measured signal
    assert (n, c_mu, v) == (100, 3.0, 1.25) and q > 1
    assert single["t1_over_t"] == [30.0 / stage1_race(cfg, "single").noise_step]
    multi = experiment.race_vs_runs(table, "multi")
    assert (multi["runs"], multi["agree"], multi["miss"]) == (1, 1, [])
    assert multi["t1_over_t"] == [40.0 / stage1_race(cfg, "multi").signal_step]
    agree, runs, miss = experiment.margin_race_vs_runs(table, "multi")
    assert runs == 1 and agree + len(miss) == 1
    for f in (experiment.race_vs_runs, experiment.margin_race_vs_runs):
        with pytest.raises(ValueError, match="mode='both'"):
            f(table, "both")
