"""Pure math on distributions and arrays: no models, no I/O."""
