"""The synthetic data model of Sec. 3 (Eqs. 1, 2, 5) and the OOD downstream set (Sec. 3.3).

``SyntheticData`` holds one draw (or a batch of draws stacked along a leading dimension ``B``):
labels, both modalities, the augmentation noise, the hard-negative index sets and the initial
weights of both encoders.  It can be built from a user's own tensors; ``sample_synthetic`` makes
one from a :class:`~mmcl.model.config.SyntheticConfig` and a seed.

Shapes (unbatched; a batch adds a leading ``B`` to every tensor):
``y (n,)``, ``mu (d,)``, ``xi (n, d)``, ``eps (n, d)``, ``mu_tilde (d~,)``, ``xi_tilde (n, d~)``,
``negatives (n, M)`` int64, ``W0 (m, d)``, ``W0_tilde (m, d~)``.

A *span draw* (``sample_synthetic(cfg, seed, span=True)``, module ``mmcl.model.span``) holds the same
vectors by their coordinates in an orthonormal basis of their span: the tensors' last dimension is
then that basis' width (at most ``2n + m + 2`` and ``n + m + 2``), and ``d_nominal`` /
``d_tilde_nominal`` record the dimension the draw stands for, which ``SyntheticData.d`` and
``SyntheticData.d_tilde`` report (``width`` and ``width_tilde``: the tensors' last dimensions).  Every inner product has its law at the nominal dimension.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional, Sequence

import torch

from mmcl._utils import check_bool, check_int, resolve_device, resolve_dtype
from mmcl.model.config import SyntheticConfig, check_config
from mmcl.model import span as _span

__all__ = ["SyntheticData", "OODData", "sample_synthetic", "sample_synthetic_batch", "sample_ood"]


def _shape_check(owner: str, tensors: dict, spec: dict, batched: bool) -> dict:
    """Check every tensor against its symbolic shape; return the sizes of the symbols."""
    sizes: dict = {}
    for name, symbols in spec.items():
        t = tensors[name]
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{owner}.{name} must be a torch.Tensor, got {type(t).__name__}")
        full = (("B",) if batched else ()) + symbols
        if t.dim() != len(full):
            raise ValueError(f"{owner}.{name} must have shape {full}, got {tuple(t.shape)}")
        for sym, size in zip(full, t.shape):
            if sizes.setdefault(sym, size) != size:
                raise ValueError(f"{owner}.{name} has {sym}={size} but an earlier field has {sym}={sizes[sym]} "
                                 f"(shape {tuple(t.shape)} vs expected {full})")
    return sizes


def _float_check(owner: str, tensors: dict, names: Sequence[str]) -> None:
    ref = None
    for name in names:
        t = tensors[name]
        if t is None:
            continue
        if t.dtype not in (torch.float32, torch.float64):
            raise ValueError(f"{owner}.{name} must be float32 or float64, got {t.dtype}")
        if ref is None:
            ref = (name, t.dtype, t.device)
        elif (t.dtype, t.device) != ref[1:]:
            raise ValueError(f"{owner}.{name} is {t.dtype} on {t.device} but {owner}.{ref[0]} is "
                             f"{ref[1]} on {ref[2]}; all tensors must share dtype and device")


def _finite_check(owner: str, tensors: dict, names: Sequence[str]) -> None:
    """Refuse NaN and inf, naming the field.  One sum per tensor (finite if every entry is, unless
    it overflows); only a non-finite sum is followed by the exact ``isfinite().all()``."""
    for name in names:
        t = tensors[name]
        if t is None or bool(torch.isfinite(t.sum())):
            continue
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{owner}.{name} holds NaN or inf values; every entry must be finite")


def _nominal_check(name: str, value, width: Optional[int]) -> None:
    """A nominal dimension: None, or an int (not a bool) at least the tensors' width."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"SyntheticData.{name} must be a positive integer or None, got {value!r}")
    if width is None:
        raise ValueError(f"SyntheticData.{name}={value} is given but the modality it describes is absent")
    if value < width:
        raise ValueError(f"SyntheticData.{name}={value} must be >= the width {width} of its tensors "
                         f"(the nominal dimension of the space their basis lies in)")


def _label_check(owner: str, name: str, y: torch.Tensor) -> None:
    if not bool(((y == 1) | (y == -1)).all()):
        bad = y[(y != 1) & (y != -1)].flatten()[:3].tolist()
        raise ValueError(f"{owner}.{name} must contain only +1 and -1, found e.g. {bad}")


@dataclass
class OODData:
    """The OOD downstream inputs ``x_test = [y nu, zeta]`` (Sec. 3.3, Sec. 6).

    ``y_fit (n_test,)``/``zeta_fit (n_test, d)``: the labelled OOD samples a head is fit on
    (``adapt`` protocol); ``y_eval (n_eval,)``/``zeta_eval (n_eval, d)``: fresh OOD samples the
    accuracy is scored on; ``nu (d,)``.  A batch adds a leading ``B``.
    """

    nu: torch.Tensor
    y_fit: torch.Tensor
    zeta_fit: torch.Tensor
    y_eval: torch.Tensor
    zeta_eval: torch.Tensor

    def __post_init__(self) -> None:
        t = {f.name: getattr(self, f.name) for f in fields(self)}
        batched = isinstance(self.nu, torch.Tensor) and self.nu.dim() == 2
        spec = {"nu": ("d",), "y_fit": ("n_fit",), "zeta_fit": ("n_fit", "d"),
                "y_eval": ("n_eval",), "zeta_eval": ("n_eval", "d")}
        _shape_check("OODData", t, spec, batched)
        _float_check("OODData", t, list(spec))
        _finite_check("OODData", t, list(spec))
        _label_check("OODData", "y_fit", self.y_fit)
        _label_check("OODData", "y_eval", self.y_eval)

    def to(self, device=None, dtype=None) -> "OODData":
        return OODData(**{f.name: getattr(self, f.name).to(device=device, dtype=dtype) for f in fields(self)})


@dataclass
class SyntheticData:
    """One draw of the data model and the initial weights (see the module docstring for shapes).

    ``mu_tilde``, ``xi_tilde`` and ``W0_tilde`` may be ``None`` for single-modal use only.
    ``ood`` (optional) is the downstream set used by :mod:`mmcl.downstream.evaluation`.
    ``d_nominal`` / ``d_tilde_nominal``: the dimension a span draw stands for (its tensors hold
    coordinates in a basis of width ``mu.shape[-1] <= d_nominal``); ``None`` (explicit vectors):
    the tensors' width is the dimension.  Every float tensor must be finite.
    """

    y: torch.Tensor
    mu: torch.Tensor
    xi: torch.Tensor
    eps: torch.Tensor
    negatives: torch.Tensor
    W0: torch.Tensor
    mu_tilde: Optional[torch.Tensor] = None
    xi_tilde: Optional[torch.Tensor] = None
    W0_tilde: Optional[torch.Tensor] = None
    ood: Optional[OODData] = None
    d_nominal: Optional[int] = None
    d_tilde_nominal: Optional[int] = None

    _SPEC = {"y": ("n",), "mu": ("d",), "xi": ("n", "d"), "eps": ("n", "d"), "negatives": ("n", "M"),
             "W0": ("m", "d"), "mu_tilde": ("d~",), "xi_tilde": ("n", "d~"), "W0_tilde": ("m", "d~")}
    _FLOATS = ("y", "mu", "xi", "eps", "W0", "mu_tilde", "xi_tilde", "W0_tilde")

    def __post_init__(self) -> None:
        t = {name: getattr(self, name) for name in self._SPEC}
        if not isinstance(self.y, torch.Tensor) or self.y.dim() not in (1, 2):
            raise ValueError("SyntheticData.y must be a tensor of shape (n,) or, batched, (B, n)")
        batched = self.y.dim() == 2
        tilde = [t[k] is None for k in ("mu_tilde", "xi_tilde", "W0_tilde")]
        if any(tilde) and not all(tilde):
            raise ValueError("SyntheticData.mu_tilde, xi_tilde and W0_tilde must be given together (or all None)")
        sizes = _shape_check("SyntheticData", t, self._SPEC, batched)
        _float_check("SyntheticData", t, self._FLOATS)
        _finite_check("SyntheticData", t, self._FLOATS)
        _nominal_check("d_nominal", self.d_nominal, sizes["d"])
        _nominal_check("d_tilde_nominal", self.d_tilde_nominal, sizes.get("d~"))
        _label_check("SyntheticData", "y", self.y)
        neg = self.negatives
        if neg.dtype != torch.int64:
            raise ValueError(f"SyntheticData.negatives must be int64 indices, got {neg.dtype}")
        if neg.device != self.y.device:
            raise ValueError(f"SyntheticData.negatives is on {neg.device} but y is on {self.y.device}")
        n = sizes["n"]
        if neg.numel() and (int(neg.min()) < 0 or int(neg.max()) >= n):
            raise ValueError(f"SyntheticData.negatives must index samples in [0, {n - 1}]")
        y_neg = torch.gather(self.y, -1, neg.flatten(-2)).reshape(neg.shape)
        if bool((y_neg == self.y.unsqueeze(-1)).any()):
            raise ValueError("SyntheticData.negatives must all have the opposite label of their anchor "
                             "(hard negatives, Sec. 3.1)")
        srt = neg.sort(-1).values
        if bool((srt[..., 1:] == srt[..., :-1]).any()):
            raise ValueError("SyntheticData.negatives must not repeat an index within an anchor's set")
        if self.ood is not None:
            if not isinstance(self.ood, OODData):
                raise ValueError("SyntheticData.ood must be an OODData or None")
            if self.ood.nu.shape[-1] != sizes["d"] or (self.ood.nu.dim() == 2) != batched:
                raise ValueError(f"SyntheticData.ood.nu has shape {tuple(self.ood.nu.shape)}, "
                                 f"incompatible with mu {tuple(self.mu.shape)}")

    # ---- sizes -------------------------------------------------------------------------
    @property
    def batched(self) -> bool:
        return self.y.dim() == 2

    @property
    def batch_size(self) -> Optional[int]:
        return self.y.shape[0] if self.batched else None

    @property
    def n(self) -> int:
        return self.y.shape[-1]

    @property
    def d(self) -> int:
        """Dimension of modality 1 (``d_nominal`` for a span draw, else the tensors' width)."""
        return self.d_nominal if self.d_nominal is not None else self.mu.shape[-1]

    @property
    def d_tilde(self) -> Optional[int]:
        """The dimension of modality 2 (``d_tilde_nominal`` for a span draw), None without it."""
        if self.mu_tilde is None:
            return None
        return self.d_tilde_nominal if self.d_tilde_nominal is not None else self.mu_tilde.shape[-1]

    @property
    def width(self) -> int:
        """The tensors' last dimension in modality 1 (``d`` for explicit vectors)."""
        return self.mu.shape[-1]

    @property
    def width_tilde(self) -> Optional[int]:
        """The tensors' last dimension in modality 2, None without it."""
        return None if self.mu_tilde is None else self.mu_tilde.shape[-1]

    @property
    def is_span(self) -> bool:
        """Whether either modality is held in a basis of its span (a nominal dimension is set)."""
        return self.d_nominal is not None or self.d_tilde_nominal is not None

    def _nominal(self) -> dict:
        return {"d_nominal": self.d_nominal, "d_tilde_nominal": self.d_tilde_nominal}

    @property
    def m(self) -> int:
        return self.W0.shape[-2]

    @property
    def M(self) -> int:
        return self.negatives.shape[-1]

    @property
    def has_tilde(self) -> bool:
        return self.mu_tilde is not None

    @property
    def dtype(self) -> torch.dtype:
        return self.mu.dtype

    @property
    def device(self) -> torch.device:
        return self.mu.device

    # ---- conversions -------------------------------------------------------------------
    def to(self, device=None, dtype=None) -> "SyntheticData":
        """A copy on ``device`` with float tensors cast to ``dtype`` (indices stay int64)."""
        device = resolve_device(device) if device is not None else None
        dtype = resolve_dtype(dtype) if dtype is not None else None
        out = {}
        for name in self._SPEC:
            v = getattr(self, name)
            if v is None:
                out[name] = None
            elif name == "negatives":
                out[name] = v.to(device=device)
            else:
                out[name] = v.to(device=device, dtype=dtype)
        ood = self.ood.to(device=device, dtype=dtype) if self.ood is not None else None
        return SyntheticData(**out, ood=ood, **self._nominal())

    @staticmethod
    def stack(draws: Sequence["SyntheticData"]) -> "SyntheticData":
        """Stack unbatched draws of equal shapes along a new leading batch dimension ``B``."""
        draws = list(draws)
        if not draws:
            raise ValueError("SyntheticData.stack needs at least one draw")
        if any(dr.batched for dr in draws):
            raise ValueError("SyntheticData.stack takes unbatched draws")
        out = {}
        for name in SyntheticData._SPEC:
            vals = [getattr(dr, name) for dr in draws]
            if any(v is None for v in vals):
                if not all(v is None for v in vals):
                    raise ValueError(f"SyntheticData.stack: field {name} is None in some draws only")
                out[name] = None
                continue
            shapes = {tuple(v.shape) for v in vals}
            if len(shapes) > 1:
                raise ValueError(f"SyntheticData.stack: field {name} has different shapes {sorted(shapes)}")
            out[name] = torch.stack(vals)
        for name in ("d_nominal", "d_tilde_nominal"):
            vals = {getattr(dr, name) for dr in draws}
            if len(vals) > 1:
                raise ValueError(f"SyntheticData.stack: field {name} differs between draws ({sorted(vals, key=str)}); "
                                 f"a batch shares one nominal dimension")
            out[name] = vals.pop()
        oods = [dr.ood for dr in draws]
        ood = None
        if all(o is not None for o in oods):
            ood = OODData(**{f.name: torch.stack([getattr(o, f.name) for o in oods]) for f in fields(OODData)})
        # every draw passed the checks and the shapes agree, so the batch passes them too: they are
        # not repeated (they sort every anchor's negatives; a sweep stacks thousands of draws)
        return SyntheticData._unchecked(**out, ood=ood)

    @classmethod
    def _unchecked(cls, **values) -> "SyntheticData":
        """A ``SyntheticData`` built without ``__post_init__``'s checks, for values that are known to
        pass them: stacked checked draws, or a checked draw with its OOD set or its second modality
        (all three tensors) dropped."""
        obj = cls.__new__(cls)
        for f in fields(cls):
            setattr(obj, f.name, values.get(f.name))
        return obj

    def _drop(self, ood: bool = False, tilde: bool = False) -> "SyntheticData":
        """This draw without its OOD set and/or its second modality (``mu~``, ``xi~``, ``W0~``)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if ood:
            values["ood"] = None
        if tilde:
            values.update(mu_tilde=None, xi_tilde=None, W0_tilde=None, d_tilde_nominal=None)
        return SyntheticData._unchecked(**values)

    def __getitem__(self, b: int) -> "SyntheticData":
        """The ``b``-th draw of a batch."""
        if not self.batched:
            raise ValueError("indexing a SyntheticData needs a batched one (leading dimension B)")
        out = {name: (None if getattr(self, name) is None else getattr(self, name)[b]) for name in self._SPEC}
        ood = None
        if self.ood is not None:
            ood = OODData(**{f.name: getattr(self.ood, f.name)[b] for f in fields(OODData)})
        return SyntheticData(**out, ood=ood, **self._nominal())


def _labels(cfg: SyntheticConfig, n: int, gen: torch.Generator) -> torch.Tensor:
    if cfg.balanced:
        y = torch.ones(n, dtype=torch.float64)
        y[n // 2:] = -1.0
        return y[torch.randperm(n, generator=gen)]
    return torch.randint(0, 2, (n,), generator=gen).to(torch.float64) * 2 - 1


def _hard_negatives(y: torch.Tensor, M: int, gen: torch.Generator) -> torch.Tensor:
    """For each anchor, M distinct indices of opposite label drawn uniformly without replacement."""
    n = y.shape[0]
    pool = int(min((y > 0).sum(), (y < 0).sum()))
    if M > pool:
        raise ValueError(f"M={M} exceeds the opposite-label pool of this draw ({pool} samples in the "
                         f"smaller class); use M <= {pool} or balanced=True")
    keys = torch.rand(n, n, generator=gen, dtype=torch.float64)
    keys[y[:, None] == y[None, :]] = float("inf")
    return keys.argsort(dim=1)[:, :M].contiguous()


# the fixed vectors of each modality by their first standard coordinates (Sec. 6): mu = ||mu|| e1
# and nu = ||nu|| (nu_cos e1 + nu_sin e2) in modality 1 (the paper's nu = ||nu|| e1 at nu_cos = 1),
# mu~ = ||mu~|| e2 in modality 2.  A span draw takes them from here (and sample_ood's explicit nu).
def _fixed_1(cfg: SyntheticConfig) -> torch.Tensor:
    """``[mu; nu]`` of modality 1 by their first coordinates: ``(2, 1)`` when ``nu`` is along
    ``mu`` (``nu_sin = 0``, the paper's), else ``(2, 2)`` (``nu``'s part along e2)."""
    if cfg.nu_sin == 0.0:
        return torch.tensor([[cfg.mu_norm], [cfg.nu_norm * cfg.nu_cos]], dtype=torch.float64)
    return torch.tensor([[cfg.mu_norm, 0.0], [cfg.nu_norm * cfg.nu_cos, cfg.nu_norm * cfg.nu_sin]],
                        dtype=torch.float64)


def _fixed_2(cfg: SyntheticConfig) -> torch.Tensor:
    """``[mu~]`` of modality 2 by its first two coordinates, ``(1, 2)``."""
    return torch.tensor([[0.0, cfg.mu_tilde_norm]], dtype=torch.float64)


def _ood_gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed) + 7_919_000)  # a stream apart from the training draw


def sample_ood(cfg: SyntheticConfig, seed: int, *, dtype=torch.float32, device="cpu", span: bool = False) -> OODData:
    """The OOD downstream set ``[y nu, zeta]`` (Sec. 6): ``n_test`` samples to fit a head on and
    ``n_heldout`` fresh ones to score it.  Labels are i.i.d. Rademacher.  ``nu = nu_norm (nu_cos e1
    + sqrt(1 - nu_cos^2) e2)`` (``cfg.nu_cos``; the paper's ``nu = nu_norm e1`` by default); the
    explicit draw's random tensors do not depend on ``nu_cos``.

    ``span=True``: ``nu`` and ``zeta`` by their coordinates in the basis of modality 1's span that
    ``sample_synthetic(cfg, seed, span=True)`` uses (``zeta``'s are i.i.d. ``N(0, sigma_xi^2)``,
    see ``mmcl.model.span``), width ``c + 2n + m``; the labels are the explicit draw's."""
    check_bool("span", span)
    gen = _ood_gen(seed)
    if span:
        fixed = _span.fixed_basis(_fixed_1(cfg))  # (2, c): mu and nu in the fixed directions
        width = _span.span_width(2 * cfg.n + cfg.m, fixed.shape[1], cfg.d)
        nu = torch.cat([fixed[1], torch.zeros(width - fixed.shape[1], dtype=torch.float64)])
    else:
        width = cfg.d
        nu = torch.zeros(cfg.d, dtype=torch.float64)
        coords = _fixed_1(cfg)[1]  # nu by its first coordinates (e1, and e2 when tilted)
        nu[:coords.shape[0]] = coords
    y_fit = torch.randint(0, 2, (cfg.n_test,), generator=gen).to(torch.float64) * 2 - 1
    zeta_fit = torch.randn(cfg.n_test, width, generator=gen, dtype=torch.float64) * cfg.sigma_xi
    y_eval = torch.randint(0, 2, (cfg.n_heldout,), generator=gen).to(torch.float64) * 2 - 1
    zeta_eval = torch.randn(cfg.n_heldout, width, generator=gen, dtype=torch.float64) * cfg.sigma_xi
    ood = OODData(nu=nu, y_fit=y_fit, zeta_fit=zeta_fit, y_eval=y_eval, zeta_eval=zeta_eval)
    return ood.to(device=resolve_device(device), dtype=resolve_dtype(dtype))


def sample_synthetic(cfg: SyntheticConfig, seed: int = 0, *, dtype=torch.float32, device="cpu",
                     with_ood: bool = True, span: bool = False) -> SyntheticData:
    """Draw the data model of Sec. 3 for ``cfg`` (Eqs. 1, 2, 5), the hard negatives and the initial
    weights ``w_r(0) ~ N(0, sigma0^2 I)`` of both encoders; with ``with_ood`` also the OOD set.

    Sampling happens on the CPU in float64 from ``seed``, then the tensors are cast and moved,
    so a seed gives the same draw on every device and dtype.

    ``span=False`` (the default): the explicit d-vectors.  ``span=True``: the same model by its
    coordinates in an orthonormal basis of its span, drawn directly in law at a cost independent
    of ``cfg.d`` (module ``mmcl.model.span``): modality 1 has ``2n + m + 1`` columns (``e1``, then
    ``xi_i, eps_i, w_r(0)``), modality 2 ``n + m + 1``, and the result's ``d`` / ``d_tilde`` are
    ``cfg.d`` / ``cfg.d_tilde``.  Every inner product the model uses has its law under the
    explicit draw; the two draws of one seed are different draws.  Where ``cfg.d < 2n + m + 1``
    (or ``cfg.d_tilde < n + m + 1``) the basis would be no smaller than the space: ValueError,
    use the explicit draw.
    """
    check_config(cfg)
    check_int("seed", seed, 0)
    check_bool("span", span)
    dtype = resolve_dtype(dtype)
    device = resolve_device(device)
    if span:
        data = _sample_span(cfg, seed, with_ood)
        return data.to(device=device, dtype=dtype)
    gen = torch.Generator().manual_seed(seed)
    f64 = torch.float64
    y = _labels(cfg, cfg.n, gen)
    mu = torch.zeros(cfg.d, dtype=f64)
    mu[0] = cfg.mu_norm
    xi = torch.randn(cfg.n, cfg.d, generator=gen, dtype=f64) * cfg.sigma_xi
    eps = torch.randn(cfg.n, cfg.d, generator=gen, dtype=f64) * cfg.sigma_eps
    mu_t = torch.zeros(cfg.d_tilde, dtype=f64)
    mu_t[1] = cfg.mu_tilde_norm
    xi_t = torch.randn(cfg.n, cfg.d_tilde, generator=gen, dtype=f64) * cfg.sigma_xi_tilde
    negatives = _hard_negatives(y, cfg.M, gen)
    W0 = torch.randn(cfg.m, cfg.d, generator=gen, dtype=f64) * cfg.sigma0
    W0_t = torch.randn(cfg.m, cfg.d_tilde, generator=gen, dtype=f64) * cfg.sigma0
    ood = sample_ood(cfg, seed, dtype=f64) if with_ood else None
    data = SyntheticData(y=y, mu=mu, xi=xi, eps=eps, negatives=negatives, W0=W0,
                         mu_tilde=mu_t, xi_tilde=xi_t, W0_tilde=W0_t, ood=ood)
    return data.to(device=device, dtype=dtype)


def sample_synthetic_batch(cfg: SyntheticConfig, seeds: Sequence[int], **kwargs) -> SyntheticData:
    """The draws of ``seeds`` stacked into one batch (leading ``B``): :func:`sample_synthetic` of
    each seed with ``kwargs`` (``dtype``, ``device``, ``with_ood``, ``span``), then
    :meth:`SyntheticData.stack`."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    return SyntheticData.stack([sample_synthetic(cfg, s, **kwargs) for s in seeds])


def _sample_span(cfg: SyntheticConfig, seed: int, with_ood: bool) -> SyntheticData:
    """``sample_synthetic(..., span=True)`` in float64 on the CPU (see ``mmcl.model.span``)."""
    n, m = cfg.n, cfg.m
    # refuse a too-small d before drawing anything
    _span.span_width(2 * n + m, _span.fixed_basis(_fixed_1(cfg)).shape[1], cfg.d, "d")
    _span.span_width(n + m, _span.fixed_basis(_fixed_2(cfg)).shape[1], cfg.d_tilde, "d_tilde")
    gen = torch.Generator().manual_seed(seed)
    y = _labels(cfg, n, gen)
    negatives = _hard_negatives(y, cfg.M, gen)
    sig1 = [cfg.sigma_xi] * n + [cfg.sigma_eps] * n + [cfg.sigma0] * m
    F1, G1 = _span.sample_span_modality(_fixed_1(cfg), sig1, cfg.d, gen, "d")
    sig2 = [cfg.sigma_xi_tilde] * n + [cfg.sigma0] * m
    F2, G2 = _span.sample_span_modality(_fixed_2(cfg), sig2, cfg.d_tilde, gen, "d_tilde")
    ood = None
    if with_ood:
        ood = sample_ood(cfg, seed, dtype=torch.float64, span=True)  # nu: the same fixed directions as F1
    # row blocks of G1, G2 (views: contiguous and disjoint)
    return SyntheticData(y=y, mu=F1[0], xi=G1[:n], eps=G1[n:2 * n], negatives=negatives, W0=G1[2 * n:],
                         mu_tilde=F2[0], xi_tilde=G2[:n], W0_tilde=G2[n:], ood=ood, d_nominal=cfg.d,
                         d_tilde_nominal=cfg.d_tilde)
