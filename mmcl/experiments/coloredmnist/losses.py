"""The two contrastive objectives of Table 1, on mini-batches of real images.

* :func:`nt_xent` -- single-modal (SimCLR's NT-Xent, Chen et al. 2020): the image analogue of the
  paper's Eq. (6), with the other augmented view as the positive and the other ``2B - 2`` views of
  the batch as negatives.
* :func:`multi_positive_infonce` -- multi-modal (CLIP's symmetric InfoNCE, the analogue of Eq. (9)),
  with one change forced by the data: ColoredMNIST has only 100 distinct captions, so a batch
  of 256 holds many images with the *same* caption.  Treating them as negatives would ask the
  image tower to separate images that the text says are identical; instead every pair with
  equal captions counts as positive, and the positive event is the whole set (the probability
  mass on all of them, "sum inside the log" as in supervised contrastive learning).

Both use cosine similarities divided by a temperature ``tau`` and log-sum-exp.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["nt_xent", "multi_positive_infonce"]


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float) -> torch.Tensor:
    """SimCLR's loss for two views ``z1, z2 (B, k)`` (row ``i`` of each is image ``i``): mean over
    the ``2B`` anchors of ``-log softmax`` of the positive among the other ``2B - 1`` views."""
    if not temperature > 0:
        raise ValueError(f"temperature={temperature!r} must be > 0")
    B = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2]), dim=-1)
    logits = z @ z.T / temperature
    logits = logits.masked_fill(torch.eye(2 * B, dtype=torch.bool, device=z.device), float("-inf"))
    target = torch.cat([torch.arange(B, 2 * B), torch.arange(0, B)]).to(z.device)
    return F.cross_entropy(logits, target)


def multi_positive_infonce(img: torch.Tensor, txt: torch.Tensor, ids: torch.Tensor,
                           temperature: float) -> torch.Tensor:
    """Symmetric InfoNCE between image embeddings ``img (B, k)`` and caption embeddings
    ``txt (B, k)`` (row ``i`` describes image ``i``), where ``ids (B,)`` marks equal captions.

    ``L = (L_img->txt + L_txt->img) / 2``, ``L_img->txt = -mean_i log sum_{j: ids_j = ids_i}
    softmax_j(<img_i, txt_j> / tau)`` over the ``B`` captions of the batch (cosine similarities);
    ``L_txt->img`` likewise over the images.  With all ids distinct this is CLIP's loss."""
    if not temperature > 0:
        raise ValueError(f"temperature={temperature!r} must be > 0")
    a, b = F.normalize(img, dim=-1), F.normalize(txt, dim=-1)
    logits = a @ b.T / temperature  # (B, B): image i vs caption j
    pos = ids[:, None] == ids[None, :]  # symmetric, diagonal True
    neg_inf = torch.tensor(float("-inf"), device=logits.device, dtype=logits.dtype)

    def one_side(lg):
        return (torch.logsumexp(lg, -1) - torch.logsumexp(torch.where(pos, lg, neg_inf), -1)).mean()

    return 0.5 * (one_side(logits) + one_side(logits.T))
