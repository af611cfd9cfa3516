"""The documentation as installed: the topics ``bothost docs`` lists and prints.

The pages are the checkout's ``docs/`` folder, shipped in the wheel as ``bothost.docs``
(setup.py), so a user without a checkout reads what the messages point at with
``bothost docs TOPIC``. A topic is a page's path under ``docs/`` without ``.md``
(``llm``, ``servers/ssh``); the last part alone works when no other page has it
(``ssh``). ``readme`` is the project README, which every install holds as the package's
long description.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import metadata
from pathlib import Path

README = "readme"


@dataclass(frozen=True)
class Topic:
    name: str
    title: str


class UnknownTopicError(LookupError):
    """No page has that name; the message lists the ones there are."""


def folder() -> Path:
    try:
        docs = importlib.import_module("bothost.docs")  # docs/, mapped by package-dir
    except ModuleNotFoundError:
        # an editable install made before setup.py mapped docs/ knows no bothost.docs
        # until it is reinstalled; its checkout has the folder beside the package
        return Path(__file__).resolve().parents[2] / "docs"
    return Path(str(docs.__file__)).parent


def pages() -> dict[str, Path]:
    """Every page by topic name, in reading order (the index first, then by name)."""
    root = folder()
    found = {
        path.relative_to(root).with_suffix("").as_posix(): path
        for path in sorted(root.rglob("*.md"))
    }
    index = found.pop("README", None)
    return {**({"index": index} if index else {}), **found}


def title(path: Path) -> str:
    with path.open(encoding="utf-8") as text:
        first = text.readline()
    return first.lstrip("#").strip()


def topics() -> list[Topic]:
    listed = [Topic(README, "the project README: install, run, test, connect a model")]
    return listed + [Topic(name, title(path)) for name, path in pages().items()]


def read(topic: str) -> str:
    """The text of ``topic``; :class:`UnknownTopicError` if no page has that name."""
    name = topic.strip().removesuffix(".md").removeprefix("docs/").lower()
    if name == README:
        return readme()
    found = pages()
    if name in found:
        return found[name].read_text(encoding="utf-8")
    matches = [path for key, path in found.items() if key.rpartition("/")[2] == name]
    if len(matches) == 1:
        return matches[0].read_text(encoding="utf-8")
    names = ", ".join([README, *found])
    raise UnknownTopicError(f"no page named {topic!r}; the topics are: {names}")


def readme() -> str:
    """The README as installed: the distribution's long description."""
    description = metadata("bothost").get_payload()  # type: ignore[attr-defined]
    return str(description or "").strip() + "\n"
