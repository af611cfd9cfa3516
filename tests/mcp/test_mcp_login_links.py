"""One-time login links (bothost/mcp/oauth/links.py): taken once, expiring, bound to a spell."""

from __future__ import annotations

import pytest

from bothost.mcp.oauth import links
from bothost.mcp.oauth.tokens import save_record
from bothost.store import Store, core_migrations
from tests.conftest import both_backends

pytestmark = both_backends

NOW = 1_800_000_000.0


@pytest.fixture
def db(store_target):
    """The module's functions, run on the store's thread: ``db.issue(…)``."""
    store = Store(store_target, core_migrations())
    yield OnStore(store)
    store.close()


class OnStore:
    def __init__(self, store):
        self.store = store

    def __getattr__(self, name):
        fn = getattr(links, name, None) or {"save_record": save_record}[name]
        return lambda *args: self.store.call(lambda conn: fn(conn, *args))


def test_a_link_is_taken_once(db):
    token = db.issue("notes", "slack:UADMIN", NOW)
    assert token
    assert db.take("notes", token, NOW + 1) is None
    refused = db.take("notes", token, NOW + 2)
    assert refused is not None and refused.status == 410 and "used" in refused.message


def test_an_expired_forged_or_misdirected_link_is_refused(db):
    token = db.issue("notes", "slack:UADMIN", NOW)
    assert token
    expired = db.take("notes", token, NOW + links.LINK_LIFETIME + 1)
    assert expired is not None and expired.status == 410 and "expired" in expired.message
    forged = db.take("notes", token[:-2] + "xx", NOW)
    assert forged is not None and forged.status == 403
    other = db.take("billing", token, NOW)  # a link names its server
    assert other is not None and other.status == 403
    assert db.take("notes", token, NOW + 1) is None  # none of that used it up


def test_a_released_link_works_again(db):
    token = db.issue("notes", "slack:UADMIN", NOW)
    assert db.take("notes", token, NOW) is None
    db.release(token)
    assert db.take("notes", token, NOW) is None


def test_one_link_per_admin_per_spell_and_a_login_ends_the_spell(db):
    token = db.issue("notes", "slack:UADMIN", NOW)
    assert db.issue("notes", "slack:UADMIN", NOW + 5) is None  # told already
    assert db.issue("notes", "slack:UOTHER", NOW + 5)  # another admin is told too
    db.save_record("notes", {"access_token": "at-1", "updated_at": NOW + 10})
    refused = db.take("notes", token, NOW + 11)
    assert refused is not None and refused.status == 409  # logged in: the link is spent
    # the login ends later (a dead refresh token): a new spell, a new link
    db.save_record("notes", {"access_token": None, "login_needed": "x", "updated_at": NOW + 10})
    fresh = db.issue("notes", "slack:UADMIN", NOW + 20)
    assert fresh and db.take("notes", fresh, NOW + 21) is None
    assert db.take("notes", token, NOW + 21) is not None  # the old spell's link stays dead


def test_an_expired_link_lets_the_admin_be_told_again(db):
    assert db.issue("notes", "slack:UADMIN", NOW)
    assert db.issue("notes", "slack:UADMIN", NOW + links.LINK_LIFETIME + 1)
