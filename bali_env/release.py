"""The installed release: ``VERSION``, the version of the ``bali-env`` distribution this package
was installed from (``bali_env.__version__``, ``bali --version``, the machine record beside every
measured figure); ``0.0.0+unknown`` when the source tree runs without being installed."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION: str = version("bali-env")
except PackageNotFoundError:
    VERSION = "0.0.0+unknown"

__all__ = ["VERSION"]
