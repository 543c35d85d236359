"""Measuring and judging, independent of any stack's records: the tolerance policy and seeded
inputs (numerics), pinned precision, the timing policy, reproducibility, GPU discovery, gradients
in closed form, compile counters, a chip's own figures (hardware) and the verdicts on measured
numbers (verdicts). Imports only stackcheck.paths."""
