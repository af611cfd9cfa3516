"""Map the top-level code folders into the `bothost` namespace.

`plugins/` installs as `bothost.plugins`, `mcp_servers/` as `bothost.mcp_servers` and
`config/` (data only) as `bothost.defaults`, so a plain `pip install .` adds no generic
top-level names to site-packages. Everything else lives in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = {"bothost": "bothost", "bothost.plugins": "plugins", "bothost.mcp_servers": "mcp_servers"}


def mapped_packages() -> list[str]:
    packages = ["bothost.defaults"]
    for prefix, folder in FOLDERS.items():
        packages.append(prefix)
        packages += [f"{prefix}.{name}" for name in find_packages(folder)]
    return packages


setup(
    packages=mapped_packages(),
    package_dir={**FOLDERS, "bothost.defaults": "config"},
    package_data={
        "bothost.defaults": ["*.yaml", "agents/*.md"],
        "bothost.plugins": ["*/static/*", "*/static/**/*"],
        "bothost": ["py.typed"],
    },
)
