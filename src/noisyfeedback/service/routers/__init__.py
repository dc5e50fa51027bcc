"""The HTTP API's routers: :mod:`.rank` (rank, reward, apprentice, metrics, health) and :mod:`.admin`
(snapshot, mode, off-policy evaluation)."""
