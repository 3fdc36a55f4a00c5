"""Shared leaves: atomic file writes, JSON files, names that load on first use, and hierattn's meeting points
with Keras: the import hook that registers its classes (`keras_hook`) and the work-arounds of Keras internals,
each with its Keras issue (`keras_compat`)."""
