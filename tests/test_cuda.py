"""What runs only on a GPU: every test here needs CUDA and is skipped without it.  The prepared GPU
check (``scripts/gpu_check.sh``, its ``cuda_tests`` step) runs them with every other test whose code
mentions CUDA; on a machine without a GPU they are reported as skipped."""
import dataclasses

import pytest
import torch

import mmcl

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (run by scripts/gpu_check.sh)")

F64 = torch.float64


def _rel(a, b) -> float:
    a, b = a.detach().cpu().double(), b.detach().cpu().double()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-300))


@pytest.mark.parametrize("engine", ["recursion", "gd", "autograd"])
@pytest.mark.parametrize("mode", ["single", "multi"])
def test_each_engine_on_cuda_equals_the_cpu_at_float64(small_cfg, mode, engine):
    data = mmcl.sample_synthetic(small_cfg, 0, dtype=F64)
    cpu = mmcl.simulate(small_cfg, data, mode, engine, device="cpu")
    gpu = mmcl.simulate(small_cfg, data, mode, engine, device="cuda")
    assert gpu.loss.device.type == "cuda"
    for name in ("loss", "gamma", "rho") + (("gamma_tilde", "rho_tilde") if mode == "multi" else ()):
        assert _rel(getattr(gpu, name), getattr(cpu, name)) < 1e-9, name


def test_a_batch_of_span_draws_runs_on_cuda_as_on_the_cpu():
    from mmcl.experiments.theorems_regime import regime_config
    from mmcl.model.data import sample_synthetic_batch

    cfg = regime_config(100).replace(n_epochs=30)
    data = sample_synthetic_batch(cfg, range(3), span=True, dtype=F64)
    for mode in ("single", "multi"):
        cpu = mmcl.simulate(cfg, data, mode, "recursion")
        gpu = mmcl.simulate(cfg, data.to(device="cuda"), mode, "recursion")
        assert _rel(gpu.rho, cpu.rho) < 1e-9 and _rel(gpu.loss, cpu.loss) < 1e-9


def test_the_sweep_on_cuda_gives_the_cpus_losses():
    grid = {"tau": [0.1, 0.2]}
    base = mmcl.SyntheticConfig(d=300, d_tilde=250, n=24, m=10, M=10, n_epochs=50, n_test=60, n_heldout=200)
    kw = dict(seeds=[0, 1], mode=["single", "multi"], base=base, dtype="float64", cache=False, progress=False)
    cpu = mmcl.sweep(grid, device="cpu", **kw)
    gpu = mmcl.sweep(grid, device="cuda", **kw)
    assert len(cpu.rows) == len(gpu.rows) == 8
    for col in ("loss", "max_gamma", "max_rho"):
        a, b = cpu.column(col), gpu.column(col)
        assert max(abs(x - y) / abs(x) for x, y in zip(a, b)) < 1e-9, col


def test_a_decisive_run_on_cuda_equals_the_cpu_at_float64():
    from mmcl.experiments.decisive_runs import DECISIVE_SCALING, run_decisive

    scaling = dataclasses.replace(DECISIVE_SCALING, n_epochs=20)
    cpu = run_decisive(100, 2, scaling, dtype="float64")
    gpu = run_decisive(100, 2, scaling, dtype="float64", device="cuda")
    for mode in ("single", "multi"):
        c, g = cpu.modes[mode], gpu.modes[mode]
        assert _rel(g.loss, c.loss) < 1e-9
        assert _rel(g.gamma_T, c.gamma_T) < 1e-9 and _rel(g.rho_T, c.rho_T) < 1e-9
        assert _rel(g.c_ell_T1, c.c_ell_T1) < 1e-9
        assert g.tilt is not None and g.tilt.error["adapt"].shape == c.tilt.error["adapt"].shape


def test_float32_on_cuda_stays_near_float64(small_cfg):
    data = mmcl.sample_synthetic(small_cfg, 1, dtype=F64)
    ref = mmcl.simulate(small_cfg, data, "multi", "recursion", device="cuda")
    f32 = mmcl.simulate(small_cfg, data, "multi", "recursion", device="cuda", dtype="float32")
    assert f32.loss.dtype == torch.float32
    assert _rel(f32.loss, ref.loss) < 1e-4 and _rel(f32.gamma, ref.gamma) < 1e-3


def test_coloredmnist_trains_on_cuda():
    from mmcl.experiments.coloredmnist.data import ColoredMNISTConfig, make_colored_mnist
    from mmcl.experiments.coloredmnist.train import TrainConfig, train_model

    tiny = make_colored_mnist(ColoredMNISTConfig(n_images=400, image_size=14), seed=1)
    model = train_model(tiny.train, "multi", cfg=TrainConfig(epochs=1, batch_size=100), device="cuda", progress=False)
    assert torch.isfinite(torch.as_tensor(model.loss)).all()


def test_a_figure_draws_on_cuda():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mmcl.figures import registry

    fig = registry.make("setting-similarities", "tiny", "cuda")
    assert fig.axes
    plt.close(fig)
