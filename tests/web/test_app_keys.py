"""bothost.api's aiohttp keys, made on first use from wherever that use happens."""

import threading
from typing import Any

import bothost.api


def test_a_key_made_first_where_no_module_code_runs_is_still_made() -> None:
    # aiohttp's AppKey names itself after the module whose top-level code is on the stack;
    # a worker thread's stack has none. Found as 29 errors in tests/web/test_fuzz.py under
    # `pytest -n 4` (helper "outside"): register_routes failed with UnboundLocalError.
    made: dict[str, Any] = {}

    def make() -> None:
        try:
            made["routes"] = bothost.api.app_key("DIRECT_ROUTES")
            made["host"] = bothost.api.app_key("HOST")
        except Exception as exc:  # the thread's failure is the test's to report
            made["error"] = exc

    worker = threading.Thread(target=make)
    worker.start()
    worker.join()
    assert "error" not in made, made.get("error")
    assert made["routes"] is bothost.api.DIRECT_ROUTES
    assert made["host"] is bothost.api.HOST


def test_each_key_is_one_object_under_its_own_name() -> None:
    assert bothost.api.app_key("HOST") is bothost.api.app_key("HOST")
    assert bothost.api.HOST is not bothost.api.DIRECT_ROUTES
    assert "host" in repr(bothost.api.HOST)
