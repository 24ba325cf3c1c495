"""Training the three kinds of model of the ColoredMNIST experiment (Table 1).

:func:`train_model` trains the :class:`~mmcl.experiments.coloredmnist.models.ConvEncoder` backbone with one
``method``:

* ``"multi"`` -- multi-modal contrastive learning, CLIP-style (the paper's Eq. (9) on images):
  image tower + linear image head against the ideal caption encoder, loss
  :func:`~mmcl.experiments.coloredmnist.losses.multi_positive_infonce`, captions = (noisy label, colour)
  (or the label alone with ``TrainConfig.caption_colour=False``, an ablation);
* ``"simclr"`` -- single-modal contrastive learning (the paper's Eq. (6) on images): two views
  under an :class:`~mmcl.experiments.coloredmnist.augment.AugmentConfig`, MLP head, loss
  :func:`~mmcl.experiments.coloredmnist.losses.nt_xent`;
* ``"supervised"`` -- cross-entropy on the noisy labels (a baseline; with ``grayscale=True`` it
  sees the digits without colour and is the *shape-only* reference).

Every setting the paper leaves open is a field of :class:`TrainConfig`.  Mini-batch Adam; the data
order, the augmentations and the initialisation are drawn from ``seed`` alone (the global torch
RNG is left untouched), so a run is reproducible on a given device.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import List, Optional

import torch
from torch import nn

from mmcl._utils import check_bool, check_int, check_number, resolve_device
from mmcl.experiments.coloredmnist.augment import AugmentConfig, augment
from mmcl.experiments.coloredmnist.data import N_CLASSES, Split
from mmcl.experiments.coloredmnist.losses import multi_positive_infonce, nt_xent
from mmcl.experiments.coloredmnist.models import CaptionEncoder, ConvEncoder, ProjectionHead, caption_ids, caption_vectors

__all__ = ["METHODS", "TrainConfig", "TrainedModel", "train_model"]

#: The training objectives of :func:`train_model`.
METHODS = ("multi", "simclr", "supervised")


@dataclass
class TrainConfig:
    """Optimisation and architecture settings shared by all methods (the paper gives none)."""

    epochs: int = 8  # passes over the training split
    batch_size: int = 256  # images per step (and per contrastive batch)
    lr: float = 2e-3  # Adam step size
    weight_decay: float = 0.0  # Adam's L2 penalty
    channels: tuple = (16, 32)  # widths of the two conv layers
    feature_dim: int = 64  # backbone output: the representation probes read
    embed_dim: int = 32  # contrastive embedding (head output, caption embedding)
    temperature_multi: float = 0.1  # tau of the multi-modal InfoNCE
    temperature_single: float = 0.2  # tau of SimCLR's NT-Xent
    caption_colour: bool = True  # multi: captions name digit and colour; False = digit only (ablation)

    def __post_init__(self):
        for name in ("epochs", "batch_size", "feature_dim", "embed_dim"):
            v = getattr(self, name)
            check_int(name, v)
        if self.batch_size < 2:
            raise ValueError(f"batch_size={self.batch_size} must be >= 2 (contrastive batches need negatives)")
        for name in ("lr", "temperature_multi", "temperature_single"):
            v = getattr(self, name)
            check_number(name, v, 0)
        check_bool("caption_colour", self.caption_colour)
        check_number("weight_decay", self.weight_decay, 0, low_closed=True)
        ch = tuple(self.channels)
        if len(ch) != 2 or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in ch):
            raise ValueError(f"channels={self.channels!r} must be two positive integers (conv widths)")
        self.channels = ch


@dataclass
class TrainedModel:
    """A trained backbone with its head, on the CPU in eval mode.

    ``encoder``: the image tower; ``head``: the image head (multi: linear map to the embedding;
    simclr: MLP; supervised: the 10-way classifier); ``text``: the caption encoder (multi only);
    ``loss (epochs,)``: mean training loss per epoch; ``seconds``/``cpu_seconds``: wall-clock and
    process CPU time of the training."""

    method: str
    encoder: ConvEncoder
    head: nn.Module
    text: Optional[CaptionEncoder]
    loss: List[float] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    grayscale: bool = False


def progress_bar(progress: Optional[bool], **kwargs):
    """A ``tqdm.auto`` bar when ``progress`` (``None``: when stderr is a terminal); otherwise a
    disabled plain ``tqdm`` (importing ``tqdm.auto`` in a notebook without ipywidgets prints a
    warning even for a disabled bar)."""
    enabled = sys.stderr.isatty() if progress is None else bool(progress)
    if enabled:
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    return tqdm(disable=not enabled, **kwargs)


def train_model(split: Split, method: str, *, cfg: TrainConfig = TrainConfig(),
                aug: AugmentConfig = AugmentConfig(), seed: int = 0, device="cpu", grayscale: bool = False,
                progress: Optional[bool] = None) -> TrainedModel:
    """Train one model on ``split`` (its noisy labels and colours) with ``method`` in ``METHODS``.

    ``aug`` is used by ``"simclr"`` (two views per image) and by ``"multi"``/``"supervised"`` only
    if its recipe is not ``"none"`` (one view).  ``grayscale=True`` trains on white digits (shape
    only).  ``progress``: a tqdm bar per epoch (default: when stderr is a terminal)."""
    if method not in METHODS:
        raise ValueError(f"method={method!r} is unknown; valid: {', '.join(map(repr, METHODS))}")
    if method == "simclr" and aug.recipe == "none":
        raise ValueError("method='simclr' needs an augmentation: aug.recipe must be 'crop_flip' or 'simclr'")
    check_int("seed", seed, 0)
    dev = resolve_device(device)
    n = len(split)
    if n < cfg.batch_size:
        raise ValueError(f"batch_size={cfg.batch_size} exceeds the {n} training images")
    image_size = int(split.gray.shape[-1])

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        encoder = ConvEncoder(image_size, cfg.channels, cfg.feature_dim)
        text = None
        if method == "multi":
            head = nn.Linear(cfg.feature_dim, cfg.embed_dim)
            text = CaptionEncoder(cfg.embed_dim)
        elif method == "simclr":
            head = ProjectionHead(cfg.feature_dim, cfg.embed_dim)
        else:
            head = nn.Linear(cfg.feature_dim, N_CLASSES)
    modules = [m for m in (encoder, head, text) if m is not None]
    for m in modules:
        m.to(dev).train()
    params = [p for m in modules for p in m.parameters()]
    opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)

    g_cpu = torch.Generator().manual_seed(10_000 + seed)
    g_dev = torch.Generator(device=dev).manual_seed(20_000 + seed)
    gray = split.gray.to(dev)
    label, colour = split.label.to(dev), split.colour.to(dev)
    palette = split.palette.to(dev)
    steps = n // cfg.batch_size  # the last incomplete batch is dropped (contrastive batches stay full)

    def images(idx):
        g = gray[idx].float() / 255.0
        if grayscale:
            return g[:, None].expand(-1, 3, -1, -1)
        return g[:, None] * palette[colour[idx]][:, :, None, None]

    losses = []
    t0, c0 = time.perf_counter(), time.process_time()
    bar = progress_bar(progress, total=cfg.epochs * steps, desc=f"{method}{' (grey)' if grayscale else ''}",
                       leave=False)
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=g_cpu).to(dev)
        total = 0.0
        for s in range(steps):
            idx = perm[s * cfg.batch_size:(s + 1) * cfg.batch_size]
            x = images(idx)
            if method == "simclr":
                v1, v2 = augment(x, aug, g_dev), augment(x, aug, g_dev)
                z = head(encoder(torch.cat([v1, v2])))
                loss = nt_xent(z[:len(idx)], z[len(idx):], cfg.temperature_single)
            else:
                x = augment(x, aug, g_dev)
                h = encoder(x)
                if method == "multi":
                    c = colour[idx] if cfg.caption_colour else None
                    loss = multi_positive_infonce(head(h), text(caption_vectors(label[idx], c)),
                                                  caption_ids(label[idx], c), cfg.temperature_multi)
                else:
                    loss = nn.functional.cross_entropy(head(h), label[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach())
            bar.update(1)
            bar.set_postfix(loss=f"{total / (s + 1):.3f}", refresh=False)
        losses.append(total / steps)
    bar.close()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    for m in modules:
        m.cpu().eval()
    return TrainedModel(method=method, encoder=encoder, head=head, text=text, loss=losses,
                        seconds=seconds, cpu_seconds=cpu, grayscale=grayscale)
