"""A VitaBench data dir built from upstream's own files (a checkout or its dataset release):
task files as they are, prompt templates verbatim, tool descriptions parsed (never run) from
upstream's schema source, and a manifest that says which release the files are."""
