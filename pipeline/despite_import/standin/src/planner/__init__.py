"""Stand-in for DESPITE's `src.planner`: only `solver.BasePlanner` is provided."""
