"""Blind set B15: reader mistakes and correct variants, written from the chapters alone."""
