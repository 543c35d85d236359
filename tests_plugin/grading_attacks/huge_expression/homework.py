# the test appends _TERMS = 1 + 1 + ... (200000 terms)
