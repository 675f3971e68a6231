"""Blind set B4: reader mistakes and correct variants, written from the chapters alone."""
