"""Ray's harmless notices are dropped from stderr; its other warnings and errors are not."""

import io
import logging

import pytest

pytest.importorskip("ray.rllib", reason="the RLlib tests need ray[rllib]: the rllib or dev extra "
                    "(the test extra leaves it out)")

from orca_env.training.rllib.algorithm import require_ray  # noqa: E402
from orca_env.training.rllib.quiet import HARMLESS  # noqa: E402


def test_harmless_notices_go_real_warnings_stay():
    require_ray("this test")  # imports ray and quiets it
    require_ray("this test")  # idempotent: one filter per handler
    rllib = logging.getLogger("ray.rllib.algorithms.algorithm_config")
    core = logging.getLogger("ray._private.worker")
    for name in ("ray", "ray.rllib"):
        for h in logging.getLogger(name).handlers:
            assert sum(type(f).__name__ == "_DropHarmless" for f in h.filters) == 1
    streams = {}
    for name in ("ray", "ray.rllib"):  # what Ray's own stderr handlers would print
        for h in logging.getLogger(name).handlers:
            if isinstance(h, logging.StreamHandler):  # not pytest's own
                streams[h] = h.setStream(io.StringIO())
    try:
        for message in HARMLESS:
            rllib.warning(message + " (the rest of the notice)")
            core.warning(message)
        rllib.warning("a real RLlib warning")
        core.error("a real Ray error")
        logging.getLogger("ray.rllib.core.rl_module.rl_module").warning(
            "DeprecationWarning: `something_else` has been deprecated")
        err = "".join(h.stream.getvalue() for h in streams)
    finally:
        for h, stream in streams.items():
            h.setStream(stream)
    assert len(streams) >= 2
    assert not any(m in err for m in HARMLESS), err
    assert "a real RLlib warning" in err and "a real Ray error" in err
    assert "`something_else` has been deprecated" in err
