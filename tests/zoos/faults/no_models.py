"""A helper-looking file with no models: a note, not an error."""

WIDTH = 4
