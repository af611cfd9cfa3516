"""What each ssh tool may do, in bothost's terms: the security contract with the host.

Every tool declares one of these sets (`_meta["bothost/capabilities"]`) plus the MCP
annotations; the host derives approval and the lethal-trifecta interlock from them. Why
each set is what it is, is said beside it and in docs/servers/ssh.md ("Security model").
"""

# Reading a host returns the user's data that third parties (logs, files, process names) shape.
READS_HOST = {"private": True, "untrusted": True, "egress": "none", "destructive": False}
# Changing a host: data goes only to a host of the alias file, and the change may not undo.
CHANGES_HOST = {"private": False, "untrusted": False, "egress": "fixed", "destructive": True}
# exec and systemd both change hosts and return what the host printed.
RUNS_ON_HOST = {"private": True, "untrusted": True, "egress": "fixed", "destructive": True}
# upload sends local files out to a host the model picked: the exfiltration shape.
SENDS_LOCAL_FILES = {"private": False, "untrusted": False, "egress": "chosen", "destructive": True}
# download writes (and may overwrite) local files; only names and counts reach the model.
FETCHES_TO_LOCAL = {"private": True, "untrusted": True, "egress": "none", "destructive": True}
READS_CONFIG = {"private": True, "untrusted": False, "egress": "none", "destructive": False}
WRITES_CONFIG = {"private": False, "untrusted": False, "egress": "none", "destructive": False}
DELETES_CONFIG = {"private": False, "untrusted": False, "egress": "none", "destructive": True}

READ_ONLY = {"readOnlyHint": True, "openWorldHint": True}
CHANGES = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}
