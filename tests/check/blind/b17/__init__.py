"""Blind set B17: reader mistakes and correct variants, written from the chapters alone."""
