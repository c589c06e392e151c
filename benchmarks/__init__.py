"""Benchmarks of the round-trip economics (DESIGN §9): what routing costs and when it pays.
Every figure is a ratio of medians measured in one run, the compared sides alternating."""
