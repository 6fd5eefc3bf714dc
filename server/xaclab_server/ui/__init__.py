"""The server-rendered web UI."""
