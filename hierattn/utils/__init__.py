"""Shared leaves: atomic file writes, JSON files, and hierattn's meeting points with Keras (`keras_hook`)."""
