"""The behaviour and kinematics registries: codes, names in one place, errors."""

import numpy as np
import pytest

import orca_env
from orca_env.behaviours import Behaviour, behaviour, behaviour_names, register_behaviour
from orca_env.codes import Population
from orca_env.config import POPULATIONS
from orca_env.kinematics import Kinematics, kinematics, kinematics_names, register_kinematics


def test_builtin_codes_are_the_registration_order():
    # Episode logs and the kernels carry these integers: they must never move.
    assert [(p.name, int(p)) for p in Population] == [
        ("LEARNED", 0), ("ORCA", 1), ("NON_REACTIVE", 2), ("LINEAR", 3), ("SOCIAL_FORCE", 4),
        ("REPLAY", 5)]
    assert behaviour_names()[:6] == POPULATIONS == ("learned", "orca", "non_reactive", "linear",
                                                    "social_force", "replay")
    assert behaviour("linear").code == Population.LINEAR
    assert not behaviour("linear").avoids_agents and behaviour("non_reactive").responsibility == 0
    assert kinematics_names()[:3] == ("holonomic", "unicycle", "differential_drive")
    assert kinematics("holonomic").code == 0


@pytest.mark.parametrize("key, value", [("population", "social_forse"),
                                        ("kinematics", "unicycel")])
def test_unknown_names_are_config_errors_naming_key_and_value(key, value):
    groups = [{"population": "learned", "count": 2, key: value}] if key == "kinematics" else \
        [{"population": "learned", "count": 2}, {"population": value, "count": 2}]
    with pytest.raises(ValueError, match=rf"groups\[\d\]\.{key}.*{value}"):
        orca_env.parallel_env("circle_dense", groups=groups)


def test_registering_twice_or_a_bad_name_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        register_behaviour(Behaviour(name="orca", doc="again"))
    with pytest.raises(ValueError, match="lower-case identifier"):
        register_behaviour(Behaviour(name="Not A Name", doc="bad"))
    with pytest.raises(ValueError, match="already registered"):
        register_kinematics(Kinematics(name="holonomic", doc="again"))
    with pytest.raises(ValueError, match="unknown population 'nobody'"):
        behaviour("nobody")


def test_a_second_learned_behaviour_is_refused_and_replace_keeps_the_code():
    with pytest.raises(ValueError, match="learned=True is the built-in"):
        register_behaviour(Behaviour(name="learned2", learned=True, doc="x"))
    first = register_behaviour(Behaviour(name="replaced_once", doc="a", steer=lambda v, s: 0))
    again = register_behaviour(Behaviour(name="replaced_once", doc="b", steer=lambda v, s: 0),
                               replace=True)
    assert again.code == first.code and behaviour("replaced_once").doc == "b"


@pytest.mark.parametrize("bad, match", [
    (lambda n: np.full((n, 2), np.nan), r"NaN or inf for slot\(s\) \[2, 3, 4\]"),
    (lambda n: np.zeros((n, 3)), r"shape \(3, 2\); got shape \(3, 3\)"),
])
def test_a_steer_function_returning_bad_values_is_a_clear_error(bad, match):
    name = f"bad_steer_{abs(hash(match)) % 10_000}"
    register_behaviour(Behaviour(name=name, doc="x", steer=lambda v, s: bad(len(s))),
                       replace=True)
    env = orca_env.parallel_env("circle_dense", groups=[
        {"population": "learned", "count": 2, "radius": 0.3},
        {"population": name, "count": 3, "radius": 0.3}])
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match=match):
        env.step(env.heuristic_actions())
