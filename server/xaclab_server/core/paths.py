"""Files shipped inside the package (the suites and the schema arrive through symlinks)."""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
