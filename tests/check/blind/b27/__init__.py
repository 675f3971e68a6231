"""Blind set B27: reader mistakes and correct variants written from the chapters alone."""
