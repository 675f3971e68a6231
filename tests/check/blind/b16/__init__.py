"""Blind set B16: reader mistakes and correct variants, written from the chapters alone."""
