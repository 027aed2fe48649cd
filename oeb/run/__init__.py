"""The run engine: config, plan, predict and grade on Ray, the run folder, resume.

The only layer that knows Ray. Import the submodules you need: `oeb.run.config` (no Ray),
`oeb.run.engine` (plan, execute, grade a folder), `oeb.run.results` (lines and summaries).
"""

import os

# Read by Ray when it is imported: no usage reports, and no `uv run` wrapped around every worker
# (Ray's uv hook would re-resolve the environment and ship the working directory to each worker).
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
