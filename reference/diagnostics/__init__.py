"""Diagnostics: the code ledger, the diagnostic record and the one printer."""
from .diagnostic import Diagnostic, MnError, Pos

__all__ = ["Diagnostic", "MnError", "Pos"]
