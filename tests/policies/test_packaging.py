"""pyproject.toml installs every package, and policies/ and configs/ under orca_env.

setuptools needs an explicit package list once a package-dir mapping is used; these tests catch a
new subpackage or shipped policy folder that the list misses (it would be left out of wheels).
"""

import os

import orca_env.policies
import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, the same parser (pytest itself needs it there)
    tomllib = pytest.importorskip(
        "tomli", reason="reading pyproject.toml needs tomllib (Python 3.11+) or tomli")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def setuptools_config():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def test_policies_installs_under_the_project_namespace():
    cfg = setuptools_config()
    assert cfg["package-dir"] == {"orca_env.policies": "policies", "orca_env.configs": "configs"}
    assert not [p for p in cfg["packages"] if p.split(".")[0] != "orca_env"]
    assert os.path.samefile(os.path.dirname(orca_env.policies.__file__),
                            os.path.join(ROOT, "policies"))


def test_every_package_folder_is_listed():
    found = set()
    for prefix, folder in (("orca_env", "orca_env"), ("orca_env.policies", "policies"),
                           ("orca_env.configs", "configs")):
        for here, dirs, _ in os.walk(os.path.join(ROOT, folder)):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
            rel = os.path.relpath(here, os.path.join(ROOT, folder))
            found.add(prefix if rel == "." else ".".join([prefix, *rel.split(os.sep)]))
    assert sorted(found - set(setuptools_config()["packages"])) == []
