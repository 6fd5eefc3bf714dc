"""Files shipped inside the package: templates, static assets, the migrations.

The suites, the result schema and the thesis's figures come from
xaclab_contracts (:mod:`xaclab_contracts.files`).
"""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
