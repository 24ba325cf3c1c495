"""The networks of the ColoredMNIST experiment: one CNN backbone shared by every method.

The paper gives no architecture for Table 1; ours is deliberately small (it trains on two CPU
cores in seconds) and the same for every variant, so that differences come from the objective:

* :class:`ConvEncoder` -- the image tower ``f``: two 3x3 conv layers (ReLU, 2x2 max-pool each),
  a linear layer and a ReLU; ``x (B, 3, H, W)`` -> features ``(B, feature_dim)``.  Linear probes
  read these features (the representation, before any head).
* :class:`ProjectionHead` -- SimCLR's MLP ``g`` from features to the contrastive embedding.
* :class:`CaptionEncoder` -- the multi-modal model's *ideal* text encoder: a caption is the one-hot
  of the digit joined to the one-hot of the colour (:func:`caption_vectors`, 20 numbers) and the
  tower is one learned linear map to the embedding (no bias), as in the paper's description of
  an ideal language encoder (Sec. 6, following Wang et al., 2024).
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch
from torch import nn

from mmcl.experiments.coloredmnist.data import N_CLASSES

__all__ = ["ConvEncoder", "ProjectionHead", "CaptionEncoder", "caption_vectors", "caption_ids"]


class ConvEncoder(nn.Module):
    """Image tower: conv(3->c1) ReLU pool, conv(c1->c2) ReLU pool, linear -> ``feature_dim``, ReLU.

    ``x (B, 3, H, H)`` -> ``(B, feature_dim)`` (pooling floors: 28 -> 14 -> 7, 14 -> 7 -> 3)."""

    def __init__(self, image_size: int = 28, channels: Sequence[int] = (16, 32), feature_dim: int = 64):
        super().__init__()
        if image_size < 4:
            raise ValueError(f"image_size={image_size} must be >= 4 (two 2x2 poolings)")
        c1, c2 = channels
        self.conv = nn.Sequential(
            nn.Conv2d(3, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
        )
        self.fc = nn.Sequential(nn.Linear(c2 * (image_size // 2 // 2) ** 2, feature_dim), nn.ReLU())
        self.feature_dim = feature_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x (B, 3, H, H)`` -> features ``(B, feature_dim)``."""
        return self.fc(self.conv(x))


class ProjectionHead(nn.Module):
    """SimCLR's head: linear, ReLU, linear; ``(B, feature_dim)`` -> ``(B, embed_dim)``."""

    def __init__(self, feature_dim: int, embed_dim: int, hidden: Optional[int] = None):
        super().__init__()
        hidden = hidden or feature_dim
        self.net = nn.Sequential(nn.Linear(feature_dim, hidden), nn.ReLU(), nn.Linear(hidden, embed_dim))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """``h (B, feature_dim)`` -> ``(B, embed_dim)``."""
        return self.net(h)


def caption_vectors(digit: torch.Tensor, colour: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Caption of each image: ``[onehot(digit), onehot(colour)]`` ``(N, 20)`` float32; with
    ``colour=None`` the colour half is zero (the digit-only captions of zero-shot scoring)."""
    d = nn.functional.one_hot(digit.long(), N_CLASSES).float()
    c = torch.zeros_like(d) if colour is None else nn.functional.one_hot(colour.long(), N_CLASSES).float()
    return torch.cat([d, c], -1)


def caption_ids(digit: torch.Tensor, colour: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Index of the caption among the 100 distinct ones, ``10 digit + colour``, ``(N,)``: equal ids
    are equal captions (positives of each other in the multi-modal loss); with ``colour=None``
    (digit-only captions, as in :func:`caption_vectors`) ``10 digit``."""
    return digit.long() * N_CLASSES + (0 if colour is None else colour.long())


class CaptionEncoder(nn.Module):
    """The ideal text tower: a learned linear map ``(N, 20)`` captions -> ``(N, embed_dim)``."""

    def __init__(self, embed_dim: int = 32):
        super().__init__()
        self.proj = nn.Linear(2 * N_CLASSES, embed_dim, bias=False)

    def forward(self, captions: torch.Tensor) -> torch.Tensor:
        """``captions (N, 20)`` -> ``(N, embed_dim)``."""
        return self.proj(captions)
