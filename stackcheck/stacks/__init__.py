"""The stacks of the course: keyword-built, self-validating records (records), the pytest
parameters drawn from them (params), what this machine has (available), the frameworks' settings
for a run (defaults), the §14.4 fingerprint and the §14.3 compatibility checks. Nothing here runs a
stack's computation."""
