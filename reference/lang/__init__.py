"""The language front end: tokens, syntax tree, parser and linter."""
