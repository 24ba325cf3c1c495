"""The on-disk cache's key (mmcl.cache)."""
def test_the_code_version_moves_with_code_that_computes_only(tmp_path):
    """Editing a figure module (a caption) keeps every cached run; editing the kernel invalidates."""
    import shutil
    from pathlib import Path

    import mmcl.cache as cache

    pkg = tmp_path / "mmcl"
    shutil.copytree(Path(cache.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    base = cache.source_hash(pkg)
    fig = pkg / "figures" / "theme.py"
    fig.write_text(fig.read_text() + "\n# a caption edited\n")
    assert cache.source_hash(pkg) == base
    page = pkg / "booksupport" / "claims.py"
    page.write_text(page.read_text() + "\n# an HTML string edited\n")
    assert cache.source_hash(pkg) == base
    kernel = pkg / "dynamics" / "kernel.py"
    kernel.write_text(kernel.read_text() + "\n# a kernel edited\n")
    assert cache.source_hash(pkg) != base
