"""A call's capabilities: the tool's declared ones, raised (never lowered) by ``egress_of``."""

from __future__ import annotations

import logging

from bothost.agent.tools import tool_from_function
from bothost.models import Address, Session

SESSION = Session(id="s1", address=Address("test", "c1"), user="u1")


def post(target: str = "") -> str:
    """Post somewhere."""
    return target


def by_target(arguments, session):
    return "chosen" if arguments.get("target") else "none"


def test_egress_of_decides_each_call():
    tool = tool_from_function(post, egress_of=by_target)
    assert tool.capabilities_for({"target": "web:x"}, SESSION).egress == "chosen"
    assert tool.capabilities_for({}, SESSION).egress == "none"
    assert tool.capabilities.egress == "none"  # the tool's own stay as declared


def test_egress_of_never_lowers_what_was_declared():
    tool = tool_from_function(post, egress="chosen", egress_of=by_target)
    assert tool.capabilities_for({}, SESSION).egress == "chosen"


def test_a_failing_or_unknown_answer_is_chosen(caplog):
    def broken(arguments, session):
        raise KeyError("target")

    failing = tool_from_function(post, egress_of=broken)
    with caplog.at_level(logging.ERROR):
        assert failing.capabilities_for({}, SESSION).egress == "chosen"
    assert "could not be told" in caplog.text
    odd = tool_from_function(post, egress_of=lambda arguments, session: "everywhere")
    assert odd.capabilities_for({}, SESSION).egress == "chosen"
