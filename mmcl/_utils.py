"""Small shared helpers: resolving ``device`` and ``dtype`` arguments with clear errors."""
from __future__ import annotations

import torch

_DTYPES = {"float32": torch.float32, "float64": torch.float64, "double": torch.float64,
           "float": torch.float32}


def resolve_dtype(dtype) -> torch.dtype:
    """``torch.float32``/``torch.float64`` or their names; anything else is a ValueError."""
    if isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ValueError(f"dtype={dtype!r} is not supported; valid: 'float32', 'float64'")
        return _DTYPES[dtype]
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype={dtype!r} is not supported; valid: torch.float32, torch.float64")
    return dtype


def resolve_device(device) -> torch.device:
    """``'cpu'``, ``'cuda'``, ``'cuda:K'`` or a ``torch.device``; an absent CUDA device says so."""
    if device is None:
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device={device!r} is not a valid device; valid: 'cpu', 'cuda', 'cuda:0', ...") from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} was requested but CUDA is not available on this machine "
                             "(torch.cuda.is_available() is False); use device='cpu'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device={device!r}: only {torch.cuda.device_count()} CUDA device(s) present")
    elif dev.type != "cpu":
        raise ValueError(f"device={device!r} is not supported; valid: 'cpu', 'cuda', 'cuda:K'")
    return dev


def default_device() -> str:
    """``'cuda'`` where a GPU is present, else ``'cpu'`` (what the book uses)."""
    return "cuda" if torch.cuda.is_available() else "cpu"
