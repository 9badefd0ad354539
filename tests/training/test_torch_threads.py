"""torch's threads where the project builds or loads a model: 1 by default, the user's
``ORCA_ENV_TORCH_THREADS`` over that default, an explicit value over both."""

import pytest

torch = pytest.importorskip("torch")

from orca_env.policies import SHIPPED_MODEL  # noqa: E402
from orca_env.policies.sb3 import load  # noqa: E402

from orca_env.training.config import (  # noqa: E402
    THREADS_ENV,
    TrainConfigError,
    default_torch_threads,
    load_train_config,
)
from orca_env.training.sb3.adapter import make_vec_env  # noqa: E402


@pytest.fixture(autouse=True)
def threads(monkeypatch):
    """torch at 2 threads (not what the project sets) and no variable; restored after."""
    before = torch.get_num_threads()
    monkeypatch.delenv(THREADS_ENV, raising=False)
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_default_is_one_thread_or_the_variable(monkeypatch):
    assert default_torch_threads() == 1
    monkeypatch.setenv(THREADS_ENV, " 3 ")
    assert default_torch_threads() == 3
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(ValueError, match=rf"{THREADS_ENV} must be a positive integer, "
                                             rf"got '{bad}'"):
            default_torch_threads()
    monkeypatch.setenv(THREADS_ENV, "")  # set but empty: as unset
    assert default_torch_threads() == 1


def test_the_sb3_adapter_sets_the_threads_of_the_model_built_next(monkeypatch):
    make_vec_env("circle_dense", n_envs=1)
    assert torch.get_num_threads() == 1
    monkeypatch.setenv(THREADS_ENV, "2")
    torch.set_num_threads(1)
    make_vec_env("circle_dense", n_envs=1, backend="copies")
    assert torch.get_num_threads() == 2
    make_vec_env("circle_dense", n_envs=1, torch_threads=1)  # explicit beats the variable
    assert torch.get_num_threads() == 1
    torch.set_num_threads(2)
    make_vec_env("circle_dense", n_envs=1, torch_threads=None)  # left alone
    assert torch.get_num_threads() == 2
    for bad in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match=rf"torch_threads .*got {bad!r}"):
            make_vec_env("circle_dense", n_envs=1, torch_threads=bad)
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(ValueError, match=THREADS_ENV):
        make_vec_env("circle_dense", n_envs=1)
    assert torch.get_num_threads() == 2  # refused before anything changed


def test_the_loader_follows_the_variable_unless_told(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "2")
    torch.set_num_threads(1)
    load(SHIPPED_MODEL)
    assert torch.get_num_threads() == 2
    load(SHIPPED_MODEL, torch_threads=1)
    assert torch.get_num_threads() == 1


def test_training_config_key_beats_the_variable(monkeypatch, tmp_path):
    # The shipped configs leave the key out: 1, or the variable.
    assert load_train_config(None)["torch_threads"] == 1
    monkeypatch.setenv(THREADS_ENV, "2")
    assert load_train_config(None)["torch_threads"] == 2
    cfg = tmp_path / "t.yaml"
    cfg.write_text("env: {config: circle_dense}\ntorch_threads: 1\n")
    assert load_train_config(cfg)["torch_threads"] == 1
    monkeypatch.setenv(THREADS_ENV, "0")
    assert load_train_config(cfg)["torch_threads"] == 1  # the variable is not even read
    with pytest.raises(TrainConfigError, match=THREADS_ENV):
        load_train_config(None)
