import os as _os

if _os.path.exists("PYTEST-SHADOW-RAN"):  # the pytest/ beside this file ran in the grader's process
    _spoil(open("PYTEST-SHADOW-RAN", errors="replace").read())
