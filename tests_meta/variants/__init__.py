"""Correct implementations written differently from stackcheck/impl/reference.py, the mirror of
tests_meta/mutants: every claim test each one reaches must pass (tests_meta/test_variants.py)."""
