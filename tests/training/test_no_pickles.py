"""Nothing of a training run is unpickled: resume never loads the model's cloudpickled data, and
refuses or ignores a legacy pickled normaliser or replay buffer (a real payload proves it)."""

import base64
import json
import pickle
import zipfile

import pytest
from tiny_training import tiny_config

pytest.importorskip("stable_baselines3")

from orca_env.training.cli import EXIT_FAILURE, EXIT_OK, main  # noqa: E402
from orca_env.training.experiment import run_experiment  # noqa: E402


class Marker:
    """Unpickling this creates the file ``path``: a real payload, harmless beyond that."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def payload(marker) -> bytes:
    return pickle.dumps(Marker(marker))


def poison_data(zip_path, marker):
    """Replace the zip's cloudpickled data entries by a payload that creates ``marker``."""
    with zipfile.ZipFile(zip_path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    blob = base64.b64encode(payload(marker)).decode()
    n = 0
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            value[":serialized:"] = blob
            n += 1
    assert n >= 3  # lr_schedule, policy_class, spaces, ...
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(zip_path, "w") as z:
        for name, blob in members.items():
            z.writestr(name, blob)


def test_the_payload_is_real(tmp_path):
    pickle.loads(payload(tmp_path / "proof"))
    assert (tmp_path / "proof").exists()


def test_resume_does_not_unpickle_the_model_data(run, tmp_path):
    marker = tmp_path / "pwned"
    for z in [run / "model.zip", *(run / "checkpoints").glob("*.zip")]:
        poison_data(z, marker)
    res = run_experiment(resume=str(run), n_timesteps=640, evaluate=False, progress_bar=False)
    assert res["stats"]["timesteps"] >= 640
    assert not marker.exists()


def test_resume_refuses_a_legacy_pickled_normaliser(run, tmp_path, capsys):
    marker = tmp_path / "pwned"
    for npz in [run / "vecnormalize.npz", *(run / "checkpoints").glob("*vecnormalize*.npz")]:
        npz.unlink()
        npz.with_suffix(".pkl").write_bytes(payload(marker))
    with pytest.warns(UserWarning, match="skipping the checkpoint"):
        code = main(["--resume", str(run), "--n-timesteps", "640", "--no-eval",
                     "--no-progress"])
    assert code == EXIT_FAILURE
    err = capsys.readouterr().err
    assert "pickle" in err and "runs any code" in err and "convert_legacy_normalizer" in err
    assert not marker.exists()


def test_sac_resume_ignores_a_pickled_replay_buffer(tmp_path):
    cfg = tiny_config(tmp_path, algo="sac", n_timesteps=128, checkpoint_freq=128,
                      hyperparams={"learning_starts": 32, "batch_size": 16, "buffer_size": 500,
                                   "train_freq": 4},
                      policy_kwargs={"net_arch": [8]})
    run = tmp_path / "sac"
    assert main(["--config", str(cfg), "--run-dir", str(run), "--no-eval",
                 "--no-progress"]) == EXIT_OK
    marker = tmp_path / "pwned"
    for npz in [run / "replay_buffer.npz", *(run / "checkpoints").glob("*replay_buffer*.npz")]:
        npz.unlink()
        npz.with_suffix(".pkl").write_bytes(payload(marker))
    with pytest.warns(UserWarning, match="legacy replay buffer .*pickle.*empty"):
        res = run_experiment(resume=str(run), n_timesteps=192, evaluate=False,
                             progress_bar=False)
    assert res["stats"]["timesteps"] >= 192
    assert not marker.exists()
