"""Blind set B10: reader mistakes and correct variants, written from the chapters alone."""
