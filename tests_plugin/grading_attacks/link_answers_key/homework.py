# answers.toml (made by the test) points at the key
