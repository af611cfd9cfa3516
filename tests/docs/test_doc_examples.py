"""Every ```yaml block of README.md and docs/ is a config bothost loads as printed.

Each block is written to a file and loaded through the config loader as `--config` over an
empty home, with every `${env:NAME}` it names set to a dummy value. YAML that is not a
bothost config (a Slack app manifest, the weather server's watch file) is fenced ```yml
instead, and the text around it says whose file it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bothost.host.config_load import load  # every check a command makes

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# An opening fence (any indent, as in a list item) up to the closing fence at that indent.
FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
ENV = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def yaml_blocks() -> list[tuple[str, str]]:
    """(where, text) of every ```yaml block (not ```yml), dedented by its fence's indent."""
    blocks = []
    for doc in DOCS:
        text = doc.read_text("utf-8")
        for match in FENCE.finditer(text):
            if match["lang"] != "yaml":
                continue
            indent = len(match["indent"])
            body = "".join(
                line[indent:] if line[:indent].isspace() else line
                for line in match["body"].splitlines(keepends=True)
            )
            line = text.count("\n", 0, match.start()) + 1
            blocks.append((f"{doc.relative_to(ROOT)}:{line}", body))
    return blocks


BLOCKS = yaml_blocks()


def test_the_docs_have_yaml_examples():
    """The extraction finds the blocks (an empty parametrization would pass silently)."""
    assert len(BLOCKS) >= 10
    assert any(where.startswith("README.md") for where, _ in BLOCKS)


@pytest.mark.parametrize("block", [body for _, body in BLOCKS], ids=[where for where, _ in BLOCKS])
def test_yaml_example_loads_as_a_config(block, home, tmp_path, monkeypatch):
    for name in ENV.findall(block):
        monkeypatch.setenv(name, f"dummy-{name.lower()}")
    path = tmp_path / "example.yaml"
    path.write_text(block, "utf-8")
    config = load(path, home)
    assert str(path) in config.sources
