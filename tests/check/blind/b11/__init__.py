"""Blind set B11: reader mistakes and correct variants, written from the chapters alone."""
