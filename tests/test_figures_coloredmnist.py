"""The ColoredMNIST chapter's computations as library calls: the per-size settings, the cache key of
a run, the run table's helpers (caption geometry, colour-only reference), the summaries and tables
of Table 1, and the argument checks (each names its parameter)."""
import math

import matplotlib.figure

import pytest
import torch

from mmcl.cli import main
from mmcl.experiments import coloredmnist as cm
from mmcl.experiments.coloredmnist import chapter as experiment
from mmcl.experiments.coloredmnist import runs as runs_mod
from mmcl.experiments.coloredmnist.runs import (ABLATIONS, PROBE_L2_GRID, RUNS, RunResult, caption_geometry,
                                                colour_only_scores, run_one, run_spec)
from mmcl.experiments.coloredmnist.sensitivity import run_sensitivity
from mmcl.experiments.coloredmnist.table1 import PAPER, Table1Result, run_table1
from mmcl.experiments.coloredmnist.tables import format_sensitivity, format_table, format_table_html
from mmcl.figures import coloredmnist as fig_cm

SPEC_MULTI = ("RunSpec(method='multi', aug=AugmentConfig(recipe='none', crop_scale=(0.4, 1.0), "
              "crop_ratio=(0.75, 1.3333333333333333), p_flip=0.5, jitter_strength=0.5, p_jitter=0.8, "
              "p_grayscale=0.2), grayscale=False, train_overrides=(), "
              "description='CLIP-style: image tower vs ideal caption encoder (digit + colour)')")


@pytest.fixture(scope="module")
def tiny_data():
    return cm.make_colored_mnist(experiment.data_config("tiny"), seed=0)


def test_public_names_stay_importable_from_the_package():
    for name in ("ABLATIONS", "PAPER", "RUNS", "VARIANTS", "RunResult", "Table1Result", "format_table",
                 "run_one", "run_table1"):
        assert name in cm.__all__ and getattr(cm, name) is not None
    # the drawings are the figures layer's: the experiment package does not reach up for them
    for name in ("draw_table1", "draw_feature_probes", "draw_samples", "draw_probe_l2"):
        assert not hasattr(cm, name) and callable(getattr(fig_cm, name))


def test_default_size_is_the_chapter_run_and_full_adds_seeds(monkeypatch):
    """``default`` is exactly the chapter's former call ``run_table1(range(1), [*RUNS, *ABLATIONS])``
    at the default configurations (so the same cache keys); ``full`` the same at 3 seeds."""
    assert experiment.data_config("default") == cm.ColoredMNISTConfig() == experiment.data_config("full")
    assert experiment.train_config("default") == cm.TrainConfig() == experiment.train_config("full")
    calls = []
    monkeypatch.setattr(experiment, "run_table1", lambda seeds, runs, **kw: calls.append((list(seeds), runs, kw)))
    experiment.table1_result.cache_clear()
    try:
        experiment.table1_result("default", "cpu")
        experiment.table1_result("full", "cpu")
        experiment.table1_result("tiny", "cpu")
    finally:
        experiment.table1_result.cache_clear()
    (s_d, r_d, kw_d), (s_f, r_f, _), (s_t, r_t, kw_t) = calls
    assert s_d == [0] and s_f == [0, 1, 2] and s_t == [0]
    assert r_d == r_f == [*RUNS, *ABLATIONS] and len(r_d) == 9
    assert kw_d == {"data_cfg": cm.ColoredMNISTConfig(), "train_cfg": cm.TrainConfig(), "device": "cpu",
                    "progress": False}
    # tiny: few images, few steps, one run of each method
    assert kw_t["data_cfg"].n_images <= 400 and kw_t["train_cfg"].epochs == 1
    assert {run_spec(r).method for r in r_t} == {"multi", "simclr", "supervised"}
    with pytest.raises(ValueError, match="size='huge'"):
        experiment.data_config("huge")


def test_run_one_cache_key_is_unchanged(monkeypatch):
    """The namespace and parameters under which a run is cached: the dict of before the split, plus the
    CPU thread count (one thread's and two threads' runs differ in their last digits)."""
    seen = []
    monkeypatch.setattr(runs_mod, "load_or_compute", lambda ns, params, compute: seen.append((ns, params)) or "hit")
    assert run_one("multi", 2, probe_l2=1e-2) == "hit"
    ns, params = seen[0]
    assert ns == "coloredmnist"
    expected = {"run": "multi", "spec": SPEC_MULTI, "data": {**vars(cm.ColoredMNISTConfig())},
                "train": {**vars(cm.TrainConfig())}, "probe_l2": 1e-2, "seed": 2, "device": "cpu", "source": None,
                "threads": torch.get_num_threads()}
    assert params == expected
    assert params["train"]["epochs"] == 8 and params["data"]["image_size"] == 14


def test_caption_geometry_matches_constructed_cosines():
    """Digit d along e_d, colour c along cos(t) e_c + sin(t) e_{10+c}: cos_same = cos(t) and
    cos_other = 0; for a random map, the means of an explicit loop over column pairs."""
    t = 2.0
    W = torch.zeros(20, 20, dtype=torch.float64)
    for d in range(10):
        W[d, d] = 3.0  # scale does not matter
        W[d, 10 + d] = math.cos(t)
        W[10 + d, 10 + d] = math.sin(t)
    g = caption_geometry(W)
    assert g["cos_same"] == pytest.approx(math.cos(t), abs=1e-12)
    assert g["cos_other"] == pytest.approx(0.0, abs=1e-12)
    W = torch.randn(7, 20, generator=torch.Generator().manual_seed(0))
    cos = lambda a, b: float(a @ b / (a.norm() * b.norm()))  # noqa: E731
    same = sum(cos(W[:, d], W[:, 10 + d]) for d in range(10)) / 10
    other = sum(cos(W[:, d], W[:, 10 + c]) for d in range(10) for c in range(10) if c != d) / 90
    g = caption_geometry(W)
    assert g["cos_same"] == pytest.approx(same, rel=1e-5) and g["cos_other"] == pytest.approx(other, rel=1e-5)
    with pytest.raises(ValueError, match="W must have shape"):
        caption_geometry(torch.zeros(4, 19))


def test_colour_only_scores_match_a_hand_count(tiny_data):
    tr, te = tiny_data.train, tiny_data.test
    table = []
    for c in range(10):
        labels = tr.label[tr.colour == c].tolist()
        table.append(max(range(10), key=lambda k: (labels.count(k), -k)) if labels else 0)
    pred_tr = torch.tensor([table[c] for c in tr.colour.tolist()])
    pred_te = torch.tensor([table[c] for c in te.colour.tolist()])
    s = colour_only_scores(tiny_data)
    assert s["train"] == pytest.approx(float((pred_tr == tr.label).float().mean()))
    assert s["test"] == pytest.approx(float((pred_te == te.label).float().mean()))
    assert s["test_clean"] == pytest.approx(float((pred_te == te.clean_label).float().mean()))
    assert s["train"] > 0.6 and s["test"] < 0.1  # the colour agrees in training and is reversed at test


def _result(values_by_seed):
    """A hand-made Table1Result: one multi run and one SimCLR run, with the given test accuracies."""
    results = {"multi": [], "single_crop_flip": []}
    for seed, (zs, lp, cf) in enumerate(values_by_seed):
        sc = lambda v: {"train": 0.8, "test": v, "train_clean": 0.85, "test_clean": v + 0.05}  # noqa: E731
        results["multi"].append(RunResult("multi", seed, {"multi_zero_shot": sc(zs), "multi_linear_probe": sc(lp)},
                                          {"digit": 0.9, "colour": 1.0}, [1.0], 1.0, 1.0,
                                          {l2: {"train": 0.8, "test": lp} for l2 in PROBE_L2_GRID},
                                          {"cos_same": -0.2, "cos_other": 0.0}))
        results["single_crop_flip"].append(RunResult("single_crop_flip", seed, {"single_crop_flip": sc(cf)},
                                                     {"digit": 0.7, "colour": 1.0}, [1.0], 1.0, 1.0,
                                                     {l2: {"train": 0.8, "test": cf} for l2 in PROBE_L2_GRID}))
    n = len(values_by_seed)
    colour = [{"train": 0.775, "test": 0.025, "train_clean": 0.7, "test_clean": 0.03}] * n
    return Table1Result(seeds=list(range(n)), results=results, colour_only=colour, rates=[{}] * n,
                        settings={"data": vars(cm.ColoredMNISTConfig()).copy()})


def test_summary_and_tables_of_a_hand_made_result():
    res = _result([(0.80, 0.60, 0.20), (0.90, 0.70, 0.30)])
    s = res.summary()
    assert list(s) == ["multi_zero_shot", "multi_linear_probe", "single_crop_flip", "colour_only"]
    assert s["multi_zero_shot"]["test"]["mean"] == pytest.approx(0.85)
    assert s["multi_zero_shot"]["test"]["sd"] == pytest.approx(math.sqrt(0.005))  # n - 1 in the denominator
    assert res.probe_l2_summary()["single_crop_flip"][1e-2]["test"]["mean"] == pytest.approx(0.25)
    assert res.caption_geometry_summary() == {"multi": {"cos_same": {"mean": pytest.approx(-0.2), "sd": 0.0},
                                                        "cos_other": {"mean": 0.0, "sd": 0.0}}}
    md = format_table(res).splitlines()
    assert md[2] == "| multi_zero_shot | 80.00 ± 0.00 | 85.00 ± 7.07 | 85.00 ± 0.00 | 90.00 ± 7.07 |"
    assert md[-1] == f"| paper: multi-modal | {100 * PAPER['multi']['train']:.2f} | 82.13 | n/a | n/a |"
    html = format_table_html(res)
    assert html.count("<tr>") == len(md) - 1 and "<td>85.00 ± 7.07</td>" in html
    one = _result([(0.80, 0.60, 0.20)])
    assert "| single_crop_flip | 80.00 | 20.00 | 85.00 | 25.00 |" in format_table(one)
    sens = format_sensitivity({"default": one, "other": res})
    assert sens.splitlines()[2] == "| default | 80.0 | 60.0 | 20.0 | 2.5 |"
    assert sens.splitlines()[3] == "| other | 85.0 | 65.0 | 25.0 | 2.5 |"
    assert res.to_json()["probe_l2_sweep"]["multi"]["0.01"]["test"]["mean"] == pytest.approx(0.65)


def test_arguments_are_checked_and_named(tiny_data):
    with pytest.raises(ValueError, match="run='nope' is unknown"):
        run_one("nope")
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        run_one("multi", -1)
    with pytest.raises(ValueError, match="probe_l2 must be a finite number > 0"):
        run_one("multi", probe_l2=0.0)
    with pytest.raises(ValueError, match="cache must be True or False"):
        run_one("multi", cache="yes")
    with pytest.raises(ValueError, match="progress must be True or False"):
        run_one("multi", progress="no")
    with pytest.raises(ValueError, match="probe_l2"):
        run_table1([0], ["multi"], probe_l2=float("inf"))
    with pytest.raises(ValueError, match="seeds must name at least one seed"):
        run_table1([], ["multi"])
    with pytest.raises(ValueError, match=r"settings\['bad'\] has keys \['model'\]"):
        run_sensitivity([0], {"bad": {"model": {}}})
    with pytest.raises(ValueError, match="results must be a non-empty dict"):
        format_sensitivity({})
    with pytest.raises(ValueError, match="n_per_split must be a positive integer"):
        fig_cm.draw_samples(tiny_data, n_per_split=0)


def test_plot_samples_needs_every_label_in_both_splits():
    small = cm.make_colored_mnist(cm.ColoredMNISTConfig(n_images=20), seed=0)
    with pytest.raises(ValueError, match="split has no digit labelled"):
        fig_cm.draw_samples(small)


def test_cli_names_the_bad_argument(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["coloredmnist", "--out", str(tmp_path), "--no-progress", "--n-images", "5"])
    assert exc.value.code == 2
    assert "--n-images must be an integer >= 20, got 5" in capsys.readouterr().err


def test_sizes_live_in_the_chapter_module_and_the_package_reexports_them():
    assert set(experiment.BY_SIZE) == {"tiny", "default", "full"}
    for name in ("ColoredMNISTSizes", "BY_SIZE", "sizes", "data_config", "train_config", "samples_data",
                 "table1_result"):
        assert name in cm.__all__ and getattr(cm, name) is getattr(experiment, name)
    assert experiment.sizes("default").seeds == 1 and experiment.sizes("full").seeds == 3
    assert experiment.sizes("default").runs is None and len(experiment.sizes("tiny").runs) == 3
    assert experiment.data_config("tiny").n_images == 400
    assert (experiment.train_config("tiny").epochs, experiment.train_config("tiny").batch_size) == (1, 64)
    # the figure module draws only: no size table, no settings, no runs of its own
    assert not hasattr(fig_cm, "SETTINGS")
    assert not {"data_config", "train_config", "samples_data", "table1_result"} & set(fig_cm.__all__)


def test_gap_bars_pair_each_comparison_and_skip_missing_variants():
    res = _result([(0.80, 0.60, 0.20), (0.90, 0.70, 0.30)])
    bars = fig_cm.gap_bars(res)
    # the paper's row, then zero-shot and probe against crop + flip; no jitter run: no third pair
    assert [b[0].split("\n")[0] for b in bars] == ["paper,", "zero-shot vs", "linear probe vs"]
    assert bars[0][1:] == (PAPER["multi"]["test"], PAPER["single"]["test"])
    assert bars[1][1:] == (pytest.approx(0.85), pytest.approx(0.25))
    assert bars[2][1:] == (pytest.approx(0.65), pytest.approx(0.25))
    fig = fig_cm.draw_gap(res)  # draws only: the book's env.show and the command save
    try:
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert texts == [f"gap {100 * (PAPER['multi']['test'] - PAPER['single']['test']):.0f} pts",
                         "gap 60 pts", "gap 40 pts"]
        assert isinstance(fig, matplotlib.figure.Figure) and fig.get_size_inches()[0] <= 8.0
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)
