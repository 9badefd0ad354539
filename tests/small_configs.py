"""Small versions of the big scenarios, shared by the env and scenario tests (fast on 2 cores)."""

SMALL = {
    "circle_v0": dict(scenario_kwargs={"circle_radius": 40.0},
                      groups=[{"population": "learned", "count": 4, "on_goal": "stay"},
                              {"population": "orca", "count": 20, "on_goal": "stay"}]),
    "blocks_v0": dict(groups=[{"population": "learned", "count": 4, "on_goal": "stop"},
                              {"population": "orca", "count": 16, "on_goal": "stop"}]),
}
