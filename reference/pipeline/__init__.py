"""The run pipeline as a library (DESIGN §7): compile a script, run it, get a report."""
