"""Blind set B6: reader mistakes and correct variants, written from the chapters alone."""
