"""RLlib backend throughput: agent samples/s with 0, 1 and 2 env runners on this machine.

For each runner count the algorithm of a training config (default the shipped
``configs/train/circle_rllib.yaml``) is built on one local Ray session, warmed up with one
iteration (numba cache load, actor start), then measured two ways:

* ``sample/s``: sampling only (``synchronous_parallel_sample`` on the env runners, the batch
  size of the config), i.e. env stepping plus the module's inference in the runners;
* ``train/s``: whole ``Algorithm.train()`` iterations (sampling, then the PPO update in the
  driver's learner; the two do not overlap in synchronous PPO).

The machine may be shared: the load average before and after is printed with the table. The last
line is JSON. Usage:

    python benchmarks/bench_rllib.py [--config configs/train/circle_rllib.yaml] [--iters 3]
        [--runners 0 1 2]
"""

import argparse
import json
import os
import time


def measure(cfg, runners, iters):
    from ray.rllib.execution.rollout_ops import synchronous_parallel_sample  # noqa: PLC0415

    from orca_env.training.rllib.algorithm import algorithm_config  # noqa: PLC0415
    from orca_env.training.rllib.trainer import agent_steps_sampled  # noqa: PLC0415

    cfg = dict(cfg, num_env_runners=runners)
    algo = algorithm_config(cfg).build_algo()
    try:
        batch = cfg["hyperparams"].get("train_batch_size_per_learner", 4000)
        algo.train()  # warm-up
        t0 = time.perf_counter()
        n = 0
        for _ in range(iters):
            eps = synchronous_parallel_sample(worker_set=algo.env_runner_group,
                                              max_agent_steps=batch, concat=False,
                                              _uses_new_env_runners=True)
            flat = [e for x in eps for e in (x if isinstance(x, list) else [x])]
            n += sum(e.agent_steps() for e in flat)
        sample_rate = n / (time.perf_counter() - t0)
        r0 = algo.train()
        start = agent_steps_sampled(r0)
        t0 = time.perf_counter()
        for _ in range(iters):
            r = algo.train()
        train_rate = (agent_steps_sampled(r) - start) / (time.perf_counter() - t0)
    finally:
        algo.stop()
    return sample_rate, train_rate


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="configs/train/circle_rllib.yaml")
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--runners", type=int, nargs="+", default=[0, 1, 2])
    args = p.parse_args()

    import ray  # noqa: PLC0415

    from orca_env.training.config import load_train_config  # noqa: PLC0415

    cfg = load_train_config(args.config)
    load_before = os.getloadavg()
    ray.init(num_cpus=max(2, max(args.runners)), include_dashboard=False, log_to_driver=False)
    rows = []
    try:
        for n in args.runners:
            s, t = measure(cfg, n, args.iters)
            rows.append({"num_env_runners": n, "sample_per_s": round(s), "train_per_s": round(t)})
    finally:
        ray.shutdown()
    load_after = os.getloadavg()
    print(f"config {args.config}: {cfg['n_envs']} env(s) per runner, batch "
          f"{cfg['hyperparams'].get('train_batch_size_per_learner')} agent-steps, "
          f"{args.iters} iterations per row, {os.cpu_count()} CPUs")
    print(f"{'env runners':>11}  {'sample/s':>9}  {'train/s':>8}")
    for r in rows:
        print(f"{r['num_env_runners']:>11}  {r['sample_per_s']:>9,}  {r['train_per_s']:>8,}")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}")
    print(json.dumps({"config": args.config, "rows": rows, "cpus": os.cpu_count(),
                      "loadavg_before": load_before, "loadavg_after": load_after}))


if __name__ == "__main__":
    main()
