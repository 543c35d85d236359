"""The course's listings as test items (Sybil): fences, working forms and errata (listings)."""
