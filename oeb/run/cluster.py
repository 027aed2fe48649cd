"""Where the run's work goes: a local Ray started for the run, or a cluster named by its address.

When a test (or a notebook) has already connected to Ray, that session is used as it is and left
running. Workers of a cluster oeb joins do not share the driver's environment, so the variables a
worker needs to reach storage (the AWS and Hugging Face settings) are handed to them through the
job's runtime environment. The system's API keys are not: Ray writes every runtime environment in
plain text to a log file on each node (`runtime_env_agent.log`), so the run hands the keys (and
the storage settings) to its actors in a method call (`oeb.run.predict.SystemActor.take_env`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping, Sequence

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from oeb.errors import RayUnavailable

_FORWARDED_PREFIXES = ("AWS_", "HF_", "OEB_")


def worker_env() -> dict[str, str]:
    """The driver's variables that workers need to reach storage (never a system's API key)."""
    return {name: value for name, value in os.environ.items() if value and name.startswith(_FORWARDED_PREFIXES)}


def system_keys(keys: Sequence[str], stand_ins: Mapping[str, str]) -> dict[str, str]:
    """The system's key variables set in the driver now (`keys` and their `stand_ins`, as an
    adapter class declares them)."""
    names = {name for key in keys for name in (key, stand_ins.get(key)) if name}
    return {name: os.environ[name] for name in sorted(names) if os.environ.get(name)}


def alive_nodes() -> list[str]:
    return sorted(node["NodeID"] for node in ray.nodes() if node.get("Alive"))


def spread(count: int) -> list[str]:
    """Nodes for `count` actors, round-robin over the alive nodes."""
    nodes = alive_nodes()
    return [nodes[i % len(nodes)] for i in range(count)]


def pinned(node: str) -> NodeAffinitySchedulingStrategy:
    """Place an actor on `node` and nowhere else.

    The affinity is strict: with a soft one Ray may put an actor beside another when its node is
    briefly busy, and a run would quietly use one machine. The actors need no CPU, so any alive
    node can take them; the run replaces an actor that dies (`oeb.run.predict.Pool.replace`).
    """
    return NodeAffinitySchedulingStrategy(node, soft=False)


@contextlib.contextmanager
def ray_session(address: str | None, env: dict[str, str]) -> Iterator[None]:
    """Ray for the length of a run: the session already open, else a new local one or the cluster
    at `address` (shut down or left at the end)."""
    if ray.is_initialized():
        yield
        return
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    try:
        if address is None:
            ray.init(address="local", include_dashboard=False, **quiet)
        else:
            ray.init(address=address, runtime_env={"env_vars": env}, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = "a local Ray" if address is None else f"the Ray cluster at {address}"
        message = " ".join(str(error).split())[:300]
        raise RayUnavailable(
            f"cannot start or reach {where} ({message}); check ray.address in the config "
            "(null starts a local Ray) and that the cluster is up (ray status)"
        ) from None
    try:
        yield
    finally:
        ray.shutdown()
