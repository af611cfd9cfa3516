"""What the program writes for people, below everything that writes: the rotating log files
(``file``), rate-limited warnings (``rate``) and the terminal (``terminal``). The running
host's log set-up is :mod:`bothost.host.logs`.
"""
