"""The aiohttp keys of bothost's web application, made when this module is imported.

Kept apart from :mod:`bothost.api` so that importing the API does not import aiohttp
(issue 19); :func:`bothost.api.app_key` imports this module on first use. They are made
here, at module level, because aiohttp's ``AppKey`` names itself after the module whose
top-level code is on the stack and fails where there is none (a worker thread).
"""

from aiohttp import web

HOST: web.AppKey = web.AppKey("host")
DIRECT_ROUTES: web.AppKey = web.AppKey("direct routes")
ANSWER_HEADERS: web.AppKey = web.AppKey("answer headers")
