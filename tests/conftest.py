"""Session-wide fixtures shared by every test folder.

They live in `tests/fixtures/`: the services (moto S3, the fake Hugging Face hub) and small datasets.
"""

pytest_plugins = ("fixtures.services", "fixtures.datasets")
