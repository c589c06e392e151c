"""The local interpreter: evaluates a flow graph with the pure-Python ops."""
