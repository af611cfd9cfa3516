"""The store's one error type, apart from the modules that raise it to avoid import cycles."""


class StoreError(Exception):
    """The database could not be opened or migrated; the message names the file and why."""
