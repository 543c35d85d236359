"""Grading a class (``stackcheck grade``), in one vocabulary, each word one thing:

- the **grader** (grader): the command's process; it copies each submission (copies), starts one
  judge per submission, and writes the rows, pages and ``grades.csv`` (names: a folder's name is data);
- the **judge**: a pytest process of the suite that grades one submission and never imports it; its
  side of the calls is judge (the student's functions as proxies);
- the **worker** (worker): the one process that imports the submission, inside the sandbox (sandbox),
  answering the judge's named requests with data only (wire);
- the **launcher**: a worker of an empty file, which launches the kernels the judge checked on the
  judge's inputs.

Its low modules (wire, worker, judge, sandbox, copies, names) come right after stackcheck.impl, as the
judge's plugin uses them; the grader comes after every package, as it renders pages and reports."""
