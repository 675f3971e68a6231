"""Blind set B29: reader mistakes and correct variants written from the chapters alone."""
