"""What the program writes for people, below everything that writes: the rotating log files
(``file``), rate-limited warnings (``rate``), the terminal (``terminal``) and a failed
connection's cause in plain words (``connection``). The running host's log set-up is
:mod:`bothost.host.logs`.
"""
