"""The HTTP API's routers: `.rank` (rank, reward, apprentice, metrics, health) and `.admin`
(snapshot, mode, off-policy evaluation)."""
