"""Blind set B31: reader mistakes and correct variants written from the chapters alone."""
