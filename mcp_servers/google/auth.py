"""Where each server's OAuth token lives, how it is read and written, and the `auth` command.

Tokens are Google's "authorized user" JSON (what `Credentials.to_json()` writes), one file
per server so each keeps only the scopes it needs. Files are written atomically with mode
0600 inside a 0700 directory, because a refresh token is a long-lived secret.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import AuthRequiredError

if TYPE_CHECKING:
    from google.oauth2.credentials import Credentials

# The narrowest scopes that cover every tool of each server. gmail.modify is the smallest
# single scope that reads, labels, drafts and sends (it cannot delete permanently);
# calendar.events covers event CRUD and RSVPs, and listing calendars needs its own
# read-only scope.
SCOPES: dict[str, list[str]] = {
    "gmail": ["https://www.googleapis.com/auth/gmail.modify"],
    "gcal": [
        "https://www.googleapis.com/auth/calendar.events",
        "https://www.googleapis.com/auth/calendar.calendarlist.readonly",
    ],
}

# Shown once the browser comes back to the loopback redirect.
SUCCESS_MESSAGE = "bothost is authorized. You can close this tab."
PROMPT = "Open this URL in a browser to authorize bothost ({server}):\n\n{{url}}\n"


def bothost_home() -> Path:
    return Path(os.environ.get("BOTHOST_HOME") or Path.home() / ".bothost").expanduser()


def token_path(server: str) -> Path:
    """`GOOGLE_TOKEN_FILE`, else `$BOTHOST_HOME/secrets/google-<server>.json`."""
    explicit = os.environ.get("GOOGLE_TOKEN_FILE")
    if explicit:
        return Path(explicit).expanduser()
    return bothost_home() / "secrets" / f"google-{server}.json"


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` atomically, readable by the owner only."""
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    for directory in reversed(missing):  # BOTHOST_HOME and secrets/ are private (0700)
        directory.mkdir(mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_credentials(credentials: Credentials, path: Path) -> None:
    write_private(path, credentials.to_json())


def load_credentials(server: str, path: Path) -> Credentials:
    """Read the token file, or raise `AuthRequiredError` saying how to create it."""
    if not path.exists():
        raise AuthRequiredError(server, f"No Google token at {path}")
    # Imported here, not at the top: google-auth costs ~0.25 s of CPU, which every start-up
    # of the server paid before its first tool call needed a token (issue 19).
    from google.oauth2.credentials import Credentials

    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        credentials = Credentials.from_authorized_user_info(info)
    except (OSError, ValueError) as error:
        raise AuthRequiredError(
            server, f"The Google token at {path} is unusable ({error})"
        ) from None
    # google-auth ignores a token file's token_uri (a tampered file must not send the
    # refresh token elsewhere); a replacement endpoint is configuration, not file content.
    override = os.environ.get("GOOGLE_TOKEN_URI")
    if not override:
        return credentials
    # Built anew rather than with_token_uri(), whose copy drops the access token's expiry.
    return Credentials(
        token=credentials.token,
        refresh_token=credentials.refresh_token,
        token_uri=override,
        client_id=credentials.client_id,
        client_secret=credentials.client_secret,
        scopes=credentials.scopes,
        expiry=credentials.expiry,
    )


def _parse_auth_args(server: str, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"bothost-mcp-{server} auth",
        description=f"Authorize the {server} server to use your Google account.",
    )
    parser.add_argument(
        "--client-secrets",
        default=os.environ.get("GOOGLE_CLIENT_SECRETS"),
        help="OAuth client file (Desktop app) from Google Cloud; default $GOOGLE_CLIENT_SECRETS",
    )
    parser.add_argument("--token-file", default=None, help="where to store the token")
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="loopback port for the redirect (fix it to forward it with ssh -L); 0 = any",
    )
    parser.add_argument("--host", default="localhost", help="loopback host for the redirect")
    return parser.parse_args(argv)


def run_auth(server: str, argv: list[str]) -> int:
    """`bothost-mcp-<server> auth`: the installed-app flow, printing the URL to open."""
    from google_auth_oauthlib.flow import InstalledAppFlow

    args = _parse_auth_args(server, argv)
    # The flow prints the URL and then blocks on the redirect: flush it at once even when
    # stdout is a pipe (an ssh session, a test).
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    if not args.client_secrets:
        print(
            "error: no OAuth client file; pass --client-secrets FILE or set GOOGLE_CLIENT_SECRETS",
            file=sys.stderr,
        )
        return 2
    path = Path(args.token_file).expanduser() if args.token_file else token_path(server)
    scopes = _scopes_for(server, path)
    flow = InstalledAppFlow.from_client_secrets_file(args.client_secrets, scopes=scopes)
    credentials = flow.run_local_server(
        host=args.host,
        port=args.port,
        open_browser=False,
        authorization_prompt_message=PROMPT.format(server=server),
        success_message=SUCCESS_MESSAGE,
        prompt="consent",  # Google returns a refresh token only on (re)consent
    )
    save_credentials(credentials, path)
    print(f"Token saved to {path}", flush=True)
    return 0


def _scopes_for(server: str, path: Path) -> list[str]:
    """This server's scopes plus those the token file already grants.

    One GOOGLE_TOKEN_FILE may serve both servers: authorizing gcal after gmail must not
    take gmail's access away, so the new token asks for the union.
    """
    granted: list[str] = []
    try:
        granted = list(json.loads(path.read_text(encoding="utf-8")).get("scopes") or [])
    except (OSError, ValueError, AttributeError):
        pass
    return sorted(set(granted) | set(SCOPES[server]))
