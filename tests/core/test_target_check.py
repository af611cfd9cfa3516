"""``target_check`` asks a platform's ``target_problem`` with the config only when it takes it.

A check takes the config when it has a second *required* positional parameter; one whose
second parameter has a default (``strict=False``) is asked with the channel alone, so the
default is not overwritten by the config.
"""

from __future__ import annotations

from bothost.platform import target_check

CONFIG = object()


class Strict:
    name = "pager"

    def target_problem(self, channel, strict=False):
        return f"{channel}: strict={strict!r}"


class Configured:
    name = "pager"

    def target_problem(self, channel, config):
        return f"{channel}: config given={config is CONFIG}"


def test_a_check_whose_second_parameter_has_a_default_is_asked_with_the_channel_alone():
    check = target_check(Strict())
    assert check is not None
    assert check("ops", CONFIG) == "ops: strict=False"


def test_a_check_with_a_second_required_parameter_is_given_the_config():
    check = target_check(Configured())
    assert check is not None
    assert check("ops", CONFIG) == "ops: config given=True"


def test_a_plain_function_with_one_parameter_is_asked_with_the_channel_alone():
    platform = type("P", (), {"name": "pager"})()
    platform.target_problem = lambda channel: f"{channel}: alone"
    check = target_check(platform)
    assert check is not None
    assert check("ops", CONFIG) == "ops: alone"
