"""T1-Bench data, generated: the knowledge base and the 525 templates.

The paper's data is not public, so sweepbench builds both deterministically from a seed at
the paper's scale (Appendix A): real US cities and airports, synthesised venues, and
templates whose gold tool calls come from executing each template's plan. Entry points:
``kb.knowledge_base`` (the shared tables), ``tasks.load_tasks`` and ``tasks.catalog_summary``,
``splits`` (Table 4). Nothing is imported here: the tools import the knowledge base, and the
templates import the tools, so the package itself stays free of that cycle.
"""
