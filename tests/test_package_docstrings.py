"""Every package of mmcl says in its docstring what of it is public and what internal."""
import importlib
import pkgutil
from pathlib import Path

import mmcl


def test_every_package_says_what_is_public():
    root = Path(mmcl.__file__).resolve().parent
    missing = []
    for info in pkgutil.walk_packages([str(root)], prefix="mmcl."):
        if not info.ispkg:
            continue
        doc = importlib.import_module(info.name).__doc__ or ""
        if "Public" not in doc and "Internal" not in doc:
            missing.append(info.name)
    assert not missing, f"packages whose docstring does not say what is public or internal: {missing}"
