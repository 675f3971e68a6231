"""Blind set B9: reader mistakes and correct variants, written from the chapters alone."""
