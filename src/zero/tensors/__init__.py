"""Tensors: storage, metadata, views and creation."""
