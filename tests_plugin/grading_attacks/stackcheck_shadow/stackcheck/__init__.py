raise ImportError("stackcheck/ in the submission folder shadowed the suite")
