"""A "blocked" sum that is really the sequential one: the orders never differ."""

from stackcheck.impl.reference import sum_sequential


def sum_blocked(values, block):
    return sum_sequential(values)
