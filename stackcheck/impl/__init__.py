"""The implementation under test: the course's solutions (reference), the contract every surface
function is held to (contract), and the loader that puts a student's module in front of the
reference (loader)."""
