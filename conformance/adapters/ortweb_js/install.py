"""``npm ci`` of this folder's lockfile into a cache folder, where the
onnxruntime-web targets' runner finds its packages (docs/browser.md)::

    python -m conformance.adapters.ortweb_js.install

The standard library only, so that CI runs it as a script
(``python3 conformance/adapters/ortweb_js/install.py``) before any
environment has the package. ``CONFORMANCE_ORTWEB_MODULES`` names another
node_modules folder (then filled there).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES_ENV = "CONFORMANCE_ORTWEB_MODULES"
COMMAND = "python -m conformance.adapters.ortweb_js.install"


def lock_digest() -> str:
    """A digest of the lockfile: a new pin installs into a new folder."""
    return hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()[:12]


def modules_folder() -> Path:
    """The node_modules folder :func:`install` fills and the runner reads."""
    if os.environ.get(MODULES_ENV):
        return Path(os.environ[MODULES_ENV])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "conformance" / f"onnxruntime-web-{lock_digest()}" / "node_modules"


def install() -> int:
    """``npm ci`` into :func:`modules_folder`'s parent; npm's exit status."""
    if shutil.which("npm") is None:
        print(f"{COMMAND} needs npm: install it (Debian: apt-get install nodejs npm)",
              file=sys.stderr)  # fmt: skip
        return 2
    folder = modules_folder().parent
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / name, folder / name)
    # --ignore-scripts: no package of the lock needs its install script here.
    command = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(folder)]
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(install())
