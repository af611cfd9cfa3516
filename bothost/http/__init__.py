"""The host's one HTTP listener: the aiohttp application (``server``), its defence against
slow clients (``listener``), the direct routes (``direct``) and the application keys
(``appkeys``).
"""
