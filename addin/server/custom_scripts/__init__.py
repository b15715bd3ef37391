"""No custom scripts: Compute Lab's server only provides custom functions."""
