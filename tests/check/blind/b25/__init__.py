"""Blind set B25: reader mistakes and correct variants written from the chapters alone."""
