"""Secrets out of everything bothost writes or shows: one redaction of text, one masking.

Two halves, one module, so every log handler and every place that shows a server agree:

- :func:`redact` rewrites free text (a log line, an error message): every *known* secret
  value becomes ``***``, and so does anything *secret-shaped* — well-known token prefixes,
  ``Bearer``/``Basic`` credentials, a URL's password, the value after a secret-named flag,
  key or query parameter. :class:`SecretFilter` applies it to every record a handler gets.
- :func:`mask_args`, :func:`mask_url`, :func:`command_line` and :func:`mask_config` mask
  structured values for display: ``mcp list``, the status file, the dashboard, ``config
  show``, log lines about a server's start.

Known values are remembered process-wide, as logging itself is: a filter attached before the
config was read still redacts what is learnt later (the config's secrets, ``${env:…}``
values, the env and headers of a server added at run time). Values a third party chose — a
remote server's OAuth tokens and registered client secret — are remembered for one *scope*
(:func:`remember_scoped`, the server's name): the logs hide them as any other, but what the
model is sent hides them only in that server's own output (:func:`conceal` with its scope),
so a token such as ``billing@evil.example`` cannot blank that text in every other result.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import shlex
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET_LENGTH = 6  # shorter values would redact ordinary words all over the logs
# Mappings whose every value may be a credential (a server's env, an HTTP server's headers).
MASKED_MAPPINGS = frozenset({"env", "headers"})
# Variables a config may reference that are paths or settings, not secrets: redacting
# their values would blank every path in the logs.
PLAIN_VARIABLES = frozenset(
    {
        "HOME",
        "PATH",
        "PWD",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LC_ALL",
        "TZ",
        "TMPDIR",
        "BOTHOST_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    }
)
# A server's ``env`` entries that cannot hold a credential, so they are neither masked nor
# redacted ("production" would otherwise vanish from every log line and ``mcp list``):
# - a plain number or boolean under any name but a secret one (``TIMEOUT_MS: 30000``): a
#   numeric credential comes under a secret name (``*_PIN``, ``*_TOKEN``, ``PASSCODE``);
# - a word-like value under one of these well-known setting names, whose values are modes,
#   levels, zones and ports. Word-like: no letters and digits mixed in one run and no
#   credential shape, so a token pasted under ``NODE_ENV`` is still a secret.
# Any other value is masked: an unknown name may hold a credential (``APP_CONFIG: …``).
SETTING_NAMES = frozenset(
    {
        "NODE_ENV",
        "ENV",
        "ENVIRONMENT",
        "APP_ENV",
        "RAILS_ENV",
        "RACK_ENV",
        "FLASK_ENV",
        "PYTHON_ENV",
        "LOG_LEVEL",
        "LOGLEVEL",
        "LOG_FORMAT",
        "DEBUG",
        "VERBOSE",
        "NO_COLOR",
        "FORCE_COLOR",
        "TERM",
        "TZ",
        "LANG",
        "LANGUAGE",
        "LC_ALL",
        "PORT",
        "HOST",
        "PYTHONUNBUFFERED",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "NODE_NO_WARNINGS",
        "MCP_TRANSPORT",
    }
)
PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?|true|false|yes|no|on|off", re.IGNORECASE)
SETTING_WORD = re.compile(r"[A-Za-z0-9_.:/*,+ -]{1,64}")
MIXED_RUN = re.compile(r"[A-Za-z]+[0-9]|[0-9]+[A-Za-z]")
ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")

# A name (config key, flag, query parameter, KEY=value) is secret when one of its words is
# one of these, or ends with one of the suffixes ("apikey", "accesstoken", "dbpassword").
SECRET_WORDS = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "pass",
        "apikey",
        "key",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "signature",
        "sig",
        "bearer",
        "pin",  # numeric credentials: a PIN, a one-time code
        "otp",
        "passcode",
    }
)
SECRET_SUFFIXES = (
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
)
SHORT_SECRET_FLAGS = frozenset({"-p"})  # mysql-style `-p PASSWORD`
# whole names that hold a credential though none of their words says so; exact, so that
# `assertion_file` (a path) stays readable. `assertion`: an OAuth jwt-bearer grant's JWT
SECRET_NAMES = frozenset({"assertion"})

# Secret-shaped text. Every pattern starts at a fixed word or prefix and scans forward only,
# so a hostile line (a megabyte of letters, dashes or "token"s) is redacted in linear time.
_NAME = (
    r"(?:token|secret|password|passwd|passphrase|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credentials?|signature)(?![A-Za-z])"
)
FLAG_PREFIX = re.compile(r"--[A-Za-z0-9_.-]{0,40}$")  # the flag a matched name ends
NAME_HINTS = ("token", "secret", "passw", "passphrase", "key", "credential", "signature")
# (hints, pattern, replacement): a pattern runs only on text that holds one of its hints
# (lower-cased), which a plain log line seldom does — redaction runs on every log record.
SHAPES: list[tuple[tuple[str, ...], re.Pattern[str], Any]] = [
    # well-known credential formats (OpenAI, Anthropic, Slack, GitHub, GitLab, Standard
    # Webhooks, AWS, Google, JWTs)
    (
        (
            "sk-",
            "xox",
            "xapp-",
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
            "glpat-",
            "whsec_",
            "akia",
            "aiza",
            "eyj",
        ),
        re.compile(
            r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,}|"
            r"xapp-[A-Za-z0-9-]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|"
            r"glpat-[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=_-]{8,}|AKIA[0-9A-Z]{16}|"
            r"AIza[0-9A-Za-z_-]{30,}|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,})"
        ),
        MASK,
    ),
    # Authorization schemes; "Basic" and "Token" are ordinary words too, so after them only
    # a credential-looking value (12+ characters with a digit or base64 padding) goes
    (
        ("bearer",),
        re.compile(r"\b([Bb]earer|BEARER)(\s{1,8})[A-Za-z0-9._~+/=-]{6,}"),
        rf"\1\2{MASK}",
    ),
    (
        ("basic", "token"),
        re.compile(
            r"\b(Basic|Token)(\s{1,8})(?=[A-Za-z._~-]{0,64}[0-9+/=])[A-Za-z0-9._~+/=-]{12,}"
        ),
        rf"\1\2{MASK}",
    ),
    # a URL's password: scheme://user:PASSWORD@host
    (("://",), re.compile(r"(://[^/\s:@]{0,256}:)[^@\s/]{1,256}@"), rf"\1{MASK}@"),
    # name=value, name: value, "name": "value", ?name=value&…
    (
        NAME_HINTS,
        re.compile(rf"({_NAME}[\"']?\s{{0,8}}[=:]\s{{0,8}}[\"']?)[^\s\"'&,;)]+", re.IGNORECASE),
        rf"\1{MASK}",
    ),
]
# --name value (a flag and its value in a logged command line)
FLAG_VALUE = re.compile(rf"{_NAME}(\s{{1,8}})(?!-)[^\s\"']+", re.IGNORECASE)


def _flag_value(match: re.Match[str]) -> str:
    """``--token VALUE`` → ``--token ***``; ``the token expired`` stays as it is."""
    before = match.string[max(0, match.start() - 41) : match.start()]
    if not FLAG_PREFIX.search(before):
        return match.group(0)
    return match.group(0)[: match.end(1) - match.start()] + MASK


def plain_value(value: str) -> bool:
    """Whether a remembered value is a setting rather than a credential: an existing path
    or a URL with no password and no query (a server's ``env`` holds both kinds)."""
    if value.startswith(("http://", "https://")):
        parts = urlsplit(value)
        return not parts.password and not parts.query
    if value.startswith(("/", "~/")):
        return os.path.exists(os.path.dirname(os.path.expanduser(value)))
    return False


def setting_entry(name: str, value: str) -> bool:
    """Whether a server's env entry ``name=value`` is a setting that cannot be a credential
    (see :data:`SETTING_NAMES`): shown and logged as it is, never masked."""
    if secret_name(name):
        return False
    if PLAIN_NUMBER.fullmatch(value):
        return True
    return (
        name.upper() in SETTING_NAMES
        and SETTING_WORD.fullmatch(value) is not None
        and not MIXED_RUN.search(value)
        and redact(value) == value
    )


class _Known:
    """The secret values learnt so far, longest first (so a value inside another goes too).

    Logs hide every one. What the model is sent hides only :attr:`credentials`: not the
    values seen only as *settings* — a server ``env`` value under a plain name (``DATA_DIR``,
    ``BIG_CHARS``) or a ``${env:NAME}`` of a plain name — nor paths and plain URLs.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()  # host-wide: the host's own credentials
        self._scoped: dict[str, set[str]] = {}  # scope -> values a third party chose
        self.by_scope: dict[str, tuple[str, ...]] = {}  # replaced whole, like ordered
        self._settings: set[str] = set()
        self._marked: set[str] = set()  # seen under a secret name somewhere: a credential
        self.ordered: tuple[str, ...] = ()  # replaced whole, so readers never see it change
        self.credentials: tuple[str, ...] = ()  # like ordered, for conceal()

    def add(self, values: Iterable[str]) -> None:
        fresh = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
        with self._lock:
            if fresh <= self._values:
                return
            self._values |= fresh
            self._sort()

    def add_scoped(self, scope: str, values: Iterable[str]) -> None:
        fresh = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
        with self._lock:
            if fresh <= self._scoped.get(scope, set()):
                return
            self._scoped[scope] = self._scoped.get(scope, set()) | fresh
            self.by_scope = {**self.by_scope, scope: tuple(self._scoped[scope])}
            self._sort()

    def _sort(self) -> None:
        every = self._values.union(*self._scoped.values())
        self.ordered = tuple(sorted(every, key=len, reverse=True))
        self._sort_credentials()

    def classify(self, settings: Iterable[str], credentials: Iterable[str]) -> None:
        """Record which values were seen as settings and which under a secret name."""
        with self._lock:
            self._settings.update(settings)
            self._marked.update(credentials)
            self._sort_credentials()

    def _sort_credentials(self) -> None:
        plain = self._settings - self._marked
        self.credentials = tuple(
            v for v in self.ordered if v in self._values and v not in plain and not plain_value(v)
        )


KNOWN = _Known()


def remember(values: Iterable[str]) -> None:
    """Treat these values as secrets from now on, in every log and every display."""
    KNOWN.add(values)


def remember_scoped(scope: str, values: Iterable[str]) -> None:
    """Treat these values, which a third party chose, as secrets in every log and in the
    output of ``scope`` alone (see module docstring)."""
    KNOWN.add_scoped(scope, values)


def mask_values(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each of ``secrets`` as ``***``.

    Found all before any is replaced, so no order can leave part of one: where occurrences
    overlap (two values sharing a run of text, a value overlapping itself as ``abcabc`` in
    ``abcabcabc``, a short value inside a longer one), their whole run is one ``***``.
    """
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        start = text.find(secret)
        while start != -1:
            end = start + len(secret)
            after = text.find(secret, start + 1)
            if after != -1 and after < end:  # overlapping itself: a run of its period
                period = after - start
                last = start + (periodic_end(text, start, period) - end) // period * period
                end, after = last + len(secret), text.find(secret, last + 1)
            spans.append((start, end))
            start = after
    if not spans:
        return text
    spans.sort()
    pieces: list[str] = []
    done = 0  # text before this is written
    run_start, run_end = spans[0]
    for start, end in spans[1:]:
        if start < run_end:  # overlapping: the same run
            run_end = max(run_end, end)
            continue
        pieces += (text[done:run_start], MASK)
        done, run_start, run_end = run_end, start, end
    pieces += (text[done:run_start], MASK, text[run_end:])
    return "".join(pieces)


def periodic_end(text: str, start: int, period: int) -> int:
    """The end of the run of ``text`` from ``start`` that repeats with ``period``: compared a
    doubling slice at a time, so a megabyte of one repeated secret is not a million finds."""
    end, step = start + period, period
    while end < len(text):
        size = min(step, len(text) - end)
        if text[end : end + size] == text[end - period : end - period + size]:
            end, step = end + size, step * 2
        elif size == 1:
            break
        else:
            step = size // 2
    return end


def redact(text: str, extra: Sequence[str] = ()) -> str:
    """``text`` with known secrets (and ``extra`` ones) and secret-shaped parts as ``***``."""
    text = mask_values(text, (*extra, *KNOWN.ordered))
    lowered = text.lower()
    for hints, pattern, replacement in SHAPES:
        if any(hint in lowered for hint in hints):
            text = pattern.sub(replacement, text)
    if "--" in text and any(hint in lowered for hint in NAME_HINTS):
        text = FLAG_VALUE.sub(_flag_value, text)
    return text


def conceal(text: str, scope: str = "") -> str:
    """``text`` with the known credentials as ``***``: for what the model is sent and what a
    conversation stores (a tool result that echoes a server's env, a file holding the
    config's API key). Unlike :func:`redact` it leaves secret-*shaped* text alone (a tool
    reading a config file must see it as it is) and the paths and plain URLs a server's
    ``env`` holds. ``scope`` (an MCP server's name, for its output) adds the values
    remembered for it alone."""
    return mask_values(text, (*KNOWN.credentials, *KNOWN.by_scope.get(scope, ())))


class SecretFilter(logging.Filter):
    """Redacts every record a handler gets: its message, exception and stack text.

    ``secrets`` are redacted by this filter only, on top of the process-wide known values.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.extra = tuple(
            sorted((s for s in secrets if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True)
        )

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: let the handler report it as usual
            return True
        redacted = redact(message, self.extra)
        if redacted != message:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.extra)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.extra)
        return True


def protect(handler: logging.Handler) -> logging.Handler:
    """Attach the one redaction filter to ``handler`` (once)."""
    if not any(isinstance(f, SecretFilter) for f in handler.filters):
        handler.addFilter(SecretFilter())
    return handler


# -- names and structured values ----------------------------------------------------------


def secret_name(name: str) -> bool:
    """Whether a key, flag or parameter called ``name`` holds a credential."""
    if name in SHORT_SECRET_FLAGS or name.lower() in SECRET_NAMES:
        return True
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return any(w in SECRET_WORDS or w.endswith(SECRET_SUFFIXES) for w in words)


def mask_args(args: Sequence[str]) -> list[str]:
    """A command's arguments with the value of every secret flag or ``KEY=`` masked."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(MASK)
            hide_next = False
        elif (
            arg.startswith("-")
            and secret_name(arg.partition("=")[0].lstrip("-"))
            or arg in SHORT_SECRET_FLAGS
        ):
            flag, eq, _ = arg.partition("=")
            out.append(f"{flag}={MASK}" if eq else arg)
            hide_next = not eq
        elif (
            "=" in arg
            and not arg.startswith("-")
            and secret_name(arg.partition("=")[0])
            and "://" not in arg.partition("=")[0]
        ):
            out.append(f"{arg.partition('=')[0]}={MASK}")
        elif "://" in arg:
            out.append(mask_url(arg))
        else:
            out.append(redact(arg))
    return out


def secret_args(args: Sequence[str]) -> set[str]:
    """The argument values :func:`mask_args` hides (to redact them wherever they appear)."""
    found: set[str] = set()
    for shown, real in zip(mask_args(args), args, strict=True):
        if shown == real:
            continue
        if "://" in real:
            found |= url_secrets(real)
        else:
            found.add(real.partition("=")[2] if shown.endswith("=" + MASK) else real)
    return found - {""}


def mask_url(url: str) -> str:
    """``url`` without its password and with secret-named query parameters masked."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return redact(url)
    netloc = parts.netloc
    if password:
        userinfo, _, host = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}:{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(secret_name(k) for k, _ in pairs):
            query = urlencode([(k, MASK if secret_name(k) else v) for k, v in pairs], safe="*")
    return redact(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


def url_secrets(url: str) -> set[str]:
    """The password and secret query values in ``url``."""
    if "://" not in url:
        return set()
    try:
        parts = urlsplit(url)
        found = {parts.password or ""}
        found |= {v for k, v in parse_qsl(parts.query) if secret_name(k)}
    except ValueError:
        return set()
    return found - {""}


_PLACEHOLDER = "bothostmasked7c1e"  # shell-safe stand-in for "***" while quoting


def command_line(command: str, args: Sequence[str]) -> str:
    """A server's command line as shown to people: quoted, secrets masked."""

    def quoted(arg: str) -> str:  # "***" is shown bare, not quoted as a glob would be
        return shlex.quote(arg.replace(MASK, _PLACEHOLDER)).replace(_PLACEHOLDER, MASK)

    return " ".join(quoted(a) for a in [command, *mask_args(args)])


def mask_config(data: Any, key: str = "") -> Any:
    """A copy of raw config data with every credential masked (``config show``)."""
    if isinstance(data, dict):
        if key == "env":
            return {k: v if setting_entry(str(k), str(v)) else MASK for k, v in data.items()}
        if key in MASKED_MAPPINGS:
            return {k: MASK for k in data}
        return {k: mask_config(v, str(k)) for k, v in data.items()}
    if isinstance(data, list):
        if key == "args" and all(isinstance(a, str) for a in data):
            return mask_args(data)
        return [mask_config(v, key) for v in data]
    # a number under a secret name is the credential it spells (`api_key: 123456789012`
    # is read as the string "123456789012"); true/false and null are no secret
    if secret_name(key) and isinstance(data, int | float) and not isinstance(data, bool):
        return MASK
    if not isinstance(data, str) or data == "":
        return data
    if secret_name(key):
        return MASK
    return mask_url(data) if "://" in data else redact(data)


# -- what a config holds --------------------------------------------------------------------


def config_secrets(config: Any, environ: Mapping[str, str] | None = None) -> set[str]:
    """Every secret value a loaded config holds, resolved: what logs must never show."""
    environ = os.environ if environ is None else environ
    found: set[str] = set()

    settings: set[str] = set()
    marked: set[str] = set()

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if key == "env" and isinstance(v, str) and setting_entry(str(k), v):
                    pass
                elif key in MASKED_MAPPINGS and isinstance(v, str):
                    found.add(v)
                    if key == "env" and not secret_name(str(k)):
                        settings.add(v)
                walk(v, str(k))
        elif isinstance(value, list):
            if key == "args" and all(isinstance(a, str) for a in value):
                found.update(secret_args(value))
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            if secret_name(key):
                found.add(value)
                marked.add(value)
            found.update(url_secrets(value))

    is_model = dataclasses.is_dataclass(config) and not isinstance(config, type)
    walk(dataclasses.asdict(config) if is_model else config)
    for name in ENV_REF.findall(repr(getattr(config, "raw", {}))):
        if name in PLAIN_VARIABLES or name not in environ:
            continue
        if not setting_entry(name, environ[name]):
            found.add(environ[name])
            (marked if secret_name(name) else settings).add(environ[name])
    KNOWN.classify(settings, marked)
    return {s for s in found if s and "${env:" not in s}


def server_secrets(server: Any, environ: Mapping[str, str] | None = None) -> set[str]:
    """The secrets of one MCP server's config (env, headers, args, URL), ``${env:…}`` resolved."""
    environ = os.environ if environ is None else environ

    def resolved(value: str) -> str:
        return ENV_REF.sub(lambda m: environ.get(m.group(1), ""), value)

    env = {
        str(k): resolved(str(v))
        for k, v in server.env.items()
        if not setting_entry(str(k), resolved(str(v)))
    }
    found = {*env.values(), *(resolved(str(v)) for v in server.headers.values())}
    settings = {v for k, v in env.items() if not secret_name(k)}
    found |= secret_args([resolved(a) for a in server.args])
    found |= url_secrets(resolved(server.url or ""))
    marked = set(found - settings)
    for value in (*server.env.values(), *server.headers.values(), *server.args, server.url or ""):
        for n in ENV_REF.findall(str(value)):
            if n in environ and n not in PLAIN_VARIABLES and not setting_entry(n, environ[n]):
                found.add(environ[n])
                (marked if secret_name(n) else settings).add(environ[n])
    KNOWN.classify(settings, marked)
    return found - {""}
