"""Blind set B12: reader mistakes and correct variants, written from the chapters alone."""
