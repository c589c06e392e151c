"""The coordinator side of the wire: lowering a flow graph to a binary-IR module, encoding a
job's MNPK and decoding its MNRS (spec/wire-golden.md; byte formats live in bark_vm.wire)."""
