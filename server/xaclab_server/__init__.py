"""xaclab server: the agent API, the user API and the web UI.

The application is built by :func:`xaclab_server.app.create_app`; the console
script ``xaclab-server`` (:mod:`xaclab_server.cli`) migrates the database and
serves it with uvicorn.
"""

__version__ = "0.1.0"
