"""The runs of Table 1 on ColoredMNIST: what each trains, the variants it yields, and one cached run.

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
features encode (:func:`~mmcl.experiments.coloredmnist.evaluate.feature_probes`).  A run is cached
with :func:`mmcl.cache.load_or_compute` under all its settings, the seed and the device type
(:func:`run_one`); all runs over seeds are :func:`mmcl.experiments.coloredmnist.table1.run_table1`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional

import torch

from mmcl._utils import check_bool, check_int, check_number, resolve_device
from mmcl.cache import load_or_compute
from mmcl.experiments.coloredmnist.augment import AugmentConfig
from mmcl.experiments.coloredmnist.data import ColoredMNIST, ColoredMNISTConfig, make_colored_mnist
from mmcl.experiments.coloredmnist.evaluate import (accuracy, colour_only_classifier, feature_probes, features,
                                                    fit_probe, predict, zero_shot_predict)
from mmcl.experiments.coloredmnist.train import TrainConfig, train_model

__all__ = ["RunSpec", "RUNS", "ABLATIONS", "VARIANTS", "PROBE_L2_GRID", "RunResult", "run_spec", "run_one",
           "caption_geometry", "colour_only_scores"]

#: L2 penalties of the linear probe at which every probed run is also scored (a sensitivity check).
PROBE_L2_GRID = (1e-4, 1e-3, 1e-2, 1e-1)


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


def run_spec(run: str) -> RunSpec:
    """The :class:`RunSpec` of ``run``, a key of ``RUNS`` or ``ABLATIONS``; a ValueError lists the
    valid names."""
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
    spec = run_spec(run)
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
    if not isinstance(W, torch.Tensor) or W.ndim != 2 or W.shape[1] != 20:
        raise ValueError(f"W must have shape (k, 20); got {tuple(getattr(W, 'shape', ()))}")
    Wd = torch.nn.functional.normalize(W[:, :10].T.double(), dim=-1)
    Wc = torch.nn.functional.normalize(W[:, 10:].T.double(), dim=-1)
    C = Wd @ Wc.T
    off = ~torch.eye(10, dtype=torch.bool)
    return {"cos_same": float(C.diagonal().mean()), "cos_other": float(C[off].mean())}


def colour_only_scores(data: ColoredMNIST) -> Dict[str, float]:
    """The colour-only reference of Table 1 on ``data``: each colour mapped to its most frequent
    training label (:func:`~mmcl.experiments.coloredmnist.evaluate.colour_only_classifier`), scored
    like a variant (``"train"``, ``"test"``, ``"train_clean"``, ``"test_clean"``)."""
    table = colour_only_classifier(data.train)
    return _scores(table[data.train.colour], table[data.test.colour], data)


def run_one(run: str, seed: int = 0, *, data_cfg: ColoredMNISTConfig = ColoredMNISTConfig(),
            train_cfg: TrainConfig = TrainConfig(), probe_l2: float = 1e-3, device="cpu", source=None,
            data: Optional[ColoredMNIST] = None, progress: Optional[bool] = None,
            cache: bool = True) -> RunResult:
    """Train and evaluate ``run`` (a key of ``RUNS`` or ``ABLATIONS``) at ``seed``, through
    the on-disk cache (key: the run's spec, all settings, the seed, the device type, ``source`` and, on
    the CPU, torch's thread count: the supervised runs' last digits differ between one and two threads,
    so a cache filled by ``mmcl coloredmnist`` must not feed the book, which computes on one)."""
    spec = run_spec(run)
    check_int("seed", seed, minimum=0)
    check_number("probe_l2", probe_l2, low=0)
    check_bool("cache", cache)
    if progress is not None:
        check_bool("progress", progress)
    dev = resolve_device(device)
    params = {"run": run, "spec": repr(spec), "data": asdict(data_cfg), "train": asdict(train_cfg),
              "probe_l2": probe_l2, "seed": seed, "device": dev.type,
              "source": None if source is None else str(Path(source).resolve())}
    if dev.type == "cpu":
        params["threads"] = torch.get_num_threads()

    def compute():
        d = data if data is not None else make_colored_mnist(data_cfg, seed, source)
        return _compute_run(run, d, train_cfg, probe_l2, seed, dev, progress)

    if not cache:
        return compute()
    return load_or_compute("coloredmnist", params, compute)
