"""Runs both libraries in the simulated world and turns the logs into figures."""
