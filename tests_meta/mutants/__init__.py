"""Deliberately wrong implementations. Each module provides a few names of the
stackcheck.impl.reference surface; ``--impl tests_meta.mutants.NAME`` runs the suite against it,
and tests_meta/test_*_mutants.py prove the matching claim tests fail."""
