"""Blind set B19: reader mistakes and correct variants, written from the chapters alone."""
