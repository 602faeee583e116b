"""
Finding and reading the config files of ``deep-research`` (see :mod:`.config` for what their keys mean and which one
wins): the file ``--config`` or :data:`CONFIG_VARIABLE` names, else the user's own and ``./deep-research.toml`` of the
working folder, which is not trusted; each read only when it is a regular file (a FIFO never blocks the command), at
most :data:`MAX_CONFIG_BYTES`, as UTF-8 TOML.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from haystack_deep_research.errors import ConfigFileError

__all__ = ["CONFIG_VARIABLE", "LOCAL_CONFIG", "MAX_CONFIG_BYTES", "ConfigFile", "config_files", "load_config"]

CONFIG_VARIABLE = "DEEP_RESEARCH_CONFIG"
"""The environment variable naming the config file (as ``--config`` does)."""
LOCAL_CONFIG = Path("deep-research.toml")
"""The config file of the working folder, read when no other is named; it may come with a folder the user did not
write, so it is not trusted with the options that name a server, a host, a path or code (see :mod:`.config`)."""
MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file read; a larger one is refused."""


class ConfigFile(NamedTuple):
    """A config file to read, and whether the user chose it (named it, or keeps it in their own config folder)."""

    path: Path
    trusted: bool


def config_files(named: str | None, environ: Mapping[str, str] | None = None) -> list[ConfigFile]:
    """
    :param named: The file ``--config`` or :data:`CONFIG_VARIABLE` names, if any: then it is the only one.
    :param environ: The environment (``os.environ`` by default).
    :returns: The files to read, the one that wins last: ``./deep-research.toml`` (not trusted) if it exists, then
        ``$XDG_CONFIG_HOME/deep-research/config.toml`` (or ``~/.config/...``) if it exists.
    """
    if named:
        return [ConfigFile(Path(named), trusted=True)]
    environ = os.environ if environ is None else environ
    home = environ.get("XDG_CONFIG_HOME", "").strip()
    user = (Path(home) if home else Path.home() / ".config") / "deep-research" / "config.toml"
    found = [ConfigFile(LOCAL_CONFIG, trusted=False), ConfigFile(user, trusted=True)]
    return [file for file in found if os.path.lexists(file.path)]


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
