"""The three engines behind :func:`~mmcl.dynamics.engines.simulate`: ``gd``, ``recursion`` (both on the step of
:mod:`mmcl.dynamics.kernel`) and ``autograd`` (on the losses of :mod:`mmcl.model.losses`)."""
from __future__ import annotations

from typing import Optional, Sequence, Union

import torch

from mmcl._utils import check_int, resolve_device, resolve_dtype
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData
from mmcl.model.decomposition import decomposition_basis
from mmcl.model import losses
from mmcl.dynamics.trajectory import DivergenceError, Trajectory, UpdateTerms, check_mode
from mmcl.dynamics.grams import Grams, build_networks, gram_state
from mmcl.dynamics.kernel import Contrast, Workspace, signal_terms

__all__ = ["simulate", "t1_statistic"]


# --------------------------------------------------------------------------------------------
# Argument handling
# --------------------------------------------------------------------------------------------
def as_batched(data: SyntheticData) -> SyntheticData:
    """``data`` with a leading batch of one (views, no copy; the OOD set, unused here, dropped)."""
    if data.batched:
        return data
    # a checked draw with a leading dimension of one passes the checks too: they are not repeated
    return SyntheticData._unchecked(**{name: (None if getattr(data, name) is None else getattr(data, name)[None])
                                       for name in SyntheticData._SPEC}, **data._nominal())


def _scalars(cfg, B: int, data: SyntheticData, dtype, device):
    cfgs = [cfg] if isinstance(cfg, SyntheticConfig) else list(cfg)
    if not cfgs or not all(isinstance(c, SyntheticConfig) for c in cfgs):
        raise ValueError("cfg must be a SyntheticConfig or a sequence of them (one per batch element)")
    if len(cfgs) == 1:
        cfgs = cfgs * B
    if len(cfgs) != B:
        raise ValueError(f"cfg: got {len(cfgs)} configs for a batch of {B} draws")
    for c in cfgs:
        for name, have in (("n", data.n), ("d", data.d), ("m", data.m), ("M", data.M)):
            if getattr(c, name) != have:
                raise ValueError(f"SyntheticConfig.{name}={getattr(c, name)} does not match the data ({name}={have})")
        if data.has_tilde and c.d_tilde != data.d_tilde:
            raise ValueError(f"SyntheticConfig.d_tilde={c.d_tilde} does not match the data "
                             f"(d_tilde={data.d_tilde})")
    epochs = {c.n_epochs for c in cfgs}
    if len(epochs) > 1:
        raise ValueError(f"SyntheticConfig.n_epochs must be equal across a batch, got {sorted(epochs)}")
    lr = torch.tensor([c.lr for c in cfgs], dtype=dtype, device=device)
    tau = torch.tensor([c.tau for c in cfgs], dtype=dtype, device=device)
    return lr, tau, epochs.pop()


def _finite_or_raise(loss_hist, upto, mode, engine, lr, tau):
    bad = ~torch.isfinite(loss_hist[:, :upto + 1])
    if bool(bad.any()):
        step = int(bad.any(0).nonzero()[0])
        b = int(bad[:, step].nonzero()[0])
        raise DivergenceError(
            f"the {mode}-modal loss became non-finite at step {step} (engine={engine!r}, batch element {b}, "
            f"lr={float(lr[b]):g}, tau={float(tau[b]):g}): the step is most likely too large for this "
            f"temperature and scale; reduce lr, raise tau or lower sigma0/mu_norm")


def simulate(cfg: Union[SyntheticConfig, Sequence[SyntheticConfig]], data: SyntheticData,
             mode: str = "single", engine: str = "recursion", *, dtype=None, device=None,
             record_derivatives: bool = False, record_every: int = 1, keep_weights: bool = False,
             t1_every: Optional[int] = None, progress: bool = False) -> Trajectory:
    """Run ``cfg.n_epochs`` steps of full-batch gradient descent on the single-modal loss (Eq. 6)
    or the multi-modal loss (Eq. 9) from the initial weights in ``data``.

    ``engine``: ``"gd"`` (Eqs. 7/10), ``"autograd"`` (backward on Eqs. 6/9) or ``"recursion"``
    (Lemmas 5.1/5.3).  ``data`` may be a batch (leading ``B``); ``cfg`` may then be a list of
    configs, one per draw, differing in ``lr`` and ``tau``.  ``dtype``/``device`` default to the
    data's (float32 from :func:`mmcl.model.data.sample_synthetic`).  Raises :class:`~mmcl.dynamics.trajectory.DivergenceError` with the step
    number if the loss stops being finite.

    ``record_every``: the states ``gamma``/``rho`` are recorded every ``k`` steps and at the last.
    ``t1_every``: also record, every ``k`` steps and at the last, the one number per run that
    :func:`mmcl.proofs.predictions.measured_t1` tests (``Trajectory.t1_stat``): the end of stage 1 at that
    resolution without keeping the states in between, whose ``rho (m, n)`` per step is most of a
    trajectory's memory and, written at every step, a fifth of a run's time.
    """
    check_mode(mode, engine)
    if not isinstance(data, SyntheticData):
        raise ValueError(f"data must be a SyntheticData, got {type(data).__name__}")
    check_int("record_every", record_every)
    check_int("t1_every", t1_every, none=True)
    if mode == "multi" and not data.has_tilde:
        raise ValueError("mode='multi' needs the second modality: data.mu_tilde, xi_tilde, W0_tilde are None")
    if keep_weights and engine == "recursion":
        raise ValueError("keep_weights=True needs engine='gd' or 'autograd'; the recursion never forms W")
    dtype = resolve_dtype(dtype) if dtype is not None else data.dtype
    device = resolve_device(device) if device is not None else data.device
    unbatched = not data.batched
    bd = as_batched(data)
    if (bd.dtype, bd.device) != (dtype, device):
        bd = bd.to(device=device, dtype=dtype)
    B, n, m = bd.y.shape[0], bd.n, bd.m
    lr, tau, T = _scalars(cfg, B, bd, dtype, device)
    rec = _record_steps(T, record_every)
    rec_idx = {t: k for k, t in enumerate(rec)}
    K = len(rec)
    t1_rec = _record_steps(T, t1_every) if t1_every is not None else []
    z = dict(dtype=dtype, device=device)
    multi = mode == "multi"

    loss = torch.empty(B, T + 1, **z)
    nets = ("", "_tilde") if multi else ("",)
    out = {}
    for sfx in nets:
        out[f"gamma{sfx}"] = torch.empty(B, K, m, **z)
        out[f"rho{sfx}"] = torch.empty(B, K, m, n, **z)
        if record_derivatives:
            out[f"lprime{sfx}"] = torch.empty(B, K, n, **z)
            out[f"lprime{sfx}_neg"] = torch.empty(B, K, n, bd.M, **z)
        if keep_weights:
            out[f"weights{sfx}"] = torch.empty(B, K, m, (bd.W0 if sfx == "" else bd.W0_tilde).shape[-1], **z)
    if t1_every is not None:
        out["t1_stat"] = torch.empty(B, len(t1_rec), **z)
    t1_idx = {t: k for k, t in enumerate(t1_rec)}
    iterator = range(T + 1)
    if progress:
        from tqdm.auto import tqdm
        iterator = tqdm(iterator, desc=f"{mode}/{engine}", unit="step", leave=False)
    run = _autograd_loop if engine == "autograd" else _closed_form_loop
    with torch.no_grad():
        Ws = run(bd, mode, engine, lr, tau, iterator, rec_idx, t1_idx, loss, out, record_derivatives, keep_weights)
    traj = Trajectory(mode=mode, engine=engine, steps=torch.tensor(rec, device=device), loss=loss,
                      W=Ws[0], W_tilde=Ws[1], lr=lr, tau=tau,
                      t1_steps=torch.tensor(t1_rec, device=device) if t1_every is not None else None, **out)
    if unbatched:
        for name in Trajectory._PER_RECORD + ("loss", "W", "W_tilde", "lr", "tau", "t1_stat"):
            v = getattr(traj, name)
            if v is not None:
                setattr(traj, name, v[0])
    return traj


def _record_steps(T: int, every: int):
    """Steps ``0, k, 2k, ...`` and the last, ``T``."""
    steps = list(range(0, T + 1, every))
    return steps if steps[-1] == T else steps + [T]


def t1_statistic(mode: str, gamma: torch.Tensor, rho: torch.Tensor, norm_gamma=1.0, norm_rho=1.0) -> torch.Tensor:
    """The statistic of :func:`mmcl.proofs.predictions.measured_t1` for ``gamma (..., m)``, ``rho (..., m, n)``
    given as coefficients times ``norm_gamma (..., 1)``/``norm_rho (..., 1, n)`` (positive, so the
    maximum over ``r`` is taken before the product): ``min_i max_r rho_{r,i}`` (single mode),
    ``max_r gamma_r`` (multi mode), ``(...)``."""
    if mode == "single":
        return (rho.amax(-2, keepdim=True) * norm_rho).amin((-1, -2))
    return (gamma * norm_gamma).amax(-1)


_CHECK_EVERY = 20  # steps between checks that the loss is finite (each check synchronises a GPU)


def _closed_form_loop(bd, mode, engine, lr, tau, iterator, rec_idx, t1_idx, loss, out, record_derivatives,
                      keep_weights):
    """The ``gd`` and ``recursion`` engines: the same step (:func:`_step_single`/:func:`_step_multi`)
    from preactivations that ``gd`` computes from ``W`` and the recursion from Gram matrices.
    Both track the scaled coefficients ``c`` (the sum of the updates' components; for ``gd`` this
    is the decomposition of ``W(t) - W(0)``, Eq. 11), recorded as ``gamma = c_0 ||mu||^2``,
    ``rho_i = c_i ||xi_i||^2``.  In multi mode the two networks are stacked along the batch."""
    multi = mode == "multi"
    B, n, T = bd.y.shape[0], bd.n, loss.shape[1] - 1
    nets = build_networks(bd, mode)
    k = Contrast(bd, lr, tau, copies=len(nets))
    sfx = ("", "_tilde")
    c = torch.zeros(len(nets) * B, bd.m, 1 + n, dtype=bd.dtype, device=bd.device)
    if engine == "recursion":
        X, K = gram_state(nets)  # X(t) = X(0) + c(t) K, updated in place by dc K
    else:
        Ws = [net.W0.clone() for net in nets]  # updated in place
        X = torch.empty(len(nets) * B, bd.m, nets[0].width, dtype=bd.dtype, device=bd.device)
    step = k.step_function(mode)
    ws = Workspace(c)
    # per network: its rows of c, split into gamma's and rho's columns, their norms and the outputs
    record = [(c[i * B:(i + 1) * B, :, 0], c[i * B:(i + 1) * B, :, 1:], net.norms[:, :1], net.norms[:, None, 1:],
               out[f"gamma{sfx[i]}"], out[f"rho{sfx[i]}"]) for i, net in enumerate(nets)]
    for t in iterator:
        kk = rec_idx.get(t)
        if engine == "gd":
            for i, (net, W) in enumerate(zip(nets, Ws)):
                net.products(W, out=X[i * B:(i + 1) * B])  # O(m n d)
        loss_i, dc, parts = step(k, X, n, ws, want=record_derivatives and kk is not None)
        torch.mean(loss_i, -1, out=loss[:, t])
        if kk is not None:
            for c_g, c_r, norm_g, norm_r, out_g, out_r in record:
                torch.mul(c_g, norm_g, out=out_g.select(1, kk))
                torch.mul(c_r, norm_r, out=out_r.select(1, kk))
            for i in range(len(nets)):
                half = slice(i * B, (i + 1) * B)
                if keep_weights:
                    out[f"weights{sfx[i]}"][:, kk] = Ws[i]
                if parts is not None:
                    E, e0, Z = (v[half] for v in parts[0][:3])
                    out[f"lprime{sfx[i]}"][:, kk] = e0 / Z
                    out[f"lprime{sfx[i]}_neg"][:, kk] = (E / Z[..., None]).gather(2, k.negatives[half])
        j = t1_idx.get(t)
        if j is not None:  # the first network's; rho = c ||xi||^2 with ||xi||^2 > 0, so max_r commutes with it
            out["t1_stat"][:, j] = t1_statistic(mode, *record[0][:4])
        if t % _CHECK_EVERY == 0 or t == T:
            _finite_or_raise(loss, t, mode, engine, lr, tau)
        if t == T:
            break
        c += dc
        if engine == "gd":
            for i, (net, W) in enumerate(zip(nets, Ws)):
                net.step(W, dc[i * B:(i + 1) * B])
        else:
            X.baddbmm_(dc, K)
    if engine == "gd":
        return Ws[0], (Ws[1] if multi else None)
    return None, None


def _autograd_loop(bd, mode, engine, lr, tau, iterator, rec_idx, t1_idx, loss, out, record_derivatives,
                   keep_weights):
    """The ``autograd`` engine: ``torch.autograd.grad`` of Eqs. (6)/(9) (:mod:`mmcl.model.losses`),
    ``gamma``/``rho`` by least squares on ``W(t) - W(0)`` at the recorded steps."""
    multi = mode == "multi"
    T = loss.shape[1] - 1
    W = bd.W0.clone()
    Wt = bd.W0_tilde.clone() if multi else None
    pinv = torch.linalg.pinv(decomposition_basis(bd.mu, bd.xi))  # (B, n+1, d)
    pinv_t = torch.linalg.pinv(decomposition_basis(bd.mu_tilde, bd.xi_tilde)) if multi else None
    for t in iterator:
        last = t == T
        with torch.enable_grad():
            W.requires_grad_(True)
            if multi:
                Wt.requires_grad_(True)
                lh, lg = losses.multi_modal_logits(W, Wt, bd, tau)
                total = losses.info_nce(lh).mean(-1) + losses.info_nce(lg).mean(-1)
                derivs = (torch.softmax(lh.detach(), -1), torch.softmax(lg.detach(), -1))
            else:
                lh = losses.single_modal_logits(W, bd, tau)
                total = losses.info_nce(lh).mean(-1)
                derivs = (torch.softmax(lh.detach(), -1), None)
            grads = None if last else torch.autograd.grad(total.sum(), [W, Wt] if multi else [W])
        loss[:, t] = total.detach()
        W = W.detach()
        Wt = Wt.detach() if multi else None
        k, j = rec_idx.get(t), t1_idx.get(t)
        if k is not None or j is not None:
            c = (W - bd.W0) @ pinv.transpose(1, 2)  # Eq. (11) solved for the coefficients
        if j is not None:
            out["t1_stat"][:, j] = t1_statistic(mode, c[..., 0], c[..., 1:])
        if k is not None:
            out["gamma"][:, k], out["rho"][:, k] = c[..., 0], c[..., 1:]
            if multi:
                ct = (Wt - bd.W0_tilde) @ pinv_t.transpose(1, 2)
                out["gamma_tilde"][:, k], out["rho_tilde"][:, k] = ct[..., 0], ct[..., 1:]
            if record_derivatives:
                out["lprime"][:, k], out["lprime_neg"][:, k] = derivs[0][..., 0], derivs[0][..., 1:]
                if multi:
                    out["lprime_tilde"][:, k], out["lprime_tilde_neg"][:, k] = derivs[1][..., 0], derivs[1][..., 1:]
            if keep_weights:
                out["weights"][:, k] = W
                if multi:
                    out["weights_tilde"][:, k] = Wt
        if t % _CHECK_EVERY == 0 or last:
            _finite_or_raise(loss, t, mode, engine, lr, tau)
        if not last:
            W = W - lr[:, None, None] * grads[0]
            if multi:
                Wt = Wt - lr[:, None, None] * grads[1]
    return W, Wt


def kernel_terms(data: SyntheticData, cfg: SyntheticConfig, mode: str, gamma, rho,
                 gamma_tilde=None, rho_tilde=None, *, blocks=None) -> UpdateTerms:
    """:func:`mmcl.dynamics.reference.update_terms` computed by the fast kernel that the ``gd`` and
    ``recursion`` engines run (the same shapes and fields).  The tests hold it equal to the reference
    step on random states; nothing else should need it.  ``blocks``: the layout of the negatives
    (:class:`~mmcl.dynamics.kernel.Contrast`; ``None`` chooses as the engines do, ``False`` forces
    the masked one, ``True`` the class blocks)."""
    check_mode(mode)
    unb = not data.batched
    bd = as_batched(data)
    if unb:
        gamma, rho = gamma[None], rho[None]
        gamma_tilde = None if gamma_tilde is None else gamma_tilde[None]
        rho_tilde = None if rho_tilde is None else rho_tilde[None]
    if mode == "multi" and (gamma_tilde is None or rho_tilde is None or not data.has_tilde):
        raise ValueError("update_terms: mode='multi' needs gamma_tilde, rho_tilde and the second modality")
    lr, tau, _ = _scalars(cfg, bd.y.shape[0], bd, bd.dtype, bd.device)
    nets = build_networks(bd, mode)
    k = Contrast(bd, lr, tau, copies=len(nets), blocks=blocks)
    states = [(gamma, rho)] + ([(gamma_tilde, rho_tilde)] if mode == "multi" else [])
    X = torch.cat([Grams(net).preacts(torch.cat([g[..., None], r], -1) / net.norms[:, None, :])
                   for net, (g, r) in zip(nets, states)])
    loss_i, dc, parts = k.step_function(mode)(k, X, bd.n, Workspace(X), want=True)
    out = {"loss": loss_i.mean(-1)}
    B = bd.y.shape[0]
    for i, (suffix, net) in enumerate(zip(("", "_tilde"), nets)):
        half = slice(i * B, (i + 1) * B)
        E, e0, Z, U, a, b_ = (v[half] for v in parts[0])
        gp, gn = signal_terms(a, b_, U)
        out.update({f"lprime{suffix}": e0 / Z, f"lprime{suffix}_neg": (E / Z[..., None]).gather(2, k.negatives[half]),
                    f"dgamma_pos{suffix}": net.norms[:, :1] * gp, f"dgamma_neg{suffix}": net.norms[:, :1] * gn,
                    f"drho{suffix}": dc[half, :, 1:] * net.norms[:, None, 1:]})
    t = UpdateTerms(**out)
    if unb:
        t = UpdateTerms(**{k_: (None if v is None else v[0]) for k_, v in t.__dict__.items()})
    return t
