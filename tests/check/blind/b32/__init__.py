"""Blind set B32: reader mistakes and correct variants written from the chapters alone."""
