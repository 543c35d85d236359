"""Deliberately wrong implementations. Each module provides a few names of the
stackcheck.reference surface; ``--impl tests_math.mutants.NAME`` runs the suite against it,
and tests_math/test_meta_mutants.py proves the matching claim tests fail."""
