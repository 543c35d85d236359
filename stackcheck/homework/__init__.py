"""Homework: the parts and the functions each assigns with the starter (assignment), the
checkpoint questions (checkpoints) and the score (scoring)."""
