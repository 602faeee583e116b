"""The benchmark's own virtual environment: this repository, the peer and matplotlib, under benchmarks/.work/."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / "benchmarks" / ".work" / "venv"
REQUIREMENTS = ROOT / "benchmarks" / "requirements.txt"
NEEDED = ("haystack_deep_research", "haystack_integrations.agent_pack", "arrow", "matplotlib")


def python_path(venv: Path = VENV) -> Path:
    """The venv's interpreter."""
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def has_modules(python: str | Path, modules: tuple[str, ...] = NEEDED) -> bool:
    """Whether ``python`` can import every module in ``modules``."""
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        try:
            return all(importlib.util.find_spec(m) is not None for m in modules)
        except ModuleNotFoundError:
            return False
    probe = "import importlib.util,sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)"
    try:
        return subprocess.run([str(python), "-c", probe, *modules], capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def ensure(venv: Path = VENV) -> Path:
    """
    Create the venv and install the benchmark requirements if it lacks them.

    :param venv: Where the venv lives.
    :returns: Its interpreter.
    :raises subprocess.CalledProcessError: If creating or installing fails.
    """
    python = python_path(venv)
    if python.exists() and has_modules(python):
        return python
    print(f"Setting up the benchmark environment in {venv.relative_to(ROOT)} ...", flush=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "-e", str(ROOT), "-r", str(REQUIREMENTS)], check=True)
    return python
