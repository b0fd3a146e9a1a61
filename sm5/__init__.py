"""The ``sm5`` command line: one entry point over every package of the project."""
