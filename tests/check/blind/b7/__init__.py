"""Blind set B7: reader mistakes and correct variants, written from the chapters alone."""
