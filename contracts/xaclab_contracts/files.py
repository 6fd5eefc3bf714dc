"""Where the contract files are: contracts/ in a checkout, xaclab_contracts/data/ installed.

A wheel carries the JSON files of contracts/ inside the package (see
pyproject.toml); an editable install and the tests read them where they are
written, beside the package, so there is one copy of each file.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def contracts_dir() -> Path:
    """The folder that holds the schemas, the field lists and suites/."""
    installed = _PACKAGE / "data"
    return installed if installed.is_dir() else _PACKAGE.parent


CONTRACTS_DIR = contracts_dir()
SUITES_DIR = CONTRACTS_DIR / "suites"
SUITE_SCHEMA = CONTRACTS_DIR / "suite.schema.json"
RESULT_SCHEMA = CONTRACTS_DIR / "result-format.schema.json"
FINGERPRINT_FIELDS = CONTRACTS_DIR / "fingerprint-fields.json"
THESIS_FIGURES = CONTRACTS_DIR / "thesis-figures.json"
