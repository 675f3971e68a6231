"""Blind set B26: reader mistakes and correct variants written from the chapters alone."""
