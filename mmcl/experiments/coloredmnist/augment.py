"""SimCLR's augmentations in plain torch, batched and on any device (no torchvision).

Single-modal contrastive learning sees two augmented views of each image (Sec. 3.1 of the paper,
Eq. (5) in the synthetic model; SimCLR, Chen et al. 2020, for images).  Which augmentations are used
decides which features stay *informative* across views: crop and flip keep the colour of a
ColoredMNIST digit intact (its colour is then a high-SNR feature shared by both views), colour
jitter and random grayscale change it (they lower the SNR of the colour).  :class:`AugmentConfig`
names both recipes of Table 1's single-modal variants:

* ``"crop_flip"``: random resized crop + horizontal flip;
* ``"simclr"``: crop + flip + colour jitter (brightness, contrast, saturation, hue; with
  probability ``p_jitter``) + random grayscale (probability ``p_grayscale``), SimCLR's recipe;
* ``"none"``: the identity (supervised baseline).

All functions take ``x (B, 3, H, W)`` float in [0, 1] and a ``torch.Generator`` on ``x``'s device.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from mmcl._utils import check_number

__all__ = ["RECIPES", "AugmentConfig", "random_resized_crop_flip", "color_jitter", "random_grayscale",
           "hue_rotation", "augment", "LUMA"]

#: The augmentation recipes of :class:`AugmentConfig`.
RECIPES = ("none", "crop_flip", "simclr")
#: ITU-R 601 luma weights of R, G, B (as torchvision's ``rgb_to_grayscale``).
LUMA = (0.299, 0.587, 0.114)


@dataclass
class AugmentConfig:
    """One augmentation recipe.  Defaults: SimCLR's CIFAR settings (jitter strength 0.5)."""

    recipe: str = "crop_flip"  # "none", "crop_flip" or "simclr" (crop + flip + jitter + grayscale)
    crop_scale: tuple = (0.4, 1.0)  # area fraction of the random crop, (min, max) in (0, 1]
    crop_ratio: tuple = (3 / 4, 4 / 3)  # aspect ratio range of the crop (SimCLR's)
    p_flip: float = 0.5  # probability of a horizontal flip
    jitter_strength: float = 0.5  # s: brightness/contrast/saturation 0.8 s, hue 0.2 s (SimCLR)
    p_jitter: float = 0.8  # probability that colour jitter is applied to a view
    p_grayscale: float = 0.2  # probability that a view is turned grey

    def __post_init__(self):
        if self.recipe not in RECIPES:
            raise ValueError(f"recipe={self.recipe!r} is unknown; valid: {', '.join(map(repr, RECIPES))}")
        lo, hi = self.crop_scale
        if not 0 < lo <= hi <= 1:
            raise ValueError(f"crop_scale={self.crop_scale!r} must satisfy 0 < min <= max <= 1")
        rlo, rhi = self.crop_ratio
        if not 0 < rlo <= rhi:
            raise ValueError(f"crop_ratio={self.crop_ratio!r} must satisfy 0 < min <= max")
        for name in ("p_flip", "p_jitter", "p_grayscale"):
            v = getattr(self, name)
            check_number(f"{name} (a probability)", v, 0, 1, low_closed=True, high_closed=True)
        if not 0 <= self.jitter_strength <= 1.25:
            raise ValueError(f"jitter_strength={self.jitter_strength!r} must lie in [0, 1.25] "
                             "(brightness factor 1 - 0.8 s must stay >= 0)")
        self.crop_scale, self.crop_ratio = (float(lo), float(hi)), (float(rlo), float(rhi))


def _uniform(n, lo, hi, g, device):
    return lo + (hi - lo) * torch.rand(n, generator=g, device=device)


def random_resized_crop_flip(x: torch.Tensor, scale=(0.4, 1.0), ratio=(3 / 4, 4 / 3), p_flip: float = 0.5,
                             g=None) -> torch.Tensor:
    """Random resized crop (area fraction in ``scale``, aspect ratio log-uniform in ``ratio``) and a
    horizontal flip with probability ``p_flip``, as one affine resampling (bilinear, zeros outside).

    ``x (B, C, H, W)`` -> same shape.  The crop's width and height (as fractions of the image) are
    ``sqrt(a r)`` and ``sqrt(a / r)``, clipped to 1, its centre uniform among positions inside."""
    B, dev = x.shape[0], x.device
    area = _uniform(B, scale[0], scale[1], g, dev)
    log_r = _uniform(B, math.log(ratio[0]), math.log(ratio[1]), g, dev)
    w = torch.sqrt(area * torch.exp(log_r)).clamp(max=1.0)
    h = torch.sqrt(area / torch.exp(log_r)).clamp(max=1.0)
    cx = (1 - w) * (2 * torch.rand(B, generator=g, device=dev) - 1)  # normalised coordinates in [-1, 1]
    cy = (1 - h) * (2 * torch.rand(B, generator=g, device=dev) - 1)
    flip = torch.where(torch.rand(B, generator=g, device=dev) < p_flip, -1.0, 1.0)
    theta = torch.zeros(B, 2, 3, device=dev, dtype=x.dtype)
    theta[:, 0, 0], theta[:, 0, 2] = w * flip, cx
    theta[:, 1, 1], theta[:, 1, 2] = h, cy
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def hue_rotation(angle: torch.Tensor) -> torch.Tensor:
    """Rotation of RGB space about the grey axis (1,1,1)/sqrt(3) by ``angle (B,)`` radians:
    ``(B, 3, 3)``.  A linear stand-in for a hue shift (it keeps grey grey and the mean of R,G,B)."""
    c, s = torch.cos(angle), torch.sin(angle)
    k = 1.0 / 3.0
    q = math.sqrt(k)
    a = c + (1 - c) * k
    b = k * (1 - c) - q * s
    d = k * (1 - c) + q * s
    return torch.stack([torch.stack([a, b, d], -1), torch.stack([d, a, b], -1), torch.stack([b, d, a], -1)], -2)


def _gray(x: torch.Tensor) -> torch.Tensor:
    w = torch.tensor(LUMA, device=x.device, dtype=x.dtype)
    return (x * w[None, :, None, None]).sum(1, keepdim=True)


def color_jitter(x: torch.Tensor, strength: float = 0.5, p: float = 0.8, g=None) -> torch.Tensor:
    """SimCLR's colour jitter with strength ``s``, applied to each image with probability ``p``:
    brightness, contrast and saturation factors uniform in ``[1 - 0.8 s, 1 + 0.8 s]`` and a hue
    rotation uniform in ``[-0.2 s, 0.2 s]`` of a full turn, in this fixed order, clamped to [0, 1].
    ``x (B, 3, H, W)`` -> same shape."""
    B, dev = x.shape[0], x.device
    k = 0.8 * strength
    on = (torch.rand(B, generator=g, device=dev) < p).to(x.dtype)[:, None, None, None]
    bright = _uniform(B, 1 - k, 1 + k, g, dev)[:, None, None, None]
    contrast = _uniform(B, 1 - k, 1 + k, g, dev)[:, None, None, None]
    sat = _uniform(B, 1 - k, 1 + k, g, dev)[:, None, None, None]
    hue = _uniform(B, -0.2 * strength, 0.2 * strength, g, dev) * 2 * math.pi
    y = (x * bright).clamp(0, 1)
    m = _gray(y).mean((2, 3), keepdim=True)
    y = (m + contrast * (y - m)).clamp(0, 1)
    y = (_gray(y) + sat * (y - _gray(y))).clamp(0, 1)
    y = torch.einsum("bij,bjhw->bihw", hue_rotation(hue).to(x.dtype), y).clamp(0, 1)
    return on * y + (1 - on) * x


def random_grayscale(x: torch.Tensor, p: float = 0.2, g=None) -> torch.Tensor:
    """Replace each image by its luma (``LUMA`` weights) in all three channels with probability ``p``."""
    on = (torch.rand(x.shape[0], generator=g, device=x.device) < p).to(x.dtype)[:, None, None, None]
    return on * _gray(x).expand_as(x) + (1 - on) * x


def augment(x: torch.Tensor, cfg: AugmentConfig, g=None) -> torch.Tensor:
    """One random view of each image under ``cfg.recipe``; ``x (B, 3, H, W)`` -> same shape."""
    if cfg.recipe == "none":
        return x
    y = random_resized_crop_flip(x, cfg.crop_scale, cfg.crop_ratio, cfg.p_flip, g)
    if cfg.recipe == "simclr":
        y = color_jitter(y, cfg.jitter_strength, cfg.p_jitter, g)
        y = random_grayscale(y, cfg.p_grayscale, g)
    return y
