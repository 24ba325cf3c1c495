"""Table 1 of the paper on ColoredMNIST: every variant, over seeds, cached, summarised and drawn.

A *run* trains one model (``RUNS``, plus the optional ``ABLATIONS``) and yields one or more
*variants* -- a model with one evaluation -- each with a train and a test accuracy:

=======================  =====================================================================
variant                  what it is
=======================  =====================================================================
``multi_zero_shot``      multi-modal model, zero-shot against the digit-only captions
``multi_linear_probe``   multi-modal model, linear probe on its frozen features
``single_crop_flip``     SimCLR with crop + flip, linear probe
``single_color_jitter``  SimCLR with crop + flip + colour jitter + grayscale, linear probe
``supervised``           the backbone trained with cross-entropy on the noisy labels
``shape_only``           reference: the supervised model trained and tested on grey digits
``colour_only``          reference: each colour mapped to its most frequent training label
=======================  =====================================================================

Accuracies are against the splits' noisy labels (the paper's target, at most about 0.91) and,
in ``*_clean`` fields, against the clean MNIST labels.  Every run also reports what its
features encode (:func:`~mmcl.experiments.coloredmnist.evaluate.feature_probes`).  Runs are cached with
:func:`mmcl.cache.load_or_compute` under all their settings, the seed and the device type.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch

from mmcl._utils import resolve_device
from mmcl.cache import load_or_compute
from mmcl.figures import COLORS, save_figure, style
from mmcl.experiments.coloredmnist.augment import AugmentConfig
from mmcl.experiments.coloredmnist.data import ColoredMNIST, ColoredMNISTConfig, load_mnist, make_colored_mnist
from mmcl.experiments.coloredmnist.evaluate import accuracy, colour_only_classifier, feature_probes, features, fit_probe, predict, zero_shot_predict
from mmcl.experiments.coloredmnist.train import TrainConfig, progress_bar, train_model

__all__ = ["RunSpec", "RUNS", "ABLATIONS", "VARIANTS", "PAPER", "RunResult", "Table1Result", "run_one",
           "run_table1", "plot_table1", "plot_probe_l2", "caption_geometry", "PROBE_L2_GRID", "SENSITIVITY", "run_sensitivity", "format_sensitivity", "plot_feature_probes", "plot_samples", "format_table", "format_table_html"]

#: L2 penalties of the linear probe at which every probed run is also scored (a sensitivity check).
PROBE_L2_GRID = (1e-4, 1e-3, 1e-2, 1e-1)

#: The paper's Table 1 (train / test accuracy, fractions).
PAPER = {"single": {"train": 0.8843, "test": 0.1268}, "multi": {"train": 0.8777, "test": 0.8213}}


@dataclass(frozen=True)
class RunSpec:
    """One trained model: ``method`` of :func:`~mmcl.experiments.coloredmnist.train.train_model`, its augmentation,
    grey input or not, overrides of :class:`~mmcl.experiments.coloredmnist.train.TrainConfig` fields, and a
    one-line description."""

    method: str
    aug: AugmentConfig = field(default_factory=lambda: AugmentConfig("none"))
    grayscale: bool = False
    train_overrides: tuple = ()  # ((field, value), ...) applied to the TrainConfig
    description: str = ""


#: The runs of Table 1, by name (each a :class:`RunSpec`).
RUNS: Dict[str, RunSpec] = {
    "multi": RunSpec("multi", description="CLIP-style: image tower vs ideal caption encoder (digit + colour)"),
    "single_crop_flip": RunSpec("simclr", AugmentConfig("crop_flip"), description="SimCLR, crop + flip"),
    "single_color_jitter": RunSpec("simclr", AugmentConfig("simclr"),
                                   description="SimCLR, crop + flip + colour jitter + grayscale"),
    "supervised": RunSpec("supervised", description="cross-entropy on the noisy labels"),
    "shape_only": RunSpec("supervised", grayscale=True, description="reference: supervised on grey digits"),
}

#: Optional runs that take the recipe apart, by name (each a :class:`RunSpec`).
ABLATIONS: Dict[str, RunSpec] = {
    "multi_digit_caption": RunSpec("multi", train_overrides=(("caption_colour", False),),
                                   description="multi-modal with captions naming only the digit"),
    "single_grayscale_only": RunSpec("simclr", AugmentConfig("simclr", p_jitter=0.0, p_grayscale=0.5),
                                     description="SimCLR, crop + flip + grayscale (p = 0.5), no jitter"),
    "single_strong_jitter": RunSpec("simclr", AugmentConfig("simclr", jitter_strength=1.0),
                                    description="SimCLR recipe with ImageNet strength s = 1"),
    "single_small_crops": RunSpec("simclr", AugmentConfig("crop_flip", crop_scale=(0.08, 1.0)),
                                  description="SimCLR, crop + flip with ImageNet's crop scale (0.08, 1)"),
}

#: One-at-a-time departures from the defaults, by name, each a dict with keys ``"data"``
#: (ColoredMNISTConfig fields) and ``"train"`` (TrainConfig fields);
#: :func:`run_sensitivity` reruns the main comparison under each.
SENSITIVITY: Dict[str, Dict[str, dict]] = {
    "default": {},
    "epochs=3": {"train": {"epochs": 3}},
    "epochs=20": {"train": {"epochs": 20}},
    "image_size=28": {"data": {"image_size": 28}},
    "tau_single=0.5": {"train": {"temperature_single": 0.5}},
    "tau_multi=0.5": {"train": {"temperature_multi": 0.5}},
    "feature_dim=256": {"train": {"feature_dim": 256}},
    "p_own_colour=0.5": {"data": {"p_own_colour": 0.5}},
}

#: The run that produces each variant (None for the colour-only reference, which trains nothing).
VARIANTS: Dict[str, Optional[str]] = {
    "multi_zero_shot": "multi", "multi_linear_probe": "multi", "single_crop_flip": "single_crop_flip",
    "single_color_jitter": "single_color_jitter", "supervised": "supervised", "shape_only": "shape_only",
    "colour_only": None,
    "multi_digit_caption_zero_shot": "multi_digit_caption", "multi_digit_caption_linear_probe": "multi_digit_caption",
    "single_grayscale_only": "single_grayscale_only", "single_strong_jitter": "single_strong_jitter",
    "single_small_crops": "single_small_crops",
}


@dataclass
class RunResult:
    """One run at one seed: ``variants[name] = {"train", "test", "train_clean", "test_clean"}``,
    ``probes = {"digit", "colour"}`` (feature decodability), ``probe_l2_sweep[l2] = {"train", "test"}``
    (the linear probe at each L2 penalty of ``PROBE_L2_GRID``; empty for supervised runs),
    ``caption_geometry`` (multi-modal runs: ``caption_geometry`` of the learned caption map),
    ``loss`` per epoch, training ``seconds`` and ``cpu_seconds`` (of the run that filled the cache)."""

    run: str
    seed: int
    variants: Dict[str, Dict[str, float]]
    probes: Dict[str, float]
    loss: List[float]
    seconds: float
    cpu_seconds: float
    probe_l2_sweep: Dict[float, Dict[str, float]] = field(default_factory=dict)
    caption_geometry: Dict[str, float] = field(default_factory=dict)


def _spec(run: str) -> RunSpec:
    if run in RUNS:
        return RUNS[run]
    if run in ABLATIONS:
        return ABLATIONS[run]
    raise ValueError(f"run={run!r} is unknown; valid: {', '.join(map(repr, [*RUNS, *ABLATIONS]))}")


def _scores(pred_tr, pred_te, data: ColoredMNIST) -> Dict[str, float]:
    return {"train": accuracy(pred_tr, data.train.label), "test": accuracy(pred_te, data.test.label),
            "train_clean": accuracy(pred_tr, data.train.clean_label),
            "test_clean": accuracy(pred_te, data.test.clean_label)}


def _compute_run(run: str, data: ColoredMNIST, train_cfg: TrainConfig, probe_l2: float, seed: int, device,
                 progress) -> RunResult:
    spec = _spec(run)
    cfg = replace(train_cfg, **dict(spec.train_overrides))
    model = train_model(data.train, spec.method, cfg=cfg, aug=spec.aug, seed=seed, device=device,
                        grayscale=spec.grayscale, progress=progress)
    f_tr, f_te = features(model, data.train, device), features(model, data.test, device)
    variants, sweep = {}, {}
    if spec.method == "multi":
        variants[f"{run}_zero_shot"] = _scores(zero_shot_predict(model, f_tr), zero_shot_predict(model, f_te), data)
    if spec.method == "supervised":
        variants[run] = _scores(predict(model, f_tr), predict(model, f_te), data)
    else:
        probe = fit_probe(f_tr, data.train.label, l2=probe_l2)
        name = f"{run}_linear_probe" if spec.method == "multi" else run
        variants[name] = _scores(probe.predict(f_tr), probe.predict(f_te), data)
        for l2 in PROBE_L2_GRID:
            p = probe if l2 == probe_l2 else fit_probe(f_tr, data.train.label, l2=l2)
            sweep[l2] = {"train": p.accuracy(f_tr, data.train.label), "test": p.accuracy(f_te, data.test.label)}
    probes = feature_probes(model, data.train, data.test, seed=seed, device=device, l2=probe_l2)
    geometry = caption_geometry(model.text.proj.weight.detach()) if model.text is not None else {}
    return RunResult(run=run, seed=seed, variants=variants, probes=probes, loss=model.loss,
                     seconds=model.seconds, cpu_seconds=model.cpu_seconds, probe_l2_sweep=sweep,
                     caption_geometry=geometry)


def caption_geometry(W: torch.Tensor) -> Dict[str, float]:
    """Cosines between the digit and the colour directions of a caption map ``W (k, 20)``
    (columns 0-9: digits, 10-19: colours): ``"cos_same"`` is the mean over ``d`` of
    ``cos(W[:, d], W[:, 10 + d])`` (digit d and its own training colour), ``"cos_other"`` the mean
    over ``d != c``.  Zero would mean digit and colour occupy orthogonal directions."""
    if W.ndim != 2 or W.shape[1] != 20:
        raise ValueError(f"W must have shape (k, 20); got {tuple(W.shape)}")
    Wd = torch.nn.functional.normalize(W[:, :10].T.double(), dim=-1)
    Wc = torch.nn.functional.normalize(W[:, 10:].T.double(), dim=-1)
    C = Wd @ Wc.T
    off = ~torch.eye(10, dtype=torch.bool)
    return {"cos_same": float(C.diagonal().mean()), "cos_other": float(C[off].mean())}


def _colour_only(data: ColoredMNIST) -> Dict[str, float]:
    table = colour_only_classifier(data.train)
    return _scores(table[data.train.colour], table[data.test.colour], data)


def run_one(run: str, seed: int = 0, *, data_cfg: ColoredMNISTConfig = ColoredMNISTConfig(),
            train_cfg: TrainConfig = TrainConfig(), probe_l2: float = 1e-3, device="cpu", source=None,
            data: Optional[ColoredMNIST] = None, progress: Optional[bool] = None,
            cache: bool = True) -> RunResult:
    """Train and evaluate ``run`` (a key of ``RUNS`` or ``ABLATIONS``) at ``seed``, through
    the on-disk cache (key: the run's spec, all settings, the seed, the device type and ``source``)."""
    spec = _spec(run)
    dev = resolve_device(device)
    params = {"run": run, "spec": repr(spec), "data": asdict(data_cfg), "train": asdict(train_cfg),
              "probe_l2": probe_l2, "seed": seed, "device": dev.type,
              "source": None if source is None else str(Path(source).resolve())}

    def compute():
        d = data if data is not None else make_colored_mnist(data_cfg, seed, source)
        return _compute_run(run, d, train_cfg, probe_l2, seed, dev, progress)

    if not cache:
        return compute()
    return load_or_compute("coloredmnist", params, compute)


def _mean_sd(xs: Sequence[float]) -> Dict[str, float]:
    t = torch.tensor(list(xs), dtype=torch.float64)
    return {"mean": float(t.mean()), "sd": float(t.std(correction=1)) if len(xs) > 1 else 0.0}


@dataclass
class Table1Result:
    """All runs of :func:`run_table1`: ``results[run][k]`` is the :class:`RunResult` of seed
    ``seeds[k]``; ``colour_only[k]`` the reference's scores; ``rates[k]`` the data's realised rates."""

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
        """``run -> "cos_same"/"cos_other" -> {"mean", "sd"}`` of :func:`caption_geometry`
        (multi-modal runs only)."""
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
        return {"paper": PAPER, "seeds": self.seeds, "variants": self.summary(),
                "per_seed": self.variant_scores(), "feature_probes": self.probe_summary(),
                "probe_l2_sweep": {run: {str(l2): v for l2, v in d.items()} for run, d in self.probe_l2_summary().items()},
                "rates": self.rates, "settings": self.settings,
                "train_seconds": {run: [r.seconds for r in rs] for run, rs in self.results.items()},
                "train_cpu_seconds": {run: [r.cpu_seconds for r in rs] for run, rs in self.results.items()},
                "loss": {run: [r.loss for r in rs] for run, rs in self.results.items()}}

    def write_json(self, path) -> Path:
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
        _spec(r)
    if not (isinstance(probe_l2, (int, float)) and probe_l2 > 0):
        raise ValueError(f"probe_l2={probe_l2!r} must be > 0")
    results: Dict[str, List[RunResult]] = {r: [] for r in runs}
    colour_only, rates = [], []
    digits = load_mnist(source)
    with progress_bar(progress, total=len(seeds) * len(runs), desc="ColoredMNIST runs") as bar:
        for seed in seeds:
            data = make_colored_mnist(data_cfg, seed, digits=digits)
            colour_only.append(_colour_only(data))
            rates.append({"train": data.train.rates(), "test": data.test.rates()})
            for r in runs:
                bar.set_postfix(run=r, seed=seed)
                results[r].append(run_one(r, seed, data_cfg=data_cfg, train_cfg=train_cfg, probe_l2=probe_l2,
                                          device=device, source=source, data=data, progress=progress, cache=cache))
                bar.update(1)
    settings = {"data": asdict(data_cfg), "train": asdict(train_cfg), "probe_l2": probe_l2,
                "device": str(resolve_device(device)), "source": "mmcl/experiments/coloredmnist/mnist/mnist_10k.npz" if source is None else str(source),
                "runs": {r: {"method": _spec(r).method, "aug": asdict(_spec(r).aug), "grayscale": _spec(r).grayscale,
                             "train_overrides": dict(_spec(r).train_overrides), "description": _spec(r).description}
                         for r in runs}}
    return Table1Result(seeds=seeds, results=results, colour_only=colour_only, rates=rates, settings=settings)


def run_sensitivity(seeds: Sequence[int] = (0,), settings: Optional[Dict[str, Dict[str, dict]]] = None,
                    runs: Sequence[str] = ("multi", "single_crop_flip"), *,
                    data_cfg: ColoredMNISTConfig = ColoredMNISTConfig(), train_cfg: TrainConfig = TrainConfig(),
                    **kwargs) -> Dict[str, Table1Result]:
    """:func:`run_table1` of ``runs`` under each entry of ``settings`` (default :data:`SENSITIVITY`):
    ``{"data": {...}, "train": {...}}`` replaces fields of ``data_cfg`` / ``train_cfg``."""
    settings = SENSITIVITY if settings is None else settings
    out = {}
    for name, change in settings.items():
        bad = set(change) - {"data", "train"}
        if bad:
            raise ValueError(f"settings[{name!r}] has keys {sorted(bad)}; valid: 'data', 'train'")
        out[name] = run_table1(seeds, runs, data_cfg=replace(data_cfg, **change.get("data", {})),
                               train_cfg=replace(train_cfg, **change.get("train", {})), **kwargs)
    return out


def format_sensitivity(results: Dict[str, Table1Result]) -> str:
    """A markdown table: one row per setting, test (OOD) accuracy of each variant (mean over seeds, %)."""
    names = list(next(iter(results.values())).summary())
    lines = ["| setting | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for setting, res in results.items():
        s = res.summary()
        lines.append(f"| {setting} | " + " | ".join(f"{100 * s[v]['test']['mean']:.1f}" for v in names) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# presentation
# ---------------------------------------------------------------------------------------------

LABELS = {
    "multi_zero_shot": "multi-modal, zero-shot", "multi_linear_probe": "multi-modal, linear probe",
    "single_crop_flip": "SimCLR crop+flip", "single_color_jitter": "SimCLR +jitter+grey",
    "supervised": "supervised (CE)", "shape_only": "ref: shape only", "colour_only": "ref: colour only",
    "multi_digit_caption_zero_shot": "multi, digit caption, 0-shot",
    "multi_digit_caption_linear_probe": "multi, digit caption, probe",
    "single_grayscale_only": "SimCLR +grey only", "single_strong_jitter": "SimCLR +jitter s=1",
    "single_small_crops": "SimCLR small crops",
    "paper_single": "paper: single-modal", "paper_multi": "paper: multi-modal",
}


RUN_LABELS = {
    "multi": "multi-modal", "single_crop_flip": "SimCLR crop+flip", "single_color_jitter": "SimCLR +jitter+grey",
    "supervised": "supervised", "shape_only": "shape only (grey)", "multi_digit_caption": "multi, digit caption",
    "single_grayscale_only": "SimCLR +grey only", "single_strong_jitter": "SimCLR +jitter s=1",
    "single_small_crops": "SimCLR small crops",
}


def _colour_of(name: str) -> str:
    if name.startswith("paper"):
        return COLORS["reference"]
    if name.startswith("multi"):
        return COLORS["multi"]
    if name.startswith("single"):
        return COLORS["single"]
    if name in ("shape_only", "colour_only"):
        return "#999999"
    return COLORS["accent"]


def format_table(result: Table1Result) -> str:
    """A markdown table: variant, train and test accuracy against the noisy and the clean labels
    (mean +- s.d. over seeds, in %), with the paper's two rows below."""
    s = result.summary()
    n = len(result.seeds)
    lines = ["| variant | train acc. (%) | test acc. (%) | train, clean labels (%) | test, clean labels (%) |",
             "|---|---|---|---|---|"]
    for v, m in s.items():
        def f(k):
            return f"{100 * m[k]['mean']:.2f} ± {100 * m[k]['sd']:.2f}" if n > 1 else f"{100 * m[k]['mean']:.2f}"
        lines.append(f"| {v} | {f('train')} | {f('test')} | {f('train_clean')} | {f('test_clean')} |")
    for k, p in PAPER.items():
        lines.append(f"| paper: {k}-modal | {100 * p['train']:.2f} | {100 * p['test']:.2f} | n/a | n/a |")
    return "\n".join(lines)


def format_table_html(result: Table1Result) -> str:
    """:func:`format_table` as an HTML table (for notebooks, whose Markdown outputs have no tables)."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in format_table(result).splitlines()]
    head, body = rows[0], rows[2:]
    th = "".join(f"<th>{h}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in body)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def plot_table1(result: Table1Result, out_dir=None, name: str = "table1-coloredmnist"):
    """Horizontal bars of train (light) and test (OOD, dark) accuracy per variant, mean +- 1 s.d.
    over seeds, under the paper's two rows.  Returns ``(fig, paths)`` (paths empty if
    ``out_dir`` is None)."""
    import matplotlib.pyplot as plt

    s = result.summary()
    rows = [("paper_multi", PAPER["multi"]["train"], 0, PAPER["multi"]["test"], 0),
            ("paper_single", PAPER["single"]["train"], 0, PAPER["single"]["test"], 0)]
    rows += [(v, m["train"]["mean"], m["train"]["sd"], m["test"]["mean"], m["test"]["sd"]) for v, m in s.items()]
    with style():
        fig, ax = plt.subplots(figsize=(9.0, 0.55 * len(rows) + 1.6))
        y = torch.arange(len(rows), dtype=torch.float64).flip(0).tolist()
        h = 0.38
        for yi, (v, tr, trs, te, tes) in zip(y, rows):
            c = _colour_of(v)
            ax.barh(yi + h / 2, 100 * tr, h, xerr=100 * trs or None, color=c, alpha=0.35, ecolor="#333333")
            ax.barh(yi - h / 2, 100 * te, h, xerr=100 * tes or None, color=c, ecolor="#333333")
            ax.text(100 * te + 1.5 + 100 * tes, yi - h / 2, f"{100 * te:.1f}", va="center", fontsize=10)
        ax.set_yticks(y, [LABELS.get(r[0], r[0]) for r in rows])
        ax.axvline(10, color="#777777", ls=":", lw=1.2)
        ceiling = 1 - ColoredMNISTConfig(**result.settings["data"]).effective_label_noise
        ax.axvline(100 * ceiling, color="#777777", ls="--", lw=1.2)
        ax.set_xlim(0, 108)
        ax.set_xlabel("accuracy on the splits' noisy labels (%)")
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        n = len(result.seeds)
        fig.legend(handles=[Patch(color="#555555", alpha=0.35, label="train (colour agrees with label)"),
                            Patch(color="#555555", label=f"test (colour reversed){'' if n == 1 else ', mean ± s.d.'}"),
                            Line2D([], [], color="#777777", ls=":", label="chance"),
                            Line2D([], [], color="#777777", ls="--", label="label-noise ceiling")],
                   loc="outside upper center", ncol=2)
        ax.grid(axis="y", visible=False)
    paths = save_figure(fig, name, out_dir) if out_dir is not None else []
    return fig, paths


def plot_feature_probes(result: Table1Result, out_dir=None, name: str = "coloredmnist-feature-probes"):
    """What each model's frozen features encode: accuracy of a linear digit probe and of a linear
    colour probe, on images re-coloured independently of the digit (chance 10 %)."""
    import matplotlib.pyplot as plt

    ps = result.probe_summary()
    runs = list(ps)
    with style():
        fig, ax = plt.subplots(figsize=(9.0, 4.4))
        x = torch.arange(len(runs), dtype=torch.float64)
        w = 0.38
        for k, (key, hatch, lab) in enumerate((("digit", "", "digit probe"), ("colour", "//", "colour probe"))):
            m = [100 * ps[r][key]["mean"] for r in runs]
            sd = [100 * ps[r][key]["sd"] for r in runs]
            ax.bar((x + (k - 0.5) * w).tolist(), m, w, yerr=sd if len(result.seeds) > 1 else None,
                   color=[_colour_of(r) for r in runs], alpha=1.0 if key == "digit" else 0.45,
                   hatch=hatch, edgecolor="white", label=lab)
        ax.axhline(10, color="#777777", ls=":", lw=1.2)
        ax.set_xticks(x.tolist(), [RUN_LABELS.get(r, r) for r in runs], rotation=25, ha="right")
        ax.set_ylabel("probe accuracy (%)")
        ax.set_ylim(0, 102)
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        fig.legend(handles=[Patch(color="#555555", label="digit probe"),
                            Patch(facecolor="#555555", alpha=0.45, hatch="//", edgecolor="white", label="colour probe"),
                            Line2D([], [], color="#777777", ls=":", label="chance")],
                   loc="outside upper center", ncol=3)
        ax.grid(axis="x", visible=False)
    paths = save_figure(fig, name, out_dir) if out_dir is not None else []
    return fig, paths


def plot_samples(data: ColoredMNIST, n_per_split: int = 10, out_dir=None, name: str = "coloredmnist-samples"):
    """The first digit of each label in both splits, with label and colour name: the reversal seen."""
    import matplotlib.pyplot as plt

    from mmcl.experiments.coloredmnist.data import PALETTE_NAMES

    with style():
        fig, axes = plt.subplots(2, n_per_split, figsize=(1.0 * n_per_split + 0.6, 2.9))
        for row, (title, sp) in enumerate((("train", data.train), ("test", data.test))):
            for k in range(n_per_split):
                idx = torch.nonzero(sp.label == k % 10)[0]
                img = sp.images(idx)[0].permute(1, 2, 0).clamp(0, 1).numpy()
                ax = axes[row, k]
                ax.imshow(img, interpolation="nearest")
                ax.set_xticks([])
                ax.set_yticks([])
                ax.grid(False)
                for sp_ in ax.spines.values():
                    sp_.set_visible(False)
                ax.set_title(f"{k % 10}", fontsize=11)
                ax.set_xlabel(PALETTE_NAMES[int(sp.colour[idx])], fontsize=9)
            axes[row, 0].set_ylabel(title, fontsize=12)
    paths = save_figure(fig, name, out_dir) if out_dir is not None else []
    return fig, paths


def plot_probe_l2(result: Table1Result, out_dir=None, name: str = "coloredmnist-probe-l2",
                  runs: Optional[Sequence[str]] = None):
    """Test (OOD) accuracy of each run's linear probe against the probe's L2 penalty
    (``PROBE_L2_GRID``), mean over seeds, for ``runs`` (default: those of ``RUNS`` with a
    probe); the multi-modal zero-shot score, which has no penalty, as a horizontal line."""
    import matplotlib.pyplot as plt

    sweep = result.probe_l2_summary()
    runs = [r for r in (RUNS if runs is None else runs) if r in sweep]
    sweep = {r: sweep[r] for r in runs}
    s = result.summary()
    with style():
        fig, ax = plt.subplots(figsize=(7.5, 4.4))
        markers = "osD^vP*X"
        for k, (run, d) in enumerate(sweep.items()):
            l2s = sorted(d)
            ax.plot(l2s, [100 * d[l2]["test"]["mean"] for l2 in l2s], marker=markers[k % len(markers)],
                    color=_colour_of(run), ls="-" if k % 2 == 0 else "--",
                    label=RUN_LABELS.get(run, run) + (", linear probe" if run.startswith("multi") else ""))
        if "multi_zero_shot" in s:
            ax.axhline(100 * s["multi_zero_shot"]["test"]["mean"], color=COLORS["multi"], lw=1.5, ls=":",
                       label="multi-modal, zero-shot")
        ax.set_xscale("log")
        ax.set_xlabel("L2 penalty of the linear probe")
        ax.set_ylabel("test accuracy, colour reversed (%)")
        ax.set_ylim(0, 100)
        fig.legend(loc="outside right center", fontsize=10)
    paths = save_figure(fig, name, out_dir) if out_dir is not None else []
    return fig, paths
