"""Blind set B28: reader mistakes and correct variants written from the chapters alone."""
