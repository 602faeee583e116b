"""
Finding and reading the config file of ``deep-research`` (see :mod:`.config` for what its keys mean): named by
``--config`` or :data:`CONFIG_VARIABLE`, else ``./deep-research.toml``, else the user's; read only when it is a regular
file (a FIFO never blocks the command), at most :data:`MAX_CONFIG_BYTES`, as UTF-8 TOML.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from haystack_deep_research.errors import ConfigFileError

__all__ = ["CONFIG_VARIABLE", "LOCAL_CONFIG", "MAX_CONFIG_BYTES", "default_config_path", "load_config"]

CONFIG_VARIABLE = "DEEP_RESEARCH_CONFIG"
"""The environment variable naming the config file (as ``--config`` does)."""
LOCAL_CONFIG = Path("deep-research.toml")
"""The config file of the working folder, read when no other is named; the command says on stderr that it reads it."""
MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file read; a larger one is refused."""


def default_config_path(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """
    :param environ: The environment (``os.environ`` by default).
    :param cwd: The working folder (the current one by default).
    :returns: ``./deep-research.toml`` if it exists, else ``$XDG_CONFIG_HOME/deep-research/config.toml`` (or
        ``~/.config/...``) if it exists, else ``None``.
    """
    environ = os.environ if environ is None else environ
    local = LOCAL_CONFIG if cwd is None else cwd / LOCAL_CONFIG
    if os.path.lexists(local):
        return local
    home = environ.get("XDG_CONFIG_HOME", "").strip()
    user = (Path(home) if home else Path.home() / ".config") / "deep-research" / "config.toml"
    return user if os.path.lexists(user) else None


def load_config(path: Path) -> dict[str, Any]:
    """
    Read a config file.

    :param path: The TOML file.
    :returns: Its tables and keys.
    :raises ConfigFileError: The file is missing, not a regular file, over :data:`MAX_CONFIG_BYTES`, not UTF-8 or not
        TOML.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the command
    except OSError as error:
        raise ConfigFileError(f"config file {path}: cannot be read ({error.strerror}); check --config.") from error
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # the file opened, not the path looked at before
            raise ConfigFileError(f"config file {path}: not a regular file; give a TOML file.")
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigFileError(f"config file {path}: over {MAX_CONFIG_BYTES // 1024} KiB; a config file is small.")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigFileError(f"config file {path}: not valid TOML: {error}") from error
