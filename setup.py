"""Map the top-level code folders into the `bothost` namespace.

`plugins/` installs as `bothost.plugins`, `mcp_servers/` as `bothost.mcp_servers`,
`config/` (data only) as `bothost.defaults` and `docs/` as `bothost.docs` (for `bothost docs`),
so a plain `pip install .` adds no generic top-level names to site-packages. Everything
else lives in pyproject.toml.

Code folders are found by their `__init__.py` (tests/packaging checks every folder of
modules has one). Folders of data files (prompts, the web chat's static files) are listed as
packages too, with the files they hold: setuptools warns about, and will one day drop, a
data folder inside a package that its `packages` list does not name.
"""

from setuptools import find_packages, setup

FOLDERS = {"bothost": "bothost", "bothost.plugins": "plugins", "bothost.mcp_servers": "mcp_servers"}
# data-only packages -> the files they ship (tests/packaging checks the wheel has them all)
DATA = {
    "bothost": ["py.typed"],
    "bothost.defaults": ["*.yaml", "*.yaml.json"],  # the defaults' parsed twin: configfile
    "bothost.defaults.agents": ["*.md"],
    "bothost.plugins.web.static": ["*.html", "*.css", "*.js"],
    "bothost.docs": ["*.md"],
    "bothost.docs.servers": ["*.md"],
}


def mapped_packages() -> list[str]:
    packages = [
        "bothost.defaults",
        "bothost.defaults.agents",
        "bothost.plugins.web.static",
        "bothost.docs",
        "bothost.docs.servers",
    ]
    for prefix, folder in FOLDERS.items():
        packages.append(prefix)
        packages += [f"{prefix}.{name}" for name in find_packages(folder)]
    return packages


setup(
    packages=mapped_packages(),
    package_dir={**FOLDERS, "bothost.defaults": "config", "bothost.docs": "docs"},
    package_data=DATA,
)
