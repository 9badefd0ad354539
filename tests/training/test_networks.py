"""The crowd networks (DeepSets, SARL): invariances, padding, YAML selection, the safe loader."""

import numpy as np
import pytest
import yaml
from tiny_training import TINY_ENV, tiny_config

torch = pytest.importorskip("torch")

import orca_env  # noqa: E402
from orca_env.observations import OWN, PER_AGENT, PER_SEGMENT  # noqa: E402
from orca_env.training.config import TrainConfigError, load_train_config  # noqa: E402
from orca_env.training.networks import CrowdEncoder, split_observation  # noqa: E402

K, M, EXTRA = 5, 3, 2
D = OWN + PER_AGENT * K + PER_SEGMENT * M + EXTRA
UNIVERSAL_ENV = dict(TINY_ENV, observation={"layout": "universal", "num_agents": 3,
                                            "num_obstacles": 0, "stall": True, "time": True})


def _obs(rng, n, present, seg_present, k=K, m=M):
    """(n, D) universal-like observations with ``present`` neighbours and ``seg_present`` segs."""
    d = OWN + PER_AGENT * k + PER_SEGMENT * m + EXTRA
    x = rng.uniform(-1, 1, (n, d)).astype(np.float32)
    for j in range(k):
        b = OWN + PER_AGENT * j
        x[:, b + 5] = 1.0 if j < present else 0.0
        if j >= present:
            x[:, b:b + 5] = 0.0
    for j in range(m):
        b = OWN + PER_AGENT * k + PER_SEGMENT * j
        x[:, b + 4] = 1.0 if j < seg_present else 0.0
        if j >= seg_present:
            x[:, b:b + 4] = 0.0
    return torch.from_numpy(x)


def _net(kind, k=K, m=M, **kw):
    torch.manual_seed(0)
    return CrowdEncoder(OWN + PER_AGENT * k + PER_SEGMENT * m + EXTRA, k, m, kind, **kw).eval()


KINDS = [("deepsets", {}), ("deepsets", {"pooling": "sum"}), ("sarl", {}),
         ("sarl", {"global_state": False})]


@pytest.mark.parametrize("kind, kw", KINDS)
def test_permuting_the_neighbours_and_segments_changes_nothing(kind, kw):
    net = _net(kind, **kw)
    x = _obs(np.random.default_rng(0), 8, present=K, seg_present=M)
    perm = x.clone()
    for src, dst in enumerate([3, 0, 4, 1, 2]):
        perm[:, OWN + PER_AGENT * dst: OWN + PER_AGENT * (dst + 1)] = \
            x[:, OWN + PER_AGENT * src: OWN + PER_AGENT * (src + 1)]
    s0 = OWN + PER_AGENT * K
    for src, dst in enumerate([2, 0, 1]):
        perm[:, s0 + PER_SEGMENT * dst: s0 + PER_SEGMENT * (dst + 1)] = \
            x[:, s0 + PER_SEGMENT * src: s0 + PER_SEGMENT * (src + 1)]
    assert not torch.equal(perm, x)
    with torch.no_grad():
        a, b = net(x), net(perm)
    assert a.shape == (8, net.out_dim)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    # An MLP reading the slots by position is not invariant: the test can fail.
    with torch.no_grad():
        lin = torch.nn.Linear(D, 4)
        assert not torch.allclose(lin(x), lin(perm), atol=1e-4)


@pytest.mark.parametrize("kind, kw", KINDS)
def test_padded_slots_do_not_change_the_output(kind, kw):
    net = _net(kind, **kw)
    x = _obs(np.random.default_rng(1), 6, present=2, seg_present=1)
    junk = x.clone()
    for j in range(2, K):  # absent neighbour slots: any values but the flag
        b = OWN + PER_AGENT * j
        junk[:, b:b + 5] = torch.tensor([9.0, -7.0, 3.0, 1e6, float("nan")])
    s0 = OWN + PER_AGENT * K
    for j in range(1, M):
        junk[:, s0 + PER_SEGMENT * j: s0 + PER_SEGMENT * j + 4] = 5.0
    with torch.no_grad():
        ref, got = net(x), net(junk)
    assert torch.equal(ref, got)
    # One more absent slot at K + 1 (and M + 1): the same features.
    wide = _net(kind, k=K + 1, m=M + 1, **kw)
    wide.load_state_dict(net.state_dict())
    s1 = OWN + PER_AGENT * (K + 1)
    xw = torch.cat([x[:, :s0], torch.zeros(6, PER_AGENT), x[:, s0:s0 + PER_SEGMENT * M],
                    torch.zeros(6, PER_SEGMENT), x[:, s0 + PER_SEGMENT * M:]], dim=1)
    assert xw.shape[1] == s1 + PER_SEGMENT * (M + 1) + EXTRA
    with torch.no_grad():
        torch.testing.assert_close(wide(xw), ref, rtol=1e-6, atol=1e-6)
    # A present neighbour in place of the padding does change it.
    seen = x.clone()
    seen[:, OWN + PER_AGENT * 2 + 5] = 1.0
    seen[:, OWN + PER_AGENT * 2: OWN + PER_AGENT * 2 + 2] = 0.3
    with torch.no_grad():
        assert not torch.allclose(net(seen), ref)


@pytest.mark.parametrize("kind, kw", KINDS)
def test_no_neighbour_present_gives_finite_features_and_gradients(kind, kw):
    net = _net(kind, **kw).train()
    x = _obs(np.random.default_rng(2), 4, present=0, seg_present=0)
    out = net(x)
    assert torch.isfinite(out).all()
    own = out.shape[1] - net.out_dim + net.own_dim
    crowd = out[:, own:]
    assert torch.equal(crowd, torch.zeros_like(crowd))   # nothing to pool: zeros
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters() if p.grad is not None)


def _reference(net, x):
    """The module docstring's formulas written out, one row and one present slot at a time."""
    own, nbr, seg = split_observation(x, K, M)
    rows = []
    for b in range(x.shape[0]):
        s = own[b]
        hs = [nbr[b, i] for i in range(K) if nbr[b, i, 5] > 0.5]
        ws = [seg[b, j] for j in range(M) if seg[b, j, 4] > 0.5]
        if net.kind == "deepsets":
            f = [net.phi(torch.cat([s, h])) for h in hs]
            crowd = (torch.stack(f).mean(0) if net.mean else torch.stack(f).sum(0)) if f \
                else torch.zeros(net.phi[-2].out_features)
        elif hs:
            e = torch.stack([net.embed(torch.cat([s, h])) for h in hs])
            a_in = torch.cat([e, e.mean(0).expand_as(e)], 1) if net.global_state else e
            alpha = torch.softmax(net.attention(a_in).squeeze(-1), 0)
            crowd = (alpha[:, None] * net.value(e)).sum(0)
        else:
            crowd = torch.zeros(net.value[-1].out_features)
        parts = [s, crowd]
        f = [net.psi(torch.cat([s, w])) for w in ws]
        pool = (torch.stack(f).mean(0) if net.mean else torch.stack(f).sum(0)) if f else \
            torch.zeros(net.psi[-2].out_features)
        parts.append(pool)
        rows.append(torch.cat(parts))
    return torch.stack(rows)


@pytest.mark.parametrize("kind, kw", KINDS + [("sarl", {"value": [8, 4]})])
def test_the_network_computes_the_documented_formulas(kind, kw):
    net = _net(kind, **kw)
    rng = np.random.default_rng(5)
    x = torch.cat([_obs(rng, 2, present=p, seg_present=q) for p, q in
                   [(K, M), (3, 1), (1, 0), (0, 2)]])
    with torch.no_grad():
        torch.testing.assert_close(net(x), _reference(net, x), rtol=1e-5, atol=1e-5)


def test_sarl_attends_over_the_present_neighbours_only():
    net = _net("sarl")
    x = _obs(np.random.default_rng(3), 5, present=3, seg_present=M)
    with torch.no_grad():
        net(x)
    alpha = net.last_attention
    torch.testing.assert_close(alpha.sum(dim=1), torch.ones(5))
    assert (alpha[:, 3:] == 0).all() and (alpha[:, :3] > 0).all()


def test_own_block_takes_the_features_after_the_segments():
    net = _net("deepsets")
    assert net.own_dim == OWN + EXTRA
    x = _obs(np.random.default_rng(4), 2, present=K, seg_present=M)
    y = x.clone()
    y[:, -1] += 0.5                                      # the time feature
    with torch.no_grad():
        assert not torch.allclose(net(x)[:, :net.own_dim], net(y)[:, :net.own_dim])
        torch.testing.assert_close(net(y)[:, OWN:net.own_dim], y[:, -EXTRA:])


# -- the YAML selection -------------------------------------------------------------------
def _cfg(tmp_path, **over):
    base = {"env": UNIVERSAL_ENV, "normalize": False,
            "policy_kwargs": {"net_arch": [16], "extractor": "sarl"}}
    base.update(over)
    return tiny_config(tmp_path, **base)


@pytest.mark.parametrize("over, match", [
    ({"policy_kwargs": {"extractor": "transformer"}},
     r"policy_kwargs\.extractor' must be one of \['mlp', 'deepsets', 'sarl'\], got 'transformer'"),
    ({"policy_kwargs": {"extractor": "sarl", "extractor_kwargs": {"embed": [0]}}},
     r"policy_kwargs\.extractor_kwargs\.embed'.*1 \.\. 4096, got 0"),
    ({"policy_kwargs": {"extractor": "sarl", "extractor_kwargs": {"value": []}}},
     r"extractor_kwargs\.value' needs at least one layer"),
    ({"policy_kwargs": {"extractor": "deepsets", "extractor_kwargs": {"attention": [8]}}},
     r"extractor_kwargs\.attention' is not a deepsets setting"),
    ({"policy_kwargs": {"extractor": "deepsets", "extractor_kwargs": {"pooling": "max"}}},
     r"extractor_kwargs\.pooling' must be mean or sum, got 'max'"),
    ({"policy_kwargs": {"extractor_kwargs": {"embed": [8]}}},
     r"extractor_kwargs' needs policy_kwargs\.extractor deepsets or sarl"),
    ({"env": TINY_ENV}, r"extractor' sarl needs env observation\.layout: universal"),
    ({"env": dict(TINY_ENV, observation={"layout": "universal", "num_agents": 0})},
     r"observation\.num_agents >= 1, got 0"),
    ({"normalize": True}, r"'normalize' must be false.*present flags"),
    ({"normalize": {"clip_obs": 5.0}}, r"'normalize' must be false"),
])
def test_bad_selections_are_one_line_errors(tmp_path, over, match):
    with pytest.raises(TrainConfigError, match=match) as err:
        load_train_config(_cfg(tmp_path, **over))
    assert "\n" not in str(err.value)


def test_selection_builds_the_network_from_the_env_layout(tmp_path):
    from orca_env.training.config import policy_kwargs_from_config
    from orca_env.training.sb3.extractor import CrowdExtractor

    cfg = load_train_config(_cfg(tmp_path, normalize={"norm_obs": False, "norm_reward": True}))
    kw = policy_kwargs_from_config(cfg["policy_kwargs"], cfg["env"])
    assert kw["features_extractor_class"] is CrowdExtractor
    fk = kw["features_extractor_kwargs"]
    assert (fk["kind"], fk["num_agents"], fk["num_obstacles"]) == ("sarl", 3, 0)
    assert "extractor" not in kw and "extractor_kwargs" not in kw
    space = orca_env.parallel_env(cfg["env"]).observation_space("agent_0")
    ex = CrowdExtractor(space, **fk)
    assert ex.features_dim == ex.encoder.out_dim == (OWN + 2) + 32   # stall, time; no segments
    assert policy_kwargs_from_config({"net_arch": [8]}) == {"net_arch": [8]}


# -- training and the safe loader ---------------------------------------------------------
@pytest.mark.parametrize("kind", ["deepsets", "sarl"])
def test_trained_model_round_trips_through_the_safe_loader(tmp_path, kind):
    pytest.importorskip("stable_baselines3")
    from orca_env.policies import load_policy
    from stable_baselines3 import PPO

    from orca_env.training.cli import EXIT_OK, main
    from orca_env.training.sb3.extractor import CrowdExtractor

    path = _cfg(tmp_path, n_timesteps=128, checkpoint_freq=128,
                policy_kwargs={"net_arch": [16], "extractor": kind,
                               "extractor_kwargs": {"embed": [16, 8], "value": [8]}
                               if kind == "sarl" else {"embed": [8]}})
    run = tmp_path / "run"
    assert main(["--config", str(path), "--run-dir", str(run), "--no-eval",
                 "--no-progress"]) == EXIT_OK
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["policy_kwargs"]["extractor"] == kind
    env = orca_env.parallel_env(saved["env"])
    policy = load_policy(str(run), env=env)
    assert isinstance(policy.model.features_extractor, CrowdExtractor)
    # The reference: SB3's own (pickling) loader of the same zip, for this test only.
    ref = PPO.load(str(run / "model.zip"), device="cpu")
    obs, _ = env.reset(seed=10_000)
    x = np.stack([obs[a] for a in env.agents])
    want, _ = ref.predict(x, deterministic=True)
    np.testing.assert_array_equal(policy.act(x), np.clip(want, -1, 1))
    for _ in range(5):
        obs, *_ = env.step(policy(obs, env))
