"""The web plugin: the ``web`` and ``webhook`` platforms and their HTTP routes.

Web chat and dashboard at ``/``, the chat API, signed webhooks in and out, ``/metrics``,
``/media/{file}`` and ``/openapi.json``. The work lives in the modules beside this one.
"""

from collections.abc import Callable
from typing import Any

from bothost.plugins.web import briefings, doctor, messages, questions, sessions
from bothost.plugins.web.config import WebConfig, WebhookConfig, webhook_target_problem

from bothost.hookspecs import hookimpl
from bothost.platform import Deferred


@hookimpl
def register_config(register: Callable[[str, type], None]) -> None:
    register("platforms.web", WebConfig)
    register("platforms.webhook", WebhookConfig)


def web_platform() -> Any:
    from bothost.plugins.web.platform import WebPlatform

    return WebPlatform()


def webhook_platform() -> Any:
    from bothost.plugins.web.outbound import WebhookPlatform

    return WebhookPlatform()


@hookimpl
def register_platforms(register: Callable[[Any], None]) -> None:
    # made when used (see bothost.platform.Deferred): `bothost chat` uses neither
    register(Deferred("web", web_platform, target_problem=sessions.target_problem))
    register(Deferred("webhook", webhook_platform, target_problem=webhook_target_problem))


@hookimpl
def register_routes(app: Any) -> None:
    from bothost.plugins.web import routes  # aiohttp.web: only when the host listens

    routes.setup(app)


@hookimpl
def register_migrations(register: Callable[..., None]) -> None:
    register("web", 1, briefings.migrate_1, "web_briefings")
    register("web", 2, messages.migrate_2, "web_messages")
    register("web", 3, questions.migrate_3, "web_questions")


@hookimpl
def doctor_checks(config: Any, report: Callable[..., None]) -> None:
    doctor.doctor_checks(config, report)
