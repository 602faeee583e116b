"""The one door for files written: what stands at a path decides how it is written, and no other code writes."""

from __future__ import annotations

import ast
import os
import shlex
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import read_fifo

from haystack_deep_research._untrusted.files import cut_torn_line, open_appending, read_regular_file, write_file
from haystack_deep_research.errors import LocalFileRefusedError

SRC = Path(__file__).resolve().parents[2] / "src" / "haystack_deep_research"
DOOR = "_untrusted/files.py"


def _character_device(path: Path) -> Path:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a node of the null device, in the test's folder
    except (PermissionError, AttributeError, OSError) as error:
        pytest.skip(f"cannot make a device node here ({error})")
    return path


def test_a_regular_file_is_replaced_whole_and_text_that_cannot_be_encoded_is_cleaned(tmp_path: Path) -> None:
    target = tmp_path / "rapport été.md"
    target.write_text("old")

    write_file(target, "Gezeiten \udcff stiegen", named=True)

    assert target.read_text(encoding="utf-8") == "Gezeiten \ufffd stiegen"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rapport été.md"]  # no temporary file left behind


def test_a_file_replaced_keeps_its_permissions(tmp_path: Path) -> None:
    private = tmp_path / "report.md"
    private.write_text("old")
    private.chmod(0o600)

    write_file(private, "new", named=True)

    assert private.read_text() == "new"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="needs /dev/shm")
def test_a_file_under_dev_that_is_no_stream_of_the_process_is_replaced_not_appended_to() -> None:
    target = Path("/dev/shm") / f"deep-research-test-{os.getpid()}.md"
    try:
        write_file(target, "first\n", named=True)
        write_file(target, "second\n", named=True)

        assert target.read_text() == "second\n"
    finally:
        target.unlink(missing_ok=True)


def test_a_writer_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old")

    def broken(path: Path) -> None:
        path.write_bytes(b"half")
        raise RuntimeError("font file is corrupt")

    with pytest.raises(RuntimeError, match="font"):
        write_file(target, broken, named=True)

    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]


def test_a_character_device_named_by_the_user_is_written_to_and_stays_a_device(tmp_path: Path) -> None:
    null = _character_device(tmp_path / "null")

    write_file(null, "# Report\n", named=True)
    write_file(null, lambda path: path.write_bytes(b"%PDF-1.4"), named=True)

    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_a_fifo_named_by_the_user_gets_the_content_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader, got = read_fifo(fifo)

    write_file(fifo, "# Rapport — marées\n", named=True)
    reader.join(timeout=30)

    assert got == ["# Rapport — marées\n".encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_link_named_by_the_user_is_followed_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    dangling = tmp_path / "later.md"
    dangling.symlink_to(tmp_path / "made-later.md")

    write_file(link, "new", named=True)
    write_file(dangling, "made", named=True)

    assert link.is_symlink()
    assert real.read_text() == "new"
    assert dangling.is_symlink()
    assert (tmp_path / "made-later.md").read_text() == "made"


@pytest.mark.parametrize("named", [True, False])
def test_a_folder_or_a_socket_is_never_replaced(named: bool, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "sock"))
    try:
        for path in (folder, tmp_path / "sock"):
            with pytest.raises(LocalFileRefusedError, match="was not written") as refused:
                write_file(path, "x", named=named)
            assert refused.value.reason == "not_regular"
        assert folder.is_dir()
        assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)
    finally:
        listening.close()


def test_a_device_in_a_folder_of_the_library_is_refused_and_a_link_or_fifo_there_is_replaced(tmp_path: Path) -> None:
    null = _character_device(tmp_path / "null")
    with pytest.raises(LocalFileRefusedError, match="a device"):
        write_file(null, "x")
    assert stat.S_ISCHR(os.lstat(null).st_mode)

    outside = tmp_path / "outside.txt"
    outside.write_text("kept")
    (tmp_path / "link.json").symlink_to(outside)
    os.mkfifo(tmp_path / "pipe.json")
    write_file(tmp_path / "link.json", "{}")
    write_file(tmp_path / "pipe.json", "{}")  # would block if it were opened

    assert outside.read_text() == "kept"
    assert (tmp_path / "link.json").read_text() == (tmp_path / "pipe.json").read_text() == "{}"
    assert not (tmp_path / "link.json").is_symlink()


def test_an_exclusive_write_keeps_what_stands_there(tmp_path: Path) -> None:
    key = tmp_path / "journal.key"

    assert write_file(key, b"first", exclusive=True)
    assert not write_file(key, b"second", exclusive=True)

    assert key.read_bytes() == b"first"
    assert stat.S_IMODE(key.stat().st_mode) & 0o077 == 0  # a file of the library's own: its owner's only
    assert [p.name for p in tmp_path.iterdir()] == ["journal.key"]


@pytest.mark.parametrize("hostile", ["fifo", "link", "folder"])
def test_appending_opens_only_a_regular_file_without_blocking(hostile: str, tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    if hostile == "fifo":
        os.mkfifo(path)  # no reader: a plain open for writing blocks forever
    elif hostile == "link":
        path.symlink_to(outside)
    else:
        path.mkdir()

    with pytest.raises(LocalFileRefusedError, match="was not written"):
        os.close(open_appending(path))

    assert outside.read_text() == "kept\n"


def test_a_torn_line_is_cut_but_a_refused_file_is_never_cut(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(b'{"a": 1}\n{"b": ')
    assert cut_torn_line(rows, max_bytes=1024) == b'{"a": 1}\n'
    assert rows.read_bytes() == b'{"a": 1}\n'

    outside = tmp_path / "passwd"
    outside.write_bytes(b"root:x:0:0\nunterminated")
    link = tmp_path / "link.jsonl"
    link.symlink_to(outside)
    with pytest.raises(LocalFileRefusedError, match="symbolic link") as refused:
        cut_torn_line(link, max_bytes=1024)
    assert refused.value.reason == "symlink"
    assert outside.read_bytes() == b"root:x:0:0\nunterminated"
    with pytest.raises(LocalFileRefusedError, match="larger"):
        cut_torn_line(outside, max_bytes=4)
    assert outside.read_bytes() == b"root:x:0:0\nunterminated"
    assert read_regular_file(link, root=None, max_bytes=1024) == outside.read_bytes()  # links=True follows


# What writes a file: an open for writing, os's renames and links, a temporary file, pathlib's writers and renames
# (called with one argument, which str.replace never is), a CSV writer.
_PATH_CALLS = {"write_text", "write_bytes", "touch", "save", "output"}  # also python-docx's and fpdf2's writers
_OS_CALLS = {"replace", "rename", "renames", "link", "symlink", "truncate", "ftruncate", "mkfifo", "mknod"}
_TEMPORARY = {"mkstemp", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile", "TemporaryDirectory"}
_WRITING_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
# Besides the door: the parser process keeps its stdout for its answers and sends stray prints to /dev/null, the
# MCP server's check and the testing kit's scan items live in temporary folders of their own, scan results and
# evidence tables are written as CSV into memory first, the journal cuts back a failed append on the descriptor the
# door opened, the Word and PDF exports save to the door's temporary file, and a to-do list has a method named
# replace.
_ALLOWED = {
    ("report/export_files.py", "save"),
    ("report/export_files.py", "output"),
    ("web/_worker.py", "fdopen"),
    ("web/_worker.py", "open"),
    ("mcp_server/server.py", "TemporaryDirectory"),
    ("testing/_kit.py", "TemporaryDirectory"),
    ("scans/results.py", "csv.writer"),
    ("report/export_files.py", "csv.writer"),
    ("run/_journal.py", "ftruncate"),
    ("tools/todos.py", "replace"),
}


def _writes(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _WRITING_FLAGS:
            found.add(node.attr)
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
        if name in _PATH_CALLS or name in _TEMPORARY or (owner == "csv" and name in {"writer", "DictWriter"}):
            found.add(f"{owner}.{name}" if owner == "csv" else name)
        elif (
            name in _OS_CALLS
            and (
                owner == "os"
                or (
                    isinstance(func, ast.Attribute)
                    and owner != "dataclasses"
                    and len(node.args) == 1
                    and not node.keywords
                )
            )
        ) or owner == "shutil":
            found.add(name)
        elif name in {"open", "fdopen"}:
            modes = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
            if isinstance(func, ast.Attribute) and owner not in {"os", "io", "builtins"}:  # Path.open(mode)
                modes += [a.value for a in node.args[:1] if isinstance(a, ast.Constant)]
            modes += [k.value.value for k in node.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)]
            if any(isinstance(m, str) and set(m) & set("wax+") for m in modes):
                found.add(name)
    return found


def test_no_module_writes_a_file_but_through_the_door() -> None:
    writers = {}
    for path in sorted(SRC.rglob("*.py")):
        module = path.relative_to(SRC).as_posix()
        found = {
            name for name in _writes(ast.parse(path.read_text(encoding="utf-8"))) if (module, name) not in _ALLOWED
        }
        if found and module != DOOR:
            writers[module] = sorted(found)
    assert writers == {}, "write through haystack_deep_research._untrusted.files (write_file, open_appending)"


def test_the_check_sees_each_way_of_writing() -> None:
    sample = (
        "os.replace(a, b); tmp.replace(target); text.replace('a', 'b'); p.write_text('x'); os.open(p, os.O_CREAT)\n"
        "open(p, 'w'); p.open('a'); open(p); p.open(); csv.writer(f); tempfile.mkstemp(); shutil.copyfile(a, b)"
    )
    assert _writes(ast.parse(sample)) == {
        "replace",
        "write_text",
        "O_CREAT",
        "open",
        "csv.writer",
        "mkstemp",
        "copyfile",
    }


def test_the_door_is_what_the_writers_call() -> None:
    callers = sorted(
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if any(
            isinstance(node, ast.ImportFrom)
            and node.module == "haystack_deep_research._untrusted.files"
            and {alias.name for alias in node.names} & {"write_file", "open_appending", "cut_torn_line"}
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert callers == [
        "cli/output.py",
        "cli/research.py",
        "iterative/iteration.py",
        "mcp_server/server.py",
        "options/config.py",
        "report/export_files.py",
        "run/_cache.py",
        "run/_journal.py",
        "scans/results.py",
        "sources/indexing.py",
        "testing/_kit.py",
        "tools/filesystem.py",
    ]


@pytest.mark.parametrize("redirect", [">", ">>"])
def test_dev_stdout_sent_to_a_file_by_the_shell_is_written_to_as_the_shell_left_it(
    redirect: str, tmp_path: Path
) -> None:
    out = tmp_path / "out.md"
    out.write_text("earlier line\n")
    program = (
        "from haystack_deep_research._untrusted.files import write_file\n"
        "write_file('/dev/stdout', 'Bericht ü\\n', named=True)"
    )
    environment = {**os.environ, "PYTHONPATH": str(SRC.parent)}

    subprocess.run(
        f"{shlex.quote(sys.executable)} -c {shlex.quote(program)} {redirect} {shlex.quote(str(out))}",
        shell=True,
        check=True,
        env=environment,
        timeout=60,
    )

    assert out.read_text() == ("earlier line\n" if redirect == ">>" else "") + "Bericht ü\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.md"]
