raise ImportError("numpy/ in the submission folder shadowed NumPy: the grader put the folder on its import path")
