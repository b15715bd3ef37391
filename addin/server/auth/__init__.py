"""Compute Lab's auth providers for xlwings Server (found as ``auth.<provider>`` in the project)."""
