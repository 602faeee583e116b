"""Offline, reproducible benchmark of haystack-deep-research against a peer deep-research agent."""
