"""Datasets: where each one lives, how to fetch it, and loaders into canonical tables."""
