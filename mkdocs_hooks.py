"""
MkDocs hooks of the documentation site.

- A page may link to a file of the repository outside docs/ (``![timeline](../benchmarks/timeline.png)``, as it reads
  on GitHub); the file is copied into the site under ``_repo/`` and the link is pointed at the copy.
- The docstrings are reST (``:param x:``, ``:class:`~a.B```); mkdocstrings reads their fields (``docstring_style:
  sphinx``) but renders their text as Markdown, where a role would show raw. :class:`ReSTRoles`, a griffe extension
  named in mkdocs.yml, turns each role into a code span (``~`` keeps the last name, as Sphinx shows it) and starts a
  field written on the summary line (``Done. :param x: ...``) on a line of its own, so it is read as a field.
- The library's events become frozen keyword-only dataclasses in ``Event.__init_subclass__``, which griffe cannot
  see: :class:`EventDataclasses`, another griffe extension, gives each event class the ``__init__`` of the dataclass
  it is, so its ``:param:`` lines are checked against its fields like any other signature.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from griffe import Class, Extension, Module, Object
from griffe._internal.extensions.dataclasses import _set_dataclass_init
from mkdocs.structure.files import File, Files

_LINK = re.compile(r"(\]\()(\.\./[^)\s#]+)")
_ROLE = re.compile(
    r":(?:py:)?(?:mod|class|meth|func|data|attr|exc|obj|const|term|ref):`(?P<tilde>~?)(?P<target>[^`]+)`"
)
_INLINE_FIELD = re.compile(r"(?<=\S) +(?=:(?:param|returns|return|raises|type|rtype)\b[^:\n]*:)")


def rest_to_markdown(docstring: str) -> str:
    """A reST docstring with its roles as code spans and every field on a line of its own."""

    def code(match: re.Match[str]) -> str:
        target = match["target"]
        return f"`{target.rsplit('.', 1)[-1] if match['tilde'] else target}`"

    return _INLINE_FIELD.sub("\n", _ROLE.sub(code, docstring))


class ReSTRoles(Extension):
    """A griffe extension: every docstring through :func:`rest_to_markdown` before mkdocstrings parses it."""

    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rest_to_markdown(obj.docstring.value)


class EventDataclasses(Extension):
    """A griffe extension: each event class that names its ``kind`` is read as the dataclass ``Event`` makes it."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        if pkg.name != "haystack_deep_research":
            return
        events = pkg["events"]
        dataclass = next(d for d in pkg["events.types.Event"].decorators if d.callable_path == "dataclasses.dataclass")
        for module in events.modules.values():
            for member in module.members.values():
                named = not member.is_alias and isinstance(member, Class) and "kind" in member.keywords
                if named and "__init__" not in member.members:
                    member.decorators.append(dataclass)
                    _set_dataclass_init(member)


def _outside_links(page_src: Path, docs: Path, repo: Path, markdown: str) -> dict[str, Path]:
    found = {}
    for match in _LINK.finditer(markdown):
        target = (page_src.parent / match.group(2)).resolve()
        if target.is_file() and repo in target.parents and docs not in target.parents:
            found[match.group(2)] = target
    return found


def on_files(files: Files, config: Any) -> Files:
    docs = Path(config["docs_dir"]).resolve()
    repo = docs.parent
    for page in [file for file in files if file.src_uri.endswith(".md")]:
        source = Path(page.abs_src_path or "")
        for target in _outside_links(source, docs, repo, source.read_text(encoding="utf-8")).values():
            uri = posixpath.join("_repo", target.relative_to(repo).as_posix())
            if files.get_file_from_path(uri) is None:
                files.append(File.generated(config, uri, abs_src_path=str(target)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    docs = Path(config["docs_dir"]).resolve()
    source = Path(page.file.abs_src_path)
    links = _outside_links(source, docs, docs.parent, markdown)

    def point(match: re.Match[str]) -> str:
        target = links.get(match.group(2))
        if target is None:
            return match.group(0)
        uri = posixpath.join("_repo", target.relative_to(docs.parent).as_posix())
        return match.group(1) + posixpath.relpath(uri, posixpath.dirname(page.file.src_uri) or ".")

    return _LINK.sub(point, markdown)
