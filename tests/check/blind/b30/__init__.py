"""Blind set B30: reader mistakes and correct variants written from the chapters alone."""
