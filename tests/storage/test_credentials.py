"""Storage credentials a Ray worker is handed: used as storage options while held, then dropped with
the clients made with them; and never among the settings that travel in Ray's runtime environment."""

from __future__ import annotations

import uuid

import pytest
import s3fs
from fixtures.services import S3_BUCKET

from oeb import storage
from oeb.run.cluster.session import worker_env


def test_held_credentials_are_used_then_dropped_with_their_clients(s3_env: dict[str, str]) -> None:
    url = f"s3://{S3_BUCKET}/held-{uuid.uuid4().hex}.json"
    held = {"AWS_ACCESS_KEY_ID": "held-key", "AWS_SECRET_ACCESS_KEY": "held-secret", "HF_TOKEN": "hf-held"}
    with storage.holding(held):
        fs, _ = storage.filesystem(url)
        assert (fs.key, fs.secret, storage.hub_token()) == ("held-key", "held-secret", "hf-held")
        storage.write_json(url, {"written": "with the held key"})  # moto takes any key
        assert storage.credentials()["AWS_SECRET_ACCESS_KEY"] == "testing"  # the environment's win
    assert storage.hub_token() is None
    assert storage.filesystem(url)[0].key is None  # the environment's chain again
    assert all(fs.key != "held-key" for fs in s3fs.S3FileSystem._cache.values())
    assert storage.read_json(url) == {"written": "with the held key"}


def test_no_credential_travels_with_the_storage_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = {"AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t", "AWS_ACCESS_KEY_ID": "k", "HF_TOKEN": "h"}
    settings = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_DEFAULT_REGION": "us-east-1", "HF_ENDPOINT": "x"}
    settings |= {"AWS_SHARED_CREDENTIALS_FILE": "/run/secrets/aws", "OEB_WARM_MINUTES": "5"}
    for name, value in (secret | settings).items():
        monkeypatch.setenv(name, value)
    sent = worker_env()
    assert not set(secret) & set(sent)
    assert settings.items() <= sent.items()
    assert secret.items() <= storage.credentials().items()
