"""Blind set B5: reader mistakes and correct variants, written from the chapters alone."""
