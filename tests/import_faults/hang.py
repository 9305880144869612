"""Hangs at import."""
import time

time.sleep(3600)
