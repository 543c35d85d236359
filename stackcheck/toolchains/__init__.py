"""Driving the compilers and profilers without the implementation under test: Triton kernels and
their sm_90 compiles, Pallas launches, Mojo builds, Inductor's output, IR text readers, Nsight Compute counters and
the GPU workloads they profile."""
