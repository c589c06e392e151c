"""Maned: the language front end and its deliberately simple pure-Python reference."""

__version__ = "0.1.0"
