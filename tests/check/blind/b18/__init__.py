"""Blind set B18: reader mistakes and correct variants, written from the chapters alone."""
