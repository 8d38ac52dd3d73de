"""Benchmarks: scripts that measure the broker and the course package (run each by its path)."""
