# honest work and nothing else
