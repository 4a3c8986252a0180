"""google-adk as a target: its session services (``InMemorySessionService``,
``SqliteSessionService``, ``DatabaseSessionService`` on SQLite) on the session store
concern's shared lockstep."""
