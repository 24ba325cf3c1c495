"""ColoredMNIST data: an IDX reader, the shipped digits, and the seeded colouring of Table 1.

The paper's real-data experiment (Sec. 6, Table 1, rebuttal R4) colours MNIST digits so that the
colour is a *spurious* feature: predictive of the label in training, reversed at test time.  Our
generator (:func:`make_colored_mnist`, settings in :class:`ColoredMNISTConfig`):

1. shuffles the digits with ``seed`` and splits them ``train_fraction`` / rest;
2. replaces a fraction ``label_noise`` of the labels (both splits) by a class drawn uniformly
   from all ten, so the effective noise is ``label_noise * 9/10`` (0.09 at the default);
3. draws a colour index from the *noisy* label ``y``: ``y`` itself with probability
   ``p_own_colour``, otherwise uniform over all ten colours -- so the colour equals ``y`` with
   probability ``p_own_colour + (1 - p_own_colour)/10`` (0.775 at the default, the paper's 77.5 %);
4. in the test split, swaps the colours of paired classes (0<->1, 2<->3, ...): a test digit
   labelled 0 is green (the colour of class 1) with probability 0.775, the paper's reversal;
5. tints the digit's strokes with ``palette[colour]`` on a black background.

Images are kept as grey levels plus a colour index; :meth:`Split.images` tints on demand, so a
split of 8,000 digits holds 6 MB rather than 75 MB.  Nothing is downloaded: the default source is
``mmcl/experiments/coloredmnist/mnist/mnist_10k.npz`` (10,000 MNIST digits, see ``mmcl/experiments/coloredmnist/mnist/README.md``); :func:`load_mnist`
also reads the standard IDX files from a folder, so the full 70,000 digits can be used.
"""
from __future__ import annotations

import gzip
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Optional, Tuple

import numpy as np
import torch

from mmcl._utils import check_int, check_number, resolve_device

__all__ = ["N_CLASSES", "PALETTE", "PALETTE_NAMES", "ColoredMNISTConfig", "Split", "ColoredMNIST",
           "read_idx", "load_mnist_idx", "load_mnist", "make_colored_mnist", "pair_swap", "tint"]

#: Digit classes (and colours).
N_CLASSES = 10

#: Names of the ten colours of :data:`PALETTE`, in order.
PALETTE_NAMES = ("red", "green", "blue", "yellow", "magenta", "cyan", "orange", "white", "pink", "violet")
#: Ten distinct, bright RGB colours (values in [0, 1]); colour k is the training colour of class k,
#: 0 red and 1 green as in the paper's description.
PALETTE: Tuple[Tuple[float, float, float], ...] = (
    (0.90, 0.10, 0.10),  # red
    (0.10, 0.80, 0.15),  # green
    (0.15, 0.35, 1.00),  # blue
    (1.00, 0.90, 0.10),  # yellow
    (0.95, 0.15, 0.90),  # magenta
    (0.10, 0.90, 0.95),  # cyan
    (1.00, 0.50, 0.00),  # orange
    (1.00, 1.00, 1.00),  # white
    (1.00, 0.60, 0.70),  # pink
    (0.55, 0.20, 0.75),  # violet
)

# IDX type codes (third byte of the magic number) -> numpy big-endian dtype
_IDX_DTYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
               0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

# standard MNIST file stems, in the order they are concatenated (60,000 train then 10,000 test)
_IDX_PAIRS = (("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))


def _check_probability(name: str, value) -> None:
    check_number(f"{name} (a probability)", value, 0.0, 1.0, low_closed=True, high_closed=True)


def _check_palette(palette) -> torch.Tensor:
    """``palette`` -> float32 tensor ``(10, 3)``; wrong size or values outside [0, 1] are errors."""
    try:
        p = torch.as_tensor(palette, dtype=torch.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"palette must be {N_CLASSES} RGB triples in [0, 1]; got {palette!r}") from exc
    if p.shape != (N_CLASSES, 3):
        raise ValueError(f"palette has shape {tuple(p.shape)}; it must be ({N_CLASSES}, 3): "
                         f"one RGB colour per class")
    if not torch.isfinite(p).all() or p.min() < 0 or p.max() > 1:
        raise ValueError(f"palette values must lie in [0, 1]; got min {float(p.min())}, max {float(p.max())}")
    if torch.unique(p, dim=0).shape[0] != N_CLASSES:
        raise ValueError("palette colours must be distinct (two classes share a colour)")
    return p


@dataclass
class ColoredMNISTConfig:
    """Settings of the ColoredMNIST generator (Table 1).  Defaults give the paper's rates."""

    n_images: Optional[int] = None  # digits used from the source; None = all (10,000 shipped)
    train_fraction: float = 0.8  # share of the digits in the training split (the rest is the test split)
    label_noise: float = 0.1  # probability a label is replaced by a uniform class (effective noise 0.09)
    p_own_colour: float = 0.75  # P(colour = own label's colour); else uniform over 10 -> 0.775 in all
    swap_test_colours: bool = True  # test split: colours of classes 2k and 2k+1 exchanged (the reversal)
    image_size: int = 14  # 14 (2x2 average pooling, four times cheaper to train) or 28 (native)
    palette: Tuple[Tuple[float, float, float], ...] = PALETTE  # 10 RGB colours in [0, 1], one per class

    def __post_init__(self):
        check_int("n_images (None: all)", self.n_images, 20, none=True)
        if not (isinstance(self.train_fraction, (int, float)) and 0.0 < self.train_fraction < 1.0):
            raise ValueError(f"train_fraction={self.train_fraction!r} must lie in the open interval (0, 1)")
        _check_probability("label_noise", self.label_noise)
        _check_probability("p_own_colour", self.p_own_colour)
        if self.image_size not in (14, 28):
            raise ValueError(f"image_size={self.image_size!r} is not supported; valid: 14, 28")
        self.palette = tuple(tuple(float(v) for v in c) for c in _check_palette(self.palette).tolist())

    @property
    def p_colour_matches(self) -> float:
        """The probability that the colour index equals the noisy label in training,
        ``p_own_colour + (1 - p_own_colour) / 10``."""
        return self.p_own_colour + (1 - self.p_own_colour) / N_CLASSES

    @property
    def effective_label_noise(self) -> float:
        """The probability that the noisy label differs from the clean one, ``label_noise * 9/10``."""
        return self.label_noise * (N_CLASSES - 1) / N_CLASSES


def pair_swap(c: torch.Tensor) -> torch.Tensor:
    """The test-time colour permutation 0<->1, 2<->3, ..., 8<->9 (``c ^ 1``); ``c (N,)`` int."""
    return torch.bitwise_xor(c, 1)


def tint(gray: torch.Tensor, colour: torch.Tensor, palette: torch.Tensor) -> torch.Tensor:
    """Colour the strokes: ``gray (N, H, W)`` uint8 or float in [0, 1], ``colour (N,)`` int,
    ``palette (10, 3)`` -> ``(N, 3, H, W)`` float32 = ``gray * palette[colour]`` (black background)."""
    g = gray.float() / 255.0 if gray.dtype == torch.uint8 else gray.float()
    rgb = palette.to(g.device)[colour.to(g.device)]  # (N, 3)
    return g[:, None, :, :] * rgb[:, :, None, None]


@dataclass
class Split:
    """One split: ``gray (N, H, W)`` uint8 digits, ``label (N,)`` noisy labels (the targets),
    ``clean_label (N,)`` the MNIST labels, ``colour (N,)`` colour indices, ``palette (10, 3)``."""

    gray: torch.Tensor
    label: torch.Tensor
    clean_label: torch.Tensor
    colour: torch.Tensor
    palette: torch.Tensor = field(repr=False)

    def __len__(self) -> int:
        return int(self.label.shape[0])

    def images(self, idx: Optional[torch.Tensor] = None, device="cpu", colour: Optional[torch.Tensor] = None,
               grayscale: bool = False) -> torch.Tensor:
        """Tinted images ``(B, 3, H, W)`` float32 on ``device`` for the rows ``idx`` (all if None).
        ``colour (B,)`` overrides the colour indices; ``grayscale=True`` gives white strokes
        (shape only, the colour removed)."""
        dev = resolve_device(device)
        idx = torch.arange(len(self)) if idx is None else idx.cpu()
        gray = self.gray[idx].to(dev)
        if grayscale:
            return (gray.float() / 255.0)[:, None].expand(-1, 3, -1, -1).contiguous()
        c = self.colour[idx] if colour is None else colour
        return tint(gray, c, self.palette)

    def rates(self) -> dict:
        """Realised rates: ``colour_matches_label`` P(colour = label), ``colour_matches_swapped``
        P(colour = pair_swap(label)), ``label_noise`` P(label != clean label)."""
        return {"colour_matches_label": float((self.colour == self.label).float().mean()),
                "colour_matches_swapped": float((self.colour == pair_swap(self.label)).float().mean()),
                "label_noise": float((self.label != self.clean_label).float().mean())}


@dataclass
class ColoredMNIST:
    """The two splits of :func:`make_colored_mnist`, with the ``cfg`` and ``seed`` that made them."""

    train: Split
    test: Split
    cfg: ColoredMNISTConfig
    seed: int


# ---------------------------------------------------------------------------------------------
# reading MNIST
# ---------------------------------------------------------------------------------------------

def read_idx(path) -> np.ndarray:
    """Read one IDX file (plain or ``.gz``) into a numpy array of its declared type and shape.

    Format: a magic number of four bytes ``0, 0, type, ndim`` (type 0x08 uint8, 0x09 int8, 0x0B
    int16, 0x0C int32, 0x0D float32, 0x0E float64), ``ndim`` big-endian int32 sizes, then the
    payload, row-major big-endian.  A wrong magic number, a truncated header or payload, or bytes
    after the payload raise a ValueError naming the file."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError) as exc:  # includes a corrupt gzip stream
        raise ValueError(f"cannot read IDX file {path}: {exc}") from exc
    if len(raw) < 4:
        raise ValueError(f"IDX file {path} is truncated: {len(raw)} bytes, shorter than the 4-byte magic number")
    zero1, zero2, code, ndim = raw[0], raw[1], raw[2], raw[3]
    if zero1 != 0 or zero2 != 0 or code not in _IDX_DTYPES or ndim == 0:
        raise ValueError(f"IDX file {path} has a wrong magic number 0x{raw[:4].hex()}; expected 0x0000TTNN "
                         f"with type TT in {{08, 09, 0b, 0c, 0d, 0e}} and NN >= 1 dimensions "
                         f"(MNIST images: 0x00000803, labels: 0x00000801)")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"IDX file {path} is truncated: its header needs {header} bytes, the file has {len(raw)}")
    shape = tuple(int.from_bytes(raw[4 + 4 * k: 8 + 4 * k], "big") for k in range(ndim))
    dtype = _IDX_DTYPES[code]
    expected = header + math.prod(shape) * dtype.itemsize
    if len(raw) < expected:
        raise ValueError(f"IDX file {path} is truncated: shape {shape} of {dtype.name} needs {expected} bytes, "
                         f"the file has {len(raw)}")
    if len(raw) > expected:
        raise ValueError(f"IDX file {path} has {len(raw) - expected} bytes after its payload of shape {shape}; "
                         f"expected exactly {expected} bytes")
    arr = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)
    return arr.astype(dtype.newbyteorder("="))


def _find(folder: Path, stem: str) -> Optional[Path]:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        if (folder / name).exists():
            return folder / name
    return None


def _check_digits(images: np.ndarray, labels: np.ndarray, where: str) -> None:
    if images.ndim != 3 or images.shape[1:] != (28, 28):
        raise ValueError(f"{where}: images must have shape (N, 28, 28); got {images.shape}")
    if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
        raise ValueError(f"{where}: {images.shape[0]} images but labels of shape {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() >= N_CLASSES):
        raise ValueError(f"{where}: labels must lie in 0..9; got {labels.min()}..{labels.max()}")


def load_mnist_idx(folder) -> Tuple[torch.Tensor, torch.Tensor]:
    """The MNIST digits in ``folder`` as ``images (N, 28, 28)`` uint8 and ``labels (N,)`` int64.

    Reads every standard pair present (``train-images-idx3-ubyte`` with ``train-labels-idx1-ubyte``,
    ``t10k-...`` likewise; ``.gz`` and the ``...-images.idx3-ubyte`` spelling accepted), training
    digits first, so the full database gives N = 70,000."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"MNIST folder {folder} does not exist or is not a directory")
    images, labels = [], []
    for img_stem, lab_stem in _IDX_PAIRS:
        img_path, lab_path = _find(folder, img_stem), _find(folder, lab_stem)
        if img_path is None and lab_path is None:
            continue
        if img_path is None or lab_path is None:
            raise ValueError(f"MNIST folder {folder}: found {img_path or lab_path} but not its partner "
                             f"({img_stem if img_path is None else lab_stem})")
        im, lb = read_idx(img_path), read_idx(lab_path)
        _check_digits(im, lb, f"{img_path.name} / {lab_path.name}")
        images.append(im.astype(np.uint8))
        labels.append(lb.astype(np.int64))
    if not images:
        raise ValueError(f"MNIST folder {folder} holds no IDX pair; expected e.g. "
                         f"{_IDX_PAIRS[0][0]} and {_IDX_PAIRS[0][1]} (optionally .gz)")
    return torch.from_numpy(np.concatenate(images)), torch.from_numpy(np.concatenate(labels))


def load_mnist(source=None) -> Tuple[torch.Tensor, torch.Tensor]:
    """MNIST digits as ``images (N, 28, 28)`` uint8 and ``labels (N,)`` int64.

    ``source``: None -> the 10,000 digits shipped in ``mmcl/experiments/coloredmnist/mnist/mnist_10k.npz``; a folder -> the
    IDX files in it (:func:`load_mnist_idx`); a ``.npz`` file with ``images`` and ``labels``."""
    if source is None:
        with resources.as_file(resources.files("mmcl.experiments.coloredmnist") / "mnist" / "mnist_10k.npz") as p:
            return load_mnist(p)
    path = Path(source)
    if path.is_dir():
        return load_mnist_idx(path)
    if path.suffix == ".npz" and path.exists():
        with np.load(path) as z:
            if "images" not in z or "labels" not in z:
                raise ValueError(f"{path} must hold arrays 'images' and 'labels'; it has {sorted(z.files)}")
            im, lb = np.asarray(z["images"]), np.asarray(z["labels"])
        _check_digits(im, lb, str(path))
        return torch.from_numpy(im.astype(np.uint8)), torch.from_numpy(lb.astype(np.int64))
    raise ValueError(f"MNIST source {source!r} is neither a folder of IDX files nor an existing .npz file")


# ---------------------------------------------------------------------------------------------
# the coloured dataset
# ---------------------------------------------------------------------------------------------

def _noisy_labels_and_colours(clean: torch.Tensor, cfg: ColoredMNISTConfig, g: torch.Generator):
    n = clean.shape[0]
    flip = torch.rand(n, generator=g) < cfg.label_noise
    label = torch.where(flip, torch.randint(N_CLASSES, (n,), generator=g), clean)
    own = torch.rand(n, generator=g) < cfg.p_own_colour
    colour = torch.where(own, label, torch.randint(N_CLASSES, (n,), generator=g))
    return label, colour


def make_colored_mnist(cfg: ColoredMNISTConfig = ColoredMNISTConfig(), seed: int = 0, source=None,
                       digits: Optional[Tuple[torch.Tensor, torch.Tensor]] = None) -> ColoredMNIST:
    """The seeded ColoredMNIST of Table 1 (steps 1-5 of the module docstring).

    ``digits = (images (N, 28, 28) uint8, labels (N,))`` skips loading; else :func:`load_mnist`
    reads ``source``.  Everything random comes from one ``torch.Generator`` seeded with ``seed``."""
    check_int("seed", seed, 0)
    images, labels = digits if digits is not None else load_mnist(source)
    n_all = images.shape[0]
    n = n_all if cfg.n_images is None else cfg.n_images
    if n > n_all:
        raise ValueError(f"n_images={n} but the source holds only {n_all} digits")
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(n_all, generator=g)[:n]
    gray, clean = images[perm], labels[perm].long()
    if cfg.image_size == 14:
        gray = torch.nn.functional.avg_pool2d(gray[:, None].float(), 2)[:, 0].round().to(torch.uint8)
    n_train = int(round(cfg.train_fraction * n))
    if not 0 < n_train < n:
        raise ValueError(f"train_fraction={cfg.train_fraction} leaves an empty split of {n} digits")
    palette = torch.tensor(cfg.palette, dtype=torch.float32)
    splits = []
    for sl, swap in ((slice(0, n_train), False), (slice(n_train, n), cfg.swap_test_colours)):
        label, colour = _noisy_labels_and_colours(clean[sl], cfg, g)
        if swap:
            colour = pair_swap(colour)
        splits.append(Split(gray=gray[sl].contiguous(), label=label, clean_label=clean[sl].clone(),
                            colour=colour, palette=palette))
    return ColoredMNIST(train=splits[0], test=splits[1], cfg=cfg, seed=seed)
