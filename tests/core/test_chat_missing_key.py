"""``bothost chat`` with a hosted model and no key says so at once (issue 39).

Found from outside: the missing key was reported after 5-11 s, once the provider's SDK was
imported and the host built, though the config says it before anything runs. Checked here
by what the command did not do: import the SDK (``python -X importtime`` lists every
import) or build the host (which makes the home and its database).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.helpers import COMMAND_SECONDS

HOSTED = [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]


def chat(tmp_path, provider, *args):
    config = tmp_path / "c.yaml"
    config.write_text(f"llm: {{provider: {provider}, model: m}}\n")
    home = tmp_path / "home"  # not there yet: building the host would make it
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["BOTHOST_HOME"] = str(home)
    env.pop("BOTHOST_CONFIG", None)
    argv = [sys.executable, "-X", "importtime", "-m", "bothost", "--config", str(config)]
    result = subprocess.run(
        [*argv, "chat", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
        env=env,
    )
    imported = re.findall(r"^import time:.*\|\s*(\S+)$", result.stderr, re.MULTILINE)
    said = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    return result, imported, said, home


@pytest.mark.parametrize("provider, variable", HOSTED)
@pytest.mark.parametrize("args", [("-m", "hi"), ()])
def test_a_missing_key_is_said_in_one_line_before_the_sdk_or_the_host(
    tmp_path, provider, variable, args
):
    result, imported, said, home = chat(tmp_path, provider, *args)
    assert result.returncode == 1, result.stdout + "\n".join(said)
    assert said == [
        f"bothost: {provider} needs an API key: set llm.api_key: ${{env:{variable}}} in "
        f"bothost.yaml and export {variable}"
        + (
            " (a local server such as Ollama needs llm.base_url instead)"
            if provider == "openai"
            else ""
        )
    ]
    assert result.stdout == ""
    assert imported and provider not in imported  # the list is there; the SDK is not in it
    assert not home.exists()
