"""Blind set B8: reader mistakes and correct variants, written from the chapters alone."""
