"""
The benchmark's own virtual environments, under benchmarks/.work/: ``venv`` (this repository, the peer and
matplotlib) and ``gptr-venv`` (GPT Researcher, which needs Python 3.12 or later and has dependencies of its own).
"""

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
GPTR_VENV = ROOT / "benchmarks" / ".work" / "gptr-venv"
GPTR_REQUIREMENTS = ROOT / "benchmarks" / "requirements-gptr.txt"
GPTR_NEEDED = ("gpt_researcher",)
GPTR_PYTHON_VARIABLE = "HDR_GPTR_PYTHON"
"""An interpreter of Python 3.12 or later to build GPT Researcher's environment with, where none is on ``PATH``."""
GPTR_CANDIDATES = ("python3.13", "python3.12", "python3")


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


def _recent_enough(python: str) -> bool:
    probe = "import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def _pyenv_pythons() -> list[str]:
    """The interpreters pyenv has installed (``$PYENV_ROOT``, else ``~/.pyenv``), oldest version first."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else -1 for part in path.parent.parent.name.split("."))

    return [str(p) for p in sorted(root.glob("versions/3.*/bin/python"), key=version)]


def gptr_base_python() -> str | None:
    """
    An interpreter of Python 3.12 or later: ``$HDR_GPTR_PYTHON``, else this one, the first on ``PATH``, or the
    oldest such version pyenv has installed.

    :returns: Its path or command name, or ``None`` if there is none.
    """
    named = os.environ.get(GPTR_PYTHON_VARIABLE)
    candidates = [named] if named else [sys.executable, *GPTR_CANDIDATES, *_pyenv_pythons()]
    return next((c for c in candidates if _recent_enough(c)), None)


def ensure_gptr(venv: Path = GPTR_VENV) -> Path | None:
    """
    Create GPT Researcher's venv from ``benchmarks/requirements-gptr.txt`` if it lacks the package.

    :param venv: Where the venv lives.
    :returns: Its interpreter, or ``None`` where no Python 3.12 or later was found to build it with.
    :raises subprocess.CalledProcessError: If creating or installing fails.
    """
    python = python_path(venv)
    if python.exists() and has_modules(python, GPTR_NEEDED):
        return python
    base = gptr_base_python()
    if base is None:
        return None
    print(f"Setting up GPT Researcher's environment in {venv.relative_to(ROOT)} ...", flush=True)
    if not python.exists():
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(GPTR_REQUIREMENTS)], check=True)
    return python
