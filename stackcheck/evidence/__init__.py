"""Measuring and judging, independent of any stack's records: the tolerance policy and seeded
inputs (numerics), pinned precision, the timing policy, reproducibility, GPU discovery, gradients
in closed form, compile counters and a chip's own figures (hardware); the verdicts that judge these
numbers against the course live in stackcheck.judges. Imports only stackcheck.paths."""
