"""Which CPU code path computes, and how to select another one.

A trained network's last digits depend on which vector instructions PyTorch's kernels (ATen),
oneDNN and MKL use: the same seed gives a ColoredMNIST test accuracy of 20.5 % under AVX-512 and
24.3 % under AVX2.  A claim of the book must hold on every machine, so CI re-executes the book
under a code path other than the machine's native one (``scripts/test.sh``), and the on-disk
cache keys every entry with the code path that computed it (:func:`current`).

The three libraries read their setting from the environment when they load, so a code path is
chosen for a new process, never inside a running one::

    mmcl codepath                 # this process's code path, e.g. "avx512"
    mmcl codepath --alternative   # shell exports that select another one, e.g. AVX2

Public: :data:`CODE_PATHS`, :func:`current`, :func:`alternative`, :func:`environment`.
Imports no layer of ``mmcl``.
"""
from __future__ import annotations

import os
from typing import Dict, Optional

__all__ = ["CODE_PATHS", "ENV_VARS", "current", "alternative", "environment", "add_parser"]

#: For each code path, the environment variables that select it (ATen's dispatch
#: ``ATEN_CPU_CAPABILITY``, oneDNN's instruction-set ceiling and MKL's).
CODE_PATHS: Dict[str, Dict[str, str]] = {
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE",
               "MKL_ENABLE_INSTRUCTIONS": "AVX512"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41",
                "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
}
#: Every variable that :data:`CODE_PATHS` sets.
ENV_VARS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


def current() -> str:
    """The code path of this process: ATen's CPU capability in lower case (``"avx512"``,
    ``"avx2"``, ``"default"``, or on Arm e.g. ``"sve256"``), followed by ``+VAR=value`` for each
    oneDNN/MKL variable that is set, since those change the digits of a convolution too."""
    import torch

    name = str(torch.backends.cpu.get_cpu_capability()).lower()
    extra = [f"{v}={os.environ[v]}" for v in ENV_VARS[1:] if os.environ.get(v)]
    return "+".join([name, *extra])


def alternative(native: Optional[str] = None) -> str:
    """A code path other than ``native`` (default: this process's ATen capability) that the CPU
    can run: ``"avx2"`` below any AVX-512 (or AMX) path, ``"default"`` (no vector extensions) below
    AVX2 or any Arm path.  A ValueError when ``native`` is already ``"default"``: there is nothing
    below it."""
    if native is None:
        import torch

        native = str(torch.backends.cpu.get_cpu_capability())
    if not isinstance(native, str) or not native:
        raise ValueError(f"native={native!r} must be a code path name such as 'avx512', 'avx2' or 'default'")
    name = native.lower().split("+")[0]
    if name.startswith(("avx512", "amx")):
        return "avx2"
    if name == "default":
        raise ValueError("native='default': this CPU runs PyTorch without vector extensions already, so "
                         "there is no other code path to compare with; valid natives: avx512*, avx2, sve*")
    return "default"


def environment(path: str) -> Dict[str, str]:
    """The environment variables that select ``path`` (a key of :data:`CODE_PATHS`) in a new process."""
    if path not in CODE_PATHS:
        raise ValueError(f"path={path!r} is unknown; valid: {', '.join(map(repr, CODE_PATHS))}")
    return dict(CODE_PATHS[path])


def add_parser(sub) -> None:
    """``mmcl codepath [--alternative]``."""
    p = sub.add_parser("codepath", help="the CPU code path (AVX-512, AVX2, ...) and how to select another",
                       description="Print this process's CPU code path, or (--alternative) the shell exports "
                                   "that select another one for a new process: eval \"$(mmcl codepath "
                                   "--alternative)\".")
    p.add_argument("--alternative", action="store_true",
                   help="print `export VAR=value` lines selecting a code path other than the native one")
    p.set_defaults(func=_run)


def _run(args) -> int:
    if args.alternative:
        path = alternative()
        print(f"# code path {path} (native: {current()})")
        for k, v in environment(path).items():
            print(f"export {k}={v}")
    else:
        print(current())
    return 0
