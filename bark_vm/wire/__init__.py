"""Wire facts and formats shared by the worker and the coordinator (numpy-free)."""
