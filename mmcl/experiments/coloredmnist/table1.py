"""Table 1 of the paper on ColoredMNIST: every run over seeds, with the colour-only reference.

:func:`run_table1` trains every run of :data:`~mmcl.experiments.coloredmnist.runs.RUNS` (and any
of :data:`~mmcl.experiments.coloredmnist.runs.ABLATIONS`) at every seed, each through the cache
(:func:`~mmcl.experiments.coloredmnist.runs.run_one`); :class:`Table1Result` summarises them
(mean and s.d. over seeds per variant, feature probes, the probe-penalty sweep, the caption
map's geometry) and writes them as JSON.  :data:`PAPER` holds the paper's two rows.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch

from mmcl._utils import check_number, resolve_device
from mmcl.codepath import current as current_code_path
from mmcl.experiments.coloredmnist.data import ColoredMNISTConfig, load_mnist, make_colored_mnist
from mmcl.experiments.coloredmnist.runs import RUNS, VARIANTS, RunResult, colour_only_scores, run_one, run_spec
from mmcl.experiments.coloredmnist.train import TrainConfig, progress_bar

__all__ = ["PAPER", "Table1Result", "run_table1"]

#: The paper's Table 1 (train / test accuracy, fractions).
PAPER = {"single": {"train": 0.8843, "test": 0.1268}, "multi": {"train": 0.8777, "test": 0.8213}}


def _mean_sd(xs: Sequence[float]) -> Dict[str, float]:
    t = torch.tensor(list(xs), dtype=torch.float64)
    return {"mean": float(t.mean()), "sd": float(t.std(correction=1)) if len(xs) > 1 else 0.0}


@dataclass
class Table1Result:
    """All runs of :func:`run_table1`: ``results[run][k]`` is the
    :class:`~mmcl.experiments.coloredmnist.runs.RunResult` of seed ``seeds[k]``; ``colour_only[k]``
    the reference's scores; ``rates[k]`` the data's realised rates."""

    seeds: List[int]
    results: Dict[str, List[RunResult]]
    colour_only: List[Dict[str, float]]
    rates: List[Dict[str, Dict[str, float]]]
    settings: Dict[str, dict]

    def variant_scores(self) -> Dict[str, Dict[str, List[float]]]:
        """``variant -> metric -> [value per seed]``, in ``VARIANTS`` order."""
        out: Dict[str, Dict[str, List[float]]] = {}
        for name, run in VARIANTS.items():
            if run is None:
                per_seed = self.colour_only
            elif run in self.results:
                per_seed = [r.variants[name] for r in self.results[run]]
            else:
                continue
            out[name] = {k: [s[k] for s in per_seed] for k in per_seed[0]}
        return out

    def summary(self) -> Dict[str, Dict[str, Dict[str, float]]]:
        """``variant -> metric -> {"mean", "sd"}`` (s.d. over seeds, ``n - 1`` in the denominator)."""
        return {v: {k: _mean_sd(xs) for k, xs in m.items()} for v, m in self.variant_scores().items()}

    def probe_summary(self) -> Dict[str, Dict[str, Dict[str, float]]]:
        """``run -> "digit"/"colour" -> {"mean", "sd"}``: what each model's features encode."""
        return {run: {k: _mean_sd([r.probes[k] for r in rs]) for k in ("digit", "colour")}
                for run, rs in self.results.items()}

    def caption_geometry_summary(self) -> Dict[str, Dict[str, Dict[str, float]]]:
        """``run -> "cos_same"/"cos_other" -> {"mean", "sd"}`` of
        :func:`~mmcl.experiments.coloredmnist.runs.caption_geometry` (multi-modal runs only)."""
        return {run: {k: _mean_sd([r.caption_geometry[k] for r in rs]) for k in ("cos_same", "cos_other")}
                for run, rs in self.results.items() if rs[0].caption_geometry}

    def probe_l2_summary(self) -> Dict[str, Dict[float, Dict[str, Dict[str, float]]]]:
        """``run -> l2 -> "train"/"test" -> {"mean", "sd"}``: the linear probe's accuracy against its
        L2 penalty (runs with a linear probe only)."""
        out = {}
        for run, rs in self.results.items():
            if rs[0].probe_l2_sweep:
                out[run] = {l2: {k: _mean_sd([r.probe_l2_sweep[l2][k] for r in rs]) for k in ("train", "test")}
                            for l2 in rs[0].probe_l2_sweep}
        return out

    def to_json(self) -> dict:
        """Everything as JSON-ready dicts: the paper's rows, the summaries (the caption map's geometry
        too), the per-seed values, the realised rates, the settings, training times and loss curves."""
        return {"paper": PAPER, "seeds": self.seeds, "variants": self.summary(),
                "per_seed": self.variant_scores(), "feature_probes": self.probe_summary(),
                "probe_l2_sweep": {run: {str(l2): v for l2, v in d.items()} for run, d in self.probe_l2_summary().items()},
                "caption_geometry": self.caption_geometry_summary(),
                "rates": self.rates, "settings": self.settings,
                "train_seconds": {run: [r.seconds for r in rs] for run, rs in self.results.items()},
                "train_cpu_seconds": {run: [r.cpu_seconds for r in rs] for run, rs in self.results.items()},
                "loss": {run: [r.loss for r in rs] for run, rs in self.results.items()}}

    def write_json(self, path) -> Path:
        """Write :meth:`to_json` to ``path`` (folders created); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2))
        return path


def run_table1(seeds: Sequence[int] = (0,), runs: Sequence[str] = tuple(RUNS), *,
               data_cfg: ColoredMNISTConfig = ColoredMNISTConfig(), train_cfg: TrainConfig = TrainConfig(),
               probe_l2: float = 1e-3, device="cpu", source=None, progress: Optional[bool] = None,
               cache: bool = True) -> Table1Result:
    """Every run of ``runs`` at every seed of ``seeds`` (each through the cache), plus the
    colour-only reference; the data of seed ``s`` are
    :func:`~mmcl.experiments.coloredmnist.data.make_colored_mnist` ``(data_cfg, s)``."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    runs = list(runs)
    for r in runs:
        run_spec(r)
    check_number("probe_l2", probe_l2, low=0)
    results: Dict[str, List[RunResult]] = {r: [] for r in runs}
    colour_only, rates = [], []
    digits = load_mnist(source)
    with progress_bar(progress, total=len(seeds) * len(runs), desc="ColoredMNIST runs") as bar:
        for seed in seeds:
            data = make_colored_mnist(data_cfg, seed, digits=digits)
            colour_only.append(colour_only_scores(data))
            rates.append({"train": data.train.rates(), "test": data.test.rates()})
            for r in runs:
                bar.set_postfix(run=r, seed=seed)
                results[r].append(run_one(r, seed, data_cfg=data_cfg, train_cfg=train_cfg, probe_l2=probe_l2,
                                          device=device, source=source, data=data, progress=progress, cache=cache))
                bar.update(1)
    settings = {"data": asdict(data_cfg), "train": asdict(train_cfg), "probe_l2": probe_l2,
                "device": str(resolve_device(device)), "code_path": current_code_path(),
                "threads": torch.get_num_threads(),
                "source": "mmcl/experiments/coloredmnist/mnist/mnist_10k.npz" if source is None else str(source),
                "runs": {r: {"method": run_spec(r).method, "aug": asdict(run_spec(r).aug),
                             "grayscale": run_spec(r).grayscale,
                             "train_overrides": dict(run_spec(r).train_overrides),
                             "description": run_spec(r).description}
                         for r in runs}}
    return Table1Result(seeds=seeds, results=results, colour_only=colour_only, rates=rates, settings=settings)
