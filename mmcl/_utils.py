"""Small shared helpers: resolving ``device`` and ``dtype`` arguments, the checkout's root, and the
argument checks every module uses (:func:`check_int`, :func:`check_number`, :func:`check_bool`)."""
from __future__ import annotations

import math
import os
from pathlib import Path

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


def repo_root(start=None) -> Path:
    """The folder holding ``_toc.yml`` above ``start`` (default: the current directory), else
    the current directory."""
    here = Path(start or os.getcwd()).resolve()
    for p in (here, *here.parents):
        if (p / "_toc.yml").exists():
            return p
    return here


# --------------------------------------------------------------------------------------------
# Argument checks shared by every module: each names the parameter and what would be valid.
# --------------------------------------------------------------------------------------------
def check_int(name: str, value, minimum: int = 1, *, none: bool = False):
    """``value`` as an int ``>= minimum`` (``bool`` is refused: ``True`` is not a count); ``None``
    passes when ``none=True``.  Otherwise a ValueError: ``"NAME must be a positive integer, got V"``
    (``minimum=1``), ``"a non-negative integer"`` (0) or ``"an integer >= K"``."""
    if none and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        what = {1: "a positive integer", 0: "a non-negative integer"}.get(minimum, f"an integer >= {minimum}")
        raise ValueError(f"{name} must be {what}{' or None' if none else ''}, got {value!r}")
    return value


def check_number(name: str, value, low: float = None, high: float = None, *, low_closed: bool = False,
                 high_closed: bool = False, finite: bool = True) -> float:
    """``value`` as a float within ``(low, high)`` (a bound is left out when None; ``*_closed``
    includes it), finite unless ``finite=False``.  ``bool`` is refused.  Otherwise a ValueError
    naming the parameter and the range, e.g. ``"tol must be a finite number in (0, 1), got 2"``."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    if ok:
        v = float(value)
        ok = not math.isnan(v) and (not finite or math.isfinite(v))
        ok = ok and (low is None or (v >= low if low_closed else v > low))
        ok = ok and (high is None or (v <= high if high_closed else v < high))
    if not ok:
        if low is not None and high is not None:
            rng = f" in {'[' if low_closed else '('}{low:g}, {high:g}{']' if high_closed else ')'}"
        elif low is not None:
            rng = f" {'>=' if low_closed else '>'} {low:g}"
        elif high is not None:
            rng = f" {'<=' if high_closed else '<'} {high:g}"
        else:
            rng = ""
        raise ValueError(f"{name} must be a {'finite ' if finite else ''}number{rng}, got {value!r}")
    return float(value)


def check_bool(name: str, value) -> bool:
    """``value`` if it is ``True`` or ``False``; anything else (``1``, ``"yes"``) is a ValueError."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


def writable_dir(option: str, path) -> Path:
    """The folder ``path`` created if missing (with its parents), after checking that a file can be
    written in it; otherwise a ValueError naming ``option`` (e.g. ``"--out"``) and why.  Commands call
    it before they compute, so that a bad output folder costs nothing."""
    if path is None or str(path) == "":
        raise ValueError(f"{option} must be a folder to write to, got {path!r}")
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".mmcl-write-check-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"{option} {str(path)!r} is not a folder this command can write to ({reason}); "
                         "pick another") from None
    return p
