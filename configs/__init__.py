"""The YAML configs shipped with orca-env, installed as the package data of ``orca_env.configs``.

``configs/`` sits at the top of the repository; a wheel installs it as ``orca_env/configs/``, so
configs can be named from anywhere: ``orca_env.parallel_env("circle_dense")``,
``orca-env eval bottleneck``, ``train.py --config circle_ppo``, ``orca-env bench standard``.
:func:`resolve` turns such a name into the file's path; a path that exists is always used as
given. Three kinds: scenario configs (``env``, this folder), training configs (``train``, in
``train/``) and benchmark suites (``suite``, in ``suites/``).
"""

from __future__ import annotations

import os

__all__ = ["CONFIG_DIR", "names", "resolve"]

#: Folder of the shipped configs (scenario configs here, training configs in ``train/``,
#: benchmark suites in ``suites/``).
CONFIG_DIR = os.path.dirname(os.path.abspath(__file__))
#: Subfolder of each kind of config.
_FOLDERS = {"env": "", "train": "train", "suite": "suites"}


def _folder(kind: str) -> str:
    if kind not in _FOLDERS:
        raise ValueError(f"kind must be one of {sorted(_FOLDERS)}, got {kind!r}")
    return os.path.join(CONFIG_DIR, _FOLDERS[kind]) if _FOLDERS[kind] else CONFIG_DIR


def names(kind: str = "env") -> list[str]:
    """Names of the shipped configs: ``kind`` ``"env"`` (scenarios), ``"train"`` or ``"suite"``."""
    folder = _folder(kind)
    return sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".yaml"))


def resolve(name: str | os.PathLike, kind: str = "env") -> str:
    """The path of config ``name``: an existing file, or a shipped config's name.

    Args:
        name: A path, or a shipped config's name with or without ``.yaml``
            (``"circle_dense"``, ``"configs/circle_dense.yaml"`` from any folder).
        kind: ``"env"`` for scenario configs, ``"train"`` for training configs, ``"suite"``
            for benchmark suites.

    Returns:
        The path of an existing file.

    Raises:
        FileNotFoundError: If ``name`` is neither a file nor a shipped config; the message lists
            the shipped names.
    """
    folder = _folder(kind)
    path = os.fspath(name)
    if os.path.isfile(path):
        return path
    stem = path[:-5] if path.endswith(".yaml") else path
    # "configs/x.yaml", "configs/train/x.yaml" and "configs/suites/x.yaml" (as the docs write
    # them) name shipped files too.
    for prefix in ("configs/train/", "configs/suites/", "configs/", "train/", "suites/"):
        if stem.startswith(prefix):
            stem = stem[len(prefix):]
            break
    candidate = os.path.join(folder, stem + ".yaml")
    if "/" not in stem and os.sep not in stem and os.path.isfile(candidate):
        return candidate
    raise FileNotFoundError(f"no config file {path!r} and no shipped {kind} config of that "
                            f"name; shipped: {', '.join(names(kind))}")
