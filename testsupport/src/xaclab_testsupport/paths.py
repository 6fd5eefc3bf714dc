"""Where the checkout's programs are: the package is installed in place (editable)."""

import sys
from pathlib import Path

# src/xaclab_testsupport/paths.py -> the checkout's top directory.
REPO = Path(__file__).resolve().parents[3]
PG_CLUSTER_SCRIPT = REPO / "scripts" / "pg-cluster.sh"
LIBXAC_BIN = REPO / "libxac" / "bin"
# The virtual environment that runs the tests holds xaclab-server and xaclab-agent.
VENV_BIN = Path(sys.executable).parent
