"""Blind set B33: reader mistakes and correct variants written from the chapters alone."""
