"""A ``webhook:NAME`` in tick.deliver_to must name one of platforms.webhook.targets: refused
when the config loads, by every command, without making the webhook platform."""

from __future__ import annotations

from bothost.cli.runtime import Runtime
from bothost.config import ConfigError
from bothost.platform import Deferred
from tests.helpers import run_bothost


def runtime(home, path) -> Runtime:
    made = Runtime()
    made.configure({"config_file": str(path), "home": str(home)})
    return made


def test_a_missing_webhook_target_is_a_config_error_at_load(home, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "tick: {deliver_to: ['console:', 'webhook:ops']}\n"
        "platforms: {webhook: {targets: {pager: {url: 'https://pager.example/in'}}}}\n"
    )
    try:
        runtime(home, path).config  # noqa: B018
    except ConfigError as exc:
        text = str(exc)
    else:
        raise AssertionError("a webhook target nobody configured was accepted")
    assert "tick.deliver_to[1]: 'webhook:ops'" in text
    assert "no webhook target 'ops' in platforms.webhook.targets" in text
    assert "platforms.webhook.targets.ops.url" in text  # what to write instead


def test_a_configured_webhook_target_loads_and_the_platform_stays_unmade(home, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "tick: {deliver_to: ['webhook:ops']}\n"
        "platforms: {webhook: {targets: {ops: {url: 'https://ops.example/in'}}}}\n"
    )
    made = runtime(home, path)
    assert made.config.tick.deliver_to == ["webhook:ops"]
    from bothost.hooks.startup import collect_platforms

    webhook = collect_platforms(made.pm)["webhook"]
    assert isinstance(webhook, Deferred) and not webhook.made


def test_the_check_reads_the_targets_of_the_config_it_is_given():
    from bothost.plugins.web.config import webhook_target_problem

    class Section:
        targets = {"ops": object()}

    class Platforms:
        webhook = Section()

    class Config:
        platforms = Platforms()

    assert webhook_target_problem("ops", Config()) is None
    assert "no webhook target 'pager'" in (webhook_target_problem("pager", Config()) or "")


def test_a_command_refuses_it_in_one_line(home, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("tick: {deliver_to: ['webhook:ops']}\n")
    result = run_bothost("tick", home=home, config=path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no webhook target 'ops'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
