"""This checkout's vector env against another checkout's, interleaved in one run (old / new).

For each case (``W`` worlds of ``N`` ``circle_dense`` agents) one worker process per checkout
builds ``bench_peers.py``'s ``core-batch``, ``vec-1t`` and ``vec-2t`` steppers on its own
``orca_env`` (``PYTHONPATH`` set to the checkout, its own numba cache directory), warms them up,
and then times ``--steps`` steps on request; the driver asks the two workers in turn (this
checkout first on odd repetitions, the other first on even ones), so load drift hits both
alike. It prints, per case and system, the median agent-steps/s of each checkout, the ratio
(the other checkout's time per agent-step / this one's: above 1, this checkout is faster), the
load, and this checkout's ``vec/core`` (vec-1t's time per agent-step over core-batch's) and
2-thread speed-up. After every repetition the driver compares the two checkouts' states (each
system's positions and velocities, and the vector envs' last observations, rewards and
flags): it prints whether they stayed bit-identical. The last line printed is JSON with every
figure.

Both workers use this checkout's ``bench_peers.py`` steppers (so both time the same driver
code); only ``orca_env`` differs.

Usage:

    python benchmarks/bench_against.py --against /work/main [--cases 64x16,256x16,4096x4]
        [--reps 5] [--steps 100] [--warmup 5] [--systems core-batch,vec-1t,vec-2t]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SYSTEMS = ("core-batch", "vec-1t", "vec-2t")


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# ----------------------------------------------------------------------------- worker
def worker(case, systems, warmup, seed):
    """Build the steppers, then answer ``run STEPS`` lines with JSON (done, wall, cpu) per line."""
    import orca_env  # noqa: F401  (from PYTHONPATH: the checkout under test, before bench_peers)

    spec = importlib.util.spec_from_file_location("bench_peers", REPO / "benchmarks" /
                                                  "bench_peers.py")
    bp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bp)  # its sys.path insert comes after orca_env is imported
    worlds, agents = case
    setup = bp.world_setup(agents, seed, worlds)
    make = {"core-batch": lambda: bp.CoreBatch(worlds, agents, setup, 100),
            "vec-1t": lambda: bp.VectorEnv(worlds, agents, setup, seed, 1),
            "vec-2t": lambda: bp.VectorEnv(worlds, agents, setup, seed, 2)}
    steppers = {k: make[k]() for k in systems}
    for s in steppers.values():
        bp.warm_up(s, warmup)
    print(json.dumps({"ready": orca_env.__file__}), flush=True)
    for line in sys.stdin:
        key, steps = line.split()
        done, wall, cpu = steppers[key].run(int(steps))
        print(json.dumps({"done": done, "wall": wall, "cpu": cpu,
                          "digest": digest(steppers[key])}), flush=True)


def digest(s):
    """A hash of a stepper's state: positions and velocities (and the vector env's last step)."""
    x = hashlib.sha256()
    if hasattr(s, "env"):
        b = s.env._batch
        parts = [b.slots.pos, b.slots.vel, s.env._obs, b.alive]
    else:
        parts = [s.store["pos"], s.store["vel"]]
    for a in parts:
        x.update(np.ascontiguousarray(a).tobytes())
    return x.hexdigest()[:16]


def start(checkout, cache, case, systems, warmup, seed):
    env = dict(os.environ, PYTHONPATH=str(checkout), NUMBA_CACHE_DIR=cache,
               NUMBA_NUM_THREADS="2")
    p = subprocess.Popen([sys.executable, __file__, "--worker", f"{case[0]}x{case[1]}",
                          "--systems", ",".join(systems), "--warmup", str(warmup), "--seed",
                          str(seed)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=env, cwd=str(checkout))
    ready = json.loads(p.stdout.readline())
    return p, ready["ready"]


def ask(p, key, steps):
    p.stdin.write(f"{key} {steps}\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", help="the other checkout (e.g. /work/main)")
    ap.add_argument("--cases", default="64x16,256x16,4096x4")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in SYSTEMS:
            ap.error(f"--systems: unknown system {s!r}; choose from {', '.join(SYSTEMS)}")
    if args.worker:
        w, n = (int(x) for x in args.worker.split("x"))
        worker((w, n), systems, args.warmup, args.seed)
        return
    if not args.against:
        ap.error("--against CHECKOUT is required")
    other = Path(args.against).resolve()
    if not (other / "orca_env" / "__init__.py").exists():
        ap.error(f"--against must be a checkout of orca-env (no orca_env/__init__.py in "
                 f"{args.against})")
    for name in ("reps", "steps"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.warmup < 0:
        ap.error(f"--warmup must be >= 0, got {args.warmup}")
    cases = []
    for item in args.cases.split(","):
        parts = item.strip().lower().split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            ap.error(f"--cases: {item.strip()!r} is not WORLDSxAGENTS with positive integers "
                     f"(e.g. 64x16)")
        cases.append((int(parts[0]), int(parts[1])))
    # A cache directory per checkout: numba's cache keys a kernel by its file alone, and
    # bench_peers.py's njit driver (this checkout's file in both workers) compiles the core
    # it calls into itself.
    base = os.environ.get("NUMBA_CACHE_DIR", "/tmp/numba_against")
    checkouts = {"new": (REPO, base),
                 "old": (other, base if other == REPO else base + "_against")}
    out, identical = [], True
    for case in cases:
        case_text = f"{case[0]}x{case[1]}"
        l0 = load1()
        procs = {}
        for tag, (path, cache) in checkouts.items():
            procs[tag], where = start(path, cache, case, systems, args.warmup, args.seed)
            print(f"case {case_text}: {tag} worker on {where}", file=sys.stderr, flush=True)
        res = {(tag, k): [] for tag in procs for k in systems}
        for r in range(args.reps):
            order = ("new", "old") if r % 2 == 0 else ("old", "new")
            for k in systems:
                for tag in order:
                    res[tag, k].append(ask(procs[tag], k, args.steps))
                if res["new", k][-1]["digest"] != res["old", k][-1]["digest"]:
                    identical = False
                    print(f"case {case_text}: {k} differs between the checkouts after "
                          f"repetition {r + 1}", file=sys.stderr, flush=True)
        for p in procs.values():
            p.stdin.close()
            p.wait()
        l1 = load1()
        med = {key: statistics.median(x["done"] / x["wall"] for x in v) for key, v in res.items()}
        cpu = {key: statistics.median(x["cpu"] / x["wall"] for x in v) for key, v in res.items()}
        for k in systems:
            out.append(dict(case=case_text, system=k, old=med["old", k], new=med["new", k],
                            ratio=med["new", k] / med["old", k], cpu_wall_old=cpu["old", k],
                            cpu_wall_new=cpu["new", k], load_before=l0, load_after=l1))
        extra = {}
        if "core-batch" in systems and "vec-1t" in systems:
            extra = {f"vec/core {t}": med[t, "core-batch"] / med[t, "vec-1t"] for t in procs}
        if "vec-1t" in systems and "vec-2t" in systems:
            extra.update({f"2t/1t {t}": med[t, "vec-2t"] / med[t, "vec-1t"] for t in procs})
        out.append(dict(case=case_text, system="summary", **extra))
    print(f"\n## {REPO} (new) against {other} (old), {args.reps} x {args.steps} steps, "
          f"medians, agent-steps/s\n")
    print("| case | system | old | new | old time / new time | CPU/wall old, new | load |")
    print("|---|---|---:|---:|---:|---:|---|")
    for row in out:
        if row["system"] == "summary":
            continue
        print(f"| {row['case']} | {row['system']} | {row['old']:,.0f} | {row['new']:,.0f} | "
              f"{row['ratio']:.2f} | {row['cpu_wall_old']:.2f}, {row['cpu_wall_new']:.2f} | "
              f"{row['load_before']:.2f}-{row['load_after']:.2f} |")
    print()
    for row in out:
        if row["system"] == "summary":
            print(f"{row['case']}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()
                                                 if k not in ("case", "system")))
    print(f"states bit-identical between the checkouts after every repetition: "
          f"{'yes' if identical else 'NO'}")
    print(json.dumps({"rows": out, "identical": identical}))


if __name__ == "__main__":
    main()
