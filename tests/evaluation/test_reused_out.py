"""Output folders owned by their run (issue 27 item 3): eval into a reused ``--out`` removes
the earlier summary before the first episode (as bench does), the temporary files a killed run
left are removed at the start, and a symlinked ``logs/``, ``videos/`` or ``entries/`` inside
the output folder is a one-line error, never written through."""

import os

import pytest
from eval_checks import CROWDNAV, SHORT, one_line_error

import orca_env.evaluation.suite as suite
from orca_env.cli import main
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import load_suite, run_bench
from orca_env.files import atomic_path, atomic_write_text, remove_stale_temps

EVAL = ["eval", CROWDNAV, "--policy", "orca", "--episodes", "1", "--quiet",
        "--set", "max_steps=8"]


def _temp_names(folder, *names):
    """The temporary names atomic_path gives ``names`` in ``folder`` (files left as by a kill)."""
    made = []
    for name, suffix in names:
        with pytest.raises(KeyboardInterrupt), atomic_path(folder / name, suffix=suffix) as tmp:
            made.append(tmp)
            raise KeyboardInterrupt  # atomic_path removes it; a SIGKILL would not
    for tmp in made:
        open(tmp, "wb").close()
    return [os.path.basename(t) for t in made]


def test_remove_stale_temps_takes_atomic_path_names_only(tmp_path):
    stale = _temp_names(tmp_path, ("metrics.json", ""), ("episode_1.npz", ".npz"),
                        ("v.mp4", ".mp4"))
    assert all(n.startswith(".") for n in stale)
    keep = [".keep", "notes.txt", ".metrics.json.short.tmp", ".x.npz.abcdefgh.mp4",
            "metrics.json"]
    for n in keep:
        (tmp_path / n).write_text("mine")
    (tmp_path / ".sub.abcdefgh.tmp").mkdir()  # a folder is never removed
    removed = remove_stale_temps(tmp_path)
    assert sorted(os.path.basename(p) for p in removed) == sorted(stale)
    assert sorted(os.listdir(tmp_path)) == sorted([*keep, ".sub.abcdefgh.tmp"])


def test_eval_into_a_reused_out_clears_the_earlier_summary_before_the_first_episode(
        tmp_path, monkeypatch):
    out = tmp_path / "out"
    evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(out), logs=1, overrides=SHORT)
    (out / "trajectories.png").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    stale = _temp_names(out, ("metrics.json", "")) + _temp_names(out / "logs",
                                                                 ("episode_10000.npz", ".npz"))

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the run stops in its first episode

    monkeypatch.setattr(suite, "run_episode", killed)
    with pytest.raises(KeyboardInterrupt):
        evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(out), logs=1, overrides=SHORT)
    assert sorted(os.listdir(out)) == ["logs", "notes.txt"]  # no earlier metrics.json
    assert os.listdir(out / "logs") == ["episode_10000.npz"]  # logs stay; stale temps go
    assert not set(stale) & (set(os.listdir(out)) | set(os.listdir(out / "logs")))


def test_a_rejected_eval_leaves_the_earlier_summary(tmp_path, no_episodes):
    """The summary goes once every check has passed, not on a bad argument."""
    atomic_write_text(tmp_path / "metrics.json", "{}")
    with pytest.raises(ValueError, match="seed 5 is not an evaluation seed"):
        evaluate(CROWDNAV, "orca", seeds=[5], out_dir=str(tmp_path))
    assert (tmp_path / "metrics.json").read_text() == "{}"


def test_a_summary_file_that_is_a_link_is_removed_not_its_target(tmp_path):
    target = tmp_path / "precious.json"
    target.write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(target, out / "metrics.json")
    evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(out), overrides=SHORT)
    assert target.read_text() == "mine" and not os.path.islink(out / "metrics.json")


@pytest.mark.parametrize("sub,flag", [("logs", "--logs"), ("videos", "--videos")])
def test_eval_refuses_a_symlinked_subfolder(tmp_path, capsys, no_episodes, sub, flag):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / sub)
    with pytest.raises(SystemExit) as info:
        main([*EVAL, "--out", str(out), flag, "1"])
    assert info.value.code == 2
    err = one_line_error(capsys, "eval")
    assert f"--out {str(out)!r}: {str(out / sub)!r} is a symbolic link (refused" in err
    assert os.listdir(elsewhere) == []
    with pytest.raises(ValueError, match=r"out_dir .*is a symbolic link"):
        evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(out), overrides=SHORT,
                 **{sub: 1})
    assert os.listdir(elsewhere) == []


def test_bench_refuses_a_symlinked_entries_folder(tmp_path, no_episodes):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(elsewhere, out / "entries")
    s = load_suite().select(["doorway"]).with_episodes(1)
    with pytest.raises(ValueError, match=r"out/entries' is a symbolic link \(refused"):
        run_bench(s, ["orca"], out_dir=out)
    os.remove(out / "entries")
    (out / "entries").mkdir()
    os.symlink(elsewhere, out / "entries" / "doorway")
    with pytest.raises(ValueError, match=r"entries/doorway' is a symbolic link"):
        run_bench(s, ["orca"], out_dir=out)
    assert os.listdir(elsewhere) == []


def test_bench_removes_stale_temps_of_a_killed_bench(tmp_path):
    stale = _temp_names(tmp_path, ("bench.json", ""), ("bench.md", ""))
    s = load_suite().select(["doorway"]).with_episodes(1)
    run_bench(s, ["orca"], out_dir=tmp_path)
    assert not set(stale) & set(os.listdir(tmp_path))
