"""ColoredMNIST data: the IDX reader, the shipped digits and the seeded colouring of Table 1."""
import gzip
import hashlib
import re
import struct
from importlib import resources

import numpy as np
import pytest
import torch

from mmcl.experiments.coloredmnist.data import (PALETTE, ColoredMNISTConfig, load_mnist, load_mnist_idx, make_colored_mnist,
                                    pair_swap, read_idx)


def write_idx(path, arr: np.ndarray, code: int = 0x08):
    """An IDX file written independently of the reader: magic 0,0,code,ndim; big-endian sizes; payload."""
    dt = {0x08: ">u1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4"}[code]
    blob = bytes([0, 0, code, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape) + arr.astype(dt).tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(blob)
    return blob


@pytest.fixture(scope="module")
def small_digits():
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (7, 28, 28), dtype=np.uint8), rng.integers(0, 10, 7).astype(np.uint8)


@pytest.fixture(scope="module")
def cmnist():
    return make_colored_mnist(ColoredMNISTConfig(), seed=0)


# --- IDX -------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_idx_pair_written_then_read_back_is_identical(tmp_path, small_digits, suffix):
    images, labels = small_digits
    write_idx(tmp_path / f"train-images-idx3-ubyte{suffix}", images)
    write_idx(tmp_path / f"train-labels-idx1-ubyte{suffix}", labels)
    assert np.array_equal(read_idx(tmp_path / f"train-images-idx3-ubyte{suffix}"), images)
    im, lb = load_mnist_idx(tmp_path)
    assert im.dtype == torch.uint8 and lb.dtype == torch.int64
    assert np.array_equal(im.numpy(), images) and np.array_equal(lb.numpy(), labels)
    im2, lb2 = load_mnist(tmp_path)
    assert torch.equal(im, im2) and torch.equal(lb, lb2)


def test_idx_train_and_t10k_pairs_are_concatenated_in_order(tmp_path, small_digits):
    images, labels = small_digits
    write_idx(tmp_path / "train-images-idx3-ubyte", images[:4])
    write_idx(tmp_path / "train-labels-idx1-ubyte", labels[:4])
    write_idx(tmp_path / "t10k-images-idx3-ubyte", images[4:])
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", labels[4:])
    im, lb = load_mnist_idx(tmp_path)
    assert np.array_equal(im.numpy(), images) and np.array_equal(lb.numpy(), labels)


def test_idx_reads_other_types_big_endian(tmp_path):
    a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4) * 1000
    write_idx(tmp_path / "x.idx", a, code=0x0C)
    assert np.array_equal(read_idx(tmp_path / "x.idx"), a)


def test_idx_wrong_magic_number_is_an_error(tmp_path, small_digits):
    blob = bytearray(write_idx(tmp_path / "ok", small_digits[0]))
    for bad in (bytes([0, 1, 8, 3]), bytes([0, 0, 7, 3]), bytes([0, 0, 8, 0])):
        blob[:4] = bad
        (tmp_path / "bad").write_bytes(bytes(blob))
        with pytest.raises(ValueError, match="wrong magic number"):
            read_idx(tmp_path / "bad")


def test_idx_truncated_payload_header_and_trailing_bytes_are_errors(tmp_path, small_digits):
    blob = write_idx(tmp_path / "ok", small_digits[0])
    (tmp_path / "short").write_bytes(blob[:-5])
    with pytest.raises(ValueError, match="truncated"):
        read_idx(tmp_path / "short")
    (tmp_path / "header").write_bytes(blob[:9])
    with pytest.raises(ValueError, match="truncated"):
        read_idx(tmp_path / "header")
    (tmp_path / "tiny").write_bytes(blob[:2])
    with pytest.raises(ValueError, match="truncated"):
        read_idx(tmp_path / "tiny")
    (tmp_path / "long").write_bytes(blob + b"\x00\x00")
    with pytest.raises(ValueError, match="after its payload"):
        read_idx(tmp_path / "long")


def test_idx_folder_with_an_unpaired_or_no_file_is_an_error(tmp_path, small_digits):
    with pytest.raises(ValueError, match="no IDX pair"):
        load_mnist_idx(tmp_path)
    write_idx(tmp_path / "train-images-idx3-ubyte", small_digits[0])
    with pytest.raises(ValueError, match="partner"):
        load_mnist_idx(tmp_path)
    write_idx(tmp_path / "train-labels-idx1-ubyte", small_digits[1][:3])
    with pytest.raises(ValueError, match="labels"):
        load_mnist_idx(tmp_path)


def test_load_mnist_rejects_a_missing_source(tmp_path):
    with pytest.raises(ValueError, match="neither a folder"):
        load_mnist(tmp_path / "nope.npz")


# --- the shipped digits ----------------------------------------------------------------------

def test_shipped_digits_match_their_readme():
    folder = resources.files("mmcl.experiments.coloredmnist") / "mnist"
    readme = (folder / "README.md").read_text()
    digest = hashlib.sha256((folder / "mnist_10k.npz").read_bytes()).hexdigest()
    assert digest in readme, "the README's sha256 must be the shipped file's"
    assert "CC BY-SA 3.0" in readme and "LeCun" in readme
    images, labels = load_mnist()
    assert images.shape == (10000, 28, 28) and images.dtype == torch.uint8
    counts = re.search(r"counts per class\s+([\d\s]+)", readme).group(1).split()
    assert torch.bincount(labels, minlength=10).tolist() == [int(c) for c in counts]


# --- the coloured dataset ----------------------------------------------------------------------

def test_split_is_80_20_of_the_shipped_digits(cmnist):
    assert len(cmnist.train) == 8000 and len(cmnist.test) == 2000


def test_realised_rates_match_the_paper(cmnist):
    """0.775 = 0.75 + 0.25/10 colour agreement in training, reversed (pair-swapped) at test, and
    0.09 = 0.1 * 9/10 effective label noise; tolerances are about four binomial s.d."""
    tr, te = cmnist.train.rates(), cmnist.test.rates()
    assert abs(tr["colour_matches_label"] - 0.775) < 0.02
    assert abs(te["colour_matches_swapped"] - 0.775) < 0.04
    assert tr["colour_matches_swapped"] < 0.05 and te["colour_matches_label"] < 0.06
    assert abs(tr["label_noise"] - 0.09) < 0.015 and abs(te["label_noise"] - 0.09) < 0.03
    cfg = ColoredMNISTConfig()
    assert cfg.p_colour_matches == pytest.approx(0.775) and cfg.effective_label_noise == pytest.approx(0.09)


def test_off_colour_draws_are_uniform_over_all_ten(cmnist):
    tr = cmnist.train
    off = tr.colour != tr.label
    # among the 25 % re-drawn colours, each of the 9 other colours is about equally likely
    shift = (tr.colour[off] - tr.label[off]) % 10
    counts = torch.bincount(shift, minlength=10)[1:].double()
    assert counts.min() > 0.75 * counts.mean()


def test_test_colours_are_the_pair_swapped_colours():
    plain = make_colored_mnist(ColoredMNISTConfig(swap_test_colours=False), seed=0)
    swapped = make_colored_mnist(ColoredMNISTConfig(), seed=0)
    assert torch.equal(swapped.test.colour, pair_swap(plain.test.colour))
    assert torch.equal(swapped.train.colour, plain.train.colour)
    # the paper's example: in the test split a 0 is mostly green (colour 1), a 1 mostly red (colour 0)
    te = swapped.test
    assert (te.colour[te.label == 0] == 1).float().mean() > 0.7
    assert (te.colour[te.label == 1] == 0).float().mean() > 0.7
    assert pair_swap(torch.arange(10)).tolist() == [1, 0, 3, 2, 5, 4, 7, 6, 9, 8]


def test_images_are_strokes_tinted_with_the_palette_on_black(cmnist):
    tr = cmnist.train
    idx = torch.arange(5)
    x = tr.images(idx)
    expected = tr.gray[:5].numpy()[:, None].astype(np.float64) / 255 * np.array(PALETTE)[tr.colour[:5].numpy()][:, :, None, None]
    assert x.shape == (5, 3, 14, 14)  # the default: 2x2-pooled digits
    np.testing.assert_allclose(x.double().numpy(), expected, atol=1e-6)
    grey = tr.images(idx, grayscale=True)
    assert torch.equal(grey[:, 0], grey[:, 2]) and torch.allclose(grey[:, 0], tr.gray[:5].float() / 255)


def test_generator_is_seeded():
    a, b, c = (make_colored_mnist(ColoredMNISTConfig(n_images=500), seed=s) for s in (3, 3, 4))
    assert torch.equal(a.train.gray, b.train.gray) and torch.equal(a.test.colour, b.test.colour)
    assert torch.equal(a.train.label, b.train.label)
    assert not torch.equal(a.train.colour, c.train.colour)


def test_downsampled_images_are_2x2_averages(small_digits):
    images, labels = small_digits
    d = make_colored_mnist(ColoredMNISTConfig(image_size=14, train_fraction=0.5, n_images=None), 0,
                           digits=(torch.from_numpy(images).repeat(3, 1, 1), torch.from_numpy(labels).long().repeat(3)))
    full = make_colored_mnist(ColoredMNISTConfig(image_size=28, train_fraction=0.5), 0,
                              digits=(torch.from_numpy(images).repeat(3, 1, 1), torch.from_numpy(labels).long().repeat(3)))
    pooled = full.train.gray.double().reshape(-1, 14, 2, 14, 2).mean((2, 4))
    assert d.train.gray.shape[-1] == 14
    assert (d.train.gray.double() - pooled).abs().max() <= 0.5


@pytest.mark.parametrize("kwargs, field", [
    ({"palette": PALETTE[:9]}, "palette"),
    ({"palette": [(1.0, 0.0)] * 10}, "palette"),
    ({"palette": [(1.0, 0.0, 2.0)] + list(PALETTE[1:])}, "palette"),
    ({"palette": [PALETTE[0]] * 10}, "palette"),
    ({"label_noise": 1.5}, "label_noise"),
    ({"label_noise": -0.1}, "label_noise"),
    ({"p_own_colour": 1.01}, "p_own_colour"),
    ({"train_fraction": 1.0}, "train_fraction"),
    ({"image_size": 20}, "image_size"),
    ({"n_images": 5}, "n_images"),
])
def test_bad_generator_settings_raise_a_clear_error(kwargs, field):
    with pytest.raises(ValueError, match=field):
        ColoredMNISTConfig(**kwargs)


def test_more_images_than_the_source_is_an_error():
    with pytest.raises(ValueError, match="n_images"):
        make_colored_mnist(ColoredMNISTConfig(n_images=20_000), 0)
