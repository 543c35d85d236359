"""The only code that runs a stack on the implementation under test: each stack's steps and forward
(runners) and MAX graphs built from the implementation (max_graphs)."""
