"""Segfaults at import."""
import ctypes

ctypes.string_at(0)
