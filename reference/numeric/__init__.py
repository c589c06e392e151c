"""The numeric core: 32-bit wrapping, integer division rules, activation lookups."""
