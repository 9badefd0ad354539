"""``orca-env warmup`` and the compile notice (issue 25, items 1 and 2).

Each process here gets its own ``NUMBA_CACHE_DIR`` (a temporary folder): ``warmup`` compiles
every kernel family into a fresh cache; a following process builds envs of several scenario
families, the vector env, the simulator and the crowd metrics and compiles nothing (numba's
compile events and its dispatchers' cache statistics say so) and prints no notice. The notice
appears, once, before a family compiles, and not when its cache is warm.
"""

import glob
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTICE = "orca-env: compiling numba kernels"

# Several scenario families (obstacles, guidance, social force, LiDAR, NH-ORCA, replay), the
# vector env, heuristic actions, render data, the simulator (serial and multi-threaded step,
# queries, debug accessors) and the crowd metrics; prints the compiles numba made.
USE_EVERYTHING = r"""
import warnings
warnings.filterwarnings("ignore")
import numba
import numba.core.event as ev
import numpy as np

compiled = []


class Listener(ev.Listener):
    def on_start(self, event):
        compiled.append(event.data["dispatcher"].py_func.__qualname__)

    def on_end(self, event):
        pass


ev.register("numba:compile", Listener())
import orca_env
from orca_env.core import Simulator
from orca_env.evaluation.suite import evaluate
from orca_env.stages import run_worlds
from orca_env.vector import OrcaVectorEnv

for name in ("circle_dense", "bottleneck", "blocks_roadmap", "bottleneck_sf",
             "random_obstacles_lidar", "nh_circle_swap", "crowdnav_circle_unicycle_invisible",
             "replay_sample"):
    env = orca_env.parallel_env(name)
    env.reset(seed=0)
    env.render_data()
    env.step(env.heuristic_actions())
    venv = OrcaVectorEnv(name, 2, seed=0)
    venv.reset()
    venv.step(np.zeros((venv.num_envs,) + venv.single_action_space.shape))
sim = Simulator(num_threads=min(2, numba.config.NUMBA_NUM_THREADS))
sim.add_agents(np.random.default_rng(0).uniform(-30.0, 30.0, (100, 2)))
sim.add_obstacle(np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]))
sim.set_pref_velocities(-sim.positions / 10.0)
sim.step()
sim.orca_lines(0)
sim.query_agent_neighbors(3, 10.0)
sim.query_visibility((-5.0, 0.0), (5.0, 0.0))
evaluate("bottleneck", "orca", episodes=1, overrides={"max_steps": 10})
print("compiled:", len(compiled), compiled)
print("run_worlds cache:", sum(run_worlds.stats.cache_hits.values()),
      sum(run_worlds.stats.cache_misses.values()))
"""


def _run(args, cache, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "SDL_VIDEODRIVER",
                                                             "WAYLAND_DISPLAY")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=ROOT + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, *args], cwd=str(cache.parent), env=env,
                          capture_output=True, text=True, timeout=1800, **kw)


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """A fresh cache, ``warmup --check`` before, ``warmup``, ``warmup --check`` after."""
    cache = tmp_path_factory.mktemp("warmup") / "numba_cache"
    before = _run(["-m", "orca_env", "warmup", "--check"], cache)
    run = _run(["-m", "orca_env", "warmup"], cache)
    after = _run(["-m", "orca_env", "warmup", "--check"], cache)
    return cache, before, run, after


def test_warmup_check_on_a_fresh_cache_lists_kernels_and_fails(warmed):
    _, before, _, _ = warmed
    assert before.returncode == 1, before.stdout + before.stderr
    assert "not cached: env: stages.run_worlds" in before.stdout
    assert "not cached: core: core.kernels.compute_velocities_serial" in before.stdout
    assert "not cached: metrics: evaluation.social._crowd_kernel" in before.stdout


def test_warmup_compiles_everything_with_progress_and_a_final_line(warmed):
    cache, _, run, after = warmed
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stderr.splitlines()
    progress = [ln for ln in lines if ln.startswith("[warmup] ")]
    total = int(progress[0].split()[1].split("/")[1])
    assert len(progress) == total >= 20  # one line per kernel, none overshooting
    assert progress[-1].startswith(f"[warmup] {total}/{total} kernels")
    assert any("env: stages.run_worlds (compiling)" in ln for ln in progress)
    final = run.stdout.strip().splitlines()[-1]
    assert final.startswith(f"warmup: {total} kernels (core, env, metrics) ready in ")
    assert f"cache: {cache}" in final
    assert NOTICE not in run.stderr  # the progress says it; no second notice
    assert glob.glob(str(cache / "**" / "*run_worlds*.nbi"), recursive=True)
    assert after.returncode == 0
    assert after.stdout.strip().endswith(f"0 of {total} kernels not cached (cache: {cache})")


def test_after_warmup_a_new_process_compiles_nothing_and_says_nothing(warmed, tmp_path):
    cache = warmed[0]
    script = tmp_path / "use.py"
    script.write_text(USE_EVERYTHING)
    out = _run([str(script)], cache)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "compiled: 0 []" in out.stdout
    hits, misses = out.stdout.split("run_worlds cache:")[1].split()
    assert int(hits) == 1 and int(misses) == 0  # loaded from the cache, not compiled
    assert NOTICE not in out.stderr


def test_warmup_again_loads_and_compiles_nothing(warmed):
    cache = warmed[0]
    out = _run(["-m", "orca_env", "warmup", "--family", "env", "--quiet"], cache)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert ", 0 of them compiled; cache:" in out.stdout


def test_the_env_notice_says_what_before_compiling_and_not_when_warm(warmed, tmp_path):
    # The warmed cache without the step pipeline's entry: the first env compiles it (its
    # callees load from the cache) and says so first, once; the next process says nothing.
    cache = tmp_path / "numba_cache"
    shutil.copytree(warmed[0], cache)
    index = glob.glob(str(cache / "**" / "*stages.run_worlds*.nbi"), recursive=True)
    assert len(index) == 1
    os.remove(index[0])
    code = ("import orca_env, sys\n"
            "env = orca_env.parallel_env('bottleneck')\n"
            "env.reset(seed=0)\n"
            "print('first reset done', file=sys.stderr)\n"
            "env.reset(seed=1)\n"
            "orca_env.parallel_env('circle_dense').reset(seed=0)\n")
    cold = _run(["-c", code], cache)
    assert cold.returncode == 0, cold.stderr
    lines = cold.stderr.splitlines()
    notices = [ln for ln in lines if ln.startswith(NOTICE)]
    assert len(notices) == 1
    assert lines.index(notices[0]) < lines.index("first reset done")
    assert "the env's step pipeline" in notices[0]
    assert "on an idle 2-core machine, longer on a loaded one" in notices[0]
    assert f"from the cache: {cache}" in notices[0]
    warm = _run(["-c", code], cache)
    assert warm.returncode == 0, warm.stderr
    assert NOTICE not in warm.stderr


def test_the_core_and_metrics_notices_appear_with_a_fresh_cache_only(tmp_path):
    cache = tmp_path / "numba_cache"
    code = ("import sys\n"
            "import numpy as np\n"
            "from orca_env.core import Simulator\n"
            "from orca_env.evaluation.social import SocialRecorder\n"
            "sim = Simulator()\n"
            "sim.add_agents(np.array([[0.0, 0.0], [4.0, 0.0]]))\n"
            "sim.step()\n"
            "sim.step()\n"
            "print('stepped', file=sys.stderr)\n"
            "SocialRecorder(np.zeros((2, 2)), np.ones(2, bool), np.array([0, 1]), np.ones(2),"
            " np.array([0]), 0.25, learned_code=0)\n")
    cold = _run(["-c", code], cache)
    assert cold.returncode == 0, cold.stderr
    lines = cold.stderr.splitlines()
    notices = [ln for ln in lines if ln.startswith(NOTICE)]
    assert len(notices) == 2, lines
    assert "the ORCA core" in notices[0] and lines.index(notices[0]) < lines.index("stepped")
    assert "the evaluation's crowd metrics" in notices[1]
    warm = _run(["-c", code], cache)
    assert warm.returncode == 0 and NOTICE not in warm.stderr
