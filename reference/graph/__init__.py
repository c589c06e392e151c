"""Dataflow graphs: one per flow, calls inlined, constants shared, dead values removed."""
