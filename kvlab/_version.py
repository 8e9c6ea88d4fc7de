"""kvlab's version: in the base layer so every layer can record it without importing the package."""
__version__ = "0.1.0"
