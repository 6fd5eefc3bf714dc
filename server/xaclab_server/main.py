"""``uvicorn xaclab_server.main:app``: the app for the settings in the environment.

The console script ``xaclab-server`` is the usual way in; it migrates first.
"""

from xaclab_server.app import create_app
from xaclab_server.core.config import settings

app = create_app(settings)
