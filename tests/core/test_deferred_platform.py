"""A platform registered as ``bothost.platform.Deferred`` is made when first used (issue 19).

The first-party platforms' modules (Slack's, the web chat's, the webhook sender's) were
imported by every command, ``bothost chat -m help`` among them, which uses none of them.
Registered deferred, each is made by whatever first uses it, and works as before.
"""

from __future__ import annotations

from bothost.hookspecs import hookimpl
from bothost.host.host import HostError
from bothost.models import Address
from bothost.platform import Asking, Deferred, Question, actual
from tests.helpers import make_host


class Pager:
    name = "pager"

    def __init__(self) -> None:
        self.started = False
        self.host = None

    def enabled(self, host):
        return True

    async def start(self, host):
        self.started, self.host = True, host

    async def stop(self):
        self.started = False

    async def send(self, address, text, **kwargs):
        return None

    async def send_briefing(self, address, briefing):
        return None

    async def ask(self, address, question):
        return True


class PagerPlugin:
    def __init__(self) -> None:
        self.made = 0

    def make(self) -> Pager:
        self.made += 1
        return Pager()

    @hookimpl
    def register_platforms(self, register):
        register(Deferred("pager", self.make))


def test_a_deferred_platform_is_made_only_when_used():
    made = []
    deferred = Deferred("pager", lambda: made.append(1) or Pager())
    assert deferred.name == "pager" and not deferred.made and made == []
    assert isinstance(deferred, Asking)  # an optional member, looked up: made now
    assert made == [1] and deferred.made
    deferred.host = "set through"  # attributes are the platform's own
    assert actual(deferred).host == "set through" and made == [1]


def test_a_factory_that_makes_another_platform_is_refused():
    deferred = Deferred("pager", lambda: type("Other", (), {"name": "other"})())
    try:
        deferred.platform()
    except ValueError as exc:
        assert "made one named 'other'" in str(exc)
    else:
        raise AssertionError("a platform of another name was accepted")


async def test_the_host_starts_and_asks_through_a_deferred_platform(home):
    plugin = PagerPlugin()
    host = make_host(home, plugins=[plugin])
    assert isinstance(host.platforms["pager"], Deferred)  # what its hook registered
    assert plugin.made == 0
    await host.start(serve_http=False, mcp=False, tick=False)
    try:
        assert plugin.made == 1
        pager = host.platform("pager")
        assert isinstance(pager, Pager) and pager.started and pager.host is host
        assert "pager" in host.active
        assert await host.ask(Address("pager", "c1"), Question("ok?")) is True
    finally:
        await host.stop()
    assert plugin.made == 1 and not pager.started


async def test_a_platform_that_cannot_be_made_stops_the_host_with_its_name(home):
    class Broken:
        @hookimpl
        def register_platforms(self, register):
            def make():
                raise ImportError("No module named 'discord'")

            register(Deferred("discord", make))

    host = make_host(home, plugins=[Broken()])
    try:
        await host.start(serve_http=False, mcp=False, tick=False)
    except HostError as exc:
        assert str(exc) == (
            "platforms.discord: the platform could not be made: No module named 'discord'"
        )
    else:
        raise AssertionError("the host started without a platform it could not make")
    finally:
        await host.stop()


def test_a_deliver_to_check_leaves_a_platform_that_cannot_be_made_to_its_start(home, tmp_path):
    from bothost.config import ConfigError, check_registered, load

    def make():
        raise ImportError("No module named 'discord'")

    path = tmp_path / "c.yaml"
    path.write_text("tick: {deliver_to: ['discord:ops', 'pager:..']}\n")
    config = load(path, home)
    pager = Deferred("pager", lambda: type("P", (), {"name": "pager"})())
    platforms = {"discord": Deferred("discord", make), "pager": pager}
    check_registered(config, ["offline"], platforms)  # the host's start names discord
    checked = type("P", (), {"name": "pager", "target_problem": lambda self, c: "no dots"})()
    try:
        check_registered(config, ["offline"], {**platforms, "pager": checked})
    except ConfigError as exc:
        assert "tick.deliver_to[1]: 'pager:..': no dots" in str(exc)
    else:
        raise AssertionError("a target its platform refuses was accepted")


def test_a_deferred_platform_given_its_target_check_answers_it_unmade(home, tmp_path):
    # the web platform's check of `web:<session>` made the platform at every config load,
    # default config included, so `bothost chat -m help` imported the web platform's modules
    from bothost.config import ConfigError, check_registered, load

    made = []
    pager = Deferred(
        "pager",
        lambda: made.append(1) or Pager(),
        target_problem=lambda channel: "no dots" if channel == ".." else None,
    )
    path = tmp_path / "c.yaml"
    path.write_text("tick: {deliver_to: ['pager:ops']}\n")
    check_registered(load(path, home), ["offline"], {"pager": pager})
    path.write_text("tick: {deliver_to: ['pager:..']}\n")
    try:
        check_registered(load(path, home), ["offline"], {"pager": pager})
    except ConfigError as exc:
        assert "tick.deliver_to[0]: 'pager:..': no dots" in str(exc)
    else:
        raise AssertionError("a target its platform refuses was accepted")
    assert not pager.made and made == []
