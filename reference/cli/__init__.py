"""The command-line tools: maned-run and maned-lint."""
