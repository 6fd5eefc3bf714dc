"""Request and reply bodies of the agent API and the user API."""
