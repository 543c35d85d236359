# wrong work and nothing else
