"""One local Ray instance for the whole test session, on loopback only, its files in the session's temporary folder."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

RAY_ENV = {
    # Ray binds the machine's network address unless this is 0 in the process that starts it; tests use loopback.
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    # Ray turns token authentication on for a new instance; a token in the environment keeps it out of the home folder.
    "RAY_AUTH_TOKEN": secrets.token_hex(16),
}


@pytest.fixture(scope="session")
def ray_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start Ray once (3-15 s, ~900 MiB) for every test that needs it; shut it down after the session."""
    import ray

    saved = {name: os.environ.get(name) for name in RAY_ENV}
    os.environ.update(RAY_ENV)
    temp = Path(tmp_path_factory.mktemp("ray", numbered=False))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
        _node_ip_address="127.0.0.1",
        _temp_dir=str(temp),
    )
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
