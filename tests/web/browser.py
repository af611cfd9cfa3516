"""Headless Chromium driven through selenium, and the page as a person uses it: shared by
the page tests (tests/web/test_page.py) and the screenshot script (docs/screenshots/take.py).

Selenium calls block, so they run in a worker thread while the host serves on the caller's
event loop.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

WAIT = 10  # seconds for anything the page should show
CHROME_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


@contextmanager
def chromium(binary: str, chromedriver: str, *flags: str) -> Iterator[Any]:
    """A headless Chromium (``binary``, driven by ``chromedriver``) with a throwaway profile."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*CHROME_FLAGS, *flags):
        options.add_argument(flag)
    with tempfile.TemporaryDirectory() as profile:
        options.add_argument(f"--user-data-dir={profile}")
        browser = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
        try:
            yield browser
        finally:
            browser.quit()


class Page:
    """The page as a person uses it; every call runs off the event loop."""

    def __init__(self, driver, url):
        self.driver, self.url = driver, url

    async def run(self, fn, *args):
        return await asyncio.to_thread(fn, *args)

    def _wait(self, condition, what=""):
        """``condition`` until it holds; an element it looked at being replaced meanwhile (the
        rules panel is rendered afresh at every poll) is another try, not a failure."""
        from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        try:
            return WebDriverWait(
                self.driver, WAIT, ignored_exceptions=[StaleElementReferenceException]
            ).until(condition)
        except TimeoutException:
            chat = self.driver.find_element("id", "log").text
            raise AssertionError(f"page never showed {what!r}; the chat reads:\n{chat}") from None

    def _open(self, session):
        self.driver.get(f"{self.url}/?session={session}")
        self._wait(lambda d: d.find_element("id", "conn").text == "live")

    async def open(self, session):
        await self.run(self._open, session)

    def _say(self, text):
        box = self.driver.find_element("id", "chat-input")
        box.clear()
        box.send_keys(text)
        self.driver.find_element("id", "send").click()

    async def say(self, text):
        await self.run(self._say, text)

    @staticmethod
    def _find(css, text):
        def find(d):
            return next((e for e in d.find_elements("css selector", css) if text in e.text), False)

        return find

    async def wait_for(self, css, text=""):
        """The first element matching ``css`` whose text contains ``text``."""
        return await self.run(self._wait, self._find(css, text), f"{css} containing {text!r}")

    async def click(self, css):
        """Click the first element matching ``css``: found and clicked in one try, so an
        element replaced in between is looked for again, not clicked stale."""

        def clicked(d):
            d.find_element("css selector", css).click()  # not there yet: tried again
            return True

        await self.run(self._wait, clicked, f"{css} to click")
