"""cluster/aws.yaml against the schema bundled with the pinned Ray (offline, private Ray helpers)."""

import copy

import jsonschema
import pytest

from .common import CLUSTER, IMAGE, load_yaml


@pytest.fixture(scope="module")
def config() -> dict:
    return load_yaml(CLUSTER / "aws.yaml")


def check(config: dict) -> dict:
    """Ray's own preparation and validation of a launcher config (Ray imported here, not when every
    test module is collected: it takes a second or two)."""
    from ray.autoscaler._private.util import prepare_config, validate_config

    prepared = prepare_config(copy.deepcopy(config))
    validate_config(prepared)
    return prepared


def test_passes_rays_own_validation(config):
    prepared = check(config)
    assert prepared["provider"]["type"] == "aws"
    assert prepared["head_node_type"] in prepared["available_node_types"]


@pytest.mark.parametrize(
    ("where", "typo"),
    [((), "max_workerz"), (("docker",), "run_optionz"), (("available_node_types", "ray.worker.cpu"), "min_workerz")],
)
def test_a_typo_fails(config, where, typo):
    broken = copy.deepcopy(config)
    node = broken
    for key in where:
        node = node[key]
    node[typo] = 1
    with pytest.raises(jsonschema.ValidationError, match=typo):  # Ray validates against its bundled schema
        check(broken)


def test_head_and_autoscaling_cpu_workers(config):
    workers = [name for name in config["available_node_types"] if name != config["head_node_type"]]
    assert workers
    for name in workers:
        node = config["available_node_types"][name]
        assert node["min_workers"] == 0 < node["max_workers"] <= config["max_workers"]
        assert "Gpu" not in str(node["node_config"]) and not node["node_config"]["InstanceType"].startswith(("g", "p"))


def test_runs_the_oeb_image_with_a_large_shm(config):
    docker = config["docker"]
    assert docker["image"] == IMAGE
    options = " ".join(docker["run_options"])
    assert "--shm-size=" in options
    assert "--entrypoint=" in options  # the image's entry point is `oeb`; the launcher starts `bash`
    assert "--env-file" in options  # keys: fetched on the host from a secret store, never written here


def test_starts_ray_from_the_images_environment(config):
    for command in config["head_start_ray_commands"] + config["worker_start_ray_commands"]:
        assert "/app/.venv/bin/ray" in command
    assert "--head" in config["head_start_ray_commands"][-1]
    assert "$RAY_HEAD_IP:6379" in config["worker_start_ray_commands"][-1]
    assert config["setup_commands"] == []  # everything is in the image
