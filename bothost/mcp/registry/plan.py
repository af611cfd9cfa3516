"""What installing a registry entry means on this machine: which package, and its arguments,
environment and headers.

The first of these that this machine can use wins: a PyPI package (Python is always here),
an npm package (when ``npm`` is on PATH), a Streamable HTTP remote (nothing to install). An
OCI image is refused in one line naming it (and the entry's other ways, when it has any):
bothost does not run containers for a registry entry, since an image is a whole system and
the isolated install gives it no folder of its own to keep it in. Packages are run over
stdio: one whose transport is HTTP is skipped, as is an SSE remote (bothost speaks stdio and
Streamable HTTP). Secret variables and headers are written as ``${env:NAME}``
references, never as values, so a secret stays in the environment bothost runs in; a
required variable that is not secret is asked for at a terminal, or else referenced too.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from bothost.config.check import url_problem
from bothost.mcp.install import InstallError, PackageSpecError, default_name, parse_package
from bothost.mcp.registry.entries import VARIABLE, Argument, Entry, Header, Package, Remote

# An OCI reference (registry/owner/image[:tag][@digest]) and nothing docker reads as an option:
# only such an image is written into the `mcp add` command the refusal suggests.
OCI_IMAGE = re.compile(r"[a-z0-9][a-z0-9._/-]*(?::[A-Za-z0-9._-]+)?(?:@sha256:[a-f0-9]{64})?")
MAX_IMAGE = 200
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")  # `Bearer {api_key}` in a header
STREAMABLE = ("streamable-http", "http")

Ask = Callable[[str, str], str]  # (label, default) → the value typed at the terminal


class PlanError(InstallError):
    """The entry cannot be installed here, or needs something that was not given."""


@dataclass
class Plan:
    kind: str  # pypi | npm | remote
    spec: str  # what pip or npm is given, or the remote's url
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    referenced: list[str] = field(default_factory=list)  # variables written as ${env:NAME}
    unset: list[str] = field(default_factory=list)  # required ones not set here
    optional: list[str] = field(default_factory=list)  # left out; named for the user
    others: list[str] = field(default_factory=list)  # the entry's other kinds


def choose(entry: Entry, which: Callable[[str], str | None] = shutil.which) -> Package | Remote:
    """The package or remote to install, or :class:`PlanError` saying why there is none."""
    why: list[str] = []
    for kind in ("pypi", "npm", "remote", "oci"):
        if kind == "remote":
            for remote in entry.remotes:
                if remote.transport in STREAMABLE:
                    return remote
                why.append(f"a {remote.transport} remote (bothost speaks Streamable HTTP)")
            continue
        for package in (p for p in entry.packages if p.registry == kind):
            if kind == "oci":
                why.append(f"an OCI image ({image(package)}), which bothost does not install")
            elif package.transport != "stdio":
                why.append(f"a {kind} package served over {package.transport}, not stdio")
            elif kind == "npm" and which("npm") is None:
                why.append("a npm package needs npm, which is not on PATH")
            else:
                return package
    unknown = sorted({p.registry for p in entry.packages} - {"pypi", "npm", "oci"})
    why += [f"a {kind} package (not installed by bothost)" for kind in unknown]
    if not why:
        raise PlanError(f"{entry.name} lists no package and no remote to install")
    if all(p.registry == "oci" for p in entry.packages) and not entry.remotes:
        raise only_oci(entry)
    raise PlanError(f"{entry.name} cannot be installed here: {'; '.join(why)}")


def image(package: Package) -> str:
    """An OCI package's image reference, as ``docker run`` would take it."""
    name, version = package.identifier, package.version
    return f"{name}:{version}" if version and ":" not in name.rsplit("/", 1)[-1] else name


def only_oci(entry: Entry) -> PlanError:
    """The entry is nothing but images: say which, and how to add one by hand (a person
    who trusts it can run it themselves; bothost does not choose to)."""
    images = [image(p) for p in entry.packages]
    line = f"{entry.name} is published only as the OCI image {images[0]}"
    if OCI_IMAGE.fullmatch(images[0]) and len(images[0]) <= MAX_IMAGE:
        name = default_name(entry.name)
        return PlanError(
            f"{line}, which bothost does not install; if you trust the image: "
            f"bothost mcp add {name} -- docker run -i --rm {images[0]}"
        )
    return PlanError(f"{line}, which bothost does not install")


def plan(
    entry: Entry,
    args: list[str],
    env: dict[str, str],
    ask: Ask | None = None,
    which: Callable[[str], str | None] = shutil.which,
    environ: Mapping[str, str] | None = None,
) -> Plan:
    """How to install ``entry``: ``args`` and ``env`` (from ``--arg`` and ``--env``) come
    after and over what the entry declares; ``ask`` (at a terminal) fills what it needs."""
    environ = os.environ if environ is None else environ
    chosen = choose(entry, which)
    if isinstance(chosen, Remote):
        if args or env:
            raise PlanError(
                f"{entry.name} installs as a remote server: --arg and --env are for packages"
            )
        wrong = url_problem(chosen.url)
        if wrong:
            raise PlanError(f"{entry.name}: its remote url: {wrong}")
        result = Plan("remote", chosen.url)
        for header in chosen.headers:
            add_header(result, header, environ)
    else:
        result = Plan(chosen.registry, package_spec(entry, chosen))
        result.args = arguments(entry, chosen, ask) if not args else []
        result.args += args
        result.env = dict(env)
        for variable in chosen.variables:
            if variable.name not in env:
                add_variable(
                    result,
                    variable.name,
                    variable.required,
                    variable.secret,
                    variable.default,
                    variable.description,
                    ask,
                    environ,
                )
    result.others = [k for k in entry.kinds() if k != result.kind]
    return result


def package_spec(entry: Entry, package: Package) -> str:
    """What pip or npm is given, checked as ``mcp install PACKAGE`` checks it."""
    name, version = package.identifier, package.version
    spec = (
        (f"{name}=={version}" if version else name)
        if package.registry == "pypi"
        else (f"npm:{name}@{version}" if version else f"npm:{name}")
    )
    try:
        parse_package(spec)
    except PackageSpecError as exc:
        raise PlanError(f"{entry.name}: its {package.registry} package: {exc}") from None
    return spec


def arguments(entry: Entry, package: Package, ask: Ask | None) -> list[str]:
    """The package's declared arguments; a required one without a value is asked for, or
    named in a :class:`PlanError` (give all the arguments with ``--arg`` then)."""
    found: list[str] = []
    for argument in package.arguments:
        value = argument.value
        if not value and argument.required and (argument.kind == "positional" or argument.hint):
            value = asked(entry, argument, ask)
        if argument.kind == "positional":
            found += [value] if value else []
        elif value:
            found += [argument.name, value]
        elif argument.required and argument.name:
            found.append(argument.name)  # a flag
    return found


def asked(entry: Entry, argument: Argument, ask: Ask | None) -> str:
    label = argument.hint or argument.name or "argument"
    if ask is None:
        about = f" ({argument.description})" if argument.description else ""
        raise PlanError(
            f"{entry.name} needs the argument <{label}>{about}; "
            "give its arguments with --arg (repeatable)"
        )
    return ask(label + (f" ({argument.description})" if argument.description else ""), "")


def add_variable(
    result: Plan,
    name: str,
    required: bool,
    secret: bool,
    default: str,
    description: str,
    ask: Ask | None,
    environ: Mapping[str, str],
) -> None:
    if not required and not (secret and name in environ):
        result.optional.append(name)
        return
    if not secret:
        if default:
            result.env[name] = default
            return
        if ask is not None:
            label = name + (f" ({description})" if description else "")
            result.env[name] = ask(label, environ.get(name, ""))
            return
    result.env[name] = f"${{env:{name}}}"
    reference(result, name, required, environ)


def reference(result: Plan, name: str, required: bool, environ: Mapping[str, str]) -> None:
    if name not in result.referenced:
        result.referenced.append(name)
    if required and name not in environ and name not in result.unset:
        result.unset.append(name)


def add_header(result: Plan, header: Header, environ: Mapping[str, str]) -> None:
    """A fixed value as it is; a secret or ``{placeholder}`` as ``${env:NAME}``."""
    placeholders = PLACEHOLDER.findall(header.value)
    if header.value and not header.secret and not placeholders:
        result.headers[header.name] = header.value
        return
    if not header.required:
        result.optional.append(f"header {header.name}")
        return
    if placeholders:
        names = [p.upper() for p in placeholders]
        value = PLACEHOLDER.sub(lambda m: f"${{env:{m.group(1).upper()}}}", header.value)
    else:
        names = [re.sub(r"[^A-Za-z0-9_]", "_", header.name).upper()]
        names = [n if VARIABLE.fullmatch(n) else f"H_{n}" for n in names]
        value = f"${{env:{names[0]}}}"
    result.headers[header.name] = value
    for name in names:
        reference(result, name, True, environ)
