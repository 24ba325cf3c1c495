"""Figure 1 at the paper's defaults (Sec. 6), five seeds: the claims of the figure as assertions."""
import pytest
import torch

import mmcl
from mmcl.cli import main
from mmcl.experiments.figure1 import run_figure1


@pytest.fixture(scope="module")
def fig1():
    return run_figure1(mmcl.SyntheticConfig(), range(5), eval_every=50)


def test_figure1_transfer_protocol_single_near_chance_multi_near_one(fig1):
    single, multi = fig1.curves["single"].final(), fig1.curves["multi"].final()
    assert single["acc_transfer"] <= 0.62
    assert multi["acc_transfer"] >= 0.90


def test_figure1_adapt_protocol_gap(fig1):
    single, multi = fig1.curves["single"].final(), fig1.curves["multi"].final()
    assert multi["acc_adapt"] >= 0.88
    assert multi["acc_adapt"] - single["acc_adapt"] >= 0.20


def test_figure1_both_losses_converge(fig1):
    for mode in ("single", "multi"):
        assert fig1.curves[mode].final()["loss"] <= 0.05


def test_figure1_signal_to_noise_ratio_of_coefficients(fig1):
    ratio = {m: c.final()["max_gamma"] / c.final()["max_rho"] for m, c in fig1.curves.items()}
    assert ratio["multi"] >= 5 * ratio["single"]


def test_cli_figure_writes_three_formats(tmp_path, capsys):
    assert main(["figure", "fig1", "--out", str(tmp_path), "--seeds", "1"]) == 0
    for ext in ("pdf", "svg", "png"):
        f = tmp_path / f"fig1-dynamics.{ext}"
        assert f.exists() and f.stat().st_size > 1000
    assert "multi" in capsys.readouterr().out


def test_cli_rejects_bad_seeds(tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["figure", "fig1", "--out", str(tmp_path), "--seeds", "0"])
    assert exc.value.code == 2
