"""The course's claims as data: the catalogue (ids, sections, Korean sentences, points), course
§12.1's layer table, drift between two reports, and the runner of the shipped mutants."""
