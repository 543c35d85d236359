"""The course's claims as data: the catalogue (ids, sections, Korean sentences, points), course
§12.1's layer table, drift between two reports, the runner of the shipped mutants, and the grammar
that generates correct and wrong spellings of the forward (issue 51)."""
