"""Evaluating the ColoredMNIST models: linear probes, zero-shot scoring, reference classifiers.

Table 1 of the paper reports a train and a test accuracy per model and does not say how they were
obtained.  We compute every candidate, on frozen features of the backbone:

* :func:`fit_probe` / :class:`LinearProbe` -- a multinomial logistic regression (L2-penalised,
  standardised features, L-BFGS in float64) fit on the training split with its *noisy* labels
  and scored on both splits against their noisy labels (the paper's labels);
* :func:`zero_shot_predict` -- for the multi-modal model: the digit whose *digit-only* caption
  (colour half of the caption zero) has the highest cosine similarity with the image embedding;
* :func:`colour_only_classifier` -- the reference that sees only the colour: each colour is
  mapped to the most frequent training label of that colour;
* :func:`feature_probes` -- what the features encode, free of the spurious correlation: both
  splits are re-coloured with colours drawn independently of the digit, a digit probe (clean
  labels) and a colour probe are fit on the re-coloured training split and scored on the
  re-coloured test split (chance = 0.1 for both).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import torch
import torch.nn.functional as F

from mmcl._utils import check_number, resolve_device
from mmcl.downstream.probe import standardisation
from mmcl.experiments.coloredmnist.data import N_CLASSES, Split
from mmcl.experiments.coloredmnist.models import caption_vectors
from mmcl.experiments.coloredmnist.train import TrainedModel

__all__ = ["LinearProbe", "fit_probe", "features", "embed_images", "zero_shot_predict", "accuracy",
           "colour_only_classifier", "feature_probes", "predict"]


@dataclass
class LinearProbe:
    """``argmax(((X - mean) / scale) @ weight + bias)``; ``weight (p, K)``, ``bias (K,)``,
    ``mean (p,)``, ``scale (p,)``, float64."""

    weight: torch.Tensor
    bias: torch.Tensor
    mean: torch.Tensor
    scale: torch.Tensor

    def logits(self, X: torch.Tensor) -> torch.Tensor:
        """``X (N, p)`` -> ``(N, K)``."""
        return ((X.double() - self.mean) / self.scale) @ self.weight + self.bias

    def predict(self, X: torch.Tensor) -> torch.Tensor:
        return self.logits(X).argmax(-1)

    def accuracy(self, X: torch.Tensor, y: torch.Tensor) -> float:
        return accuracy(self.predict(X), y)


def accuracy(pred: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of ``pred == y`` (both ``(N,)``)."""
    if pred.shape != y.shape:
        raise ValueError(f"pred {tuple(pred.shape)} and y {tuple(y.shape)} disagree")
    return float((pred.cpu() == y.cpu()).double().mean())


def fit_probe(X: torch.Tensor, y: torch.Tensor, n_classes: int = N_CLASSES, l2: float = 1e-3,
              max_iter: int = 100) -> LinearProbe:
    """Multinomial logistic regression ``min_W,b mean_i CE(softmax(x_i W + b), y_i) + l2/2 ||W||^2``
    on standardised features (constant columns left unscaled), by L-BFGS (strong Wolfe) in float64.

    ``X (N, p)``, ``y (N,)`` int in ``[0, n_classes)``."""
    check_number("l2", l2, 0)  # > 0: it keeps the fit bounded on separable data
    if X.ndim != 2 or y.shape != X.shape[:1]:
        raise ValueError(f"fit_probe: X must be (N, p) and y (N,); got {tuple(X.shape)} and {tuple(y.shape)}")
    if y.numel() and (int(y.min()) < 0 or int(y.max()) >= n_classes):
        raise ValueError(f"labels must lie in [0, {n_classes}); got {int(y.min())}..{int(y.max())}")
    X = X.detach().double().cpu()
    y = y.long().cpu()
    mean, scale = standardisation(X, 0)
    Xs = (X - mean) / scale
    N = X.shape[0]
    Xa = torch.cat([Xs, torch.ones(N, 1, dtype=Xs.dtype)], 1)  # (N, p+1): last column = bias
    Y = F.one_hot(y, n_classes).double()
    reg = torch.full((X.shape[1] + 1, 1), l2, dtype=torch.float64)
    reg[-1] = 0.0  # the bias is not penalised
    theta = torch.zeros(X.shape[1] + 1, n_classes, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([theta], lr=1.0, max_iter=max_iter, tolerance_grad=1e-6, tolerance_change=1e-9,
                            history_size=20, line_search_fn="strong_wolfe")

    def closure():  # loss and its gradient in closed form: Xa^T (softmax - Y) / N + l2 W
        with torch.no_grad():
            Z = Xa @ theta
            lse = torch.logsumexp(Z, 1)
            loss = (lse - (Z * Y).sum(1)).mean() + 0.5 * (reg * theta * theta).sum()
            theta.grad = Xa.T @ (torch.exp(Z - lse[:, None]) - Y) / N + reg * theta
        return loss

    opt.step(closure)
    W, b = theta.detach()[:-1], theta.detach()[-1]
    return LinearProbe(weight=W.clone(), bias=b.clone(), mean=mean, scale=scale)


@torch.no_grad()
def features(model: TrainedModel, split: Split, device="cpu", colour: Optional[torch.Tensor] = None,
             batch_size: int = 1024) -> torch.Tensor:
    """Backbone features ``(N, feature_dim)`` (CPU, float32) of the split's images; ``colour (N,)``
    re-colours them; a model trained on grey digits sees grey digits."""
    dev = resolve_device(device)
    enc = model.encoder.to(dev).eval()
    out = []
    for s in range(0, len(split), batch_size):
        idx = torch.arange(s, min(s + batch_size, len(split)))
        c = None if colour is None else colour[idx]
        out.append(enc(split.images(idx, dev, colour=c, grayscale=model.grayscale)).cpu())
    model.encoder.cpu()
    return torch.cat(out)


@torch.no_grad()
def embed_images(model: TrainedModel, feats: torch.Tensor) -> torch.Tensor:
    """Unit-norm image embeddings ``(N, embed_dim)`` of the multi-modal model from features ``(N, p)``."""
    return F.normalize(model.head(feats), dim=-1)


@torch.no_grad()
def zero_shot_predict(model: TrainedModel, feats: torch.Tensor) -> torch.Tensor:
    """Zero-shot digit prediction of the multi-modal model ``(N,)``: argmax over digits ``d`` of the
    cosine similarity between the image embedding and the caption ``[onehot(d), 0]``."""
    if model.method != "multi" or model.text is None:
        raise ValueError(f"zero-shot scoring needs the multi-modal model; got method={model.method!r}")
    prompts = F.normalize(model.text(caption_vectors(torch.arange(N_CLASSES))), dim=-1)  # (10, k)
    return (embed_images(model, feats) @ prompts.T).argmax(-1)


@torch.no_grad()
def predict(model: TrainedModel, feats: torch.Tensor) -> torch.Tensor:
    """The supervised model's own predictions ``(N,)`` from its features."""
    if model.method != "supervised":
        raise ValueError(f"predict needs a supervised model; got method={model.method!r}")
    return model.head(feats).argmax(-1)


def colour_only_classifier(train: Split) -> torch.Tensor:
    """The colour-only reference: ``table (10,)`` mapping each colour to its most frequent training
    label (ties to the smaller label); predict with ``table[split.colour]``."""
    counts = torch.zeros(N_CLASSES, N_CLASSES, dtype=torch.long)
    counts.index_put_((train.colour, train.label), torch.ones_like(train.label), accumulate=True)
    return counts.argmax(1)


def feature_probes(model: TrainedModel, train: Split, test: Split, seed: int = 0, device="cpu",
                   l2: float = 1e-3) -> Dict[str, float]:
    """Linear decodability of digit and colour from the frozen features, with colours drawn
    uniformly and independently of the digit (seeded by ``seed``): probes fit on the re-coloured
    ``train`` split, scored on the re-coloured ``test`` split.  Returns ``{"digit": acc, "colour": acc}``
    (a model trained on grey digits gets colour accuracy at chance by construction)."""
    g = torch.Generator().manual_seed(30_000 + seed)
    c_tr = torch.randint(N_CLASSES, (len(train),), generator=g)
    c_te = torch.randint(N_CLASSES, (len(test),), generator=g)
    f_tr = features(model, train, device, colour=c_tr)
    f_te = features(model, test, device, colour=c_te)
    digit = fit_probe(f_tr, train.clean_label, l2=l2).accuracy(f_te, test.clean_label)
    colour = fit_probe(f_tr, c_tr, l2=l2).accuracy(f_te, c_te)
    return {"digit": digit, "colour": colour}
