"""CleanRL-style PPO on ``OrcaVectorEnv``: one shared policy over every agent row of B worlds.

Each row of the vector env is one learned agent slot (``b * L + k``). A finished agent's row
waits, idle, until its world autoresets (all its agents done): ``info["active"]`` marks the rows
that acted on a step, and only those enter the advantages and the losses. A truncated agent is
bootstrapped from ``info["final_obs"]``. Plain torch, no other dependency. Usage:

    python examples/ppo_vector.py [--config circle_dense] [--num-worlds 16] [--seed 0]
        [--total-steps 300000] [--num-steps 64]
"""

import argparse
import time

import numpy as np
import torch
from torch import nn

from orca_env.vector import OrcaVectorEnv


def mlp(n_in, n_out, std=1.0):
    """Two tanh layers of 64, orthogonal init (CleanRL's), output gain ``std``."""
    layers = [nn.Linear(n_in, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, n_out)]
    for layer in layers[::2]:
        nn.init.orthogonal_(layer.weight, np.sqrt(2))
        nn.init.zeros_(layer.bias)
    nn.init.orthogonal_(layers[-1].weight, std)
    return nn.Sequential(*layers)


class Agent(nn.Module):
    """Gaussian policy and value function shared by every agent row; observations normalised."""

    def __init__(self, obs_dim):
        super().__init__()
        self.actor = mlp(obs_dim, 2, std=0.01)
        self.critic = mlp(obs_dim, 1, std=1.0)
        self.log_std = nn.Parameter(torch.full((2,), -0.5))
        self.register_buffer("mean", torch.zeros(obs_dim))
        self.register_buffer("var", torch.ones(obs_dim))
        self.register_buffer("count", torch.tensor(1e-4))

    def update_norm(self, x):
        """Running mean and variance of the observations of active rows (Welford, batched)."""
        b_mean, b_var, b_n = x.mean(0), x.var(0, unbiased=False), x.shape[0]
        delta, total = b_mean - self.mean, self.count + b_n
        self.mean += delta * b_n / total
        self.var = (self.var * self.count + b_var * b_n + delta**2 * self.count * b_n / total) \
            / total
        self.count = total

    def norm(self, x):
        """Normalised, clipped observations ``(k, D)``."""
        return torch.clamp((x - self.mean) / torch.sqrt(self.var + 1e-8), -10.0, 10.0)

    def value(self, x):
        """State values ``(k,)``."""
        return self.critic(self.norm(x)).squeeze(-1)

    def act(self, x, action=None):
        """(action (sampled unless given), log-prob, entropy, value) for observations ``x``."""
        z = self.norm(x)
        dist = torch.distributions.Normal(self.actor(z), self.log_std.exp())
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).sum(-1), dist.entropy().sum(-1), \
            self.critic(z).squeeze(-1)


def main(argv=None):
    """Train; returns the undiscounted return of every finished agent episode."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="circle_dense")
    ap.add_argument("--num-worlds", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--total-steps", type=int, default=300_000, help="agent-steps (active rows)")
    ap.add_argument("--num-steps", type=int, default=64, help="vector steps per rollout")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--gae-lambda", type=float, default=0.95)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--minibatch", type=int, default=2048)
    ap.add_argument("--clip", type=float, default=0.2)
    ap.add_argument("--ent-coef", type=float, default=0.0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = OrcaVectorEnv(args.config, args.num_worlds, seed=args.seed)
    n, d, T = env.num_envs, env.single_observation_space.shape[0], args.num_steps
    agent = Agent(d)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    obs_b = torch.zeros((T, n, d))
    act_b, logp_b = torch.zeros((T, n, 2)), torch.zeros((T, n))
    rew_b, val_b = torch.zeros((T, n)), torch.zeros((T, n))
    done_b, mask_b = torch.zeros((T, n)), torch.zeros((T, n))
    obs, info = env.reset()
    obs, alive = torch.from_numpy(obs), torch.from_numpy(info["alive"])
    steps, returns, ep_ret, t0 = 0, [], np.zeros(n), time.perf_counter()
    while steps < args.total_steps:
        for t in range(T):
            with torch.no_grad():
                agent.update_norm(obs[alive])
                action, logp, _, value = agent.act(obs)
            obs_b[t], act_b[t], logp_b[t], val_b[t] = obs, action, logp, value
            mask_b[t] = alive.float()
            nobs, rew, term, trunc, info = env.step(action.clamp(-1.0, 1.0).numpy())
            rew = torch.from_numpy(rew).float()
            if trunc.any():  # bootstrap truncated agents from the observation they ended with
                with torch.no_grad():
                    fin = torch.from_numpy(info["final_obs"][trunc])
                    rew[torch.from_numpy(trunc)] += args.gamma * agent.value(fin)
            rew_b[t], done_b[t] = rew, torch.from_numpy(term | trunc).float()
            steps += int(info["active"].sum())
            ep_ret += np.where(info["active"], rew.numpy(), 0.0)
            returns += ep_ret[term | trunc].tolist()
            ep_ret[term | trunc] = 0.0
            obs, alive = torch.from_numpy(nobs), torch.from_numpy(info["alive"])
        # GAE per row; idle steps (mask 0) cut the chain like a terminal step.
        with torch.no_grad():
            next_val = agent.value(obs) * alive.float()
            adv, last = torch.zeros((T, n)), torch.zeros(n)
            for t in reversed(range(T)):
                nonterminal = mask_b[t] * (1.0 - done_b[t])
                nv = next_val if t == T - 1 else val_b[t + 1]
                delta = (rew_b[t] + args.gamma * nv * nonterminal - val_b[t]) * mask_b[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_b
        keep = mask_b.reshape(-1) > 0
        b_obs, b_act = obs_b.reshape(-1, d)[keep], act_b.reshape(-1, 2)[keep]
        b_logp, b_adv, b_ret = logp_b.reshape(-1)[keep], adv.reshape(-1)[keep], \
            ret.reshape(-1)[keep]
        for _ in range(args.epochs):
            for idx in torch.randperm(b_obs.shape[0]).split(args.minibatch):
                _, logp, ent, v = agent.act(b_obs[idx], b_act[idx])
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8) if a.numel() > 1 else a
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                loss = pg + 0.5 * ((v - b_ret[idx]) ** 2).mean() - args.ent_coef * ent.mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
        recent = returns[-200:]
        print(f"agent-steps {steps:>8}  episodes {len(returns):>6}  mean return (last 200) "
              f"{np.mean(recent) if recent else float('nan'):>7.3f}  "
              f"{steps / (time.perf_counter() - t0):>8.0f} agent-steps/s", flush=True)
    env.close()
    return returns


if __name__ == "__main__":
    main()
