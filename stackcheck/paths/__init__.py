"""Where things are: the suite's shipped data files (fixtures, Mojo sources, course listings) and
the command-line tools a test may run (ncu, mojo). Imports nothing of stackcheck."""
