"""Analyses built on the metrics: the next-word calibration study and its controls."""
