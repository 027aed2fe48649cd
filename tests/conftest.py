"""Session-wide fixtures shared by every test folder.

They live in `tests/fixtures/`: the services (moto S3, the fake Hugging Face hub), small datasets and
the in-process Ray.
"""

import os

# Storage calls retry transient faults (a refused endpoint among them) for 600 s by default: tests
# that meet one on purpose would wait that long. The storage fault tests set their own time.
os.environ.setdefault("OEB_STORAGE_RETRY_S", "2")
# pytest-xdist's workers are given COLUMNS=80 (a plain run is not), and a pipe's tables take COLUMNS:
# tests see one environment however they are run; a test that wants a width sets it.
os.environ.pop("COLUMNS", None)

pytest_plugins = ("fixtures.services", "fixtures.datasets", "fixtures.local_ray", "fixtures.ci", "fixtures.browser")
