"""uncertainty_lab: how uncertainty moves through agentic LLM systems, as hands-on Jupyter labs."""

__version__ = "0.1.0"
