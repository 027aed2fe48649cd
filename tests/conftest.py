"""Session-wide fixtures shared by every test folder.

They live in `tests/fixtures/`: the services (moto S3, the fake Hugging Face hub), small datasets and
the in-process Ray.
"""

pytest_plugins = ("fixtures.services", "fixtures.datasets", "fixtures.local_ray")
