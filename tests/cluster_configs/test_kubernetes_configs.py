"""cluster/kuberay/*.yaml: core fields through kubernetes-validate (Kubernetes 1.30, strict), the
RayCluster through the project's own JSON schema (the KubeRay CRD cannot be fetched offline)."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError

from .common import IMAGE, KUBERAY, load_yaml

K8S = "1.30.0"


@pytest.fixture(scope="module")
def cluster() -> dict:
    return load_yaml(KUBERAY / "raycluster.yaml")


@pytest.fixture(scope="module")
def job() -> dict:
    return load_yaml(KUBERAY / "rayjob.yaml")


@pytest.fixture(scope="module")
def schema() -> dict:
    schema = json.loads((KUBERAY / "raycluster.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def pod_templates(cluster: dict) -> dict[str, dict]:
    spec = cluster["spec"]
    templates = {"head": spec["headGroupSpec"]["template"]}
    for group in spec.get("workerGroupSpecs", []):
        templates[f"worker-{group['groupName']}"] = group["template"]
    return templates


def validate_pod_template(name: str, template: dict) -> None:
    wrapped = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name}, "template": template}
    kubernetes_validate.validate(wrapped, K8S, strict=True)


def schema_errors(schema: dict, document: dict) -> list[str]:
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document)]


def test_raycluster_pod_templates_are_valid_kubernetes(cluster):
    templates = pod_templates(cluster)
    assert set(templates) == {"head", "worker-cpu"}
    for name, template in templates.items():
        validate_pod_template(f"oeb-{name}", template)


def test_rayjob_submitter_pod_template_is_valid_kubernetes(job):
    validate_pod_template("oeb-submitter", job["spec"]["submitterPodTemplate"])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["ports"][0].update(containerPort="6379"), "6379"),
        (lambda c: c.update(imagee=IMAGE), "imagee"),
        (lambda c: c["volumeMounts"][0].pop("mountPath"), "mountPath"),
    ],
)
def test_a_broken_pod_template_fails(cluster, change, message):
    template = copy.deepcopy(cluster["spec"]["headGroupSpec"]["template"])
    change(template["spec"]["containers"][0])
    with pytest.raises(ValidationError, match=message):
        validate_pod_template("oeb-head", template)


def test_raycluster_passes_the_project_schema(cluster, schema):
    assert schema_errors(schema, cluster) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["workerGroupSpecs"][0].update(groupNam="cpu"), "groupNam"),
        (lambda s: s["workerGroupSpecs"][0].pop("groupName"), "groupName"),
        (lambda s: s["workerGroupSpecs"][0].update(maxReplicas=-1), "-1"),
        (lambda s: s["headGroupSpec"]["rayStartParams"].update({"num-cpus": 0}), "0 is not of type 'string'"),
        (lambda s: s.update(headGroupSpecs=s.pop("headGroupSpec")), "headGroupSpec"),
    ],
)
def test_a_broken_raycluster_fails_the_schema(cluster, schema, change, message):
    broken = copy.deepcopy(cluster)
    change(broken["spec"])
    errors = schema_errors(schema, broken)
    assert errors and any(message in error for error in errors), errors


def test_check_jsonschema_cli_agrees(tmp_path: Path):
    cli = Path(sys.executable).parent / "check-jsonschema"
    schema = str(KUBERAY / "raycluster.schema.json")
    good = subprocess.run([cli, "--schemafile", schema, KUBERAY / "raycluster.yaml"], capture_output=True, text=True)
    assert good.returncode == 0, good.stdout + good.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text((KUBERAY / "raycluster.yaml").read_text().replace("groupName:", "groupNam:"))
    bad = subprocess.run([cli, "--schemafile", schema, broken], capture_output=True, text=True)
    assert bad.returncode == 1 and "groupNam" in bad.stdout + bad.stderr


def test_every_ray_pod_has_memory_shm_keys_from_a_secret_and_runs_as_non_root(cluster):
    for name, template in pod_templates(cluster).items():
        spec = template["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        volumes = {volume["name"]: volume for volume in spec["volumes"]}
        (container,) = spec["containers"]
        assert container["image"] == IMAGE
        assert "command" not in container  # KubeRay sets `bash -lc -- ... ray start`
        (shm,) = [mount for mount in container["volumeMounts"] if mount["mountPath"] == "/dev/shm"]
        assert volumes[shm["name"]]["emptyDir"]["medium"] == "Memory"
        assert {"secretRef": {"name": "oeb-api-keys", "optional": True}} in container["envFrom"]
        assert all("KEY" not in variable["name"] for variable in container.get("env", []))


def test_rayjob_runs_make_bench_on_the_raycluster(cluster, job):
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    assert job["spec"]["clusterSelector"] == {"ray.io/cluster": cluster["metadata"]["name"]}
    entrypoint = job["spec"]["entrypoint"].split()
    assert entrypoint[:4] == ["make", "-C", "/app", "bench-cluster"]
    assert any(word.startswith("SYSTEM=") for word in entrypoint)


def test_kubernetes_validate_cannot_check_ray_kinds_alone(cluster):
    """Why the project schema exists: kubernetes-validate has no schema for KubeRay's kinds."""
    broken = copy.deepcopy(cluster)
    broken["spec"]["workerGroupSpecs"][0]["groupNam"] = "cpu"
    with pytest.raises(SchemaNotFoundError):  # not a ValidationError naming `groupNam`
        kubernetes_validate.validate(broken, K8S, strict=True)
