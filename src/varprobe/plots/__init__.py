"""Figures drawn from tables only: every number a figure shows is in the table it returns."""
